import { type FormEvent, useRef } from "react"
import { href } from "../../components/Layout.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"vacancyEditor">, "data" | "texts">) =>
  texts.t(data.vacancy === undefined ? "vacancy.newTitle" : "vacancy.editTitle")

/** The vacancy fields jobs.save accepts (VacancyDetails in @birzha/domain), in its order. */
const employments = ["full_time", "part_time", "project", "internship", "temporary"] as const
const workplaces = ["remote", "onsite", "hybrid"] as const
const experiences = ["none", "1-3", "3-6", "6+"] as const
const currencies = ["RUB", "USD", "EUR"] as const

/** A whole amount of money as typed ("120 000" too), or nothing when the field is empty. */
const amountOf = (value: string): number | undefined => {
  const digits = value.replace(/[\s\u00a0]/g, "")
  return digits === "" ? undefined : Number(digits)
}

/**
 * The vacancy editor: title, field, description, the company, the salary fork and its currency,
 * employment, workplace, location and experience; saved as a draft (jobs.save) or sent to
 * moderation (jobs.save, then jobs.submit at the saved revision).
 */
export default function VacancyEditorPage({ data, texts }: PageProps<"vacancyEditor">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const vacancy = data.vacancy
  const { busy, message, setMessage, run } = useAction()
  const form = useRef<HTMLFormElement>(null)

  const save = (submit: boolean) => (event?: FormEvent) => {
    event?.preventDefault()
    if (!form.current!.reportValidity()) return
    const values = new FormData(form.current!)
    const field = (name: string) => String(values.get(name) ?? "").trim()
    const salaryFrom = amountOf(field("salaryFrom"))
    const salaryTo = amountOf(field("salaryTo"))
    if ([salaryFrom, salaryTo].some((n) => n !== undefined && (!Number.isSafeInteger(n) || n < 0 || n > 1_000_000_000))) return setMessage("vacancy.badSalary")
    if (salaryFrom !== undefined && salaryTo !== undefined && salaryFrom > salaryTo) return setMessage("vacancy.badSalary")
    const optional = <K extends string, V>(key: K, value: V | "" | undefined) => (value === "" || value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>
    void run(
      async (api) => {
        const saved = await api["jobs.save"]({
          payload: {
            requestUuid: requestUuid(),
            ...(vacancy === undefined ? {} : { publicationUuid: vacancy.uuid, expectedRevision: vacancy.revision }),
            data: {
              title: field("title"),
              ...optional("category", field("category")),
              description: String(values.get("description") ?? ""),
              files: [],
              vacancy: {
                ...optional("company", field("company")),
                ...optional("salaryFrom", salaryFrom),
                ...optional("salaryTo", salaryTo),
                currency: field("currency") as typeof currencies[number],
                ...optional("employment", field("employment") as typeof employments[number]),
                ...optional("workplace", field("workplace") as typeof workplaces[number]),
                ...optional("location", field("location")),
                ...optional("experience", field("experience") as typeof experiences[number])
              }
            }
          }
        })
        if (submit) await api["jobs.submit"]({ payload: { requestUuid: requestUuid(), publicationUuid: saved.uuid, expectedRevision: saved.revision } })
      },
      () => location.assign(href("/publications", language))
    )
  }

  const choice = (name: string, label: string, options: ReadonlyArray<string>, value: string | undefined, labelOf: (option: string) => string, empty = true) => (
    <>
      <label htmlFor={name}>{label}</label>
      <select id={name} name={name} defaultValue={value ?? ""}>
        {empty ? <option value="">{t("vacancy.notSaid")}</option> : null}
        {options.map((option) => <option key={option} value={option}>{labelOf(option)}</option>)}
      </select>
    </>
  )

  return (
    <div className="editor">
      <h1>{title({ data, texts })}</h1>
      {vacancy === undefined ? null : <p>{t("task.status")}: <strong>{t(`status.${vacancy.status}` as "status.draft")}</strong></p>}
      <form ref={form} onSubmit={save(false)} className="stack" id="vacancy-form">
        <label htmlFor="title">{t("vacancy.field.title")}</label>
        <input id="title" name="title" required minLength={3} maxLength={160} defaultValue={vacancy?.title ?? ""} />
        <label htmlFor="company">{t("vacancy.field.company")}</label>
        <input id="company" name="company" maxLength={160} defaultValue={vacancy?.company ?? ""} autoComplete="organization" />
        <label htmlFor="category">{t("vacancy.field.category")}</label>
        <input id="category" name="category" maxLength={80} defaultValue={vacancy?.category ?? ""} />
        <label htmlFor="description">{t("task.field.description")}</label>
        <textarea id="description" name="description" rows={8} maxLength={20000} defaultValue={vacancy?.description ?? ""} />
        <fieldset>
          <legend>{t("field.salary")}</legend>
          <label htmlFor="salaryFrom">{t("vacancy.field.salaryFrom")}</label>
          <input id="salaryFrom" name="salaryFrom" inputMode="numeric" pattern="[0-9 ]*" maxLength={13} defaultValue={vacancy?.salaryFrom ?? ""} />
          <label htmlFor="salaryTo">{t("vacancy.field.salaryTo")}</label>
          <input id="salaryTo" name="salaryTo" inputMode="numeric" pattern="[0-9 ]*" maxLength={13} defaultValue={vacancy?.salaryTo ?? ""} />
          {choice("currency", t("vacancy.field.currency"), currencies, vacancy?.currency ?? "RUB", (c) => c, false)}
        </fieldset>
        {choice("employment", t("vacancy.field.employment"), employments, vacancy?.employment, (e) => t(`value.employment.${e}` as "value.employment.full_time"))}
        {choice("workplace", t("vacancy.field.workplace"), workplaces, vacancy?.workplace, (w) => t(`value.workplace.${w}` as "value.workplace.remote"))}
        <label htmlFor="location">{t("vacancy.field.location")}</label>
        <input id="location" name="location" maxLength={160} defaultValue={vacancy?.location ?? ""} />
        {choice("experience", t("vacancy.field.experience"), experiences, vacancy?.experience, (e) => t(`value.experience.${e}` as "value.experience.none"))}
        <div className="actions">
          <button type="submit" className="button button--secondary" disabled={!hydrated || busy}>{t("task.saveDraft")}</button>
          <button type="button" className="button" disabled={!hydrated || busy} onClick={() => save(true)()}>{t("task.submit")}</button>
        </div>
      </form>
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
