import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { appendEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { Int8Text, rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import { once } from "../Commands.js"
import { loadCourse, loadVersion } from "../courses/CourseRepository.js"
import { courseFacts } from "../staff/Staff.js"
import { Appeal, type AppealT, type ReplacementOptionsT } from "./CorrectionsModel.js"
import { enrollmentFor } from "../enrollments/EnrollmentAccess.js"
import { appendScoreLayer } from "../grading/Layers.js"
import { staffOnRecord } from "./Extensions.js"
import { ConflictOfInterest, GradeFrozen, WindowClosed } from "../LearningErrors.js"
import type { CourseNode } from "../courses/Model.js"
import { atomScope, decide, holdsAtom, reachesAny, scopeReach, standingOn } from "../Permissions.js"
import { gradesFrozenAt, loadRun } from "../courses/RunRepository.js"
import { effectiveLayer, type LayerRow, layersOf, loadSubmission, type SubmissionRow } from "../steps/SubmissionViews.js"
import { addDays } from "../enrollments/Schedule.js"

/**
 * Appeals, as Pawtograder's regrade requests: the
 * learner appeals a released score (`initialPoints`); a reviewer or instructor resolves it
 * (`resolvedPoints`); the learner may escalate a resolved appeal to an instructor, who closes it
 * (`closedPoints`); an unescalated resolved appeal closes by itself after 7 days. A decision that
 * changes the points appends an `appeal` score layer (the first layer stays); replacement
 * options are computed, never stored.
 */

/** Days a released score may be appealed, and a resolution escalated. */
export const appealWindowDays = 7

export const AppealStatus = Schema.Literal("open", "resolved", "escalated", "closed")
export type AppealStatus = typeof AppealStatus.Type
export type AppealRole = "learner" | "resolver" | "adjuster" | "worker"

/**
 * The appeal state machine as data: trigger, from, to, and who may fire it —
 * `learner` (the submission's learner), `resolver` (`appeals_resolve`: owner, instructor,
 * reviewer), `adjuster` (`grades_adjust`: owner, instructor), `worker`.
 */
export const appealTransitions = [
  { trigger: "learning.appeals.create", from: "none", to: "open", by: "learner" },
  { trigger: "learning.appeals.decide", from: "open", to: "resolved", by: "resolver" },
  { trigger: "learning.appeals.escalate", from: "resolved", to: "escalated", by: "learner" },
  { trigger: "learning.appeals.decide", from: "escalated", to: "closed", by: "adjuster" },
  { trigger: "worker.appeal_close", from: "resolved", to: "closed", by: "worker" }
] as const satisfies ReadonlyArray<{ trigger: string; from: AppealStatus | "none"; to: AppealStatus; by: AppealRole }>

export const appealTransition = (trigger: string, from: AppealStatus | "none") =>
  appealTransitions.find((t) => t.trigger === trigger && t.from === from)

const AppealRow = Schema.Struct({
  uuid: Schema.String,
  submission_uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  enrollment_uuid: Schema.String,
  profile_uuid: Schema.String,
  node_key: Schema.String,
  reason: Schema.String,
  requested_points: Schema.NullOr(Int8Text),
  rubric_items: Schema.Array(Schema.String),
  initial_points: Int8Text,
  resolved_points: Schema.NullOr(Int8Text),
  closed_points: Schema.NullOr(Int8Text),
  status: AppealStatus,
  outcome: Schema.NullOr(Schema.Literal("uphold", "adjust", "replace", "regrade")),
  comment: Schema.String,
  escalation_reason: Schema.NullOr(Schema.String),
  resolved_by: Schema.NullOr(Schema.String),
  closed_by: Schema.NullOr(Schema.String),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp,
  resolved_at: Schema.NullOr(Timestamp),
  escalated_at: Schema.NullOr(Timestamp),
  closed_at: Schema.NullOr(Timestamp)
})
type AppealRow = typeof AppealRow.Type

const columns = selectList(AppealRow, "a")
const decodeAppeals = rowsDecoder(AppealRow)
const decodePositionedAppeals = rowsDecoder(Schema.Struct({ ...AppealRow.fields, position: Schema.String }))
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decodeMoment = rowsDecoder(Schema.Struct({ at: Schema.NullOr(Timestamp) }))

const num = (value: string | null) => (value === null ? undefined : Number(value))

const appealView = (row: AppealRow): AppealT => ({
  uuid: row.uuid,
  revision: row.revision,
  submissionUuid: row.submission_uuid,
  courseUuid: row.course_uuid,
  runUuid: row.run_uuid,
  enrollmentUuid: row.enrollment_uuid,
  nodeKey: row.node_key,
  reason: row.reason,
  ...(row.requested_points !== null ? { requestedPoints: Number(row.requested_points) } : {}),
  rubricItems: row.rubric_items,
  initialPoints: Number(row.initial_points),
  ...(row.resolved_points !== null ? { resolvedPoints: num(row.resolved_points)! } : {}),
  ...(row.closed_points !== null ? { closedPoints: num(row.closed_points)! } : {}),
  status: row.status,
  ...(row.outcome !== null ? { outcome: row.outcome } : {}),
  comment: row.comment,
  ...(row.escalation_reason !== null ? { escalationReason: row.escalation_reason } : {}),
  ...(row.resolved_by !== null ? { resolvedBy: row.resolved_by } : {}),
  ...(row.closed_by !== null ? { closedBy: row.closed_by } : {}),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  ...(row.resolved_at !== null ? { resolvedAt: row.resolved_at } : {}),
  ...(row.escalated_at !== null ? { escalatedAt: row.escalated_at } : {}),
  ...(row.closed_at !== null ? { closedAt: row.closed_at } : {})
})

const loadAppeal = (uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM learning_appeals a WHERE a.uuid = ${uuid} ${lock ? sql.literal("FOR UPDATE") : sql``}`,
      decodeAppeals
    )
    return row === undefined ? yield* new NotFound({ message: `No appeal ${uuid}` }) : row
  })

/** The node a submission answered, at its pinned version. */
export const nodeOf = (row: Pick<SubmissionRow, "course_uuid" | "version_number" | "node_key">): Effect.Effect<CourseNode | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.map(loadVersion(row.course_uuid, row.version_number), (version) => version?.nodes.find((node) => node.nodeKey === row.node_key))

const frozenCheck = (runUuid: string) =>
  Effect.gen(function*() {
    const run = yield* loadRun(runUuid, { lock: false })
    const frozen = gradesFrozenAt(run)
    if (frozen !== undefined && frozen.getTime() <= Date.now()) return yield* new GradeFrozen({ message: "The run's grades are frozen" })
  })

/** Audits an appeal's move (before and after) and answers its view. */
const audited = (actor: Actor, action: string, before: AppealRow, after: AppealRow, reason: string, requestUuid: string) =>
  Effect.as(
    appendAudit({
      courseUuid: before.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action,
      subjectKind: "appeal",
      subjectUuid: before.uuid,
      enrollmentUuid: before.enrollment_uuid,
      before: appealView(before),
      after: appealView(after),
      reason,
      requestUuid
    }),
    appealView(after)
  )

const gradedStatuses: ReadonlyArray<string> = ["graded", "accepted", "revision_requested"]

/** The released effective layer the learner sees (what an appeal starts from). */
const releasedScore = (layers: ReadonlyArray<LayerRow>) => effectiveLayer(layers.filter((layer) => layer.released))

export const createAppeal = (
  actor: Actor,
  submissionUuid: string,
  input: { readonly requestUuid: string; readonly reason: string; readonly requestedPoints?: number | undefined; readonly rubricItems?: ReadonlyArray<string> | undefined }
) =>
  once(actor, "learning.appeals.create", input, Appeal, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* loadSubmission(submissionUuid, { lock: false })
    yield* enrollmentFor(actor, found.enrollment_uuid, { lock: true })
      .pipe(Effect.catchTag("NotFound", () => Effect.fail(new NotFound({ message: `No submission ${submissionUuid}` }))))
    const row = yield* loadSubmission(submissionUuid, { lock: true })
    const layers = (yield* layersOf([row.uuid])).get(row.uuid) ?? []
    const score = releasedScore(layers)
    if (!gradedStatuses.includes(row.status) || score === undefined) {
      return yield* new InvalidState({ message: "Only a released score is appealed" })
    }
    yield* frozenCheck(row.run_uuid)
    if (Date.now() > addDays(score.created_at, appealWindowDays).getTime()) {
      return yield* new WindowClosed({ message: `A score is appealed within ${appealWindowDays} days of its release` })
    }
    const [open] = yield* sql`SELECT 1 FROM learning_appeals WHERE submission_uuid = ${row.uuid} AND status <> 'closed'`
    if (open !== undefined) return yield* new InvalidState({ message: "The submission has an appeal that is not closed" })
    const [created] = yield* Effect.flatMap(
      sql`INSERT INTO learning_appeals AS a (uuid, submission_uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid,
        node_key, reason, requested_points, rubric_items, initial_points)
      VALUES (${crypto.randomUUID()}, ${row.uuid}, ${row.course_uuid}, ${row.run_uuid}, ${row.enrollment_uuid}, ${row.profile_uuid}, ${row.node_key},
        ${input.reason}, ${input.requestedPoints ?? null}, ${JSON.stringify(input.rubricItems ?? [])}::jsonb, ${Number(score.points)})
      RETURNING ${sql.literal(columns)}`,
      decodeAppeals
    )
    yield* appendEvent({
      type: "learning.appeal.opened",
      aggregate: { kind: "learning_appeal", uuid: created!.uuid, revision: created!.revision },
      data: { objectUuid: created!.uuid, status: "open" },
      context: {
        profileUuid: actor.profileUuid,
        courseUuid: row.course_uuid,
        runUuid: row.run_uuid,
        enrollmentUuid: row.enrollment_uuid,
        nodeKey: row.node_key,
        submissionUuid: row.uuid
      }
    })
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: "appeal.open",
      subjectKind: "appeal",
      subjectUuid: created!.uuid,
      enrollmentUuid: row.enrollment_uuid,
      before: null,
      after: appealView(created!),
      reason: input.reason,
      requestUuid: input.requestUuid
    })
    return appealView(created!)
  }))

/** Another graded attempt on the step: what a replacement option is built from. */
const OtherAttempt = Schema.Struct({ uuid: Schema.String, attempt_no: Schema.Number })
const otherAttemptColumns = selectList(OtherAttempt, "s")
const decodeOtherAttempts = rowsDecoder(OtherAttempt)

/** The computed replacement options of an appeal's submission (no side effects). */
const optionsFor = (appeal: AppealRow) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const submission = yield* loadSubmission(appeal.submission_uuid, { lock: false })
    const node = yield* nodeOf(submission)
    const others = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(otherAttemptColumns)} FROM learning_submissions s
      WHERE s.enrollment_uuid = ${appeal.enrollment_uuid} AND s.node_key = ${appeal.node_key} AND s.uuid <> ${appeal.submission_uuid}
        AND s.status IN ('graded', 'accepted', 'revision_requested') ORDER BY s.attempt_no`,
      decodeOtherAttempts
    )
    const layers = yield* layersOf(others.map((row) => row.uuid))
    const options: Array<ReplacementOptionsT["options"][number]> = []
    for (const other of others) {
      const effective = effectiveLayer(layers.get(other.uuid) ?? [])
      if (effective === undefined) continue
      options.push({
        key: `attempt:${other.uuid}`,
        kind: "other_attempt",
        points: Number(effective.points),
        explanation: `Use attempt ${other.attempt_no} (${effective.verdict}, ${Number(effective.points)}/${effective.max_points})`
      })
    }
    if (node?.grading !== undefined) {
      options.push({ key: "excuse", kind: "excuse", points: node.grading.maxPoints, explanation: "Excuse the step: full points, as if it were not graded" })
    }
    return { options, node, submission }
  })

