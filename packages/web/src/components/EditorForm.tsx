import type { ReactNode } from "react"
import type { MessageKey, Texts } from "../i18n.js"

/**
 * The pieces every publication editor is made of (tasks, services, vacancies and the media
 * editor): labelled fields, the status line, the two buttons, the stale-revision explanation, and
 * the rule that a save sends the whole draft (the form's fields over the draft as read).
 */

type Value = string | number | undefined

/** A labelled one-line input (its hint, when given, describes it). */
export const TextField = (props: {
  readonly name: string
  readonly label: string
  readonly value?: Value
  readonly required?: boolean
  readonly minLength?: number
  readonly maxLength: number
  readonly numeric?: boolean
  readonly type?: "text" | "url" | "date"
  readonly hint?: string
  readonly autoComplete?: string
}) => (
  <>
    <label htmlFor={props.name}>{props.label}</label>
    <input
      id={props.name}
      name={props.name}
      type={props.type ?? "text"}
      defaultValue={props.value ?? ""}
      maxLength={props.maxLength}
      {...(props.required === true ? { required: true } : {})}
      {...(props.minLength === undefined ? {} : { minLength: props.minLength })}
      {...(props.numeric === true ? { inputMode: "numeric" as const, pattern: "[0-9 ]*" } : {})}
      {...(props.hint === undefined ? {} : { "aria-describedby": `${props.name}-hint` })}
      {...(props.autoComplete === undefined ? {} : { autoComplete: props.autoComplete })}
    />
    {props.hint === undefined ? null : <p id={`${props.name}-hint`} className="hint">{props.hint}</p>}
  </>
)

/** A labelled multi-line input. */
export const TextArea = (props: { readonly name: string; readonly label: string; readonly value?: string | undefined; readonly rows?: number; readonly maxLength: number; readonly hint?: string }) => (
  <>
    <label htmlFor={props.name}>{props.label}</label>
    <textarea
      id={props.name}
      name={props.name}
      rows={props.rows ?? 8}
      maxLength={props.maxLength}
      defaultValue={props.value ?? ""}
      {...(props.hint === undefined ? {} : { "aria-describedby": `${props.name}-hint` })}
    />
    {props.hint === undefined ? null : <p id={`${props.name}-hint`} className="hint">{props.hint}</p>}
  </>
)

/** A labelled choice; `empty` names the "not said" option (left out: one of the options is required). */
export const Choice = (props: {
  readonly name: string
  readonly label: string
  readonly options: ReadonlyArray<string>
  readonly value?: string | undefined
  readonly labelOf: (option: string) => string
  readonly empty?: string
}) => (
  <>
    <label htmlFor={props.name}>{props.label}</label>
    <select id={props.name} name={props.name} defaultValue={props.value ?? (props.empty === undefined ? props.options[0] : "")}>
      {props.empty === undefined ? null : <option value="">{props.empty}</option>}
      {props.options.map((option) => <option key={option} value={option}>{props.labelOf(option)}</option>)}
    </select>
  </>
)

/** A group of checkboxes (several of a list may be chosen). */
export const Checks = (props: {
  readonly name: string
  readonly legend: string
  readonly options: ReadonlyArray<string>
  readonly value: ReadonlyArray<string>
  readonly labelOf: (option: string) => string
}) => (
  <fieldset>
    <legend>{props.legend}</legend>
    {props.options.map((option) => (
      <label key={option} className="check">
        <input type="checkbox" name={props.name} value={option} defaultChecked={props.value.includes(option)} />
        {props.labelOf(option)}
      </label>
    ))}
  </fieldset>
)

/** The editor's heading and, for a saved draft, its moderation status. */
export const EditorHead = ({ heading, status, texts }: { readonly heading: string; readonly status?: string | undefined; readonly texts: Texts }) => (
  <>
    <h1>{heading}</h1>
    {status === undefined ? null : <p>{texts.t("task.status")}: <strong>{texts.t(`status.${status}` as "status.draft")}</strong></p>}
  </>
)

