import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Exit, Schema } from "effect"
import { type Forbidden, InvalidState, NotFound, type RequestConflict, RevisionConflict, stateRefusal } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { appendEvent, appendEvents, type NewEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { rowsDecoder } from "../../store/Rows.js"
import { type BatchOutcome, groupCommit, runAlone } from "../../store/GroupCommit.js"
import { commandHash, idempotent, idempotentBatch } from "../../store/Idempotency.js"
import { once } from "../Commands.js"
import { stepDates } from "../enrollments/Dates.js"
import { type CheckResult, checkReply } from "../grading/Declarative.js"
import { cancelSubmissionJobs, claimQueuedGradeJobs, finishRunningGradeJob, insertGradeJob } from "../grading/GradingJobRepository.js"
import { enrollmentFor } from "../enrollments/EnrollmentAccess.js"
import { AttemptsExhausted, DeadlinePassed } from "../LearningErrors.js"
import { requestReviews } from "../reviews/ReviewAssignments.js"
import type { CourseNode } from "../courses/Model.js"
import { Submission } from "./StepModel.js"
import { recordStepProgress, recordStepProgresses } from "./StepStates.js"
import { attemptsOf, attemptsOfSteps, loadDraft, requireReplySize, requireWorkable, type StepContext, stepsFor } from "./Steps.js"
import { submissionAllows, type SubmissionTrigger, submissionTransitions } from "./SubmissionMachine.js"
import { insertAutoLayers, type LayerRow } from "./ScoreLayerRepository.js"
import { insertGradedSubmissions, insertSubmission, moveSubmissionsFrom, type SubmissionRow, updateSubmissionStatus } from "./SubmissionRepository.js"
import { loadSubmission, submissionView, viewOf } from "./SubmissionViews.js"
import type { VariantRow } from "./VariantRepository.js"
import { variantForSubmission } from "./Variants.js"

/**
 * Submissions: `submissions.create` pins the version,
 * nodeKey and variant and consumes an attempt; a declarative check grades inline in the same
 * transaction (first score layer `auto`); an external checker's submission waits in the grading
 * queue (a `grade` job, drained by the grading worker, packages/worker-host/src/learning/GradingJob.ts) and a review step's in the review
 * queue (its review assignments are made at once, ReviewAssignments.ts). Cancel before grading and platform failures refund the attempt.
 */

/** 409 `invalid_state` unless the trigger leaves from the submission's status (`none`: not created yet), naming the states it leaves from. */
export const requireTransition = (
  trigger: SubmissionTrigger,
  submission: { readonly uuid?: string; readonly status: SubmissionRow["status"] | "none" }
) =>
  submissionAllows(trigger, submission.status)
    ? Effect.void
    : Effect.fail(stateRefusal({
      resource: "submission",
      ...(submission.uuid === undefined ? {} : { uuid: submission.uuid }),
      state: submission.status,
      allowed: submissionTransitions[trigger].from.filter((from) => from !== "none"),
      operation: trigger
    }))

/**
 * Moves a submission by a trigger of the table (and, with `then`, straight on by a second one:
 * two transitions, two revisions, one write); refunding triggers clear `attempt_counted`.
 */
export const setStatus = (uuid: string, trigger: SubmissionTrigger, extra: { readonly graded?: boolean; readonly then?: SubmissionTrigger } = {}) => {
  const first: { readonly to: SubmissionRow["status"]; readonly refunds?: true } = submissionTransitions[trigger]
  if (extra.then !== undefined && !submissionAllows(extra.then, first.to)) return Effect.dieMessage(`${extra.then} cannot follow ${trigger}`)
  const transition: { readonly to: string; readonly refunds?: true } = extra.then === undefined ? first : submissionTransitions[extra.then]
  return updateSubmissionStatus(uuid, {
    to: transition.to,
    steps: extra.then === undefined ? 1 : 2,
    refunds: transition.refunds === true,
    graded: extra.graded === true
  })
}

type SubmissionEventType = "learning.submission.graded" | "learning.submission.accepted"

/** `learning.submission.graded` or `.accepted` of a submission row, as the outbox takes it. */
const submissionEventOf = (type: SubmissionEventType, row: SubmissionRow): NewEvent => ({
  type,
  aggregate: { kind: "learning_submission", uuid: row.uuid, revision: row.revision },
  data: { objectUuid: row.uuid, status: type === "learning.submission.accepted" ? "accepted" : "graded" },
  context: {
    profileUuid: row.profile_uuid,
    audience: [row.profile_uuid],
    courseUuid: row.course_uuid,
    runUuid: row.run_uuid,
    enrollmentUuid: row.enrollment_uuid,
    nodeKey: row.node_key,
    submissionUuid: row.uuid
  }
})

/** Several submission events in one statement (graded and accepted of one write). */
export const submissionEvents = (events: ReadonlyArray<readonly [SubmissionEventType, SubmissionRow]>) =>
  appendEvents(events.map(([type, row]) => submissionEventOf(type, row)))

const round2 = (value: number) => Math.round(value * 100) / 100

/** Points of a check on a node, after a late penalty when the node's policy has one. */
export const scoreOf = (node: CourseNode, result: CheckResult, late: boolean) => {
  const grading = node.grading!
  const penalty = late && grading.latePolicy?.mode === "penalty" ? (grading.latePolicy.penaltyPercent ?? 0) / 100 : 0
  const points = round2(result.fraction * grading.maxPoints * (1 - penalty))
  const passed = result.verdict !== "invalid_reply" && points >= (grading.passThreshold ?? grading.maxPoints)
  return { points, passed }
}

const needsReview = (node: CourseNode) => (node.grading?.review?.mode ?? "none") !== "none"

/**
 * Applies a grading result to a submission in `submitted` (inline) or `checking` (the worker):
 * the first `auto` layer, then accepted (passed, no review: graded and accepted in one write, both
 * events with their revisions), graded, or awaiting review. Returns the row, its layers and the
 * step progress the caller records once: completed on acceptance, failed when it did not pass and
 * no attempt is left, else in progress.
 */
export const applyCheckResult = (
  row: SubmissionRow,
  node: CourseNode,
  result: CheckResult,
  options: { readonly trigger: "grade.inline" | "worker.graded"; readonly late: boolean; readonly attemptsLeft: number | undefined; readonly sourceUuid?: string }
) =>
  Effect.gen(function*() {
    const { passed, points } = scoreOf(node, result, options.late)
    const layers = yield* autoLayers([
      { submissionUuid: row.uuid, points, maxPoints: node.grading!.maxPoints, result, passed, late: options.late, sourceUuid: options.sourceUuid }
    ])
    if (needsReview(node)) {
      // The review queue picks it up; the automatic layer stays the first layer.
      yield* setStatus(row.uuid, options.trigger, { graded: true })
      const waiting = yield* setStatus(row.uuid, "review.require")
      yield* requestReviews(waiting, node)
      return { row: waiting, layers, progress: "in_progress" as const }
    }
    // graded (→ accepted: both moves of the table in one write; each event carries its own revision).
    const graded = yield* setStatus(row.uuid, options.trigger, passed ? { graded: true, then: "grade.accept" } : { graded: true })
    yield* submissionEvents(gradedEvents(graded, passed))
    return { row: graded, layers, progress: progressAfter(passed, options.attemptsLeft) }
  })

/** The events of a graded submission row: graded, and accepted when it passed (the row at accepted, graded one revision before). */
const gradedEvents = (row: SubmissionRow, passed: boolean): ReadonlyArray<readonly [SubmissionEventType, SubmissionRow]> =>
  passed
    ? [["learning.submission.graded", { ...row, revision: row.revision - 1 }], ["learning.submission.accepted", row]]
    : [["learning.submission.graded", row]]

/** The step's move after a graded attempt: completed on acceptance, failed when no attempt is left, else in progress. */
const progressAfter = (passed: boolean, attemptsLeft: number | undefined) =>
  passed ? "completed" as const : attemptsLeft === 0 ? "failed" as const : "in_progress" as const

/** The first (`auto`) layers of checked submissions (`insertAutoLayers`), from their check results. */
const autoLayers = (
  layers: ReadonlyArray<{
    readonly submissionUuid: string
    readonly points: number
    readonly maxPoints: number
    readonly result: CheckResult
    readonly passed: boolean
    readonly late: boolean
    readonly sourceUuid?: string | undefined
  }>
) =>
  insertAutoLayers(layers.map((layer) => ({
    uuid: crypto.randomUUID(),
    submission_uuid: layer.submissionUuid,
    points: layer.points,
    max_points: layer.maxPoints,
    verdict: layer.result.verdict,
    feedback: layer.result.feedback ?? "",
    passed: layer.passed,
    late: layer.late,
    source_uuid: layer.sourceUuid ?? null
  })))

export interface AttemptInput {
  readonly reply: unknown
  readonly draftRevision?: number | undefined
  readonly demoAttemptUuid?: string | undefined
  /** demo.apply: the variant the demo was tried on must be the enrollment's. */
  readonly requireVariant?: (variant: VariantRow | undefined) => Effect.Effect<void, InvalidState>
}

/**
 * The checks of an attempt that need nothing more read: the reply's size, an open step in an
 * active enrollment, a graded step, the late policy. Answers whether the attempt is late.
 */
const requireSubmittable = (step: StepContext, reply: unknown) =>
  Effect.gen(function*() {
    yield* requireReplySize(reply)
    yield* requireWorkable(step)
    const grading = step.node.grading
    if (grading === undefined) return yield* new InvalidState({ message: "An ungraded step is acknowledged, not submitted" })
    const due = step.dates?.dueAt
    const late = due !== undefined && step.now.getTime() > due.getTime()
    if (late && grading.latePolicy?.mode === "refuse") {
      return yield* new DeadlinePassed({ message: `The step was due at ${due.toISOString()} and takes no late submissions` })
    }
    return { grading, late }
  })

/** 409 `attempts_exhausted` when no attempt is left. */
const attemptsRefusal = (attempts: { readonly left: number | undefined; readonly allowed: number | undefined }) =>
  attempts.left === 0 ? new AttemptsExhausted({ message: `All ${attempts.allowed} attempts of this step are used` }) : undefined

/** An attempt graded inline by a declarative check on a step without review (`writeGradedAttempts`). */
interface GradedAttempt {
  readonly step: StepContext
  readonly reply: unknown
  readonly variant: VariantRow | undefined
  readonly checkerUuid: string | null
  readonly attemptNo: number
  /** Attempts left after this one (undefined: unlimited). */
  readonly attemptsLeft: number | undefined
  readonly late: boolean
  readonly demoAttemptUuid?: string | undefined
}

const inlineGraded = (node: CourseNode) => node.grading?.check !== undefined && !needsReview(node)

/**
 * Inline-graded attempts written in their final state, each kind of row in one statement for
 * all of them: the submission (`submitted`, moved by the table's `grade.inline` to graded and, when
 * it passed, by `grade.accept` to accepted: a revision each), its `auto` layer, and the graded
 * (and accepted) events with their revisions. Answers each attempt's row, layers and the step
 * progress its caller records: completed on acceptance, failed when it did not pass and no
 * attempt is left, else in progress.
 */
const writeGradedAttempts = (attempts: ReadonlyArray<GradedAttempt>) =>
  Effect.gen(function*() {
    const inline = submissionTransitions["grade.inline"]
    const accept = submissionTransitions["grade.accept"]
    const graded = attempts.map((attempt) => {
      const { node } = attempt.step
      const result = checkReply(node.grading!.check!, attempt.reply, attempt.variant?.clue ?? undefined)
      return { attempt, result, ...scoreOf(node, result, attempt.late), uuid: crypto.randomUUID() }
    })
    const rows = yield* insertGradedSubmissions(graded.map(({ attempt, passed, uuid }) => ({
      uuid,
      enrollment_uuid: attempt.step.enrollment.uuid,
      course_uuid: attempt.step.course.uuid,
      run_uuid: attempt.step.run.uuid,
      profile_uuid: attempt.step.enrollment.profile_uuid,
      node_key: attempt.step.node.nodeKey,
      version_number: attempt.step.run.version_number,
      variant_uuid: attempt.variant?.uuid ?? null,
      checker_uuid: attempt.checkerUuid,
      attempt_no: attempt.attemptNo,
      reply: attempt.reply,
      status: passed ? accept.to : inline.to,
      // Revision 1 is `submitted`; each move of the table is one more.
      revision: passed ? 3 : 2,
      demo_attempt_uuid: attempt.demoAttemptUuid ?? null
    })))
    const layers = yield* autoLayers(graded.map(({ attempt, passed, points, result, uuid }) => ({
      submissionUuid: uuid,
      points,
      maxPoints: attempt.step.node.grading!.maxPoints,
      result,
      passed,
      late: attempt.late
    })))
    yield* submissionEvents(graded.flatMap(({ passed }, index) => gradedEvents(rows[index]!, passed)))
    return graded.map(({ attempt, passed }, index) => ({ row: rows[index]!, layers: [layers[index]!], progress: progressAfter(passed, attempt.attemptsLeft) }))
  })

/**
 * One attempt on a step, inside the caller's transaction with the enrollment locked: the checks
 * (open step, deadline by the late policy, attempts left), the pins, the grading path. Shared by
 * `submissions.create` and `demo.apply`.
 */
export const submitAttempt = (step: StepContext, input: AttemptInput) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { grading, late } = yield* requireSubmittable(step, input.reply)
    if (input.draftRevision !== undefined) {
      const draft = yield* loadDraft(step.enrollment.uuid, step.node.nodeKey)
      if (draft?.revision !== input.draftRevision) {
        return yield* new RevisionConflict({ message: `The draft is at revision ${draft?.revision ?? "none"}, not ${input.draftRevision}` })
      }
    }
    const attempts = yield* attemptsOf(step)
    const exhausted = attemptsRefusal(attempts)
    if (exhausted !== undefined) return yield* exhausted
    const variant = yield* variantForSubmission(step)
    if (input.requireVariant !== undefined) yield* input.requireVariant(variant)
    yield* requireTransition("learning.submissions.create", { status: "none" })
    const checkerUuid = grading.checkerUuid === undefined
      ? null
      : (yield* Effect.flatMap(
        sql`SELECT uuid FROM learning_checkers WHERE uuid = ${grading.checkerUuid} AND course_uuid = ${step.course.uuid}`,
        decodeUuids
      ))[0]?.uuid ?? null
    const attemptsLeft = attempts.left === undefined ? undefined : attempts.left - 1
    let written: { readonly row: SubmissionRow; readonly layers: ReadonlyArray<LayerRow>; readonly progress: "in_progress" | "completed" | "failed" }
    if (inlineGraded(step.node)) {
      ;[written] = yield* writeGradedAttempts([
        { step, reply: input.reply, variant, checkerUuid, attemptNo: attempts.next, attemptsLeft, late, demoAttemptUuid: input.demoAttemptUuid }
      ])
    } else {
      const created = yield* insertSubmission({
        uuid: crypto.randomUUID(),
        enrollment_uuid: step.enrollment.uuid,
        course_uuid: step.course.uuid,
        run_uuid: step.run.uuid,
        profile_uuid: step.enrollment.profile_uuid,
        node_key: step.node.nodeKey,
        version_number: step.run.version_number,
        variant_uuid: variant?.uuid ?? null,
        checker_uuid: checkerUuid,
        attempt_no: attempts.next,
        reply: input.reply,
        demo_attempt_uuid: input.demoAttemptUuid ?? null
      })
      written = yield* gradeOrQueue(step, created, { reply: input.reply, variant, checkerUuid, late, attemptsLeft })
    }
    // One move of the step (a submission that completes it never passes through in_progress).
    yield* recordStepProgress(step.enrollment.uuid, step.node.nodeKey, written.progress)
    return submissionView(written.row, written.layers, { learner: true, dates: step.dates })
  })