export const replacementOptions = (actor: Actor, appealUuid: string) =>
  Effect.gen(function*() {
    const appeal = yield* loadAppeal(appealUuid, false)
    yield* staffOnRecord(actor, "learning.appeals.replacements", appeal, `No appeal ${appealUuid}`)
    const { options } = yield* optionsFor(appeal)
    return { options }
  })

export interface AppealDecideInput {
  readonly requestUuid: string
  readonly expectedRevision: number
  readonly outcome: "uphold" | "adjust" | "replace" | "regrade"
  readonly points?: number | undefined
  readonly replacementKey?: string | undefined
  readonly comment: string
}

export const decideAppeal = (actor: Actor, appealUuid: string, input: AppealDecideInput) =>
  once(actor, "learning.appeals.decide", input, Appeal, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* loadAppeal(appealUuid, false)
    yield* staffOnRecord(actor, "learning.appeals.decide", found, `No appeal ${appealUuid}`)
    if (found.profile_uuid === actor.profileUuid) return yield* new ConflictOfInterest({ message: "Nobody decides an appeal of their own work" })
    if ((input.outcome === "adjust") !== (input.points !== undefined)) {
      return yield* new InvalidRequest({ message: "points: given with outcome adjust, and only then" })
    }
    if ((input.outcome === "replace") !== (input.replacementKey !== undefined)) {
      return yield* new InvalidRequest({ message: "replacementKey: given with outcome replace, and only then" })
    }
    const appeal = yield* loadAppeal(appealUuid, true)
    const transition = appealTransition("learning.appeals.decide", appeal.status)
    if (transition === undefined) return yield* new InvalidState({ message: `An appeal that is ${appeal.status} is not decided` })
    const standing = yield* standingOn(actor, appeal.course_uuid)
    const adjuster = holdsAtom(standing.assignments, "grades_adjust", { runUuid: appeal.run_uuid })
    if (transition.by === "adjuster" && !adjuster) {
      return yield* new Forbidden({ message: "Closing an escalated appeal needs the grades_adjust permission (an instructor)" })
    }
    // "R (own review)" in the role matrix (`learning/RoleMatrix.test.ts`): a reviewer resolves appeals of the reviews they decided;
    // owners and instructors (grades_adjust) resolve any.
    if (transition.by === "resolver" && !adjuster) {
      const own = yield* sql`SELECT 1 FROM learning_score_layers
        WHERE submission_uuid = ${appeal.submission_uuid} AND kind = 'review' AND by_profile_uuid = ${actor.profileUuid} LIMIT 1`
      if (own.length === 0) return yield* new Forbidden({ message: "A reviewer resolves appeals of their own reviews only" })
    }
    yield* requireRevision("appeal", appeal.revision, input.expectedRevision)
    yield* frozenCheck(appeal.run_uuid)
    const { node, options, submission } = yield* optionsFor(appeal)
    const locked = yield* loadSubmission(submission.uuid, { lock: true })
    const current = effectiveLayer((yield* layersOf([locked.uuid])).get(locked.uuid) ?? [])
    const maxPoints = node?.grading?.maxPoints ?? current?.max_points ?? 0
    let points = current === undefined ? 0 : Number(current.points)
    if (input.outcome === "adjust") points = input.points!
    if (input.outcome === "replace") {
      const option = options.find((candidate) => candidate.key === input.replacementKey)
      if (option === undefined) return yield* new InvalidRequest({ message: `replacementKey: no option "${input.replacementKey}"; read replacement-options` })
      points = option.points
    }
    if (points > maxPoints) return yield* new InvalidRequest({ message: `points: at most ${maxPoints}` })
    if (current === undefined || points !== Number(current.points)) {
      yield* appendScoreLayer({
        submissionUuid: locked.uuid,
        kind: "appeal",
        points,
        verdict: input.outcome === "replace" && input.replacementKey === "excuse" ? "excused" : current?.verdict ?? "appeal",
        sourceUuid: appealUuid,
        byProfileUuid: actor.profileUuid,
        reason: input.comment === "" ? `appeal ${appealUuid}: ${input.outcome}` : input.comment,
        requestUuid: input.requestUuid
      })
    }
    const [updated] = transition.to === "resolved"
      ? yield* Effect.flatMap(
        sql`UPDATE learning_appeals a SET status = 'resolved', outcome = ${input.outcome}, resolved_points = ${points},
          comment = ${input.comment}, resolved_by = ${actor.profileUuid}, resolved_at = now(), revision = revision + 1, updated_at = now()
        WHERE a.uuid = ${appealUuid} RETURNING ${sql.literal(columns)}`,
        decodeAppeals
      )
      : yield* Effect.flatMap(
        sql`UPDATE learning_appeals a SET status = 'closed', outcome = ${input.outcome}, closed_points = ${points},
          comment = ${input.comment}, closed_by = ${actor.profileUuid}, closed_at = now(), revision = revision + 1, updated_at = now()
        WHERE a.uuid = ${appealUuid} RETURNING ${sql.literal(columns)}`,
        decodeAppeals
      )
    return yield* audited(actor, `appeal.${transition.to === "resolved" ? "resolve" : "close"}`, appeal, updated!, input.comment, input.requestUuid)
  }))