/** Save as a draft (the form's submit) or send to moderation. */
export const EditorActions = ({ texts, disabled, onSubmit }: { readonly texts: Texts; readonly disabled: boolean; readonly onSubmit: () => void }) => (
  <div className="actions">
    <button type="submit" className="button button--secondary" disabled={disabled}>{texts.t("task.saveDraft")}</button>
    <button type="button" className="button" disabled={disabled} onClick={onSubmit}>{texts.t("task.submit")}</button>
  </div>
)

/**
 * The editor's status line. A stale revision (409: the draft was saved elsewhere since this page
 * read it) is explained, with a reload to the current draft; nothing of this form was saved.
 */
export const EditorStatus = ({ message, texts, children }: { readonly message: MessageKey | undefined; readonly texts: Texts; readonly children?: ReactNode }) => (
  <div className="editor__status">
    <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : texts.t(message === "error.stale" ? "editor.stale" : message)}</p>
    {message === "error.stale"
      ? <button type="button" className="button button--secondary" onClick={() => location.reload()}>{texts.t("editor.reload")}</button>
      : null}
    {children}
  </div>
)

type Json = Readonly<Record<string, unknown>>

/**
 * `base` with `fields` over it; a field given as `undefined` (left empty in the form) is removed.
 * A save replaces the whole draft, so what the form does not show is sent back as it was read.
 */
export const over = (base: Json | undefined, fields: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const merged: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete merged[key]
    else merged[key] = value
  }
  return merged
}

/** The object at `key` of a draft (a kind's own fields), or empty. */
export const objectAt = (draft: Json | undefined, key: string): Json => {
  const value = draft?.[key]
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Json : {}
}

/** A form's values: trimmed text, `undefined` when empty, so `over` removes the field. */
export const formValues = (form: HTMLFormElement) => {
  const values = new FormData(form)
  const raw = (name: string) => String(values.get(name) ?? "")
  const text = (name: string) => raw(name).trim() === "" ? undefined : raw(name).trim()
  /**
   * A whole number as typed ("120 000" too): `undefined` when empty, `null` when it is not one
   * within `min`..`max`.
   */
  const whole = (name: string, min: number, max: number): number | undefined | null => {
    const digits = raw(name).replace(/[\s\u00a0]/g, "")
    if (digits === "") return undefined
    const n = Number(digits)
    return Number.isSafeInteger(n) && n >= min && n <= max ? n : null
  }
  /** Items separated by commas (tags, skills), each trimmed, the empty ones left out. */
  const commaList = (name: string) => raw(name).split(",").map((item) => item.trim()).filter((item) => item !== "")
  /** One item per line. */
  const lines = (name: string) => raw(name).split("\n").map((item) => item.trim()).filter((item) => item !== "")
  const all = (name: string) => values.getAll(name).map(String)
  return { raw, text, whole, commaList, lines, all }
}

/** A list field: `undefined` (removed) when empty. */
export const listOrNone = <A,>(items: ReadonlyArray<A>) => items.length === 0 ? undefined : items

type Api = typeof import("../browserApi.js")["api"]
type Saved = { readonly uuid: string; readonly revision: number }

/**
 * Saves the whole draft with `<command>.save` (at the revision read, when editing) and, to send
 * it to moderation, submits it at the saved revision with `<command>.submit`.
 */
export const savePublication = async (
  api: Api,
  command: "services" | "jobs" | "portfolio" | "articles" | "resumes" | "learning",
  editing: Saved | undefined,
  data: Readonly<Record<string, unknown>>,
  submit: boolean
): Promise<Saved> => {
  // One call shape for every media kind: their save and submit inputs are the same but for `data`.
  const save = api[`${command}.save`] as unknown as (input: { readonly payload: unknown }) => Promise<Saved>
  const send = api[`${command}.submit`] as unknown as (input: { readonly payload: unknown }) => Promise<Saved>
  const saved = await save({
    payload: {
      requestUuid: crypto.randomUUID(),
      ...(editing === undefined ? {} : { publicationUuid: editing.uuid, expectedRevision: editing.revision }),
      // The client encodes the draft by its schema, where a field with a default (MediaData.ts in
      // @birzha/domain) must be present: a new draft has none yet.
      data: { files: [], description: "", ...data }
    }
  })
  return submit ? send({ payload: { requestUuid: crypto.randomUUID(), publicationUuid: saved.uuid, expectedRevision: saved.revision } }) : saved
}
