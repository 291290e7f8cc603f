import { href } from "../../components/Layout.js"
import { labelOf, StepState } from "../../components/learning.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { CalendarEntry } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"learningCalendar">, "data" | "texts">) =>
  `${texts.t("learning.calendar")} · ${data.courseTitle}`

type Texts = PageProps<"learningCalendar">["texts"]

/** Where a date comes from, layer by layer (schedule or offset, group, override, extension, pause, incident); the last one holds. */
const Sources = ({ entry, field, texts }: { readonly entry: CalendarEntry; readonly field: "dueAt" | "unlockAt"; readonly texts: Texts }) => {
  const layers = entry.sources.filter((source) => source.field === field)
  if (layers.length === 0) return null
  return (
    <ol className={`sources sources--${field}`}>
      {layers.map((layer, index) => (
        <li key={index} className={index === layers.length - 1 ? "sources__effective" : undefined}>
          {labelOf(texts, "learning.source", layer.source)}
          {layer.at === undefined ? null : <>: <time dateTime={layer.at}>{texts.date(layer.at)}</time></>}
          {layer.detail === undefined || layer.source !== "override" ? null : <span className="muted"> ({layer.detail})</span>}
        </li>
      ))}
    </ol>
  )
}

/** Asking for more time on one step: days and a reason; approved at once within the run's policy, otherwise by staff. */
const AskForTime = ({ entry, enrollment, texts }: { readonly entry: CalendarEntry; readonly enrollment: string; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const id = (name: string) => `${name}-${entry.nodeKey}`
  const ask = () => {
    const days = Number((document.getElementById(id("days")) as HTMLInputElement | null)?.value ?? "")
    const reason = (document.getElementById(id("reason")) as HTMLTextAreaElement | null)?.value.trim() ?? ""
    if (!Number.isInteger(days) || days < 1 || days > 365 || reason === "") {
      (document.getElementById(id(reason === "" && Number.isInteger(days) && days >= 1 ? "reason" : "days")) as HTMLElement | null)?.focus()
      return
    }
    void run((api) => api["learning.extensions.create"]({ path: { enrollment }, payload: { requestUuid: requestUuid(), nodeKey: entry.nodeKey, days, reason } }))
  }
  return (
    <details>
      <summary>{t("learning.extension.ask")}<span className="visually-hidden">: {entry.title}</span></summary>
      <div className="stack">
        <label htmlFor={id("days")}>{t("learning.extension.days")}</label>
        <input id={id("days")} type="number" min={1} max={365} step={1} defaultValue={3} inputMode="numeric" />
        <label htmlFor={id("reason")}>{t("learning.extension.reason")}</label>
        <textarea id={id("reason")} rows={2} maxLength={1000} />
        <p><button type="button" className="button" disabled={!hydrated || busy} onClick={ask}>{t("learning.extension.send")}</button></p>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </div>
    </details>
  )
}

/** The learner's due dates, each with where it comes from; asking for more time; the extension requests and their answers. */
export default function LearningCalendarPage({ data, texts }: PageProps<"learningCalendar">) {
  const { t, language } = texts
  const base = `/learning/${data.enrollment.uuid}`
  const titles = new Map(data.entries.map((entry) => [entry.nodeKey, entry.title]))
  const active = data.enrollment.status === "active" || data.enrollment.status === "paused"
  return (
    <div>
      <p className="card__meta">
        <a href={href(base, language)}>{t("learning.backToCourse")}</a>
        <a href={href("/learning", language)}>{t("learning.mine.title")}</a>
      </p>
      <h1>{t("learning.calendar")}: {data.courseTitle}</h1>
      <p className="lead">{t("learning.calendar.lead")}</p>
      {data.entries.length === 0 ? <p>{t("learning.calendar.none")}</p> : (
        <ul className="rows calendar">
          {data.entries.map((entry) => (
            <li key={entry.nodeKey} className="row row--stacked" data-node={entry.nodeKey}>
              <h2 className="row__title"><a href={href(base, language, { step: entry.nodeKey })}>{entry.title}</a> <StepState texts={texts} status={entry.status} /></h2>
              <dl className="facts facts--dates">
                {entry.unlockAt === undefined ? null : (
                  <div><dt>{t("learning.opens")}</dt><dd><time dateTime={entry.unlockAt}>{texts.date(entry.unlockAt)}</time><Sources entry={entry} field="unlockAt" texts={texts} /></dd></div>
                )}
                <div>
                  <dt>{t("learning.due")}</dt>
                  <dd>
                    {entry.dueAt === undefined ? t("learning.noDue") : <time dateTime={entry.dueAt} className="due">{texts.date(entry.dueAt)}</time>}
                    <Sources entry={entry} field="dueAt" texts={texts} />
                  </dd>
                </div>
              </dl>
              {active && entry.dueAt !== undefined && entry.status !== "completed" ? <AskForTime entry={entry} enrollment={data.enrollment.uuid} texts={texts} /> : null}
            </li>
          ))}
        </ul>
      )}
      <section aria-labelledby="extensions">
        <h2 id="extensions">{t("learning.extensions")}</h2>
        {data.extensions.length === 0 ? <p>{t("learning.extensions.none")}</p> : (
          <ul className="rows extension-requests">
            {data.extensions.map((extension) => (
              <li key={extension.uuid} className="row row--stacked">
                <p className="card__meta">
                  <span className="tag">{labelOf(texts, "learning.extensionStatus", extension.status)}</span>
                  <span>{extension.nodeKey === undefined ? t("learning.extension.wholeRun") : titles.get(extension.nodeKey) ?? extension.nodeKey}</span>
                </p>
                <p>{t("learning.extension.dates", { from: texts.date(extension.originalDueAt), to: texts.date(extension.requestedDueAt) })}</p>
                {extension.grantedDueAt === undefined ? null : <p>{t("learning.extension.granted", { date: texts.date(extension.grantedDueAt) })}</p>}
                <p className="muted">{extension.reason}</p>
                {extension.comment === "" ? null : <p>{t("learning.feedback")} {extension.comment}</p>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  )
}