/** A submission not graded inline without review: checked inline then reviewed, queued for its external checker, or reviewed. */
const gradeOrQueue = (
  step: StepContext,
  created: SubmissionRow,
  attempt: { readonly reply: unknown; readonly variant: VariantRow | undefined; readonly checkerUuid: string | null; readonly late: boolean; readonly attemptsLeft: number | undefined }
) =>
  Effect.gen(function*() {
    const grading = step.node.grading!
    if (grading.check !== undefined) {
      const result = checkReply(grading.check, attempt.reply, attempt.variant?.clue ?? undefined)
      return yield* applyCheckResult(created, step.node, result, { trigger: "grade.inline", late: attempt.late, attemptsLeft: attempt.attemptsLeft })
    }
    if (grading.checkerUuid !== undefined) {
      yield* insertGradeJob({
        courseUuid: step.course.uuid,
        enrollmentUuid: step.enrollment.uuid,
        nodeKey: step.node.nodeKey,
        submissionUuid: created.uuid,
        checkerUuid: attempt.checkerUuid,
        requesterProfileUuid: step.enrollment.profile_uuid,
        input: { late: attempt.late }
      })
      return { row: created, layers: [] as ReadonlyArray<LayerRow>, progress: "in_progress" as const }
    }
    // No automatic check: a person reviews it (staff by default).
    const row = yield* setStatus(created.uuid, "review.require")
    yield* requestReviews(row, step.node)
    return { row, layers: [] as ReadonlyArray<LayerRow>, progress: "in_progress" as const }
  })

