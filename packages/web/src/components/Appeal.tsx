import type { Texts } from "../i18n.js"
import type { LearnerAppealView } from "../model.js"
import { labelOf, points } from "./learning.js"
import { requestUuid, useAction } from "./useAction.js"
import { useHydrated } from "../hydrated.js"

/**
 * The learner's appeal of a released grade (learning.appeals.create): why, and the points they
 * think fair; then its status and the teachers' answer. Shown on the latest attempt of the player.
 */
export const Appeal = ({ submission, appeals, maxPoints, texts }: {
  readonly submission: string
  readonly appeals: ReadonlyArray<LearnerAppealView>
  readonly maxPoints: number
  readonly texts: Texts
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const open = appeals.some((appeal) => appeal.status === "open" || appeal.status === "escalated")
  const send = () => {
    const reason = (document.getElementById("appeal-reason") as HTMLTextAreaElement | null)?.value.trim() ?? ""
    const raw = (document.getElementById("appeal-points") as HTMLInputElement | null)?.value.trim() ?? ""
    const wanted = Number(raw)
    if (reason === "") return document.getElementById("appeal-reason")?.focus()
    if (raw !== "" && (!Number.isFinite(wanted) || wanted < 0 || wanted > maxPoints)) return document.getElementById("appeal-points")?.focus()
    void run((api) => api["learning.appeals.create"]({
      path: { submission },
      payload: { requestUuid: requestUuid(), reason, ...(raw === "" ? {} : { requestedPoints: wanted }) }
    }))
  }
  return (
    <div className="appeal">
      {appeals.length === 0 ? null : (
        <ul className="plain learner-appeals">
          {appeals.map((appeal) => (
            <li key={appeal.uuid}>
              <span className="tag">{labelOf(texts, "teaching.appealStatus", appeal.status)}</span>{" "}
              {t("teaching.learnerAppeal.yours")} {appeal.reason}
              {appeal.outcome === undefined ? null : (
                <><br />{labelOf(texts, "teaching.learnerAppeal.outcome", appeal.outcome)}
                  {appeal.resolvedPoints === undefined ? null : <> · {t("learning.score", { points: points(texts, appeal.resolvedPoints), max: maxPoints })}</>}
                  {appeal.comment === "" ? null : <> · {appeal.comment}</>}</>
              )}
            </li>
          ))}
        </ul>
      )}
      {open ? null : (
        <details>
          <summary>{t("teaching.learnerAppeal.ask")}</summary>
          <div className="stack">
            <label htmlFor="appeal-reason">{t("teaching.learnerAppeal.reason")}</label>
            <textarea id="appeal-reason" rows={3} maxLength={5000} />
            <label htmlFor="appeal-points">{t("teaching.learnerAppeal.points")}</label>
            <input id="appeal-points" type="number" min={0} max={maxPoints} step="any" inputMode="decimal" />
            <p><button type="button" className="button" disabled={!hydrated || busy} onClick={send}>{t("teaching.learnerAppeal.send")}</button></p>
            <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
          </div>
        </details>
      )}
    </div>
  )
}
