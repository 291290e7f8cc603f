import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { requireRevision } from "../../store/Revision.js"
import { Int8Text, rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import { appendScoreLayer, revokeScoreLayer, submissionNode } from "../grading/Layers.js"
import { ConflictOfInterest } from "../LearningErrors.js"
import { atomScope, holdsAtom, standingOn } from "../Permissions.js"
import { AutomaticOverride } from "./ReviewModel.js"
import { layersOf, loadSubmission } from "../steps/SubmissionViews.js"

/**
 * Automatic overrides: an owner or instructor
 * (`grades_adjust`) overrides the checker's result on one submission. The override's score is an
 * `override` layer (the automatic layer stays as it was); revoking it revokes the layer and the
 * layer below shows again. Candidates list suspect automatic verdicts; reading them writes nothing.
 */

const OverrideRow = Schema.Struct({
  uuid: Schema.String,
  submission_uuid: Schema.String,
  course_uuid: Schema.String,
  layer_uuid: Schema.String,
  points: Int8Text,
  verdict: Schema.String,
  reason: Schema.String,
  status: Schema.Literal("active", "revoked"),
  created_by: Schema.String,
  revoked_by: Schema.NullOr(Schema.String),
  revoke_reason: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Timestamp),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
})
type OverrideRow = typeof OverrideRow.Type

const overrideColumns = selectList(OverrideRow)
const decodeOverrides = rowsDecoder(OverrideRow)

/** Staff see everything; the submission's learner the active overrides with their reason. */
const overrideView = (row: OverrideRow, staff: boolean): AutomaticOverride => ({
  uuid: row.uuid,
  revision: row.revision,
  submissionUuid: row.submission_uuid,
  points: Number(row.points),
  verdict: row.verdict,
  reason: row.reason,
  status: row.status,
  createdAt: row.created_at,
  ...(staff
    ? {
      layerUuid: row.layer_uuid,
      createdBy: row.created_by,
      ...(row.revoked_by !== null ? { revokedBy: row.revoked_by } : {}),
      ...(row.revoke_reason !== null ? { revokeReason: row.revoke_reason } : {}),
      ...(row.revoked_at !== null ? { revokedAt: row.revoked_at } : {}),
      updatedAt: row.updated_at
    }
    : {})
})

/**
 * A submission and the caller's standing on it: 404 unless its learner or staff in scope of its
 * run; `adjust` = holds `grades_adjust` there.
 */
const overrideContext = (actor: Actor, submissionUuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const submission = yield* loadSubmission(submissionUuid, options)
    const standing = yield* standingOn(actor, submission.course_uuid)
    const staff = standing.assignments.some((a) => a.groupUuid === null && (a.runUuid === null || a.runUuid === submission.run_uuid))
    const author = submission.profile_uuid === actor.profileUuid
    if (!staff && !author) return yield* new NotFound({ message: `No submission ${submissionUuid}` })
    return { submission, staff, author, adjust: holdsAtom(standing.assignments, "grades_adjust", { runUuid: submission.run_uuid }) }
  })

const requireAdjust = (context: { readonly author: boolean; readonly adjust: boolean }) =>
  context.author
    ? Effect.fail(new ConflictOfInterest({ message: "Nobody adjusts the grade of their own submission" }))
    : context.adjust
    ? Effect.void
    : Effect.fail(new Forbidden({ message: "Automatic overrides need the grades_adjust permission on this run" }))