interface SubmitInput {
  readonly requestUuid: string
  readonly reply: unknown
  readonly draftRevision?: number | undefined
}

/** A `submissions.create` waiting for its group commit: the request's hash is taken in its own fiber. */
interface Submit {
  readonly actor: Actor
  readonly enrollmentUuid: string
  readonly nodeKey: string
  readonly input: SubmitInput
  readonly hash: string
}

/** What a submit answers with: a refusal of its step or its attempt, or its key used for another request. */
type SubmitError = Effect.Effect.Error<ReturnType<typeof submitAttempt>> | NotFound | Forbidden | RequestConflict

const submitCommand = (submit: Submit) => ({
  scope: submit.actor.profileUuid,
  operationId: "learning.submissions.create",
  requestUuid: submit.input.requestUuid,
  hash: submit.hash
})

/**
 * One submit in its own transaction (inside a caller's transaction, after a failed batch, or a key
 * a batch found claimed): the batch path with a batch of one, so a submit alone and a submit in a
 * batch run the same code. Its refusal fails the transaction, so nothing of it is kept.
 */
const submitAlone = (submit: Submit) =>
  idempotent(
    { ...submitCommand(submit), request: submit.input, result: Submission },
    Effect.flatMap(submitClaimed([submit]), ([outcome]) =>
      outcome === undefined || outcome === runAlone ? Effect.dieMessage("a batch of one answers its submit") : outcome)
  )

