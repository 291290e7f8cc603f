import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import { rowsDecoder, Timestamp } from "../../store/Rows.js"
import { appendAudit, appendAudits, type AuditEntry } from "../Audit.js"
import { versionNodes, type VersionPin } from "../courses/CourseRepository.js"
import { GradeFrozen } from "../LearningErrors.js"
import { gradesFrozenAt, loadRun, type RunRow } from "../courses/RunRepository.js"
import { setStatus, submissionEvents } from "../steps/Submissions.js"
import { submissionAllows, submissionTransitions } from "../steps/SubmissionMachine.js"
import { decodeSubmissions, effectiveLayer, type LayerRow, layersOf, loadSubmission, submissionColumns, type SubmissionRow } from "../steps/SubmissionViews.js"
import { insertLayer, insertLayers, revokeLayer } from "../steps/ScoreLayerRepository.js"
import { bumpSubmissionRevision, moveSubmissions } from "../steps/SubmissionRepository.js"

/**
 * Score layers: the one module every score write of learning
 * goes through (reviews, appeals, automatic overrides, regrades, regrade plans, incidents).
 *
 * - A submission's score is a stack of append-only layers (`learning_score_layers`, migration 21).
 *   The first layer (`auto` from a check, or the first `review`) is never modified; later layers are
 *   appended; a later layer may only be revoked, which reveals the one below. The store's trigger
 *   refuses anything else, and never lets an `auto` or `review` layer be revoked.
 * - The effective score is computed, never stored: the newest active layer, where an
 *   `onlyIfHigher` layer counts only while it is above the layer below it
 *   (`SubmissionViews.effectiveLayer`). A learner sees only released layers.
 * - Every write runs inside the caller's transaction, with the submission row locked (callers that
 *   lock the enrollment first keep the usual order: enrollment, then submission), and:
 *   refuses with 409 `grade_frozen` when the submission's run has frozen grades (run `finishedAt` +
 *   course `freezeAfterDays` is past); bumps the submission's `revision` (plans use it as their
 *   base revision); writes one audit row with the effective score before and after (Canvas grade
 *   change log: action `score.<kind>` or `score.revoke`, subject the submission); and, when the
 *   score the learner sees changed, emits `learning.submission.graded` (and
 *   `learning.submission.accepted` when it newly passes; a `graded` submission then moves to
 *   `accepted` by the table's `grade.accept`). `emit: false` leaves status and events to the caller
 *   (reviews.release moves `awaiting_review` itself); the audit row and the revision bump stay.
 */