/** learning.automatic_overrides.list: the submission's override history, oldest first. */
export const listOverrides = (actor: Actor, submissionUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* overrideContext(actor, submissionUuid, { lock: false })
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(overrideColumns)} FROM learning_automatic_overrides
      WHERE submission_uuid = ${submissionUuid} ${context.staff ? sql`` : sql`AND status = 'active'`} ORDER BY created_at, uuid`,
      decodeOverrides
    )
    return rows.map((row) => overrideView(row, context.staff))
  })

/**
 * learning.automatic_overrides.create: a new `override` layer over the checker's result. Points
 * alone take the verdict from the pass threshold (accepted / partial / wrong); a verdict alone takes
 * full or no points (`partial` needs points). 409 `invalid_state` without an automatic result,
 * 409 `grade_frozen` after the freeze.
 */
export const createOverride = (
  actor: Actor,
  submissionUuid: string,
  input: {
    readonly requestUuid: string
    readonly points?: number | undefined
    readonly verdict?: "accepted" | "wrong" | "partial" | "invalid_reply" | undefined
    readonly reason: string
  }
) =>
  once(actor, "learning.automatic_overrides.create", input, AutomaticOverride, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* overrideContext(actor, submissionUuid, { lock: true })
    yield* requireAdjust(context)
    if (input.points === undefined && input.verdict === undefined) return yield* new InvalidRequest({ message: "points or verdict: at least one" })
    const layers = (yield* layersOf([submissionUuid])).get(submissionUuid) ?? []
    const auto = layers.find((layer) => layer.kind === "auto")
    if (auto === undefined) return yield* new InvalidState({ message: "The submission has no automatic result to override" })
    const node = yield* submissionNode(context.submission)
    const maxPoints = auto.max_points
    const threshold = node?.grading?.passThreshold ?? maxPoints
    if (input.points === undefined && input.verdict === "partial") return yield* new InvalidRequest({ message: "points: a partial verdict needs points" })
    const points = input.points ?? (input.verdict === "accepted" ? maxPoints : 0)
    const verdict = input.verdict ?? (points >= threshold ? "accepted" : points > 0 ? "partial" : "wrong")
    const uuid = crypto.randomUUID()
    const change = yield* appendScoreLayer({
      submissionUuid,
      kind: "override",
      points,
      verdict,
      reason: input.reason,
      byProfileUuid: actor.profileUuid,
      sourceUuid: uuid,
      requestUuid: input.requestUuid
    })
    const [row] = yield* Effect.flatMap(
      sql`INSERT INTO learning_automatic_overrides (uuid, submission_uuid, course_uuid, layer_uuid, points, verdict,
        reason, created_by)
      VALUES (${uuid}, ${submissionUuid}, ${context.submission.course_uuid}, ${change.layer.uuid}, ${points}, ${verdict}, ${input.reason},
        ${actor.profileUuid})
      RETURNING ${sql.literal(overrideColumns)}`,
      decodeOverrides
    )
    return overrideView(row!, true)
  }))

/** learning.automatic_overrides.revoke: the override's layer is revoked; the layer below shows again. */
export const revokeOverride = (
  actor: Actor,
  submissionUuid: string,
  overrideUuid: string,
  input: { readonly requestUuid: string; readonly expectedRevision: number; readonly reason: string }
) =>
  once(actor, "learning.automatic_overrides.revoke", input, AutomaticOverride, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* overrideContext(actor, submissionUuid, { lock: true })
    const [found] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(overrideColumns)} FROM learning_automatic_overrides
      WHERE uuid = ${overrideUuid} AND submission_uuid = ${submissionUuid} FOR UPDATE`,
      decodeOverrides
    )
    if (found === undefined) return yield* new NotFound({ message: `No automatic override ${overrideUuid} on this submission` })
    yield* requireAdjust(context)
    if (found.status !== "active") return yield* new InvalidState({ message: "The override is already revoked" })
    yield* requireRevision("automatic override", found.revision, input.expectedRevision)
    yield* revokeScoreLayer(found.layer_uuid, { byProfileUuid: actor.profileUuid, reason: input.reason, requestUuid: input.requestUuid })
    const [row] = yield* Effect.flatMap(
      sql`UPDATE learning_automatic_overrides SET status = 'revoked', revoked_by = ${actor.profileUuid},
        revoke_reason = ${input.reason}, revoked_at = now(), revision = revision + 1, updated_at = now()
      WHERE uuid = ${overrideUuid} RETURNING ${sql.literal(overrideColumns)}`,
      decodeOverrides
    )
    return overrideView(row!, true)
  }))

