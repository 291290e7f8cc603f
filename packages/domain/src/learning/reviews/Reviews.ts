import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound, RevisionConflict, stateRefusal } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { insertNotification } from "../../notifications/NotificationRepository.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { appendEvent } from "../../store/Outbox.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { requireRevision } from "../../store/Revision.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import { stepDates } from "../enrollments/Dates.js"
import { lockEnrollments } from "../enrollments/EnrollmentRepository.js"
import { appendScoreLayer, effectiveOf, requireGradesOpen, submissionNode } from "../grading/Layers.js"
import { AlreadyClaimed, ConflictOfInterest, NotEligible } from "../LearningErrors.js"
import type { CourseNode } from "../courses/Model.js"
import { type Assignment, atomScope, covers, enrollmentTarget, holdsAtom, reachesAny, scopeReach, staffScope, standingOn } from "../Permissions.js"
import {
  assignmentColumns,
  type AssignmentRow,
  decodePositionedAssignments,
  loadAssignments,
  otherOpenAssignments,
  saveDraft,
  updateAssignment
} from "./ReviewAssignmentRepository.js"
import {
  actorMay,
  assignmentAllows,
  assignmentTransitions,
  type AssignmentActor,
  type AssignmentTrigger,
  assignmentView,
  dueHoursOf,
  historyEntry,
  reviewRequested
} from "./ReviewAssignments.js"
import { Review, ReviewAssignment, ReviewDraft, type ReviewOutcome, ReviewWorkspace } from "./ReviewModel.js"
import { recordStepProgress } from "../steps/StepStates.js"
import { requireTransition, setStatus, submissionEvents } from "../steps/Submissions.js"
import { layersOf, loadSubmission, type SubmissionRow, viewOf } from "../steps/SubmissionViews.js"
import { Submission, SubmissionStatus } from "../steps/StepModel.js"

/**
 * Reviews: staff, peer and self review of a
 * submission in `awaiting_review`. Claim from the pool, autosave a draft, decide (provisional, or
 * final: moderated grading), release (the decision becomes a `review` score layer and the
 * submission is accepted, sent back for revision, or graded), reassign, report an issue, and the
 * reviewer's workspace. Nobody reviews their own work (`conflict_of_interest`); peers see
 * pseudonyms only; an unreleased decision never reaches the learner (it is no layer until release).
 * Every move is checked against the table in ReviewAssignments.ts.
 */

// ---- who the caller is, for one submission ------------------------------------------------------

interface ReviewContext {
  readonly actor: Actor
  readonly submission: SubmissionRow
  readonly node: CourseNode | undefined
  readonly assignments: ReadonlyArray<Assignment>
  /** The caller made the submission. */
  readonly author: boolean
  /** Owner or instructor in scope of the submission's run. */
  readonly instructor: boolean
  /** Staff holding `review` in scope of the run. */
  readonly reviewer: boolean
  /** Staff holding `grades_release` in scope. */
  readonly releaser: boolean
  /** Any staff assignment in scope of the run. */
  readonly staff: boolean
  /** Another learner with a live enrollment in the same run. */
  readonly peer: boolean
}

const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))
const decodeProfiles = rowsDecoder(Schema.Struct({ profile_uuid: Schema.String }))

/** An earlier attempt on the step, as the reviewer's workspace shows it. */
const EarlierAttempt = Schema.Struct({
  uuid: Schema.String,
  attempt_no: Schema.Number,
  submitted_at: Timestamp,
  status: SubmissionStatus,
  reply: Schema.Unknown
})
const earlierAttemptColumns = selectList(EarlierAttempt)
const decodeEarlierAttempts = rowsDecoder(EarlierAttempt)

const noSubmission = (uuid: string) => new NotFound({ message: `No submission ${uuid}` })

/**
 * Loads a submission (locked in commands) and what the caller is to it. A caller with no relation
 * (not its learner, not staff of the run, not a learner of the run, holding none of its assignments)
 * gets the submission's 404.
 */
