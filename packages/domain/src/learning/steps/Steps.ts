import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Schema } from "effect"
import { type Forbidden, InvalidRequest, InvalidState, NotFound, RevisionConflict } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { once } from "../Commands.js"
import { loadOverridesOf, type StepDates, stepDatesWith } from "../enrollments/Dates.js"
import { type EnrollmentContext, enrollmentsFor } from "../enrollments/EnrollmentAccess.js"
import { StepLocked } from "../LearningErrors.js"
import type { CourseNode } from "../courses/Model.js"
import { AcknowledgedStep, Draft, maxReplyBytes, type StepView } from "./StepModel.js"
import { loadStepState, recordStepProgress, stepOpenAt, type StepStateRow, stepStatusAt } from "./StepStates.js"
import { currentVariant, variantView } from "./VariantRepository.js"
import { lastSubmission } from "./SubmissionViews.js"

/**
 * One step of one enrollment: the context every step operation works
 * in (the enrollment authorized by `enrollmentFor`, the node at the pinned version, its computed
 * dates), the checks before a learner acts on it, and the step view, acknowledgement and drafts.
 */


export interface StepContext extends EnrollmentContext {
  readonly node: CourseNode
  readonly dates: StepDates | undefined
  readonly now: Date
}

/** Loads the enrollment (authorized for the running operation) and its step; 404 when the pinned version has no such step. */
export const stepFor = (
  actor: Actor,
  enrollmentUuid: string,
  nodeKey: string,
  options: { readonly lock: boolean }
) => Effect.flatMap(stepsFor([{ actor, enrollmentUuid, nodeKey }], options), ([step]) => step!)

/** `stepFor` of several requests (a group commit's batch): `enrollmentsFor`, the overrides in one statement; each its step or its refusal. */
export const stepsFor = (
  requests: ReadonlyArray<{ readonly actor: Actor; readonly enrollmentUuid: string; readonly nodeKey: string }>,
  options: { readonly lock: boolean }
): Effect.Effect<ReadonlyArray<Either.Either<StepContext, NotFound | Forbidden>>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const contexts = yield* enrollmentsFor(requests, options)
    const found = contexts.map((context, index) =>
      Either.flatMap(context, (context) => {
        const nodeKey = requests[index]!.nodeKey
        const node = context.nodes.find((candidate) => candidate.nodeKey === nodeKey && candidate.kind === "step")
        return node === undefined
          ? Either.left(new NotFound({ message: `No step ${nodeKey} in the enrollment's course version` }))
          : Either.right({ context, node })
      }))
    const overrides = yield* loadOverridesOf(found.flatMap((step) => Either.isRight(step) ? [step.right.context.enrollment.uuid] : []))
    const now = new Date()
    return found.map((step, index) =>
      Either.map(step, ({ context, node }): StepContext => ({
        ...context,
        node,
        dates: stepDatesWith(context.enrollment, context.run, context.nodes, overrides.get(context.enrollment.uuid) ?? []).get(requests[index]!.nodeKey),
        now
      })))
  })

/**
 * A learner may act on a step only while the enrollment is active and the step is open:
 * 409 `invalid_state` for a paused, withdrawn or finished enrollment, `step_locked` before the
 * unlock (or a self-paced start) and after `lockAt`.
 */
export const requireWorkable = (step: StepContext): Effect.Effect<void, InvalidState | StepLocked> => {
  if (step.enrollment.status !== "active") {
    return Effect.fail(new InvalidState({ message: `The enrollment is ${step.enrollment.status}; steps are worked on in an active enrollment` }))
  }
  switch (stepOpenAt(step.dates, step.now)) {
    case "open":
      return Effect.void
    case "locked":
      return Effect.fail(new StepLocked({
        message: step.dates?.unlockAt !== undefined
          ? `The step unlocks at ${step.dates.unlockAt.toISOString()}`
          : "The step is not available yet (start the enrollment first)"
      }))
    case "closed":
      return Effect.fail(new StepLocked({ message: `The step locked at ${step.dates!.lockAt!.toISOString()}` }))
  }
}