export const escalateAppeal = (actor: Actor, appealUuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number; readonly reason: string }) =>
  once(actor, "learning.appeals.escalate", input, Appeal, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* loadAppeal(appealUuid, false)
    yield* enrollmentFor(actor, found.enrollment_uuid, { lock: true })
      .pipe(Effect.catchTag("NotFound", () => Effect.fail(new NotFound({ message: `No appeal ${appealUuid}` }))))
    const appeal = yield* loadAppeal(appealUuid, true)
    if (appealTransition("learning.appeals.escalate", appeal.status) === undefined) {
      return yield* new InvalidState({ message: `An appeal that is ${appeal.status} is not escalated` })
    }
    yield* requireRevision("appeal", appeal.revision, input.expectedRevision)
    if (Date.now() > addDays(appeal.resolved_at!, appealWindowDays).getTime()) {
      return yield* new WindowClosed({ message: `A resolution is escalated within ${appealWindowDays} days` })
    }
    const [updated] = yield* Effect.flatMap(
      sql`UPDATE learning_appeals a SET status = 'escalated', escalation_reason = ${input.reason}, escalated_at = now(),
        revision = revision + 1, updated_at = now() WHERE a.uuid = ${appealUuid} RETURNING ${sql.literal(columns)}`,
      decodeAppeals
    )
    return yield* audited(actor, "appeal.escalate", appeal, updated!, input.reason, input.requestUuid)
  }))