const reviewContext = (actor: Actor, submissionUuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // A command locks the learner's enrollment before the submission, as the learner's own commands
    // do (a release then records the step's progress under it): docs/decisions.md "Lock order".
    if (options.lock) yield* lockEnrollments([(yield* loadSubmission(submissionUuid, { lock: false })).enrollment_uuid])
    const submission = yield* loadSubmission(submissionUuid, options)
    const standing = yield* standingOn(actor, submission.course_uuid)
    // The submission's run, and its enrollment's groups for group-scoped staff.
    const target = yield* enrollmentTarget(standing.assignments, { uuid: submission.enrollment_uuid, runUuid: submission.run_uuid })
    const scoped = standing.assignments.filter((assignment) => covers(assignment, target))
    const author = submission.profile_uuid === actor.profileUuid
    const [enrolled] = author ? [] : yield* Effect.flatMap(
      sql`SELECT count(*)::int AS n FROM learning_enrollments
      WHERE run_uuid = ${submission.run_uuid} AND profile_uuid = ${actor.profileUuid} AND status IN ('active', 'paused', 'completed')`,
      decodeCount
    )
    const context: ReviewContext = {
      actor,
      submission,
      node: yield* submissionNode(submission),
      assignments: standing.assignments,
      author,
      instructor: scoped.some((a) => a.role === "owner" || a.role === "instructor"),
      reviewer: holdsAtom(standing.assignments, "review", target),
      releaser: holdsAtom(standing.assignments, "grades_release", target),
      staff: scoped.length > 0,
      peer: !author && (enrolled?.n ?? 0) > 0
    }
    if (!context.author && !context.staff && !context.peer) return yield* noSubmission(submissionUuid)
    return context
  })

/** The roles the caller plays towards one assignment (the table's `who`). */
const rolesOn = (context: ReviewContext, row: AssignmentRow | undefined): ReadonlyArray<AssignmentActor> => [
  ...(context.instructor ? ["instructor" as const] : []),
  ...(row !== undefined && row.reviewer_profile_uuid === context.actor.profileUuid && row.status !== "pooled" ? ["holder" as const] : []),
  ...(context.releaser ? ["releaser" as const] : []),
  ...(context.reviewer ? ["reviewer" as const] : []),
  ...(context.peer ? ["peer" as const] : [])
]

/**
 * The table's verdict for a trigger on an assignment: 403 `conflict_of_interest` when the
 * submission's own learner would judge it (self reviews excepted for their holder), 403 when the
 * caller's roles are not in `who`, 409 `invalid_state` when the state is not in `from`.
 */
const requireMove = (context: ReviewContext, trigger: AssignmentTrigger, row: AssignmentRow | undefined) =>
  Effect.gen(function*() {
    const roles = rolesOn(context, row)
    // A self review's holder is its learner: exempt for the holder's own moves (draft, decide, report), never for release.
    const selfHolder = row?.kind === "self" && roles.includes("holder") && actorMay(trigger, ["holder"])
    if (context.author && !selfHolder) {
      return yield* new ConflictOfInterest({ message: "Nobody reviews, decides or releases a review of their own submission" })
    }
    if (!actorMay(trigger, roles)) return yield* new Forbidden({ message: `${trigger}: not allowed to you on this submission's review` })
    if (row === undefined || !assignmentAllows(trigger, row.status)) {
      return yield* stateRefusal({
        resource: "review_assignment",
        ...(row === undefined ? {} : { uuid: row.uuid }),
        state: row?.status ?? "none",
        allowed: assignmentTransitions[trigger].from.filter((from) => from !== "none"),
        operation: trigger,
        message: `${trigger} is not allowed on a ${row?.status ?? "missing"} review assignment`
      })
    }
  })

const viewerOf = (context: ReviewContext): "staff" | "peer" | "learner" => context.staff ? "staff" : context.author ? "learner" : "peer"

const dueAfter = (node: CourseNode | undefined) => new Date(Date.now() + dueHoursOf(node) * 3_600_000)

// ---- reads -------------------------------------------------------------------------------------

/** The enrollment of a review assignment (alias `a`): its submission's. */
const submissionEnrollment = (sql: SqlClient.SqlClient) => sql`(SELECT sub.enrollment_uuid FROM learning_submissions sub WHERE sub.uuid = a.submission_uuid)`

/** learning.reviews.assignment: staff see every assignment; a peer holder theirs (pseudonyms); the learner the status only. */
export const submissionAssignments = (actor: Actor, submissionUuid: string) =>
  Effect.gen(function*() {
    const context = yield* reviewContext(actor, submissionUuid, { lock: false })
    const rows = yield* loadAssignments(submissionUuid, { lock: false })
    if (context.staff) return rows.map((row) => assignmentView(row, "staff"))
    if (context.author) return rows.map((row) => assignmentView(row, "learner"))
    const held = rows.filter((row) => row.reviewer_profile_uuid === actor.profileUuid)
    if (held.length === 0) return yield* noSubmission(submissionUuid)
    return held.map((row) => assignmentView(row, "peer"))
  })

