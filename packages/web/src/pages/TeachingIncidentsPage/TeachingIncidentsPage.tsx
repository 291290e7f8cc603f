import { labelOf } from "../../components/learning.js"
import { fieldValue, may, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { TeachingIncidentView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingIncidents">, "data" | "texts">) => `${texts.t("teaching.incidents.title")} · ${data.course.courseTitle}`

type Props = PageProps<"teachingIncidents">
type Texts = Props["texts"]

const kinds = ["platform_outage", "checker_outage", "content_error", "other"] as const

/** A `datetime-local` value read as UTC (as the page's dates are shown); empty or invalid: undefined. */
const instant = (value: string) => {
  const date = new Date(`${value}Z`)
  return value === "" || Number.isNaN(date.getTime()) ? undefined : date
}

/** Recording an incident of a run: what happened, when (UTC), on which steps; the API computes who it touched. */
const NewIncident = ({ data, texts }: { readonly data: Props["data"]; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const record = () => {
    const from = instant(fieldValue("incident-from"))
    const to = instant(fieldValue("incident-to"))
    const description = fieldValue("incident-description")
    if (from === undefined) return document.getElementById("incident-from")?.focus()
    if (to === undefined || to.getTime() < from.getTime()) return document.getElementById("incident-to")?.focus()
    if (description === "") return document.getElementById("incident-description")?.focus()
    const nodeKeys = [...document.querySelectorAll<HTMLInputElement>("input[name=incident-step]:checked")].map((input) => input.value)
    void run((api) => api["learning.incidents.create"]({
      path: { run: fieldValue("incident-run") },
      payload: { requestUuid: requestUuid(), kind: fieldValue("incident-kind") as typeof kinds[number], window: { from, to }, description, ...(nodeKeys.length === 0 ? {} : { nodeKeys }) }
    }))
  }
  if (data.runs.length === 0) return null
  return (
    <details className="panel">
      <summary>{t("teaching.incidents.new")}</summary>
      <div className="stack">
        <label htmlFor="incident-run">{t("teaching.incidents.run")}</label>
        <select id="incident-run">{data.runs.map((r) => <option key={r.uuid} value={r.uuid}>{r.title}</option>)}</select>
        <label htmlFor="incident-kind">{t("teaching.incidents.kind")}</label>
        <select id="incident-kind">{kinds.map((kind) => <option key={kind} value={kind}>{labelOf(texts, "teaching.incidentKind", kind)}</option>)}</select>
        <label htmlFor="incident-from">{t("teaching.incidents.from")}</label>
        <input id="incident-from" type="datetime-local" />
        <label htmlFor="incident-to">{t("teaching.incidents.to")}</label>
        <input id="incident-to" type="datetime-local" />
        {data.steps.length === 0 ? null : (
          <fieldset>
            <legend>{t("teaching.incidents.steps")}</legend>
            {data.steps.map((step) => (
              <label key={step.nodeKey} className="check"><input type="checkbox" name="incident-step" value={step.nodeKey} /> <span className="check__text">{step.title}</span></label>
            ))}
          </fieldset>
        )}
        <label htmlFor="incident-description">{t("teaching.incidents.description")}</label>
        <textarea id="incident-description" rows={3} maxLength={5000} />
        <p><button type="button" className="button" disabled={!hydrated || busy} onClick={record}>{t("teaching.incidents.record")}</button></p>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </div>
    </details>
  )
}

/** Compensation for an open incident: preview first (what each learner gets), then apply exactly that plan. */
const Compensation = ({ incident, texts }: { readonly incident: TeachingIncidentView; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const id = (name: string) => `${name}-${incident.uuid}`
  const preview = () => {
    const days = fieldValue(id("days"))
    const attempts = fieldValue(id("attempts"))
    const requeue = (document.getElementById(id("requeue")) as HTMLInputElement | null)?.checked === true
    void run((api) => api["learning.incidents.preview"]({
      path: { incident: incident.uuid },
      payload: {
        requestUuid: requestUuid(),
        ...(days === "" ? {} : { extendDays: Number(days) }), ...(attempts === "" ? {} : { refundAttempts: Number(attempts) }), ...(requeue ? { requeue } : {})
      }
    }))
  }
  const plan = incident.plan
  return (
    <div className="stack">
      <fieldset className="stack">
        <legend>{t("teaching.incidents.compensation")}</legend>
        <label htmlFor={id("days")}>{t("teaching.incidents.extendDays")}</label>
        <input id={id("days")} type="number" min={1} max={60} step={1} inputMode="numeric" />
        <label htmlFor={id("attempts")}>{t("teaching.incidents.refundAttempts")}</label>
        <input id={id("attempts")} type="number" min={1} max={10} step={1} inputMode="numeric" />
        <label className="check"><input id={id("requeue")} type="checkbox" /> <span className="check__text">{t("teaching.incidents.requeue")}</span></label>
        <p><button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={preview}>{t("teaching.incidents.preview")}</button></p>
      </fieldset>
      {plan === undefined || plan.status !== "ready" ? null : (
        <div className="compensation-plan">
          <div className="table-scroll">
            <table className="diff">
              <caption>{t("teaching.incidents.planCaption")}</caption>
              <thead><tr><th scope="col">{t("teaching.regrade.learner")}</th><th scope="col">{t("teaching.regrade.step")}</th><th scope="col">{t("teaching.incidents.change")}</th></tr></thead>
              <tbody>
                {plan.items.map((item, index) => (
                  <tr key={index}>
                    <th scope="row">{item.learner}</th>
                    <td>{item.step}</td>
                    <td>
                      {labelOf(texts, "teaching.compensation", item.kind)}
                      {item.dueBefore === undefined || item.dueAfter === undefined ? null : <>: {texts.date(item.dueBefore)} → {texts.date(item.dueAfter)}</>}
                      {item.attempts === undefined ? null : <>: +{item.attempts}</>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {plan.items.length === 0 ? <p>{t("teaching.incidents.nothing")}</p> : null}
          {plan.blocking.length === 0 ? null : <p className="notice">{t("teaching.incidents.blocking", { n: plan.blocking.length })}</p>}
          <p>
            <button type="button" className="button" disabled={!hydrated || busy || plan.blocking.length > 0}
              onClick={() => void run((api) => api["learning.incidents.apply"]({ path: { incident: incident.uuid }, payload: { requestUuid: requestUuid(), planUuid: plan.uuid } }))}>
              {t("teaching.incidents.apply")}
            </button>
          </p>
        </div>
      )}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}

/** The course's incidents: who each touched, and compensation previewed before it is applied. */
export default function TeachingIncidentsPage({ data, texts }: Props) {
  const { t } = texts
  const manage = may(data.course, "runs_manage")
  return (
    <div>
      <TeachingHeader course={data.course} texts={texts} current="incidents">{t("teaching.incidents.title")}: {data.course.courseTitle}</TeachingHeader>
      {manage ? <NewIncident data={data} texts={texts} /> : null}
      {data.items.length === 0 ? <p>{t("teaching.incidents.none")}</p> : (
        <ul className="rows incidents">
          {data.items.map((incident) => (
            <li key={incident.uuid} className="row row--stacked" data-uuid={incident.uuid}>
              <h2 className="row__title">{labelOf(texts, "teaching.incidentKind", incident.kind)} · {incident.runTitle}</h2>
              <p className="card__meta">
                <span className="tag incident-status">{labelOf(texts, "teaching.incidentStatus", incident.status)}</span>
                <span>{texts.date(incident.from)} — {texts.date(incident.to)}</span>
                {incident.steps.length === 0 ? null : <span>{incident.steps.join(", ")}</span>}
              </p>
              <p>{incident.description}</p>
              <p>{t("teaching.incidents.affected", { n: incident.affected.length })}</p>
              {manage && incident.status === "open" ? <Compensation incident={incident} texts={texts} /> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
