import { useState } from "react"
import { kindLabel } from "../../components/format.js"
import { href } from "../../components/Layout.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { Texts } from "../../i18n.js"
import { commandOf, editorPathOf, type OwnLifecycle } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"myPublications">, "texts">) => texts.t("mine.title")

/** The owner's state changes of a publication (Kinds.ts in @birzha/domain: hide, restore, delete; tasks also close). */
type Change = "hide" | "restore" | "delete" | "close"

interface Row extends OwnLifecycle {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  readonly reason: string
  readonly updatedAt: string
  readonly title: string
  readonly kind: string
  /** The command prefix of the kind's operations and editor path (`tasks`, `jobs`, `learning`, …). */
  readonly command: string
  /** The editor's path prefix (a training's is /trainings, its commands `learning.*`). */
  readonly editor: string
}

/** Which changes the row offers now: what its state allows (a repeated hide or close would change nothing). */
const changesOf = (row: Row): ReadonlyArray<Change> => [
  ...(row.hidden === true ? ["restore" as const] : row.live ? ["hide" as const] : []),
  ...(row.kind === "task" && row.live && row.closed !== true && row.hidden !== true ? ["close" as const] : []),
  "delete" as const
]

/**
 * A row's state changes, each asked for again before it is sent (what it does, in words, with the
 * publication's title), then sent at the row's revision; the page loads again after.
 */
const Lifecycle = ({ row, texts }: { readonly row: Row; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [asking, setAsking] = useState<Change | undefined>(undefined)
  const send = (change: Change) =>
    void run((api) => {
      const call = api[`${row.command}.${change}` as "tasks.hide"] as unknown as (input: {
        readonly payload: { readonly requestUuid: string; readonly publicationUuid: string; readonly expectedRevision: number }
      }) => Promise<unknown>
      return call({ payload: { requestUuid: requestUuid(), publicationUuid: row.uuid, expectedRevision: row.revision } })
    })
  return (
    <div className="lifecycle">
      {asking === undefined
        ? (
          <p className="row__actions">
            {changesOf(row).map((change) => (
              <button
                key={change}
                type="button"
                className={change === "delete" ? "button button--small button--danger" : "button button--small button--secondary"}
                disabled={!hydrated || busy}
                aria-label={t(`lifecycle.${change}Label`, { title: row.title })}
                onClick={() => setAsking(change)}
              >
                {t(`lifecycle.${change}`)}
              </button>
            ))}
          </p>
        )
        : (
          <div className="lifecycle__confirm" role="group" aria-labelledby={`confirm-${row.uuid}`}>
            <p id={`confirm-${row.uuid}`}>{t(`lifecycle.${asking}Confirm`, { title: row.title })}</p>
            <p className="row__actions">
              <button
                type="button"
                className={asking === "delete" ? "button button--small button--danger" : "button button--small"}
                disabled={busy}
                onClick={() => send(asking)}
              >
                {t(`lifecycle.${asking}Yes`)}
              </button>
              <button type="button" className="button button--small button--secondary" disabled={busy} onClick={() => setAsking(undefined)}>
                {t("lifecycle.cancel")}
              </button>
            </p>
          </div>
        )}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}

/**
 * The signed-in profile's publications of every kind: each with its moderation status and the
 * moderator's reason, whether it is hidden or closed, its editor, and its state changes.
 */
export default function MyPublicationsPage({ data, texts }: PageProps<"myPublications">) {
  const { t, language } = texts
  const rows: ReadonlyArray<Row> = [
    ...data.tasks.map((task) => ({ ...task, kind: "task", command: "tasks", editor: "tasks" })),
    ...data.services.map((service) => ({ ...service, kind: "service", command: "services", editor: "services" })),
    ...data.vacancies.map((vacancy) => ({ ...vacancy, kind: "vacancy", command: "jobs", editor: "jobs" })),
    ...data.media.map((item) => ({ ...item, command: commandOf(item.kind), editor: editorPathOf(item.kind) }))
  ].map((row) => ({ ...row, live: row.live ?? row.status === "approved" }))
  return (
    <div>
      <h1>{t("mine.title")}</h1>
      <p className="actions">
        <a className="button" href={href("/tasks/new", language)}>{t("nav.newTask")}</a>
        <a className="button button--secondary" href={href("/services/new", language)}>{t("mine.newService")}</a>
        <a className="button button--secondary" href={href("/jobs/new", language)}>{t("mine.newVacancy")}</a>
        <a className="button button--secondary" href={href("/portfolio/new", language)}>{t("mine.newPortfolio")}</a>
        <a className="button button--secondary" href={href("/articles/new", language)}>{t("mine.newArticle")}</a>
        <a className="button button--secondary" href={href("/resumes/new", language)}>{t("mine.newResume")}</a>
        <a className="button button--secondary" href={href("/trainings/new", language)}>{t("mine.newTraining")}</a>
      </p>
      {rows.length === 0 ? <p>{t("mine.none")}</p> : (
        <ul className="rows" aria-label={t("mine.title")}>
          {rows.map((row) => (
            <li key={row.uuid} className="row" data-uuid={row.uuid}>
              <div>
                <h2 className="row__title">{row.title}</h2>
                <p className="card__meta">
                  <span className={`tag tag--${row.status}`}>{t(`status.${row.status}` as "status.draft")}</span>
                  {row.hidden === true ? <span className="tag tag--muted">{t("lifecycle.hidden")}</span> : null}
                  {row.closed === true ? <span className="tag tag--muted">{t("lifecycle.closed")}</span> : null}
                  <span>{kindLabel(texts, row.kind)}</span>
                  <span>{t("mine.updated", { date: texts.date(row.updatedAt) })}</span>
                </p>
                {row.reason === "" ? null : <p className="reason">{t(row.status === "approved" ? "lifecycle.note" : "mine.reason", { reason: row.reason })}</p>}
                {row.status === "returned" ? <p className="muted">{t("mine.returnedHint")}</p> : null}
                <p className="row__actions">
                  {row.live && row.hidden !== true ? <a href={href(`/p/${row.uuid}`, language)} aria-label={t("mine.open", { title: row.title })}>{t("lifecycle.open")}</a> : null}
                  <a href={href(`/${row.editor}/${row.uuid}/edit`, language)} aria-label={t("mine.editLabel", { title: row.title })}>{t("mine.edit")}</a>
                </p>
              </div>
              <Lifecycle row={row} texts={texts} />
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