/**
 * The review queue's status filter over `learning_review_assignments a` (assignment_list's
 * `status`; without one, every open assignment); the teaching dashboard counts with the same.
 */
export const queueStatusCondition = (sql: SqlClient.SqlClient, status: "pooled" | "claimed" | "overdue" | "issue" | undefined) =>
  status === "pooled"
    ? sql`a.status = 'pooled'`
    : status === "claimed"
    ? sql`a.status = 'claimed'`
    : status === "overdue"
    ? sql`a.status = 'claimed' AND a.issue IS NULL AND a.due_at <= now()`
    : status === "issue"
    ? sql`a.status = 'claimed' AND a.issue IS NOT NULL`
    : sql`a.status IN ('pooled', 'claimed', 'decided')`

/**
 * learning.reviews.assignment_list: the review queue. Staff holding `review` see the course's (or
 * their runs') assignments; a learner sees the peer assignments of their runs still pooled (not on
 * their own submissions) and those they hold, pseudonymized. Oldest first.
 */
export const listAssignments = (
  actor: Actor,
  courseUuid: string,
  query: {
    readonly status?: "pooled" | "claimed" | "overdue" | "issue" | undefined
    readonly nodeKey?: string | undefined
    readonly mine?: "true" | "false" | undefined
    readonly cursor?: string | undefined
    readonly limit?: number | undefined
  }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.reviews.assignment_list", courseUuid, { lock: false })
    const standing = yield* standingOn(actor, courseUuid)
    const scope = atomScope(standing.assignments, "review")
    const staff = reachesAny(scope)
    if (!staff && !standing.learner) return yield* new Forbidden({ message: "The review queue is for reviewers" })
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const me = actor.profileUuid
    // Staff see the assignments of their scope: the course, their runs, their groups' members.
    const visible = staff
      ? scopeReach(sql, scope, sql`a.run_uuid`, submissionEnrollment(sql))
      : sql`a.kind = 'peer' AND (a.reviewer_profile_uuid = ${me} OR (a.status = 'pooled' AND a.learner_profile_uuid <> ${me}
          AND a.run_uuid IN (SELECT run_uuid FROM learning_enrollments WHERE profile_uuid = ${me} AND status IN ('active', 'paused', 'completed'))))`
    const status = queueStatusCondition(sql, query.status)
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(assignmentColumns)}, a.created_at::text AS position
      FROM learning_review_assignments a
      WHERE a.course_uuid = ${courseUuid} AND ${visible} AND ${status}
        ${query.nodeKey !== undefined ? sql`AND a.node_key = ${query.nodeKey}` : sql``}
        ${query.mine === "true" ? sql`AND a.reviewer_profile_uuid = ${me}` : sql``}
        ${position._tag === "Some" ? sql`AND (a.created_at, a.uuid) > (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY a.created_at, a.uuid LIMIT ${limit + 1}`,
      decodePositionedAssignments
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => assignmentView(row, staff ? "staff" : "peer"))
  })

const reviewView = (row: AssignmentRow): Review => {
  const decision = row.decision!
  return {
    uuid: row.uuid,
    revision: row.revision,
    assignmentUuid: row.uuid,
    submissionUuid: row.submission_uuid,
    nodeKey: row.node_key,
    runUuid: row.run_uuid,
    kind: row.kind,
    status: row.status === "released" ? "released" : "decided",
    reviewerProfileUuid: row.reviewer_profile_uuid ?? decision.decidedBy,
    outcome: decision.outcome,
    points: decision.points,
    rubric: decision.rubric,
    comment: decision.comment,
    final: decision.final,
    decidedBy: decision.decidedBy,
    decidedAt: new Date(decision.decidedAt),
    ...(row.released_at !== null ? { releasedAt: row.released_at } : {})
  }
}