/** A domain refusal as the item's answer; a `SqlError` still fails the batch. */
const settle = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E | SqlError, SqlClient.SqlClient>) =>
  effect.pipe(
    Effect.map((value): Exit.Exit<A, Exclude<E, SqlError>> => Exit.succeed(value)),
    Effect.catchAll((error) =>
      error._tag === "SqlError" ? Effect.fail(error as SqlError) : Effect.succeed(Exit.fail(error as Exclude<E, SqlError>)))
  )

/**
 * The submits of a batch whose keys it claimed (one per enrollment: `laterOfEnrollment`): every
 * enrollment locked and its step read in a few statements (`stepsFor`), then the inline-graded
 * ones — the same checks in the same order as alone, the attempts counted in one statement, the
 * submissions, layers, events and step states written multi-row. A step with variants, an
 * external checker or review, and a submit naming its draft's revision take the single path's
 * attempt (`submitAttempt`) inside the batch. A refusal answers its item (the batch then rolls
 * back and runs again without it: `Rerun`).
 */
const submitClaimed = (submits: ReadonlyArray<Submit>) =>
  Effect.gen(function*() {
    const answers: Array<BatchOutcome<Submission, SubmitError>> = submits.map(() => runAlone)
    const steps = yield* stepsFor(submits, { lock: true })
    const ready: Array<{ readonly index: number; readonly step: StepContext; readonly late: boolean }> = []
    for (const [index, found] of steps.entries()) {
      if (Either.isLeft(found)) {
        answers[index] = Exit.fail(found.left)
        continue
      }
      const step = found.right
      const { input } = submits[index]!
      if (!inlineGraded(step.node) || (step.node.variants?.mode ?? "none") !== "none" || input.draftRevision !== undefined) {
        answers[index] = yield* settle(submitAttempt(step, { reply: input.reply, draftRevision: input.draftRevision }))
        continue
      }
      const checked = yield* Effect.exit(requireSubmittable(step, input.reply))
      if (Exit.isFailure(checked)) answers[index] = Exit.failCause(checked.cause)
      else ready.push({ index, step, late: checked.value.late })
    }
    const attempts = yield* attemptsOfSteps(ready.map(({ step }) => step))
    const writing = ready.flatMap((attempt, j) => {
      const counted = attempts[j]!
      const exhausted = attemptsRefusal(counted)
      if (exhausted !== undefined) {
        answers[attempt.index] = Exit.fail(exhausted)
        return []
      }
      return [{ ...attempt, attempts: counted }]
    })
    if (writing.length === 0) return answers
    // The table's move of a new submission (a defect if the table lost it).
    yield* Effect.orDie(requireTransition("learning.submissions.create", { status: "none" }))
    const written = yield* writeGradedAttempts(writing.map(({ attempts, index, late, step }) => ({
      step,
      reply: submits[index]!.input.reply,
      variant: undefined,
      checkerUuid: null,
      attemptNo: attempts.next,
      attemptsLeft: attempts.left === undefined ? undefined : attempts.left - 1,
      late
    })))
    yield* recordStepProgresses(writing.map(({ step }, j) => ({ enrollmentUuid: step.enrollment.uuid, nodeKey: step.node.nodeKey, to: written[j]!.progress })))
    writing.forEach(({ index, step }, j) => {
      answers[index] = Exit.succeed(submissionView(written[j]!.row, written[j]!.layers, { learner: true, dates: step.dates }))
    })
    return answers
  })

