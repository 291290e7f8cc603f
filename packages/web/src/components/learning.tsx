import type { MessageKey, Texts } from "../i18n.js"
import type { SubmissionView } from "../model.js"

/** A value's label under `prefix` (`learning.stepType.quiz`), or the value itself when the catalogs have none. */
export const labelOf = (texts: Texts, prefix: string, value: string) => {
  const key = `${prefix}.${value}` as MessageKey
  const text = texts.t(key)
  return text === key ? value : text
}

/** Points as the page's locale writes them (a regrade may leave a fraction). */
export const points = (texts: Texts, value: number) => texts.number(Math.round(value * 100) / 100)

/** A step's state as a tag: locked, available, in progress, completed, failed. */
export const StepState = ({ texts, status }: { readonly texts: Texts; readonly status: string }) => (
  <span className={`tag step-state step-state--${status}`}>{labelOf(texts, "learning.stepStatus", status)}</span>
)

/** A rating out of five, spoken as words and drawn as stars. */
export const Stars = ({ texts, rating }: { readonly texts: Texts; readonly rating: number }) => (
  <span className="stars" role="img" aria-label={texts.t("learning.ratingOf", { n: rating })}>
    {"★".repeat(Math.round(rating))}<span className="stars__empty">{"★".repeat(5 - Math.round(rating))}</span>
  </span>
)

/** The bar of a learner's progress, with its figure in words. */
export const Progress = ({ texts, percent, label }: { readonly texts: Texts; readonly percent: number; readonly label: string }) => (
  <div className="progress-line">
    <progress max={100} value={percent} aria-label={label} />
    <span>{texts.t("learning.percent", { n: percent })}</span>
  </div>
)

type Json = Record<string, any>

/** A reply as the page shows it: text as is, anything else as JSON. */
export const replyText = (reply: unknown): string => typeof reply === "string" ? reply : reply === undefined || reply === null ? "" : JSON.stringify(reply)

/** A submission (learning.submissions.get, .create, .history) as the player shows it; the same on the server and in the browser. */
export const submissionOf = (submission: unknown): SubmissionView => {
  const s = JSON.parse(JSON.stringify(submission)) as Json
  const score = s["score"] as Json | undefined
  return {
    uuid: s["uuid"], revision: s["revision"], attemptNo: s["attemptNo"], status: s["status"], late: s["late"], submittedAt: s["submittedAt"],
    reply: replyText(s["reply"]),
    ...(score === undefined ? {} : {
      score: { points: score["points"], maxPoints: score["maxPoints"], verdict: score["verdict"], passed: score["passed"], feedback: score["feedback"] }
    }),
    layers: (s["layers"] as ReadonlyArray<Json>).map((layer) => ({
      kind: layer["kind"], points: layer["points"], maxPoints: layer["maxPoints"], verdict: layer["verdict"], feedback: layer["feedback"],
      passed: layer["passed"], late: layer["late"], revoked: layer["revokedAt"] !== undefined, createdAt: layer["createdAt"]
    }))
  }
}