/** learning.reviews.list: decided and released reviews; owners and instructors see all in scope, reviewers their own. */
export const listReviews = (
  actor: Actor,
  courseUuid: string,
  query: {
    readonly nodeKey?: string | undefined
    readonly reviewerUuid?: string | undefined
    readonly status?: "decided" | "released" | undefined
    readonly cursor?: string | undefined
    readonly limit?: number | undefined
  }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.reviews.list", courseUuid, { lock: false })
    const standing = yield* standingOn(actor, courseUuid)
    const scope = atomScope(standing.assignments, "review")
    if (!reachesAny(scope)) return yield* new Forbidden({ message: "Reviews are listed to reviewers, owners and instructors" })
    // An owner or instructor sees every review in their scope (course, runs, groups' members);
    // anyone else only the reviews they wrote.
    const leads = staffScope(standing.assignments.filter((a) => a.role === "owner" || a.role === "instructor"))
    const visible = leads.course
      ? sql`TRUE`
      : reachesAny(leads)
      ? sql`(${scopeReach(sql, leads, sql`a.run_uuid`, submissionEnrollment(sql))} OR a.reviewer_profile_uuid = ${actor.profileUuid})`
      : sql`a.reviewer_profile_uuid = ${actor.profileUuid}`
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(assignmentColumns)}, a.updated_at::text AS position
      FROM learning_review_assignments a
      WHERE a.course_uuid = ${courseUuid} AND a.decision IS NOT NULL AND ${visible}
        AND a.status IN ${sql.in(query.status === undefined ? ["decided", "released"] : [query.status])}
        ${query.nodeKey !== undefined ? sql`AND a.node_key = ${query.nodeKey}` : sql``}
        ${query.reviewerUuid !== undefined ? sql`AND a.reviewer_profile_uuid = ${query.reviewerUuid}` : sql``}
        ${position._tag === "Some" ? sql`AND (a.updated_at, a.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY a.updated_at DESC, a.uuid DESC LIMIT ${limit + 1}`,
      decodePositionedAssignments
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), reviewView)
  })