/** W: resolved appeals not escalated within the window close with their resolved points. */
export const closeResolvedAppeals = (now: Date, batch = 100): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_appeals SET status = 'closed', closed_points = resolved_points, closed_at = now(),
          revision = revision + 1, updated_at = now()
        WHERE uuid IN (SELECT uuid FROM learning_appeals WHERE status = 'resolved'
          AND resolved_at + make_interval(days => ${appealWindowDays}) <= ${now} ORDER BY resolved_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        RETURNING uuid`,
        decodeUuids
      ),
      (rows) => rows.length
    )))

/** The earliest moment `closeResolvedAppeals` has work (index `learning_appeals_closing`, migration 0030); `undefined`: none. */
export const nextAppealClosingMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT min(resolved_at) + make_interval(days => ${appealWindowDays}) AS at
    FROM learning_appeals WHERE status = 'resolved'`.pipe(Effect.flatMap(decodeMoment), Effect.map(([row]) => row?.at ?? undefined)))

export const submissionAppeals = (actor: Actor, submissionUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const row = yield* loadSubmission(submissionUuid, { lock: false })
    yield* enrollmentFor(actor, row.enrollment_uuid, { lock: false })
      .pipe(Effect.catchTag("NotFound", () => Effect.fail(new NotFound({ message: `No submission ${submissionUuid}` }))))
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM learning_appeals a WHERE a.submission_uuid = ${submissionUuid}
      ORDER BY a.created_at DESC, a.uuid DESC`,
      decodeAppeals
    )
    return rows.map(appealView)
  })

export const courseAppeals = (
  actor: Actor,
  courseUuid: string,
  query: { readonly status?: AppealStatus | undefined; readonly nodeKey?: string | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* loadCourse(courseUuid, { lock: false })
    const standing = yield* standingOn(actor, courseUuid)
    // Run- and group-scoped staff see the appeals of their runs and of their groups' members.
    const scope = atomScope(standing.assignments, "appeals_resolve")
    const refusal = decide("learning.appeals.list", courseFacts(course), standing, {})
    if (refusal !== undefined && !reachesAny(scope)) return yield* refusal
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)}, a.created_at::text AS position
      FROM learning_appeals a WHERE a.course_uuid = ${courseUuid} AND ${scopeReach(sql, scope, sql`a.run_uuid`, sql`a.enrollment_uuid`)}
        ${query.status !== undefined ? sql`AND a.status = ${query.status}` : sql``}
        ${query.nodeKey !== undefined ? sql`AND a.node_key = ${query.nodeKey}` : sql``}
        ${position._tag === "Some" ? sql`AND (a.created_at, a.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY a.created_at DESC, a.uuid DESC LIMIT ${limit + 1}`,
      decodePositionedAppeals
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), appealView)
  })
