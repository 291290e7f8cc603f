import { useState } from "react"
import { CourseHead, dayOf, dayStart, intOf, requestUuid, Status, useAuthoringAction } from "../../components/authoring.js"
import { labelOf } from "../../components/learning.js"
import { useHydrated } from "../../hydrated.js"
import type { AuthoringRun } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"courseRuns">, "data" | "texts">) => `${data.course.title} · ${texts.t("authoring.tab.runs")}`

type Texts = PageProps<"courseRuns">["texts"]
type Api = typeof import("../../browserApi.js")["api"]
type Plan = Awaited<ReturnType<Api["learning.schedule.preview"]>>

const day = 86_400_000
const changeable = new Set(["draft", "scheduled", "running"])

/** A run's dates: a schedule plan previewed (who changes from what to what), then applied as previewed. */
const Schedule = ({ texts, run, steps }: { readonly texts: Texts; readonly run: AuthoringRun; readonly steps: ReadonlyArray<{ readonly nodeKey: string; readonly title: string }> }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run: act } = useAuthoringAction()
  const [startsOn, setStartsOn] = useState(dayOf(new Date(run.startsAt)))
  const [shift, setShift] = useState("")
  const [plan, setPlan] = useState<Plan | undefined>(undefined)
  const id = (field: string) => `${field}-${run.uuid}`
  const titleOf = (nodeKey: string | undefined) => nodeKey === undefined ? t("authoring.run.whole") : steps.find((s) => s.nodeKey === nodeKey)?.title ?? nodeKey
  return (
    <details className="schedule">
      <summary>{t("authoring.schedule")}</summary>
      <form className="stack" onSubmit={(event) => {
        event.preventDefault()
        const days = intOf(shift)
        // The start moves only when another day is chosen (a run may start at any hour of its day).
        const moved = startsOn !== dayOf(new Date(run.startsAt))
        void act((api) => api["learning.schedule.preview"]({
          path: { run: run.uuid },
          payload: {
            requestUuid: requestUuid(),
            changes: days === undefined || days === 0 ? [] : [{ shiftDays: days }],
            ...(moved ? { startsAt: dayStart(startsOn) } : {})
          }
        }), setPlan)
      }}>
        <p className="hint">{t("authoring.schedule.hint")}</p>
        <div className="authoring-pair">
          <div className="field">
            <label htmlFor={id("starts")}>{t("authoring.run.startsOn")}</label>
            <input id={id("starts")} type="date" value={startsOn} required onChange={(event) => setStartsOn(event.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={id("shift")}>{t("authoring.schedule.shift")}</label>
            <input id={id("shift")} type="number" min={-365} max={365} value={shift} onChange={(event) => setShift(event.target.value)} />
          </div>
        </div>
        <p><button type="submit" className="button button--secondary button--small" disabled={!hydrated || busy}>{t("authoring.schedule.preview")}</button></p>
      </form>
      {plan === undefined ? null : (
        <div className="plan" aria-live="polite">
          <h4>{t("authoring.plan")}</h4>
          {plan.items.length === 0 ? <p>{t("authoring.plan.nothing")}</p> : (
            <div className="table-scroll">
              <table className="diff plan__items">
                <caption>{t("authoring.plan.caption", { n: plan.affectedEnrollments })}</caption>
                <thead>
                  <tr><th scope="col">{t("authoring.plan.what")}</th><th scope="col">{t("authoring.plan.before")}</th><th scope="col">{t("authoring.plan.after")}</th></tr>
                </thead>
                <tbody>
                  {plan.items.map((item, index) => (
                    <tr key={index}>
                      <td>{titleOf(item.nodeKey)}: {labelOf(texts, "authoring.plan.field", item.field)}</td>
                      <td>{item.before === undefined ? "—" : texts.date(new Date(item.before).toISOString())}</td>
                      <td>{item.after === undefined ? "—" : texts.date(new Date(item.after).toISOString())}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {plan.blocking.length === 0 ? null : (
            <ul className="issues">
              {plan.blocking.map((problem, index) => (
                <li key={index} className="issue issue--error">
                  <span className="tag tag--warning">{t("authoring.plan.blocking")}</span>{" "}
                  {labelOf(texts, "authoring.plan.problem", problem.code)}{problem.nodeKey === undefined ? "" : ` — ${titleOf(problem.nodeKey)}`}
                </li>
              ))}
            </ul>
          )}
          {plan.items.length === 0 || plan.blocking.length > 0 ? null : (
            <p>
              <button type="button" className="button button--small" disabled={!hydrated || busy}
                onClick={() => void act((api) => api["learning.schedule.apply"]({ path: { preview: plan.uuid }, payload: { requestUuid: requestUuid() } }))}>
                {t("authoring.plan.apply")}
              </button>
            </p>
          )}
        </div>
      )}
      <Status texts={texts} message={message} />
    </details>
  )
}

/** A run of the course: its state, dates and policies; its schedule; opening a draft run for enrollment. */
const Run = ({ texts, run, steps }: { readonly texts: Texts; readonly run: AuthoringRun; readonly steps: PageProps<"courseRuns">["data"]["steps"] }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run: act } = useAuthoringAction()
  return (
    <li className="row row--stacked run" data-uuid={run.uuid}>
      <h3 className="row__title">{run.title}</h3>
      <p className="card__meta">
        <span className={`tag run-status run-status--${run.status}`}>{labelOf(texts, "authoring.runStatus", run.status)}</span>
        <span>{t("authoring.version", { n: run.versionNumber })}</span>
        <span>{labelOf(texts, "authoring.pacing", run.pacing)}</span>
        <span>{labelOf(texts, "authoring.admission", run.admission)}</span>
        {run.capacity === undefined ? null : <span>{t("authoring.run.capacityOf", { n: run.capacity })}</span>}
      </p>
      <p>
        {t("authoring.run.from", { date: texts.date(run.startsAt) })}
        {run.endsAt === undefined ? null : <> · {t("authoring.run.until", { date: texts.date(run.endsAt) })}</>}
      </p>
      {run.status !== "draft" ? null : (
        <p>
          <button type="button" className="button button--small" disabled={!hydrated || busy} aria-label={t("authoring.run.openOf", { title: run.title })}
            onClick={() => void act((api) => api["learning.runs.update"]({ path: { run: run.uuid }, payload: { requestUuid: requestUuid(), expectedRevision: run.revision, publish: true } }))}>
            {t("authoring.run.open")}
          </button>
        </p>
      )}
      <Status texts={texts} message={message} />
      {changeable.has(run.status) ? <Schedule texts={texts} run={run} steps={steps} /> : null}
    </li>
  )
}

/** The course's runs, each with its schedule (previewed, then applied), and a form for a new run of a published version. */
export default function CourseRunsPage({ data, texts }: PageProps<"courseRuns">) {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const today = dayOf(new Date())
  const [form, setForm] = useState({
    title: "", version: String(data.course.latestVersion), pacing: "cohort", admission: "open", startsOn: today,
    endsOn: dayOf(new Date(Date.now() + 60 * day)), capacity: "", pauses: "1", pauseDays: "14"
  })
  const set = (field: keyof typeof form) => (event: { readonly target: { readonly value: string } }) => setForm({ ...form, [field]: event.target.value })
  return (
    <div className="authoring course-runs">
      <CourseHead texts={texts} course={data.course} current="runs" />
      <section aria-labelledby="runs">
        <h2 id="runs">{t("authoring.runs")}</h2>
        {data.runs.length === 0 ? <p>{t("authoring.runs.none")}</p> : (
          <ul className="rows">
            {data.runs.map((r) => <Run key={r.uuid} texts={texts} run={r} steps={data.steps} />)}
          </ul>
        )}
      </section>
      <section aria-labelledby="new-run" className="panel">
        <h2 id="new-run">{t("authoring.run.new")}</h2>
        {data.course.latestVersion === 0 ? <p>{t("authoring.run.publishFirst")}</p> : (
          <form className="stack" onSubmit={(event) => {
            event.preventDefault()
            const capacity = intOf(form.capacity)
            void run((api) => api["learning.runs.create"]({
              path: { course: data.course.uuid },
              payload: {
                requestUuid: requestUuid(), versionNumber: intOf(form.version) ?? data.course.latestVersion, title: form.title.trim(),
                pacing: form.pacing as "cohort", admission: form.admission as "open", startsAt: dayStart(form.startsOn),
                ...(form.endsOn === "" ? {} : { endsAt: dayStart(form.endsOn) }), ...(capacity === undefined ? {} : { capacity }),
                waitlist: false, enrollmentWindow: {}, pausePolicy: { maxCount: intOf(form.pauses) ?? 0, maxDays: intOf(form.pauseDays) ?? 0 }
              }
            }))
          }}>
            <div className="field">
              <label htmlFor="run-title">{t("authoring.run.title")}</label>
              <input id="run-title" value={form.title} required maxLength={160} onChange={set("title")} />
            </div>
            <div className="authoring-pair">
              <div className="field">
                <label htmlFor="run-version">{t("authoring.run.version")}</label>
                <select id="run-version" value={form.version} onChange={set("version")}>
                  {Array.from({ length: data.course.latestVersion }, (_, i) => data.course.latestVersion - i).map((n) => (
                    <option key={n} value={String(n)}>{t("authoring.version", { n })}</option>
                  ))}
                </select>
              </div>
              <div className="field">
                <label htmlFor="run-pacing">{t("authoring.run.pacing")}</label>
                <select id="run-pacing" value={form.pacing} onChange={set("pacing")}>
                  {["cohort", "self"].map((p) => <option key={p} value={p}>{labelOf(texts, "authoring.pacing", p)}</option>)}
                </select>
              </div>
              <div className="field">
                <label htmlFor="run-admission">{t("authoring.run.admission")}</label>
                <select id="run-admission" value={form.admission} onChange={set("admission")}>
                  {["open", "approval", "invite"].map((a) => <option key={a} value={a}>{labelOf(texts, "authoring.admission", a)}</option>)}
                </select>
              </div>
              <div className="field">
                <label htmlFor="run-capacity">{t("authoring.run.capacity")}</label>
                <input id="run-capacity" type="number" min={1} max={100000} value={form.capacity} onChange={set("capacity")} />
              </div>
              <div className="field">
                <label htmlFor="run-starts">{t("authoring.run.startsOn")}</label>
                <input id="run-starts" type="date" value={form.startsOn} required onChange={set("startsOn")} />
              </div>
              <div className="field">
                <label htmlFor="run-ends">{t("authoring.run.endsOn")}</label>
                <input id="run-ends" type="date" value={form.endsOn} onChange={set("endsOn")} />
              </div>
              <div className="field">
                <label htmlFor="run-pauses">{t("authoring.run.pauses")}</label>
                <input id="run-pauses" type="number" min={0} max={10} value={form.pauses} onChange={set("pauses")} />
              </div>
              <div className="field">
                <label htmlFor="run-pause-days">{t("authoring.run.pauseDays")}</label>
                <input id="run-pause-days" type="number" min={0} max={365} value={form.pauseDays} onChange={set("pauseDays")} />
              </div>
            </div>
            <p><button type="submit" className="button" disabled={!hydrated || busy}>{t("authoring.run.create")}</button></p>
            <Status texts={texts} message={message} />
          </form>
        )}
      </section>
    </div>
  )
}