/** learning.reviews.workspace: what the holder (or an owner/instructor) reviews with; a peer sees the learner's pseudonym only. */
export const reviewWorkspace = (actor: Actor, submissionUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* reviewContext(actor, submissionUuid, { lock: false })
    const rows = yield* loadAssignments(submissionUuid, { lock: false })
    const held = rows.find((row) => row.reviewer_profile_uuid === actor.profileUuid && (row.status === "claimed" || row.status === "decided"))
    if (context.author && held?.kind !== "self") return yield* new ConflictOfInterest({ message: "Nobody reviews their own submission" })
    if (held === undefined && !context.instructor) {
      return context.staff ? yield* new Forbidden({ message: "The workspace is the holder's, or an owner's or instructor's" }) : yield* noSubmission(submissionUuid)
    }
    const assignment = held ?? rows[0]
    if (assignment === undefined) return yield* new InvalidState({ message: "The submission has no review assignment" })
    const viewer = context.staff ? "staff" : "peer"
    const row = context.submission
    const earlier = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(earlierAttemptColumns)} FROM learning_submissions
      WHERE enrollment_uuid = ${row.enrollment_uuid} AND node_key = ${row.node_key} AND attempt_no < ${row.attempt_no}
      ORDER BY attempt_no DESC LIMIT 20`,
      decodeEarlierAttempts
    )
    const layers = yield* layersOf([row.uuid, ...earlier.map((s) => s.uuid)])
    const auto = (layers.get(row.uuid) ?? []).find((layer) => layer.kind === "auto")
    const draft = assignment.draft
    return ReviewWorkspace.make({
      assignment: assignmentView(assignment, viewer),
      learner: viewer === "staff"
        ? { pseudonym: assignment.pseudonym, profileUuid: row.profile_uuid, enrollmentUuid: row.enrollment_uuid }
        : { pseudonym: assignment.pseudonym },
      submission: { uuid: row.uuid, attemptNo: row.attempt_no, reply: row.reply, submittedAt: row.submitted_at, versionNumber: row.version_number },
      step: {
        nodeKey: row.node_key,
        title: context.node?.title ?? row.node_key,
        ...(context.node?.body !== undefined ? { body: context.node.body } : {}),
        maxPoints: context.node?.grading?.maxPoints ?? 0,
        ...(context.node?.grading?.passThreshold !== undefined ? { passThreshold: context.node.grading.passThreshold } : {})
      },
      ...(auto !== undefined ? { checkerOutput: { verdict: auto.verdict, points: Number(auto.points), feedback: auto.feedback } } : {}),
      ...(draft !== null && assignment.draft_saved_at !== null && held !== undefined
        ? { draft: draftView(assignment) }
        : {}),
      earlierAttempts: earlier.map((attempt) => {
        const score = effectiveOf(layers.get(attempt.uuid) ?? [])
        return {
          uuid: attempt.uuid,
          attemptNo: attempt.attempt_no,
          submittedAt: attempt.submitted_at,
          status: attempt.status,
          reply: attempt.reply,
          ...(score !== undefined ? { points: score.points, verdict: score.verdict } : {})
        }
      })
    })
  })

const draftView = (row: AssignmentRow) =>
  ReviewDraft.make({
    assignmentUuid: row.uuid,
    submissionUuid: row.submission_uuid,
    revision: row.draft_revision,
    rubric: (row.draft?.rubric ?? []) as typeof ReviewDraft.Type["rubric"],
    comment: row.draft?.comment ?? "",
    ...(row.draft?.points !== undefined ? { points: row.draft.points } : {}),
    savedAt: row.draft_saved_at!
  })

// ---- commands ----------------------------------------------------------------------------------

/** The caller's own open assignment on the submission (claimed or decided, not released). */
const heldBy = (rows: ReadonlyArray<AssignmentRow>, profileUuid: string) =>
  rows.find((row) => row.reviewer_profile_uuid === profileUuid && (row.status === "claimed" || row.status === "decided"))

/** The assignment the caller holds or held (open ones first): the holder-only moves judge it by its state. */
const holdingOf = (rows: ReadonlyArray<AssignmentRow>, profileUuid: string) =>
  heldBy(rows, profileUuid) ?? rows.find((row) => row.reviewer_profile_uuid === profileUuid && row.status === "released")

/**
 * learning.reviews.claim: staff with `review` take a pooled staff assignment, another learner of
 * the run a pooled peer assignment (once they submitted on the step themselves), until `dueAt`.
 * Refusals: own submission 403 `conflict_of_interest`; all held by others 409 `already_claimed`;
 * no assignment of the caller's kind, or a peer who has not submitted yet, 409 `not_eligible`.
 */
export const claimReview = (actor: Actor, submissionUuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.reviews.claim", input, ReviewAssignment, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* reviewContext(actor, submissionUuid, { lock: true })
    if (context.author) return yield* new ConflictOfInterest({ message: "Nobody reviews their own submission" })
    const kind = context.reviewer || context.instructor ? "staff" : context.peer ? "peer" : undefined
    if (kind === undefined) return yield* new Forbidden({ message: "Reviews are claimed by reviewers and, for peer review, by the run's learners" })
    const rows = yield* loadAssignments(submissionUuid, { lock: true })
    if (rows.some((row) => row.reviewer_profile_uuid === actor.profileUuid && row.status !== "cancelled")) {
      return yield* new InvalidState({ message: "You already hold (or held) a review of this submission" })
    }
    if (kind === "peer") {
      const [own] = yield* Effect.flatMap(
        sql`SELECT count(*)::int AS n FROM learning_submissions
        WHERE run_uuid = ${context.submission.run_uuid} AND profile_uuid = ${actor.profileUuid} AND node_key = ${context.submission.node_key}
          AND status <> 'cancelled'`,
        decodeCount
      )
      if ((own?.n ?? 0) === 0) return yield* new NotEligible({ message: "Peer review opens once you submitted your own work on this step" })
    }
    const ofKind = rows.filter((row) => row.kind === kind && row.status !== "cancelled")
    const pooled = ofKind.find((row) => row.status === "pooled")
    if (pooled === undefined) {
      if (ofKind.some((row) => row.status === "claimed")) return yield* new AlreadyClaimed({ message: "Every review of this submission is held by another reviewer" })
      if (ofKind.length === 0) return yield* new NotEligible({ message: `This submission has no ${kind} review assignment` })
      return yield* new InvalidState({ message: "Every review of this submission is already decided" })
    }
    yield* requireMove(context, "learning.reviews.claim", pooled)
    const claimed = yield* updateAssignment(pooled.uuid, {
      status: "claimed",
      reviewer_profile_uuid: actor.profileUuid,
      claimed_at: new Date(),
      due_at: dueAfter(context.node),
      overdue_for: null
    }, historyEntry("claim", { byProfileUuid: actor.profileUuid }))
    return assignmentView(claimed, kind === "staff" ? "staff" : "peer")
  }))

/** learning.reviews.draft: the holder's autosave; `expectedRevision` is the draft's (absent for the first save). */
export const saveReviewDraft = (
  actor: Actor,
  submissionUuid: string,
  input: {
    readonly requestUuid: string
    readonly expectedRevision?: number | undefined
    readonly rubric: ReadonlyArray<{ readonly criterion: string; readonly points: number; readonly comment?: string | undefined }>
    readonly comment: string
    readonly points?: number | undefined
  }
) =>
  once(actor, "learning.reviews.draft", input, ReviewDraft, Effect.gen(function*() {
    const context = yield* reviewContext(actor, submissionUuid, { lock: true })
    const rows = yield* loadAssignments(submissionUuid, { lock: true })
    const held = holdingOf(rows, actor.profileUuid)
    yield* requireMove(context, "learning.reviews.draft", held)
    const row = held!
    if ((input.expectedRevision ?? 0) !== row.draft_revision) {
      return yield* new RevisionConflict({ message: `The review draft is at revision ${row.draft_revision === 0 ? "none" : row.draft_revision}` })
    }
    const draft = { rubric: input.rubric, comment: input.comment, ...(input.points !== undefined ? { points: input.points } : {}) }
    const saved = yield* saveDraft(row.uuid, draft)
    return draftView(saved)
  }))

const verdictOf = (outcome: ReviewOutcome) => (outcome === "accept" ? "accepted" : outcome === "revise" ? "revision_requested" : "wrong")

/**
 * Publishes a final decision (inside the transaction): the `review` layer, the submission's move
 * (accept → accepted, revise → revision_requested, fail → graded) with its events, the step's
 * progress, the assignment released and the submission's other open assignments cancelled.
 */
const releaseDecision = (context: ReviewContext, row: AssignmentRow, byProfileUuid: string, requestUuid: string) =>
  Effect.gen(function*() {
    const decision = row.decision!
    const submission = context.submission
    const trigger = decision.outcome === "accept" ? "review.accept" : decision.outcome === "revise" ? "review.revise" : "review.grade"
    yield* requireTransition(trigger, submission)
    const change = yield* appendScoreLayer({
      submissionUuid: submission.uuid,
      kind: "review",
      points: decision.points,
      verdict: verdictOf(decision.outcome),
      feedback: decision.comment,
      reason: `review ${row.uuid} released`,
      byProfileUuid: decision.decidedBy,
      sourceUuid: row.uuid,
      requestUuid,
      emit: false
    })
    const moved = yield* setStatus(submission.uuid, trigger, { graded: true })
    yield* submissionEvents([
      ["learning.submission.graded", moved],
      ...(decision.outcome === "accept" ? [["learning.submission.accepted", moved] as const] : [])
    ])
    if (decision.outcome === "revise") {
      yield* appendEvent({
        type: "learning.revision.requested",
        aggregate: { kind: "learning_submission", uuid: moved.uuid, revision: moved.revision },
        data: { objectUuid: moved.uuid, status: "revision_requested" },
        context: {
          profileUuid: moved.profile_uuid,
          audience: [moved.profile_uuid],
          courseUuid: moved.course_uuid,
          runUuid: moved.run_uuid,
          enrollmentUuid: moved.enrollment_uuid,
          nodeKey: moved.node_key,
          submissionUuid: moved.uuid
        }
      })
    }
    yield* recordStepProgress(moved.enrollment_uuid, moved.node_key, decision.outcome === "accept" ? "completed" : "in_progress")
    const released = yield* updateAssignment(row.uuid, { status: "released", layer_uuid: change.layer.uuid, released_at: new Date() },
      historyEntry("release", { byProfileUuid }))
    const others = yield* otherOpenAssignments(submission.uuid, row.uuid)
    for (const other of others) {
      yield* updateAssignment(other.uuid, { status: "cancelled" }, historyEntry("cancel", { reason: "another review was released" }))
    }
    return { released, submission: moved }
  })

/**
 * learning.reviews.decide: the holder decides (provisional; final when the node is not moderated
 * and the holder is staff), or an owner/instructor decides the final one (moderated grading). A
 * final decision is released at once unless the node's review says `release: manual`.
 */
export const decideReview = (
  actor: Actor,
  submissionUuid: string,
  input: {
    readonly requestUuid: string
    readonly expectedRevision: number
    readonly outcome: ReviewOutcome
    readonly points?: number | undefined
    readonly rubric: ReadonlyArray<{ readonly criterion: string; readonly points: number; readonly comment?: string | undefined }>
    readonly comment: string
    readonly final?: boolean | undefined
  }
) =>
  once(actor, "learning.reviews.decide", input, Review, Effect.gen(function*() {
    const context = yield* reviewContext(actor, submissionUuid, { lock: true })
    const rows = yield* loadAssignments(submissionUuid, { lock: true })
    const held = heldBy(rows, actor.profileUuid)
    // An owner or instructor not holding one decides the first open one still without a final decision.
    const target = held ??
      (context.instructor ? rows.find((row) => (row.status === "claimed" || row.status === "decided") && row.decision?.final !== true) : undefined) ??
      rows.find((row) => row.status !== "cancelled")
    yield* requireMove(context, "learning.reviews.decide", target)
    const row = target!
    yield* requireRevision("review assignment", row.revision, input.expectedRevision)
    yield* requireGradesOpen(context.submission.run_uuid)
    yield* requireTransition("review.grade", context.submission)
    const review = context.node?.grading?.review
    const moderated = review?.moderated === true
    const mayFinal = context.instructor || (row.kind === "staff" && !moderated && held !== undefined)
    const final = input.final ?? mayFinal
    if (final && !mayFinal) {
      return yield* new Forbidden({
        message: row.kind === "staff" ? "In moderated grading the final decision is an owner's or instructor's" : "Peer and self reviews are provisional"
      })
    }
    const maxPoints = context.node?.grading?.maxPoints ?? 0
    const threshold = context.node?.grading?.passThreshold ?? maxPoints
    const points = input.points ?? (input.outcome === "accept" ? maxPoints : 0)
    if (points > maxPoints) return yield* new InvalidRequest({ message: `points: at most the step's ${maxPoints}` })
    if (input.outcome === "accept" && points < threshold) {
      return yield* new InvalidRequest({ message: `points: an accepted review carries at least the pass threshold ${threshold}` })
    }
    if (input.outcome === "fail" && points >= threshold && maxPoints > 0) {
      return yield* new InvalidRequest({ message: `points: a failed review carries less than the pass threshold ${threshold}` })
    }
    const decision = {
      outcome: input.outcome,
      points,
      rubric: input.rubric,
      comment: input.comment,
      final,
      decidedBy: actor.profileUuid,
      decidedAt: new Date().toISOString()
    }
    let decided = yield* updateAssignment(row.uuid, { status: "decided", decision }, historyEntry(final ? "decide_final" : "decide_provisional", {
      byProfileUuid: actor.profileUuid
    }))
    if (final && (review?.release ?? "auto") === "auto") {
      decided = (yield* releaseDecision({ ...context }, decided, actor.profileUuid, input.requestUuid)).released
    }
    return reviewView(decided)
  }))

