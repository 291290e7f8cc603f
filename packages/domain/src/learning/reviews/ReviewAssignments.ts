import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { appendEvent } from "../../store/Outbox.js"
import type { CourseNode } from "../courses/Model.js"
import { holdsAtom, standingOn } from "../Permissions.js"
import {
  type AssignmentRow,
  type HistoryEntry,
  insertAssignment,
  lockClaimedStaffAssignments,
  markOverdueAssignments,
  nextOverdueDue,
  returnClaimToPool
} from "./ReviewAssignmentRepository.js"
import type { AssignmentStatus, ReviewAssignment } from "./ReviewModel.js"
import type { SubmissionRow } from "../steps/SubmissionViews.js"

/**
 * Review assignments: their state machine as data (the row and every
 * write of it are in ReviewAssignmentRepository.ts), and the two
 * places outside the review operations that change them: a submission that needs review gets its
 * assignments (`requestReviews`, called where a submission enters `awaiting_review`), and a
 * revoked reviewer's claims return to the pool (`returnRevokedClaims`, Staff.ts's hook). Kept apart
 * from Reviews.ts so Submissions.ts can call it without an import cycle.
 */

/**
 * Who may move an assignment (the "who" of the role matrix (`learning/RoleMatrix.test.ts`)):
 * - `instructor`: the course's owner or an instructor in scope of the run;
 * - `holder`: the assignment's current reviewer (staff, a peer, or the learner for a self review);
 * - `releaser`: staff holding `grades_release` in scope (reviewers hold it by default);
 * - `reviewer`: staff holding `review` in scope (claims staff assignments);
 * - `peer`: another active learner of the run (claims peer assignments);
 * - `system`: the platform (a submission needs review, a release cancels the rest, staff revocation).
 */
export type AssignmentActor = "instructor" | "holder" | "releaser" | "reviewer" | "peer" | "system"

export interface AssignmentTransition {
  readonly from: ReadonlyArray<AssignmentStatus | "none">
  readonly to: AssignmentStatus
  readonly who: ReadonlyArray<AssignmentActor>
}

/** The ReviewAssignment state machine as data; operations consult it, tests are generated from it. */
export const assignmentTransitions = {
  /** A submission needs review: one assignment per review the node asks for (`learning.review.requested`). */
  "request": { from: ["none"], to: "pooled", who: ["system"] },
  "learning.reviews.claim": { from: ["pooled"], to: "claimed", who: ["reviewer", "peer", "instructor"] },
  /** Provisional or final; a holder may decide again until release, an instructor decides the final one. */
  "learning.reviews.decide": { from: ["claimed", "decided"], to: "decided", who: ["holder", "instructor"] },
  "learning.reviews.release": { from: ["decided"], to: "released", who: ["releaser", "instructor"] },
  /** Back to the pool: its holder or an instructor; a revoked reviewer's claims go back too (system). */
  "learning.reviews.reassign.pool": { from: ["claimed"], to: "pooled", who: ["holder", "instructor", "system"] },
  /** To a named reviewer: an instructor only. */
  "learning.reviews.reassign.profile": { from: ["pooled", "claimed"], to: "claimed", who: ["instructor"] },
  /** A reported issue pauses the due clock; the state stays. */
  "learning.reviews.report_issue": { from: ["claimed"], to: "claimed", who: ["holder"] },
  "learning.reviews.draft": { from: ["claimed"], to: "claimed", who: ["holder"] },
  /** Released decision or cancelled submission: the other open assignments of the submission end. */
  "cancel": { from: ["pooled", "claimed", "decided"], to: "cancelled", who: ["system"] }
} as const satisfies Readonly<Record<string, AssignmentTransition>>
export type AssignmentTrigger = keyof typeof assignmentTransitions

export const assignmentAllows = (trigger: AssignmentTrigger, status: AssignmentStatus | "none"): boolean =>
  (assignmentTransitions[trigger].from as ReadonlyArray<string>).includes(status)

export const actorMay = (trigger: AssignmentTrigger, who: ReadonlyArray<AssignmentActor>): boolean =>
  who.some((actor) => (assignmentTransitions[trigger].who as ReadonlyArray<string>).includes(actor))

const defaultDueHours = 48

export const dueHoursOf = (node: CourseNode | undefined) => node?.grading?.review?.dueHours ?? defaultDueHours

/** What peers see of a learner: a random label per assignment (never derived from the profile). */
const newPseudonym = () => `learner-${randomBytes(5).toString("hex")}`

export const historyEntry = (action: string, extra: Omit<HistoryEntry, "at" | "action"> = {}): HistoryEntry => ({
  at: new Date().toISOString(),
  action,
  ...extra
})