// Rows read here, each decoded by a decoder compiled once.
const decodePins: (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<VersionPin>> = rowsDecoder(Schema.Struct({
  course_uuid: Schema.String,
  version_number: Schema.Number,
  content_hash: Schema.String,
  published_at: Timestamp
}))
const decodeLayerSubmissions = rowsDecoder(Schema.Struct({ submission_uuid: Schema.String }))
const decodeFreezes: (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Pick<RunRow, "uuid" | "finished_at" | "freeze_after_days">>> = rowsDecoder(
  Schema.Struct({ uuid: Schema.String, finished_at: Schema.NullOr(Timestamp), freeze_after_days: Schema.Number })
)

export type LayerKind = LayerRow["kind"]
/** The kinds appended after the first layer (`auto` is written by grading only). */
export type AppendedLayerKind = Exclude<LayerKind, "auto">

/** A computed effective score. */
export interface EffectiveScore {
  readonly layerUuid: string
  readonly kind: LayerKind
  readonly points: number
  readonly maxPoints: number
  readonly verdict: string
  readonly passed: boolean
  readonly released: boolean
}

export const scoreOfLayer = (layer: LayerRow): EffectiveScore => ({
  layerUuid: layer.uuid,
  kind: layer.kind,
  points: Number(layer.points),
  maxPoints: layer.max_points,
  verdict: layer.verdict,
  passed: layer.passed,
  released: layer.released
})

/** The effective score of given layers (oldest first); `learner: true` counts released layers only. */
export const effectiveOf = (layers: ReadonlyArray<LayerRow>, options: { readonly learner?: boolean } = {}): EffectiveScore | undefined => {
  const layer = effectiveLayer(layers, options)
  return layer === undefined ? undefined : scoreOfLayer(layer)
}

/**
 * The effective score of a submission: as staff see it, or with `learner: true` as
 * its learner sees it (released layers only). Undefined while it has no (visible) layer.
 */
export const effectiveScore = (
  submissionUuid: string,
  options: { readonly learner?: boolean } = {}
): Effect.Effect<EffectiveScore | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.map(layersOf([submissionUuid]), (layers) => effectiveOf(layers.get(submissionUuid) ?? [], options))

/** Whether the run's grades are frozen now (regrades and plans skip such items as `frozen`). */
export const gradesFrozen = (runUuid: string) =>
  Effect.map(loadRun(runUuid, { lock: false }), (run) => {
    const frozen = gradesFrozenAt(run)
    return frozen !== undefined && frozen.getTime() <= Date.now()
  })

/** 409 `grade_frozen` when the run's grades are frozen: every score write checks this first. */
export const requireGradesOpen = (runUuid: string) =>
  Effect.flatMap(gradesFrozen(runUuid), (frozen) =>
    frozen ? Effect.fail(new GradeFrozen({ message: "The run's grades are frozen; no score may change" })) : Effect.void)

/** The node a submission was made on, at its pinned version. */
export const submissionNode = (row: SubmissionRow) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [pin] = yield* Effect.flatMap(
      sql`SELECT course_uuid, number AS version_number, content_hash, published_at FROM learning_course_versions
      WHERE course_uuid = ${row.course_uuid} AND number = ${row.version_number}`,
      decodePins
    )
    return pin === undefined ? undefined : (yield* versionNodes(pin)).find((node) => node.nodeKey === row.node_key)
  })

export interface AppendScoreLayer {
  readonly submissionUuid: string
  readonly kind: AppendedLayerKind
  readonly points: number
  readonly verdict: string
  readonly reason: string
  readonly byProfileUuid: string | null
  /** The record the layer comes from: review, appeal, automatic override, regrade, plan or incident. */
  readonly sourceUuid?: string | undefined
  /** False keeps the layer from the learner (effective for staff only). Default true. */
  readonly released?: boolean | undefined
  /** The layer counts only while it is higher than the one below (regrades' `only_if_higher`). */
  readonly onlyIfHigher?: boolean | undefined
  /** Shown with the score (reviewer comment, appeal answer). Default empty. */
  readonly feedback?: string | undefined
  /** The command's requestUuid, for the audit row. */
  readonly requestUuid?: string | undefined
  /** Default true: status move and events as described above; false leaves them to the caller. */
  readonly emit?: boolean | undefined
}

export interface LayerChange {
  /** The appended or revoked layer (after the change). */
  readonly layer: LayerRow
  /** The submission after the change (revision bumped; status moved when it newly passed). */
  readonly submission: SubmissionRow
  /** The effective score as staff see it, before and after. */
  readonly before: EffectiveScore | undefined
  readonly after: EffectiveScore | undefined
}

type LayerError = SqlError | NotFound | GradeFrozen | InvalidState | InvalidRequest

const snapshot = (score: EffectiveScore | undefined) =>
  score === undefined ? null : { layerUuid: score.layerUuid, kind: score.kind, points: score.points, maxPoints: score.maxPoints, verdict: score.verdict, passed: score.passed }

const bumpRevision = bumpSubmissionRevision

/**
 * After a layer change: audit with the old and new effective score; when the learner's score
 * changed and `emit`, the status move and the fixed events.
 */