/** learning.reviews.release: publishes the submission's final decision (staff holding `grades_release`). */
export const releaseReview = (actor: Actor, submissionUuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number }) =>
  once(actor, "learning.reviews.release", input, Submission, Effect.gen(function*() {
    const context = yield* reviewContext(actor, submissionUuid, { lock: true })
    const rows = yield* loadAssignments(submissionUuid, { lock: true })
    const target = rows.find((row) => row.status === "decided" && row.decision?.final === true) ??
      rows.find((row) => row.status !== "cancelled" && row.status !== "released")
    yield* requireMove(context, "learning.reviews.release", target)
    const row = target!
    if (row.decision?.final !== true) return yield* new InvalidState({ message: "Only a final decision is released; this one is provisional" })
    yield* requireRevision("review assignment", row.revision, input.expectedRevision)
    yield* requireGradesOpen(context.submission.run_uuid)
    const { submission } = yield* releaseDecision(context, row, actor.profileUuid, input.requestUuid)
    const dates = (yield* stepDates(submission.enrollment_uuid)).get(submission.node_key)
    return yield* viewOf(submission, { learner: false, dates })
  }))

/**
 * learning.reviews.reassign: back to the pool (the holder or an owner/instructor) or to a named
 * reviewer (an owner/instructor): staff holding `review` for a staff assignment, another learner of
 * the run for a peer one; never the submission's learner (`conflict_of_interest`). The history
 * keeps every holder; `learning.review.requested` announces the new holder (or the pool).
 */