/** A review event of an assignment (the holder, when there is one, is its audience). */
const reviewEvent = (type: "learning.review.requested" | "learning.review.overdue", row: AssignmentRow) =>
  appendEvent({
    type,
    aggregate: { kind: "learning_review", uuid: row.uuid, revision: row.revision },
    data: { objectUuid: row.uuid, status: type === "learning.review.requested" ? "requested" : "overdue" },
    context: {
      ...(row.reviewer_profile_uuid !== null ? { profileUuid: row.reviewer_profile_uuid, audience: [row.reviewer_profile_uuid] } : {}),
      courseUuid: row.course_uuid,
      runUuid: row.run_uuid,
      nodeKey: row.node_key,
      submissionUuid: row.submission_uuid
    }
  })

/** `learning.review.requested` for an assignment (new holder, or the pool). */
export const reviewRequested = (row: AssignmentRow) => reviewEvent("learning.review.requested", row)

/**
 * A submission entered `awaiting_review` (inside its transaction): its node's review mode makes
 * `count` pooled staff or peer assignments, or one self assignment claimed by the learner at once;
 * each emits `learning.review.requested`.
 */
export const requestReviews = (row: SubmissionRow, node: CourseNode): Effect.Effect<ReadonlyArray<AssignmentRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const review = node.grading?.review
    const mode = review?.mode === undefined || review.mode === "none" ? "staff" : review.mode
    const count = mode === "self" ? 1 : review?.count ?? 1
    const created: Array<AssignmentRow> = []
    for (let i = 0; i < count; i++) {
      const inserted = yield* insertAssignment({
        submission: row,
        pseudonym: newPseudonym(),
        kind: mode,
        dueHours: dueHoursOf(node),
        history: [historyEntry("request")]
      })
      yield* reviewRequested(inserted)
      created.push(inserted)
    }
    return created
  })

/**
 * Staff.ts's hook, inside the revoking transaction: the revoked profile's claimed staff assignments
 * in the course go back to the pool, unless another active assignment of theirs still holds
 * `review` for that run. Each returned claim emits `learning.review.requested` (the pool).
 */
export const returnRevokedClaims = (revoked: { readonly courseUuid: string; readonly profileUuid: string }) =>
  Effect.gen(function*() {
    const standing = yield* standingOn({ profileUuid: revoked.profileUuid } as Parameters<typeof standingOn>[0], revoked.courseUuid)
    const claims = yield* lockClaimedStaffAssignments(revoked.courseUuid, revoked.profileUuid)
    let returned = 0
    for (const claim of claims) {
      if (holdsAtom(standing.assignments, "review", { runUuid: claim.run_uuid })) continue
      const pooled = yield* returnClaimToPool(
        claim.uuid,
        historyEntry("returned_to_pool", { fromProfileUuid: revoked.profileUuid, reason: "staff assignment revoked" })
      )
      yield* reviewRequested(pooled)
      returned++
    }
    return returned
  })

/**
 * The worker's overdue check: claimed assignments past their
 * due time with no reported issue (an issue pauses the clock) emit `learning.review.overdue` once
 * per due time. `SKIP LOCKED` batches; returns how many were announced.
 */
export const announceOverdueReviews = (now: Date, batch = 100): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const rows = yield* markOverdueAssignments(now, batch)
    for (const row of rows) yield* reviewEvent("learning.review.overdue", row)
    return rows.length
  })

/** The earliest moment `announceOverdueReviews` has work: a claim's due time not yet announced. `undefined`: none. */
export const nextOverdueReviewMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = nextOverdueDue

/** The wire view: staff see all; a peer holder never the learner's profile; the submission's learner the status only. */
export const assignmentView = (row: AssignmentRow, viewer: "staff" | "peer" | "learner"): ReviewAssignment => {
  if (viewer === "learner") return { uuid: row.uuid, submissionUuid: row.submission_uuid, kind: row.kind, status: row.status }
  const overdue = row.status === "claimed" && row.issue === null && row.due_at !== null && row.due_at.getTime() <= Date.now()
  return {
    uuid: row.uuid,
    revision: row.revision,
    submissionUuid: row.submission_uuid,
    kind: row.kind,
    status: row.status,
    nodeKey: row.node_key,
    runUuid: row.run_uuid,
    pseudonym: row.pseudonym,
    ...(viewer === "staff" ? { learnerProfileUuid: row.learner_profile_uuid } : {}),
    ...(row.reviewer_profile_uuid !== null ? { reviewerProfileUuid: row.reviewer_profile_uuid } : {}),
    ...(row.claimed_at !== null ? { claimedAt: row.claimed_at } : {}),
    ...(row.due_at !== null ? { dueAt: row.due_at } : {}),
    overdue,
    ...(row.issue !== null ? { issue: { ...row.issue, reportedAt: new Date(row.issue.reportedAt) } as never } : {}),
    ...(row.decision !== null ? { decision: { ...row.decision, decidedAt: new Date(row.decision.decidedAt) } as never } : {}),
    ...(row.released_at !== null ? { releasedAt: row.released_at } : {}),
    history: viewer === "staff"
      ? row.history.map((entry) => ({ ...entry, at: new Date(entry.at) }) as never)
      : row.history.map((entry) => ({ at: new Date(entry.at), action: entry.action }) as never),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}
