import { type FormEvent, useRef, useState } from "react"
import { ContentEditor, contentDraftOf, contentOf } from "../../components/ContentEditor.js"
import { Choice, EditorActions, EditorHead, EditorStatus, formValues, objectAt, over, savePublication, TextArea, TextField } from "../../components/EditorForm.js"
import { href } from "../../components/Layout.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"vacancyEditor">, "data" | "texts">) =>
  texts.t(data.vacancy === undefined ? "vacancy.newTitle" : "vacancy.editTitle")

/** The vacancy fields jobs.save accepts (VacancyDetails in @birzha/domain), in its order. */
const employments = ["full_time", "part_time", "project", "internship", "temporary"] as const
const workplaces = ["remote", "onsite", "hybrid"] as const
const experiences = ["none", "1-3", "3-6", "6+"] as const
const currencies = ["RUB", "USD", "EUR"] as const

/**
 * The vacancy editor: title, field, description, the company, the salary fork and its currency,
 * employment, workplace, location, experience and the content document; the whole draft saved
 * (jobs.save) or sent to moderation (jobs.save, then jobs.submit at the saved revision).
 */
export default function VacancyEditorPage({ data, texts }: PageProps<"vacancyEditor">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const vacancy = data.vacancy
  const draft = vacancy?.draft ?? {}
  const { busy, message, setMessage, run } = useAction()
  const [content, setContent] = useState(() => contentDraftOf(draft))
  const form = useRef<HTMLFormElement>(null)

  const save = (submit: boolean) => (event?: FormEvent) => {
    event?.preventDefault()
    if (!form.current!.reportValidity()) return
    const v = formValues(form.current!)
    const salaryFrom = v.whole("salaryFrom", 0, 1_000_000_000)
    const salaryTo = v.whole("salaryTo", 0, 1_000_000_000)
    if (salaryFrom === null || salaryTo === null) return setMessage("vacancy.badSalary")
    if (salaryFrom !== undefined && salaryTo !== undefined && salaryFrom > salaryTo) return setMessage("vacancy.badSalary")
    const made = contentOf(content, objectAt(draft, "content"))
    if (made.problem !== undefined) return setMessage(made.problem)
    const whole = over(draft, {
      title: v.raw("title").trim(),
      category: v.text("category"),
      description: v.raw("description"),
      content: made.content,
      vacancy: over(objectAt(draft, "vacancy"), {
        company: v.text("company"), salaryFrom, salaryTo, currency: v.text("currency"), employment: v.text("employment"),
        workplace: v.text("workplace"), location: v.text("location"), experience: v.text("experience")
      })
    })
    void run((api) => savePublication(api, "jobs", vacancy, whole, submit), () => location.assign(href("/publications", language)))
  }

  const notSaid = t("vacancy.notSaid")
  return (
    <div className="editor">
      <EditorHead heading={title({ data, texts })} status={vacancy?.status} texts={texts} />
      <form ref={form} onSubmit={save(false)} className="stack" id="vacancy-form">
        <TextField name="title" label={t("vacancy.field.title")} value={vacancy?.title} required minLength={3} maxLength={160} />
        <TextField name="company" label={t("vacancy.field.company")} value={vacancy?.company} maxLength={160} autoComplete="organization" />
        <TextField name="category" label={t("vacancy.field.category")} value={vacancy?.category} maxLength={80} />
        <TextArea name="description" label={t("task.field.description")} value={vacancy?.description} maxLength={20000} />
        <fieldset>
          <legend>{t("field.salary")}</legend>
          <TextField name="salaryFrom" label={t("vacancy.field.salaryFrom")} value={vacancy?.salaryFrom} maxLength={13} numeric />
          <TextField name="salaryTo" label={t("vacancy.field.salaryTo")} value={vacancy?.salaryTo} maxLength={13} numeric />
          <Choice name="currency" label={t("vacancy.field.currency")} options={currencies} value={vacancy?.currency} labelOf={(c) => c} />
        </fieldset>
        <Choice name="employment" label={t("vacancy.field.employment")} options={employments} value={vacancy?.employment} empty={notSaid} labelOf={(e) => t(`value.employment.${e}` as "value.employment.full_time")} />
        <Choice name="workplace" label={t("vacancy.field.workplace")} options={workplaces} value={vacancy?.workplace} empty={notSaid} labelOf={(w) => t(`value.workplace.${w}` as "value.workplace.remote")} />
        <TextField name="location" label={t("vacancy.field.location")} value={vacancy?.location} maxLength={160} />
        <Choice name="experience" label={t("vacancy.field.experience")} options={experiences} value={vacancy?.experience} empty={notSaid} labelOf={(e) => t(`value.experience.${e}` as "value.experience.none")} />
        <ContentEditor value={content} onChange={setContent} texts={texts} onProblem={setMessage} />
        <EditorActions texts={texts} disabled={!hydrated || busy} onSubmit={() => save(true)()} />
      </form>
      <EditorStatus message={message} texts={texts} />
    </div>
  )
}