/**
 * A second submit of an enrollment in one batch runs alone after it: its attempt number and the
 * attempts left depend on the first.
 */
const laterOfEnrollment = (submits: ReadonlyArray<Submit>): ReadonlySet<number> => {
  const seen = new Set<string>()
  const later = new Set<number>()
  submits.forEach((submit, index) => {
    const key = submit.enrollmentUuid.toLowerCase()
    if (seen.has(key)) later.add(index)
    seen.add(key)
  })
  return later
}

/**
 * Concurrent submits go through one group commit (`groupCommit`), as `messages.send` does: a
 * batch pays each statement's round trip and a transaction once, not per submission.
 */
const submitGrouped = groupCommit<Submit, Submission, SubmitError>({
  maxBatch: 64,
  maxConcurrent: 2,
  alone: submitAlone,
  batch: (submits) => idempotentBatch(submits, submitCommand, Submission, submitClaimed, laterOfEnrollment)
})

/** `submissions.create`: an attempt on a step, once per `requestUuid`. */
export const createSubmission = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: SubmitInput) =>
  Effect.flatMap(commandHash("learning.submissions.create", input), (hash) => submitGrouped({ actor, enrollmentUuid, nodeKey, input, hash }))

/** Cancels a submission still waiting (submitted, checking, awaiting review): the attempt is refunded, its jobs cancelled. */
export const cancelSubmission = (actor: Actor, uuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number }) =>
  once(actor, "learning.submissions.cancel", input, Submission, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* loadSubmission(uuid, { lock: false })
    // The enrollment first (its lock orders this with the learner's other commands); strangers get the submission's 404.
    yield* enrollmentFor(actor, found.enrollment_uuid, { lock: true })
      .pipe(Effect.catchTag("NotFound", () => Effect.fail(new NotFound({ message: `No submission ${uuid}` }))))
    // Its waiting grade jobs before the submission (docs/decisions.md "Lock order"): a worker's claim holds a job
    // and then moves its submission to checking, so taking the submission first could close a cycle with it.
    yield* sql`SELECT 1 FROM learning_grading_jobs WHERE submission_uuid = ${uuid} AND status IN ('queued', 'running')
      ORDER BY uuid FOR NO KEY UPDATE`
    const row = yield* loadSubmission(uuid, { lock: true })
    yield* requireTransition("learning.submissions.cancel", row)
    yield* requireRevision("submission", row.revision, input.expectedRevision)
    const cancelled = yield* setStatus(uuid, "learning.submissions.cancel")
    yield* cancelSubmissionJobs(uuid)
    const dates = (yield* stepDates(row.enrollment_uuid)).get(row.node_key)
    return yield* viewOf(cancelled, { learner: true, dates })
  }))