const settle = (
  row: SubmissionRow,
  layer: LayerRow,
  layers: { readonly before: ReadonlyArray<LayerRow>; readonly after: ReadonlyArray<LayerRow> },
  audit: { readonly action: string; readonly byProfileUuid: string | null; readonly reason: string; readonly requestUuid?: string | undefined },
  emit: boolean
) =>
  Effect.gen(function*() {
    const before = effectiveOf(layers.before)
    const after = effectiveOf(layers.after)
    yield* bumpRevision(row.uuid)
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: audit.byProfileUuid,
      action: audit.action,
      subjectKind: "submission",
      subjectUuid: row.uuid,
      enrollmentUuid: row.enrollment_uuid,
      before: snapshot(before),
      after: { ...snapshot(after), changedLayerUuid: layer.uuid, changedLayerKind: layer.kind },
      reason: audit.reason,
      requestUuid: audit.requestUuid
    })
    let submission = yield* loadSubmission(row.uuid, { lock: false })
    const seenBefore = effectiveOf(layers.before, { learner: true })
    const seenAfter = effectiveOf(layers.after, { learner: true })
    const changed = seenAfter !== undefined &&
      (seenBefore === undefined || seenBefore.points !== seenAfter.points || seenBefore.verdict !== seenAfter.verdict ||
        seenBefore.passed !== seenAfter.passed)
    if (emit && changed) {
      const graded = submission
      if (seenAfter.passed && seenBefore?.passed !== true) {
        if (submissionAllows("grade.accept", submission.status)) submission = yield* setStatus(submission.uuid, "grade.accept")
        yield* submissionEvents([["learning.submission.graded", graded], ["learning.submission.accepted", submission]])
      } else {
        yield* submissionEvents([["learning.submission.graded", graded]])
      }
    }
    return { layer, submission, before, after } satisfies LayerChange
  })

/**
 * Appends a score layer (inside the caller's transaction). Refuses: 404 no submission, 409
 * `grade_frozen`, 409 `invalid_state` on a cancelled submission, 400 points outside 0..maxPoints.
 * `maxPoints` comes from the first layer (else the node); `passed` = verdict is not
 * `invalid_reply` and points ≥ the node's pass threshold (default maxPoints); `late` is the first
 * layer's.
 */
export const appendScoreLayer = (input: AppendScoreLayer): Effect.Effect<LayerChange, LayerError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const row = yield* loadSubmission(input.submissionUuid, { lock: true })
    if (row.status === "cancelled") return yield* new InvalidState({ message: "A cancelled submission takes no score" })
    yield* requireGradesOpen(row.run_uuid)
    const before = (yield* layersOf([row.uuid])).get(row.uuid) ?? []
    const node = yield* submissionNode(row)
    const first = before[0]
    const maxPoints = first?.max_points ?? node?.grading?.maxPoints ?? 0
    if (!Number.isFinite(input.points) || input.points < 0 || input.points > maxPoints) {
      return yield* new InvalidRequest({ message: `points: between 0 and the step's ${maxPoints} points` })
    }
    const threshold = node?.grading?.passThreshold ?? maxPoints
    const passed = input.verdict !== "invalid_reply" && input.points >= threshold
    const layer = yield* insertLayer({
      uuid: crypto.randomUUID(),
      submission_uuid: row.uuid,
      kind: input.kind,
      points: input.points,
      max_points: maxPoints,
      verdict: input.verdict,
      feedback: input.feedback ?? "",
      passed,
      late: first?.late ?? false,
      released: input.released ?? true,
      only_if_higher: input.onlyIfHigher ?? false,
      source_uuid: input.sourceUuid ?? null,
      by_profile_uuid: input.byProfileUuid,
      reason: input.reason
    })
    return yield* settle(row, layer, { before, after: [...before, layer] }, {
      action: `score.${input.kind}`,
      byProfileUuid: input.byProfileUuid,
      reason: input.reason,
      requestUuid: input.requestUuid
    }, input.emit ?? true)
  })

/**
 * Revokes a layer (inside the caller's transaction): the layer below shows again. Refuses: 404 no
 * such layer, 409 `grade_frozen`, 409 `invalid_state` for the first layer, an `auto` or `review`
 * layer, or one already revoked. Audit action `score.revoke`.
 */