/**
 * learning.automatic_overrides.candidates: suspect automatic verdicts in the caller's scope
 * (`grades_adjust`), newest first, one row per submission under its first matching reason:
 * - `check_failed`: the checker failed on platform errors;
 * - `near_timeout`: graded by a job whose `diagnostics.latencyMs` reached 80 % of the checker's timeout;
 * - `newer_checker`: graded by a checker version since superseded by a newer one;
 * - `appeal_cluster` waits for appeal clustering, not built yet: no rows.
 */
export const overrideCandidates = (
  actor: Actor,
  courseUuid: string,
  query: {
    readonly reason?: "check_failed" | "near_timeout" | "appeal_cluster" | "newer_checker" | undefined
    readonly nodeKey?: string | undefined
    readonly cursor?: string | undefined
    readonly limit?: number | undefined
  }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.automatic_overrides.candidates", courseUuid, { lock: false })
    const scope = atomScope((yield* standingOn(actor, courseUuid)).assignments, "grades_adjust")
    if (!scope.course && scope.runs.length === 0) return yield* new Forbidden({ message: "Candidates need the grades_adjust permission" })
    if (query.reason === "appeal_cluster") return { items: [] }
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(candidateColumns)} FROM (
        SELECT s.uuid, s.enrollment_uuid, s.run_uuid, s.node_key, s.status, s.checker_uuid, s.submitted_at, s.submitted_at::text AS position,
          CASE
            WHEN s.status = 'check_failed' THEN 'check_failed'
            WHEN EXISTS (SELECT 1 FROM learning_grading_jobs j JOIN learning_checkers c ON c.uuid = j.checker_uuid
              WHERE j.submission_uuid = s.uuid AND j.kind = 'grade' AND j.status = 'succeeded'
                AND (j.diagnostics ->> 'latencyMs') ~ '^[0-9]+(\\.[0-9]+)?$'
                AND (j.diagnostics ->> 'latencyMs')::numeric >= 0.8 * c.timeout_ms) THEN 'near_timeout'
            WHEN s.status IN ('graded', 'accepted', 'awaiting_review', 'revision_requested') AND EXISTS (SELECT 1 FROM learning_checkers c
              WHERE c.uuid = s.checker_uuid AND c.status = 'superseded') THEN 'newer_checker'
          END AS reason,
          (SELECT c.timeout_ms FROM learning_checkers c WHERE c.uuid = s.checker_uuid) AS timeout_ms
        FROM learning_submissions s
        WHERE s.course_uuid = ${courseUuid} AND s.checker_uuid IS NOT NULL
          ${scope.course ? sql`` : sql`AND s.run_uuid IN ${sql.in(scope.runs)}`}
          ${query.nodeKey !== undefined ? sql`AND s.node_key = ${query.nodeKey}` : sql``}
      ) candidates
      WHERE reason IS NOT NULL ${query.reason !== undefined ? sql`AND reason = ${query.reason}` : sql``}
        ${position._tag === "Some" ? sql`AND (submitted_at, uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY submitted_at DESC, uuid DESC LIMIT ${limit + 1}`,
      decodeCandidates
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => ({
      submissionUuid: row.uuid,
      enrollmentUuid: row.enrollment_uuid,
      runUuid: row.run_uuid,
      nodeKey: row.node_key,
      reason: row.reason,
      status: row.status,
      ...(row.checker_uuid !== null ? { checkerUuid: row.checker_uuid } : {}),
      detail: row.reason === "check_failed"
        ? "the checker failed on platform errors; the attempt was refunded"
        : row.reason === "near_timeout"
        ? `graded close to the checker's ${row.timeout_ms ?? 0} ms timeout`
        : "graded by a checker version that has since been superseded",
      submittedAt: row.submitted_at
    }))
  })

const CandidateRow = Schema.Struct({
  uuid: Schema.String,
  enrollment_uuid: Schema.String,
  run_uuid: Schema.String,
  node_key: Schema.String,
  status: Schema.String,
  checker_uuid: Schema.NullOr(Schema.String),
  submitted_at: Timestamp,
  position: Schema.String,
  reason: Schema.Literal("check_failed", "near_timeout", "newer_checker"),
  timeout_ms: Schema.NullOr(Schema.Number)
})
const candidateColumns = selectList(CandidateRow)
const decodeCandidates = rowsDecoder(CandidateRow)