export const reassignReview = (
  actor: Actor,
  submissionUuid: string,
  input: {
    readonly requestUuid: string
    readonly expectedRevision: number
    readonly assignmentUuid?: string | undefined
    readonly toProfileUuid?: string | undefined
    readonly pool?: true | undefined
    readonly reason: string
  }
) =>
  once(actor, "learning.reviews.reassign", input, ReviewAssignment, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if ((input.toProfileUuid === undefined) === (input.pool === undefined)) {
      return yield* new InvalidRequest({ message: "toProfileUuid or pool: exactly one of them" })
    }
    const context = yield* reviewContext(actor, submissionUuid, { lock: true })
    const rows = yield* loadAssignments(submissionUuid, { lock: true })
    let row: AssignmentRow | undefined
    if (input.assignmentUuid !== undefined) {
      row = rows.find((candidate) => candidate.uuid === input.assignmentUuid)
      if (row === undefined) return yield* new NotFound({ message: `No review assignment ${input.assignmentUuid} on this submission` })
    } else {
      const held = rows.find((candidate) => candidate.reviewer_profile_uuid === actor.profileUuid && candidate.status === "claimed")
      const open = rows.filter((candidate) => candidate.status === "pooled" || candidate.status === "claimed")
      if (held === undefined && open.length > 1) {
        return yield* new InvalidRequest({ message: "assignmentUuid: the submission has several open review assignments; name one" })
      }
      row = held ?? open[0] ?? rows[0]
    }
    const trigger = input.pool === true ? "learning.reviews.reassign.pool" : "learning.reviews.reassign.profile"
    yield* requireMove(context, trigger, row)
    const current = row!
    yield* requireRevision("review assignment", current.revision, input.expectedRevision)
    if (input.toProfileUuid !== undefined) {
      const to = input.toProfileUuid
      if (to === context.submission.profile_uuid) return yield* new ConflictOfInterest({ message: "Nobody reviews their own submission" })
      if (current.kind === "self") return yield* new InvalidRequest({ message: "toProfileUuid: a self review stays with its learner" })
      const eligible = current.kind === "staff"
        ? holdsAtom((yield* standingOn({ ...actor, profileUuid: to }, current.course_uuid)).assignments, "review", { runUuid: current.run_uuid })
        : ((yield* Effect.flatMap(
          sql`SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = ${current.run_uuid}
            AND profile_uuid = ${to} AND status IN ('active', 'paused', 'completed')`,
          decodeCount
        ))[0]?.n ?? 0) > 0
      if (!eligible) {
        return yield* new InvalidRequest({
          message: `toProfileUuid: not ${current.kind === "staff" ? "a reviewer in scope of the run" : "a learner of the run"}`
        })
      }
    }
    const moved = yield* updateAssignment(
      current.uuid,
      input.pool === true
        ? { status: "pooled", reviewer_profile_uuid: null, claimed_at: null, due_at: null, overdue_for: null, draft: null, issue: null, sla_paused_at: null }
        : {
          status: "claimed",
          reviewer_profile_uuid: input.toProfileUuid!,
          claimed_at: new Date(),
          due_at: dueAfter(context.node),
          overdue_for: null,
          draft: null,
          issue: null,
          sla_paused_at: null
        },
      historyEntry(input.pool === true ? "reassign_pool" : "reassign", {
        byProfileUuid: actor.profileUuid,
        ...(current.reviewer_profile_uuid !== null ? { fromProfileUuid: current.reviewer_profile_uuid } : {}),
        ...(input.toProfileUuid !== undefined ? { toProfileUuid: input.toProfileUuid } : {}),
        reason: input.reason
      })
    )
    yield* reviewRequested(moved)
    return assignmentView(moved, viewerOf(context))
  }))

