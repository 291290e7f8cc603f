import { type FormEvent, useRef, useState } from "react"
import { ContentEditor, contentDraftOf, contentOf } from "../../components/ContentEditor.js"
import { Checks, Choice, EditorActions, EditorHead, EditorStatus, formValues, listOrNone, objectAt, over, savePublication, TextArea, TextField } from "../../components/EditorForm.js"
import { href } from "../../components/Layout.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import { commandOf, type MediaEditorKind } from "../../model.js"
import type { PageProps } from "../types.js"

type Json = Readonly<Record<string, unknown>>

export const title = ({ data, texts }: Pick<PageProps<"mediaEditor">, "data" | "texts">) =>
  texts.t(`editor.${data.kind}.${data.publication === undefined ? "new" : "edit"}` as MessageKey)

// The kinds' own fields (PortfolioDetails, ResumeDetails, TrainingDetails in @birzha/domain).
const currencies = ["RUB", "USD", "EUR"] as const
const employments = ["full_time", "part_time", "project", "internship", "temporary"] as const
const workplaces = ["remote", "onsite", "hybrid"] as const
const formats = ["online", "offline", "hybrid"] as const
const levels = ["beginner", "intermediate", "advanced"] as const

const str = (value: unknown) => typeof value === "string" ? value : undefined
const num = (value: unknown) => typeof value === "number" ? value : undefined
const strings = (value: unknown): ReadonlyArray<string> => Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

/** The fields of each kind beside the common ones, as the form shows them. */
const KindFields = ({ kind, draft, texts }: { readonly kind: MediaEditorKind; readonly draft: Json; readonly texts: Texts }) => {
  const { t } = texts
  const enumLabel = (prefix: string) => (value: string) => t(`value.${prefix}.${value}` as MessageKey)
  switch (kind) {
    case "portfolio": {
      const own = objectAt(draft, "portfolio")
      return (
        <fieldset>
          <legend>{t("editor.portfolio.facts")}</legend>
          <TextField name="client" label={t("field.client")} value={str(own["client"])} maxLength={160} />
          <TextField name="year" label={t("field.year")} value={num(own["year"])} maxLength={4} numeric />
          <TextField name="role" label={t("field.role")} value={str(own["role"])} maxLength={160} />
          <TextField name="projectUrl" type="url" label={t("editor.projectUrl")} value={str(own["projectUrl"])} maxLength={2048} hint={t("editor.projectUrlHint")} />
          <TextField name="tools" label={t("field.tools")} value={strings(own["tools"]).join(", ")} maxLength={2400} hint={t("editor.commaHint")} />
        </fieldset>
      )
    }
    case "article": {
      const article = objectAt(objectAt(draft, "content"), "article")
      return (
        <fieldset>
          <legend>{t("editor.article.facts")}</legend>
          <TextArea name="lead" label={t("editor.lead")} value={str(article["lead"])} rows={3} maxLength={1000} />
          <TextField name="readingMinutes" label={t("editor.readingMinutes")} value={str(article["readingMinutes"])} maxLength={40} />
          <TextField name="tags" label={t("editor.tags")} value={strings(article["tags"]).join(", ")} maxLength={820} hint={t("editor.tagsHint")} />
        </fieldset>
      )
    }
    case "resume": {
      const own = objectAt(draft, "resume")
      return (
        <>
          <fieldset>
            <legend>{t("editor.resume.facts")}</legend>
            <TextField name="position" label={t("field.position")} value={str(own["position"])} maxLength={160} />
            <TextField name="salary" label={t("editor.salaryWanted")} value={num(own["salary"])} maxLength={13} numeric />
            <Choice name="currency" label={t("vacancy.field.currency")} options={currencies} value={str(own["currency"])} labelOf={(c) => c} />
            <TextField name="location" label={t("field.location")} value={str(own["location"])} maxLength={160} />
            <TextField name="experienceYears" label={t("field.experienceYears")} value={num(own["experienceYears"])} maxLength={2} numeric />
            <TextField name="skills" label={t("field.skills")} value={strings(own["skills"]).join(", ")} maxLength={2400} hint={t("editor.commaHint")} />
          </fieldset>
          <Checks name="employment" legend={t("field.employment")} options={employments} value={strings(own["employment"])} labelOf={enumLabel("employment")} />
          <Checks name="workplace" legend={t("field.workplace")} options={workplaces} value={strings(own["workplace"])} labelOf={enumLabel("workplace")} />
        </>
      )
    }
    case "training": {
      const own = objectAt(draft, "training")
      return (
        <fieldset>
          <legend>{t("editor.training.facts")}</legend>
          <Choice name="format" label={t("field.format")} options={formats} value={str(own["format"])} labelOf={enumLabel("format")} empty={t("vacancy.notSaid")} />
          <Choice name="level" label={t("field.level")} options={levels} value={str(own["level"])} labelOf={enumLabel("level")} empty={t("vacancy.notSaid")} />
          <TextField name="durationHours" label={t("editor.durationHours")} value={num(own["durationHours"])} maxLength={6} numeric />
          <TextField name="price" label={t("service.field.price")} value={num(own["price"])} maxLength={13} numeric />
          <Choice name="currency" label={t("vacancy.field.currency")} options={currencies} value={str(own["currency"])} labelOf={(c) => c} />
          <TextField name="startsOn" type="date" label={t("field.startsOn")} value={str(own["startsOn"])} maxLength={10} />
          <TextField name="location" label={t("field.location")} value={str(own["location"])} maxLength={160} />
          <TextArea name="outcomes" label={t("editor.outcomes")} value={strings(own["outcomes"]).join("\n")} rows={4} maxLength={5000} />
          <label className="check">
            <input type="checkbox" name="certificate" defaultChecked={own["certificate"] === true} />
            {t("editor.certificate")}
          </label>
        </fieldset>
      )
    }
  }
}