const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
// The nodes were checked when the version was published (courses/Model.ts); a row is not walked again.
const decodeVersionNodes = rowsDecoder(Schema.Struct({ nodes: Schema.Array(Schema.Unknown) }))
const decodeCounts = rowsDecoder(Schema.Struct({ n: Schema.Number }))

/**
 * A grade job finished (the grading worker calls this, as the tests do): a verdict grades
 * the submission in `checking`; a platform failure after the retries moves it to `check_failed`,
 * refunds the attempt and emits `learning.checker.failed`. Applied once: a job not `running`
 * (already finished, or cancelled with its submission) changes nothing. Returns whether it applied.
 *
 * The job's enrollment is locked first, as the learner's commands lock it before the submission,
 * the job and the step states this changes (docs/decisions.md "Lock order"); before, the worker
 * took the step states and then the enrollment (for completion), and deadlocked with a submit.
 */
export const finishGradeJob = (
  jobUuid: string,
  outcome: { readonly _tag: "verdict"; readonly result: CheckResult } | { readonly _tag: "platform_error"; readonly error: string }
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* lockJobEnrollments([jobUuid])
    const job = yield* finishRunningGradeJob(jobUuid, {
      status: outcome._tag === "verdict" ? "succeeded" : "failed",
      verdict: outcome._tag === "verdict" ? outcome.result.verdict : null,
      platformError: outcome._tag === "platform_error" ? outcome.error : null
    })
    if (job === undefined) return false
    const row = yield* Effect.orDie(loadSubmission(job.submission_uuid, { lock: true }))
    if (outcome._tag === "platform_error") {
      if (!submissionAllows("worker.failed", row.status)) return false
      const failed = yield* setStatus(row.uuid, "worker.failed")
      yield* appendEvent({
        type: "learning.checker.failed",
        aggregate: { kind: "learning_checker", uuid: job.checker_uuid ?? job.uuid, revision: 1 },
        data: { objectUuid: job.checker_uuid ?? job.uuid, status: "failed" },
        context: {
          courseUuid: failed.course_uuid,
          runUuid: failed.run_uuid,
          enrollmentUuid: failed.enrollment_uuid,
          nodeKey: failed.node_key,
          submissionUuid: failed.uuid,
          jobUuid: job.uuid
        }
      })
      return true
    }
    if (!submissionAllows("worker.graded", row.status)) return false
    const [version] = yield* Effect.flatMap(
      sql`SELECT nodes FROM learning_course_versions
      WHERE course_uuid = ${row.course_uuid} AND number = ${row.version_number}`,
      decodeVersionNodes
    )
    const node = (version!.nodes as ReadonlyArray<CourseNode>).find((candidate) => candidate.nodeKey === row.node_key)!
    const dates = (yield* stepDates(row.enrollment_uuid)).get(row.node_key)
    const [used] = yield* Effect.flatMap(
      sql`SELECT count(*)::int AS n FROM learning_submissions
      WHERE enrollment_uuid = ${row.enrollment_uuid} AND node_key = ${row.node_key} AND attempt_counted`,
      decodeCounts
    )
    const allowed = node.grading?.attempts === undefined ? undefined : node.grading.attempts + (dates?.extraAttempts ?? 0)
    const applied = yield* applyCheckResult(row, node, outcome.result, {
      trigger: "worker.graded",
      late: dates?.dueAt !== undefined && row.submitted_at.getTime() > dates.dueAt.getTime(),
      attemptsLeft: allowed === undefined ? undefined : Math.max(0, allowed - (used?.n ?? 0)),
      sourceUuid: job.uuid
    })
    yield* recordStepProgress(row.enrollment_uuid, row.node_key, applied.progress)
    return true
  })

