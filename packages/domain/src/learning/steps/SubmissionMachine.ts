import type { SubmissionStatus } from "./StepModel.js"

/**
 * The submission state machine as data: each trigger, the states it starts from
 * and the state it leads to. Operations and the grading worker consult it before every change;
 * the tests generate every state × trigger from it. `refunds`: the trigger gives the attempt back
 * (cancel before grading, platform failure); such a submission no longer counts against attempts.
 */
export interface SubmissionTransition {
  readonly from: ReadonlyArray<SubmissionStatus | "none">
  readonly to: SubmissionStatus
  readonly refunds?: true
}

export const submissionTransitions = {
  /** submissions.create, demo.apply: an attempt is consumed. */
  "learning.submissions.create": { from: ["none"], to: "submitted" },
  /** A declarative check graded the reply inline (same transaction as create). */
  "grade.inline": { from: ["submitted"], to: "graded" },
  /** The graded result passed and nothing else is required. */
  "grade.accept": { from: ["graded"], to: "accepted" },
  /** The node requires review: after the check, or at once when there is no check. */
  "review.require": { from: ["submitted", "graded"], to: "awaiting_review" },
  /** W: the grading worker claimed the submission's job. */
  "worker.dispatch": { from: ["submitted"], to: "checking" },
  /** W: the external checker answered with a verdict. */
  "worker.graded": { from: ["checking"], to: "graded" },
  /** W: the job failed on platform errors after its retries. */
  "worker.failed": { from: ["checking"], to: "check_failed", refunds: true },
  /** The learner cancels before grading. */
  "learning.submissions.cancel": { from: ["submitted", "checking", "awaiting_review"], to: "cancelled", refunds: true },
  /** Regrades and incidents requeue a failed check. */
  "requeue": { from: ["check_failed"], to: "submitted" },
  /** A released review decides. */
  "review.accept": { from: ["awaiting_review"], to: "accepted" },
  "review.revise": { from: ["awaiting_review"], to: "revision_requested" },
  "review.grade": { from: ["awaiting_review"], to: "graded" }
} as const satisfies Readonly<Record<string, SubmissionTransition>>

export type SubmissionTrigger = keyof typeof submissionTransitions

export const submissionAllows = (trigger: SubmissionTrigger, status: SubmissionStatus | "none"): boolean =>
  (submissionTransitions[trigger].from as ReadonlyArray<string>).includes(status)

/** Statuses in which a submission still waits for something (the grading or review queue). */
export const pendingStatuses: ReadonlyArray<SubmissionStatus> = ["submitted", "checking", "awaiting_review"]