/**
 * The kind's own fields from the form, over the draft's (what the form does not show is kept);
 * `null` when a number is out of its bounds.
 */
const kindData = (kind: MediaEditorKind, form: HTMLFormElement, draft: Json): Record<string, unknown> | null => {
  const v = formValues(form)
  switch (kind) {
    case "portfolio": {
      const year = v.whole("year", 1950, 2100)
      if (year === null) return null
      const url = v.text("projectUrl")
      if (url !== undefined && !url.startsWith("https://")) return null
      // `assets` and `blocks`: the older copy of the content PortfolioDetails keeps (a default the client's encoding needs).
      return { portfolio: over({ assets: [], blocks: [], ...objectAt(draft, "portfolio") }, { client: v.text("client"), year, role: v.text("role"), projectUrl: url, tools: listOrNone(v.commaList("tools")) }) }
    }
    case "article": {
      // An article's own fields live in its content document (content.article); see contentOf.
      return {}
    }
    case "resume": {
      const salary = v.whole("salary", 0, 1_000_000_000)
      const years = v.whole("experienceYears", 0, 70)
      if (salary === null || years === null) return null
      return {
        resume: over(objectAt(draft, "resume"), {
          position: v.text("position"), salary, currency: v.text("currency"), location: v.text("location"), experienceYears: years,
          skills: listOrNone(v.commaList("skills")), employment: listOrNone(v.all("employment")), workplace: listOrNone(v.all("workplace"))
        })
      }
    }
    case "training": {
      const hours = v.whole("durationHours", 1, 10_000)
      const price = v.whole("price", 0, 1_000_000_000)
      if (hours === null || price === null) return null
      return {
        training: over(objectAt(draft, "training"), {
          format: v.text("format"), level: v.text("level"), durationHours: hours, price, currency: v.text("currency"),
          startsOn: v.text("startsOn"), location: v.text("location"), outcomes: listOrNone(v.lines("outcomes")),
          certificate: form.querySelector<HTMLInputElement>("input[name=certificate]")?.checked === true ? true : undefined
        })
      }
    }
  }
}

/**
 * The editor of portfolio items, articles, resumes and trainings: title, field, description, the
 * kind's own fields and the content document (pictures and blocks, with a preview). The whole
 * draft is saved with its revision (`<command>.save`), or saved and sent to moderation.
 */
export default function MediaEditorPage({ data, texts }: PageProps<"mediaEditor">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const publication = data.publication
  const draft: Json = publication?.draft ?? {}
  const { busy, message, setMessage, run } = useAction()
  const [content, setContent] = useState(() => contentDraftOf(draft))
  const form = useRef<HTMLFormElement>(null)

  const save = (submit: boolean) => (event?: FormEvent) => {
    event?.preventDefault()
    if (!form.current!.reportValidity()) return
    const own = kindData(data.kind, form.current!, draft)
    if (own === null) return setMessage(`editor.${data.kind}.bad` as MessageKey)
    const v = formValues(form.current!)
    const previous = objectAt(draft, "content")
    const article = data.kind === "article"
      ? { article: over(objectAt(previous, "article"), { lead: v.text("lead"), readingMinutes: v.text("readingMinutes"), tags: listOrNone(v.commaList("tags")) }) }
      : {}
    const made = contentOf(content, { ...previous, ...article })
    if (made.problem !== undefined) return setMessage(made.problem)
    const whole = over(draft, {
      title: v.raw("title").trim(),
      category: v.text("category"),
      description: v.raw("description"),
      content: made.content,
      ...own
    })
    void run(
      (api) => savePublication(api, commandOf(data.kind), publication, whole, submit),
      () => location.assign(href("/publications", language))
    )
  }

  return (
    <div className="editor">
      <EditorHead heading={title({ data, texts })} status={publication?.status} texts={texts} />
      <form ref={form} onSubmit={save(false)} className="stack" id="media-form">
        <TextField name="title" label={t("task.field.title")} value={str(draft["title"])} required minLength={3} maxLength={160} />
        <TextField name="category" label={t("vacancy.field.category")} value={str(draft["category"])} maxLength={80} />
        <TextArea name="description" label={t(data.kind === "resume" ? "editor.about" : "task.field.description")} value={str(draft["description"])} maxLength={20000} rows={6} />
        <KindFields kind={data.kind} draft={draft} texts={texts} />
        <ContentEditor value={content} onChange={setContent} texts={texts} onProblem={setMessage} />
        <EditorActions texts={texts} disabled={!hydrated || busy} onSubmit={() => save(true)()} />
      </form>
      <EditorStatus message={message} texts={texts} />
    </div>
  )
}