/**
 * Locks the enrollments of grading jobs, in uuid order (docs/decisions.md "Lock order"): what the
 * grading worker takes before it applies the jobs' answers. The job row is read, not locked.
 */
export const lockJobEnrollments = (jobUuids: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  jobUuids.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM learning_enrollments WHERE uuid IN (SELECT enrollment_uuid FROM learning_grading_jobs WHERE uuid IN ${sql.in([...jobUuids])})
      ORDER BY uuid FOR NO KEY UPDATE`.pipe(Effect.asVoid))

/** W dispatch: claims queued grade jobs (SKIP LOCKED) and moves their submissions to `checking`. For the grading worker (packages/worker-host/src/learning/GradingJob.ts). */
export const claimGradeJobs = (limit: number) =>
  Effect.gen(function*() {
    const jobs = yield* claimQueuedGradeJobs(limit)
    yield* dispatchSubmissions(jobs.map((job) => job.submission_uuid))
    return jobs
  })

/** W dispatch of claimed grade jobs' submissions in one statement: `submitted → checking` by the table (anything else stays). */
export const dispatchSubmissions = (uuids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (uuids.length === 0) return
    const { from, to } = submissionTransitions["worker.dispatch"]
    yield* moveSubmissionsFrom(uuids, from, to)
  })