export const revokeScoreLayer = (
  layerUuid: string,
  change: { readonly byProfileUuid: string | null; readonly reason: string; readonly requestUuid?: string | undefined; readonly emit?: boolean | undefined }
): Effect.Effect<LayerChange, LayerError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [found] = yield* Effect.flatMap(sql`SELECT submission_uuid FROM learning_score_layers WHERE uuid = ${layerUuid}`, decodeLayerSubmissions)
    if (found === undefined) return yield* new NotFound({ message: `No score layer ${layerUuid}` })
    const row = yield* loadSubmission(found.submission_uuid, { lock: true })
    yield* requireGradesOpen(row.run_uuid)
    const before = (yield* layersOf([row.uuid])).get(row.uuid) ?? []
    const target = before.find((layer) => layer.uuid === layerUuid)!
    if (before[0]?.uuid === layerUuid || target.kind === "auto" || target.kind === "review") {
      return yield* new InvalidState({ message: "The first layer, and any auto or review layer, is never revoked" })
    }
    if (target.revoked_at !== null) return yield* new InvalidState({ message: "The layer is already revoked" })
    const revoked = yield* revokeLayer(layerUuid)
    const after = before.map((layer) => (layer.uuid === layerUuid ? revoked! : layer))
    return yield* settle(row, revoked!, { before, after }, {
      action: "score.revoke",
      byProfileUuid: change.byProfileUuid,
      reason: change.reason,
      requestUuid: change.requestUuid
    }, change.emit ?? true)
  })

/**
 * `appendScoreLayer` for many distinct submissions in one go (inside the caller's transaction):
 * the same refusals (the first one fails the whole call), and the same rows in the same order as
 * appending the layers one by one in the order given — one layer, one revision bump, one audit
 * row per submission, the status move and the graded / accepted events where the learner's score
 * changed — but each table written by one statement for all of them instead of several round
 * trips per submission (regrade plan chunks: `RegradePlans.applyChunk`). Submissions are locked in
 * uuid order.
 */