/** 400 for a reply larger than 64 KiB as JSON. */
export const requireReplySize = (reply: unknown): Effect.Effect<void, InvalidRequest> =>
  Buffer.byteLength(JSON.stringify(reply) ?? "null") <= maxReplyBytes
    ? Effect.void
    : Effect.fail(new InvalidRequest({ message: `reply: at most ${maxReplyBytes} bytes as JSON` }))

/** Attempts of the step: allowed (node attempts + extra attempts of the dates; none: unlimited) and used (counted submissions), in one read. */
export const attemptsOf = (step: Pick<StepContext, "node" | "dates" | "enrollment">) =>
  Effect.map(attemptsOfSteps([step]), ([attempts]) => attempts!)

const decodeAttempts = rowsDecoder(Schema.Struct({ enrollment_uuid: Schema.String, node_key: Schema.String, used: Schema.Number, next: Schema.Number }))

/** `attemptsOf` of several steps in one statement, in order. */
export const attemptsOfSteps = (steps: ReadonlyArray<Pick<StepContext, "node" | "dates" | "enrollment">>) =>
  Effect.gen(function*() {
    if (steps.length === 0) return []
    const sql = yield* SqlClient.SqlClient
    const keys = steps.map((step) => ({ enrollment_uuid: step.enrollment.uuid, node_key: step.node.nodeKey }))
    const rows = yield* Effect.flatMap(
      sql`
      SELECT k.enrollment_uuid::text AS enrollment_uuid, k.node_key, a.used, a.next
      FROM jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) AS k(enrollment_uuid uuid, node_key text)
        CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE attempt_counted)::int AS used, coalesce(max(attempt_no), 0)::int + 1 AS next
          FROM learning_submissions s WHERE s.enrollment_uuid = k.enrollment_uuid AND s.node_key = k.node_key) a`,
      decodeAttempts
    )
    const counted = new Map(rows.map((row) => [`${row.enrollment_uuid}/${row.node_key}`, row]))
    return steps.map((step) => {
      const row = counted.get(`${step.enrollment.uuid}/${step.node.nodeKey}`)
      const base = step.node.grading?.attempts
      const allowed = base === undefined ? undefined : base + (step.dates?.extraAttempts ?? 0)
      const used = row?.used ?? 0
      /** `next`: the attempt number a new submission gets (cancelled ones keep theirs). */
      return { allowed, used, left: allowed === undefined ? undefined : Math.max(0, allowed - used), next: row?.next ?? 1 }
    })
  })

// ---- drafts -----------------------------------------------------------------------------------------

const DraftRow = Schema.Struct({
  enrollment_uuid: Schema.String,
  node_key: Schema.String,
  reply: Schema.Unknown,
  revision: Schema.Number,
  updated_at: Timestamp
})
type DraftRow = typeof DraftRow.Type
const draftColumns = selectList(DraftRow)
const decodeDrafts = rowsDecoder(DraftRow)