/**
 * learning.reviews.report_issue: the holder flags what blocks the review; the due clock pauses
 * (no overdue while an issue is open; a reassignment clears it) and the course's owner and
 * instructors get a notification.
 */
export const reportReviewIssue = (
  actor: Actor,
  submissionUuid: string,
  input: { readonly requestUuid: string; readonly kind: "plagiarism" | "unreadable" | "checker_disagrees" | "abuse" | "other"; readonly note: string }
) =>
  once(actor, "learning.reviews.report_issue", input, ReviewAssignment, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* reviewContext(actor, submissionUuid, { lock: true })
    const rows = yield* loadAssignments(submissionUuid, { lock: true })
    const held = holdingOf(rows, actor.profileUuid)
    yield* requireMove(context, "learning.reviews.report_issue", held)
    const row = held!
    const issue = { kind: input.kind, note: input.note, reportedBy: actor.profileUuid, reportedAt: new Date().toISOString() }
    const flagged = yield* updateAssignment(row.uuid, { issue, sla_paused_at: new Date() }, historyEntry("report_issue", {
      byProfileUuid: actor.profileUuid,
      reason: input.kind
    }))
    const leads = yield* Effect.flatMap(
      sql`SELECT DISTINCT profile_uuid FROM learning_staff
      WHERE course_uuid = ${row.course_uuid} AND status = 'active' AND role IN ('owner', 'instructor')
        AND group_uuid IS NULL AND (run_uuid IS NULL OR run_uuid = ${row.run_uuid})`,
      decodeProfiles
    )
    for (const lead of leads) {
      yield* insertNotification({
        profileUuid: lead.profile_uuid,
        source: "learning",
        kind: "review.issue",
        title: "A review is blocked",
        body: `A reviewer reported ${input.kind.replace("_", " ")} on a submission of step ${row.node_key}.`,
        link: `/api/v1/learning/submissions/${row.submission_uuid}/review-assignment`
      })
    }
    return assignmentView(flagged, viewerOf(context))
  }))
