import type { MessageKey, Texts } from "../i18n.js"
import type { OutlineItem, StepData, SubmissionView } from "../model.js"
import { type Json, optional, plain } from "./json.js"

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

/** Whether a submission's grade can be appealed on the player: a reviewer's layer is among its layers (the only ones the player offers to appeal). */
export const appealable = (submission: unknown): boolean =>
  ((plain(submission)["layers"] ?? []) as ReadonlyArray<Json>).some((layer) => layer["kind"] === "review")

/**
 * The open step as the player shows it, from learning.steps.get, the step's learning.submissions.history
 * (newest first) and the latest attempt's learning.appeals.list_for_submission (absent when not
 * read): the same on the server (the page's first load) and in the browser (a step switch).
 */
export const stepDataOf = (step: unknown, history: ReadonlyArray<unknown>, appeals: ReadonlyArray<unknown> | undefined): StepData => {
  const s = plain(step)
  const grading = s["grading"] as Json | undefined
  const draft = s["draft"] as Json | undefined
  return {
    nodeKey: s["nodeKey"], title: s["title"], status: s["status"], attempts: s["attempts"],
    ...optional("stepType", s["stepType"]), ...optional("body", s["body"]),
    ...optional("dueAt", s["dates"]?.dueAt), ...optional("unlockAt", s["dates"]?.unlockAt),
    ...optional("grading", grading === undefined ? undefined : {
      maxPoints: grading["maxPoints"], checkedBy: grading["checkedBy"], review: grading["review"], ...optional("passThreshold", grading["passThreshold"])
    }),
    ...optional("draft", draft === undefined ? undefined : { reply: replyText(draft["reply"]), revision: draft["revision"], updatedAt: draft["updatedAt"] }),
    submissions: history.map(submissionOf),
    ...optional("appeals", appeals?.map((appeal) => {
      const a = plain(appeal)
      return {
        uuid: a["uuid"], status: a["status"], reason: a["reason"], comment: a["comment"],
        ...optional("outcome", a["outcome"]), ...optional("resolvedPoints", a["resolvedPoints"] ?? a["closedPoints"])
      }
    }))
  }
}

/** The course's outline with each step's state and due date from the enrollment's learning.calendar.get (the player's tree). */
export const treeWithProgress = (outline: ReadonlyArray<OutlineItem>, calendar: unknown): ReadonlyArray<OutlineItem> => {
  const entries = new Map((plain(calendar)["items"] as ReadonlyArray<Json>).map((item) => [item["nodeKey"] as string, item]))
  return outline.map((node) => {
    const entry = entries.get(node.nodeKey)
    // A node whose state and date are as they were stays the same object (the player re-renders only what changed).
    if (entry === undefined || (entry["status"] === node.status && (entry["dueAt"] ?? undefined) === node.dueAt)) return node
    return { ...node, status: entry["status"], ...optional("dueAt", entry["dueAt"]) }
  })
}

/** The enrollment's progress (learning.completion.get) as the player's head shows it. */
export const completionOf = (completion: unknown): {
  readonly percent: number; readonly requiredSteps: number; readonly completedRequiredSteps: number; readonly criteriaMet: boolean; readonly completedAt?: string
} => {
  const c = plain(completion)
  return {
    percent: c["percent"], requiredSteps: c["requiredSteps"], completedRequiredSteps: c["completedRequiredSteps"], criteriaMet: c["criteriaMet"],
    ...optional("completedAt", c["completedAt"])
  }
}