export const appendScoreLayers = (
  inputs: ReadonlyArray<AppendScoreLayer>,
  options: {
    /** The submissions as the caller read them `FOR UPDATE` in this transaction (spares locking and reading them again). */
    readonly locked?: ReadonlyArray<SubmissionRow> | undefined
  } = {}
): Effect.Effect<ReadonlyArray<LayerChange>, LayerError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (inputs.length === 0) return []
    const sql = yield* SqlClient.SqlClient
    const uuids = inputs.map((input) => input.submissionUuid)
    const wanted = new Set(uuids)
    if (wanted.size !== uuids.length) return yield* Effect.dieMessage("appendScoreLayers: one layer per submission")
    // Only the inputs' rows: the caller may have locked more (a plan chunk's stale and frozen items).
    const locked = (options.locked ?? (yield* Effect.flatMap(
      sql`SELECT ${sql.literal(submissionColumns)} FROM learning_submissions s
      WHERE s.uuid IN ${sql.in(uuids)} ORDER BY s.uuid FOR UPDATE OF s`,
      decodeSubmissions
    ))).filter((row) => wanted.has(row.uuid))
    const rows = new Map(locked.map((row) => [row.uuid, row]))
    const missing = uuids.find((uuid) => !rows.has(uuid))
    if (missing !== undefined) return yield* new NotFound({ message: `No submission ${missing}` })
    if (locked.some((row) => row.status === "cancelled")) return yield* new InvalidState({ message: "A cancelled submission takes no score" })
    const runs = yield* Effect.flatMap(
      sql`SELECT r.uuid, r.finished_at, c.freeze_after_days
      FROM learning_runs r JOIN learning_courses c ON c.uuid = r.course_uuid WHERE r.uuid IN ${sql.in([...new Set(locked.map((row) => row.run_uuid))])}`,
      decodeFreezes
    )
    const now = Date.now()
    if (runs.some((run) => (gradesFrozenAt(run)?.getTime() ?? Infinity) <= now)) {
      return yield* new GradeFrozen({ message: "The run's grades are frozen; no score may change" })
    }
    const layers = yield* layersOf(uuids)
    // The node of each (course, version) once: a chunk's submissions share a few versions.
    const nodeOf = new Map<string, Effect.Effect.Success<ReturnType<typeof submissionNode>>>()
    for (const row of locked) {
      const key = `${row.course_uuid}:${row.version_number}:${row.node_key}`
      if (!nodeOf.has(key)) nodeOf.set(key, yield* submissionNode(row))
    }
    const planned = []
    for (const input of inputs) {
      const row = rows.get(input.submissionUuid)!
      const before = layers.get(row.uuid) ?? []
      const node = nodeOf.get(`${row.course_uuid}:${row.version_number}:${row.node_key}`)
      const first = before[0]
      const maxPoints = first?.max_points ?? node?.grading?.maxPoints ?? 0
      if (!Number.isFinite(input.points) || input.points < 0 || input.points > maxPoints) {
        return yield* new InvalidRequest({ message: `points: between 0 and the step's ${maxPoints} points` })
      }
      const threshold = node?.grading?.passThreshold ?? maxPoints
      planned.push({ input, row, before, maxPoints, passed: input.verdict !== "invalid_reply" && input.points >= threshold, late: first?.late ?? false })
    }
    const inserted = yield* insertLayers(planned.map(({ input, late, maxPoints, passed, row }) => ({
        uuid: crypto.randomUUID(),
        submission_uuid: row.uuid,
        kind: input.kind,
        points: input.points,
        max_points: maxPoints,
        verdict: input.verdict,
        feedback: input.feedback ?? "",
        passed,
        late,
        released: input.released ?? true,
        only_if_higher: input.onlyIfHigher ?? false,
        source_uuid: input.sourceUuid ?? null,
        by_profile_uuid: input.byProfileUuid,
        reason: input.reason
      })))
    const layerOf = new Map(inserted.map((layer) => [layer.submission_uuid, layer]))
    // What `settle` decides per submission: the effective scores, and whether the learner's changed (status move, events).
    const settled = planned.map(({ before, input, row }) => {
      const layer = layerOf.get(row.uuid)!
      const after = [...before, layer]
      const seenBefore = effectiveOf(before, { learner: true })
      const seenAfter = effectiveOf(after, { learner: true })
      const changed = (input.emit ?? true) && seenAfter !== undefined &&
        (seenBefore === undefined || seenBefore.points !== seenAfter.points || seenBefore.verdict !== seenAfter.verdict ||
          seenBefore.passed !== seenAfter.passed)
      const passes = changed && seenAfter.passed && seenBefore?.passed !== true
      return { input, row, layer, before: effectiveOf(before), after: effectiveOf(after), changed, passes, accept: passes && submissionAllows("grade.accept", row.status) }
    })
    // The revision bump, and for a submission that newly passes the move to accepted (one more revision), in one statement.
    // Only what changed comes back (the rows are otherwise as locked): reading every column of each again costs more than the write.
    const moved = yield* moveSubmissions(
      settled.map(({ accept, row }) => ({ uuid: row.uuid, steps: accept ? 2 : 1, status: accept ? submissionTransitions["grade.accept"].to : row.status }))
    )
    const updated = new Map(moved.map((change) => [change.uuid, { ...rows.get(change.uuid)!, ...change }]))
    yield* appendAudits(settled.map(({ after, before, input, layer, row }): AuditEntry => ({
      courseUuid: row.course_uuid,
      actorProfileUuid: input.byProfileUuid,
      action: `score.${input.kind}`,
      subjectKind: "submission",
      subjectUuid: row.uuid,
      enrollmentUuid: row.enrollment_uuid,
      before: snapshot(before),
      after: { ...snapshot(after), changedLayerUuid: layer.uuid, changedLayerKind: layer.kind },
      reason: input.reason,
      requestUuid: input.requestUuid
    })))
    yield* submissionEvents(settled.flatMap(({ accept, changed, passes, row }) => {
      const submission = updated.get(row.uuid)!
      // The graded event carries the row after the bump (before the move to accepted), as `settle` emits it.
      const graded: SubmissionRow = accept ? { ...submission, status: row.status, revision: submission.revision - 1 } : submission
      if (!changed) return []
      return passes
        ? [["learning.submission.graded", graded] as const, ["learning.submission.accepted", submission] as const]
        : [["learning.submission.graded", graded] as const]
    }))
    return settled.map(({ after, before, layer, row }) => ({ layer, submission: updated.get(row.uuid)!, before, after }))
  })