export const loadDraft = (enrollmentUuid: string, nodeKey: string, options: { readonly lock: boolean } = { lock: false }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT ${sql.literal(draftColumns)} FROM learning_drafts
        WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey} ${options.lock ? sql.literal("FOR UPDATE") : sql``}`,
        decodeDrafts
      ),
      (rows) => rows[0]
    ))

const draftView = (row: DraftRow): Draft => ({
  enrollmentUuid: row.enrollment_uuid,
  nodeKey: row.node_key,
  reply: row.reply,
  revision: row.revision,
  updatedAt: row.updated_at
})

/** Autosaves the learner's draft: never a submission, never an attempt. The first save has no expectedRevision. */
export const saveDraft = (
  actor: Actor,
  enrollmentUuid: string,
  nodeKey: string,
  input: { readonly requestUuid: string; readonly expectedRevision?: number | undefined; readonly reply: unknown }
) =>
  once(actor, "learning.drafts.save", input, Draft, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* requireReplySize(input.reply)
    const step = yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: true })
    yield* requireWorkable(step)
    const current = yield* loadDraft(enrollmentUuid, nodeKey, { lock: true })
    if ((current?.revision ?? undefined) !== input.expectedRevision) {
      return yield* new RevisionConflict({
        message: current === undefined
          ? "There is no draft yet: save the first one without expectedRevision"
          : `The draft is at revision ${current.revision}; read it and save again with that expectedRevision`
      })
    }
    const [row] = yield* Effect.flatMap(
      sql`INSERT INTO learning_drafts (enrollment_uuid, node_key, reply)
      VALUES (${enrollmentUuid}, ${nodeKey}, ${JSON.stringify(input.reply)}::jsonb)
      ON CONFLICT (enrollment_uuid, node_key) DO UPDATE SET reply = EXCLUDED.reply, revision = learning_drafts.revision + 1, updated_at = now()
      RETURNING ${sql.literal(draftColumns)}`,
      decodeDrafts
    )
    yield* recordStepProgress(enrollmentUuid, nodeKey, "in_progress")
    return draftView(row!)
  }))

// ---- the step view and acknowledgement --------------------------------------------------------------

const acknowledgedView = (row: StepStateRow): AcknowledgedStep => ({
  enrollmentUuid: row.enrollment_uuid,
  nodeKey: row.node_key,
  status: row.status,
  ...(row.completed_at !== null ? { completedAt: row.completed_at } : {})
})

/** Marks an ungraded step done (a graded one completes by an accepted submission: 409). */
export const acknowledgeStep = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.steps.acknowledge", input, AcknowledgedStep, Effect.gen(function*() {
    const step = yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: true })
    yield* requireWorkable(step)
    if (step.node.grading !== undefined) {
      return yield* new InvalidState({ message: "A graded step is completed by an accepted submission, not acknowledged" })
    }
    return acknowledgedView(yield* recordStepProgress(enrollmentUuid, nodeKey, "completed"))
  }))

const describeGrading = (node: CourseNode): NonNullable<StepView["grading"]> | undefined => {
  const grading = node.grading
  if (grading === undefined) return undefined
  return {
    maxPoints: grading.maxPoints,
    ...(grading.passThreshold !== undefined ? { passThreshold: grading.passThreshold } : {}),
    checkedBy: grading.check !== undefined ? grading.check.kind : grading.checkerUuid !== undefined ? "external" : "review",
    review: grading.review?.mode ?? (grading.check === undefined && grading.checkerUuid === undefined ? "staff" : "none"),
    latePolicy: grading.latePolicy?.mode ?? "accept",
    variants: node.variants?.mode ?? "none"
  }
}

/** The step as the learner (or staff) sees it at the pinned version; the body once the step is available. */
export const getStep = (actor: Actor, enrollmentUuid: string, nodeKey: string) =>
  Effect.gen(function*() {
    const step = yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: false })
    const status = stepStatusAt(yield* loadStepState(enrollmentUuid, nodeKey), step.dates, step.now)
    const attempts = yield* attemptsOf(step)
    const variant = yield* currentVariant(enrollmentUuid, nodeKey)
    const draft = yield* loadDraft(enrollmentUuid, nodeKey)
    const last = yield* lastSubmission(enrollmentUuid, nodeKey, { learner: step.asLearner, dates: step.dates })
    const grading = describeGrading(step.node)
    const view: StepView = {
      enrollmentUuid,
      nodeKey,
      ...(step.node.parentKey !== undefined ? { parentKey: step.node.parentKey } : {}),
      versionNumber: step.run.version_number,
      title: step.node.title,
      ...(step.node.stepType !== undefined ? { stepType: step.node.stepType } : {}),
      status,
      ...(status !== "locked" && step.node.body !== undefined ? { body: step.node.body } : {}),
      dates: {
        ...(step.dates?.unlockAt !== undefined ? { unlockAt: step.dates.unlockAt } : {}),
        ...(step.dates?.dueAt !== undefined ? { dueAt: step.dates.dueAt } : {}),
        ...(step.dates?.lockAt !== undefined ? { lockAt: step.dates.lockAt } : {})
      },
      attempts: {
        used: attempts.used,
        ...(attempts.allowed !== undefined ? { allowed: attempts.allowed } : {}),
        ...(attempts.left !== undefined ? { left: attempts.left } : {})
      },
      ...(grading !== undefined ? { grading } : {}),
      demo: step.node.demo === true,
      ...(variant !== undefined && status !== "locked" ? { variant: variantView(variant) } : {}),
      ...(draft !== undefined ? { draft: draftView(draft) } : {}),
      ...(last !== undefined ? { lastSubmission: last } : {})
    }
    return view
  })
