import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { Int8Text, rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { loadChecker } from "../grading/Checkers.js"
import { insertGradeJob, insertRegradeJob } from "../grading/GradingJobRepository.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import type { CheckResult } from "../grading/Declarative.js"
import { maxRegradeItems, Regrade, type RegradeItem, RegradeSelector } from "../grading/GradingModel.js"
import { appendScoreLayer, effectiveOf, gradesFrozen, submissionNode } from "../grading/Layers.js"
import { CheckerNotReady, PlanExpired, PlanStale } from "../LearningErrors.js"
import { scoreOf, setStatus } from "../steps/Submissions.js"
import { submissionAllows } from "../steps/SubmissionMachine.js"
import { layersOf, loadSubmission } from "../steps/SubmissionViews.js"

/**
 * Regrades: re-execute a chosen checker
 * version over selected submissions. `regrades.create` is a dry run: one `regrade` grading job per
 * item, drained by the grading worker like grade jobs (signed calls, retries, circuit breaker),
 * with no attempt, status or score touched; each item records old → new. When every job is done
 * the regrade is `ready` for 24 h. `regrades.apply` commits all or a subset of the items in one
 * transaction: a submission whose revision moved since the dry run refuses the whole apply (409
 * `plan_stale`), an expired regrade answers 410 `plan_expired`; each item becomes a `regrade`
 * score layer (`only_if_higher` as the policy says), frozen items are skipped and listed,
 * unchanged and failed ones skipped, and a `check_failed` submission is requeued for grading by
 * the chosen version.
 */

/** A regrade stays applicable this long after it is ready. */
export const regradeHours = 24

const RegradeRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  checker_uuid: Schema.String,
  selector: RegradeSelector,
  policy: Schema.Literal("any", "only_if_higher"),
  status: Regrade.fields.status,
  revision: Schema.Number,
  expires_at: Schema.NullOr(Timestamp),
  applied_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
})
type RegradeRow = typeof RegradeRow.Type

const ItemRow = Schema.Struct({
  uuid: Schema.String,
  submission_uuid: Schema.String,
  job_uuid: Schema.NullOr(Schema.String),
  base_revision: Schema.Number,
  old_points: Schema.NullOr(Int8Text),
  old_verdict: Schema.NullOr(Schema.String),
  new_points: Schema.NullOr(Int8Text),
  new_verdict: Schema.NullOr(Schema.String),
  platform_error: Schema.NullOr(Schema.String),
  skipped: Schema.NullOr(Schema.Literal("frozen", "unchanged", "failed")),
  outcome: Schema.NullOr(Schema.Literal("applied", "requeued", "skipped")),
  applied_layer_uuid: Schema.NullOr(Schema.String),
  position: Schema.Number
})
type ItemRow = typeof ItemRow.Type

const regradeColumns = selectList(RegradeRow)
const itemColumns = selectList(ItemRow, undefined, { old_points: "old_points::text", new_points: "new_points::text" })
const decodeRegrades = rowsDecoder(RegradeRow)
const decodeItems = rowsDecoder(ItemRow)
const decodeProgress = rowsDecoder(Schema.Struct({
  total: Schema.Number,
  done: Schema.Number,
  changed: Schema.Number,
  failed: Schema.Number,
  frozen: Schema.NullOr(Schema.Array(Schema.String))
}))
const decodeSelectable = rowsDecoder(
  Schema.Struct({ uuid: Schema.String, enrollment_uuid: Schema.String, attempt_no: Schema.Number, revision: Schema.Number })
)
const decodeJobItems = rowsDecoder(Schema.Struct({ uuid: Schema.String, regrade_uuid: Schema.String, submission_uuid: Schema.String }))
const decodeRevisions = rowsDecoder(Schema.Struct({ uuid: Schema.String, revision: Schema.Number }))

const itemView = (row: ItemRow): RegradeItem => ({
  uuid: row.uuid,
  submissionUuid: row.submission_uuid,
  status: row.outcome ?? (row.new_points !== null ? "computed" : row.platform_error !== null ? "failed" : "pending"),
  ...(row.old_points !== null ? { old: { points: Number(row.old_points), verdict: row.old_verdict ?? "" } } : {}),
  ...(row.new_points !== null ? { new: { points: Number(row.new_points), verdict: row.new_verdict ?? "" } } : {}),
  ...(row.platform_error !== null ? { platformError: row.platform_error } : {}),
  ...(row.skipped !== null ? { skipped: row.skipped } : {}),
  ...(row.applied_layer_uuid !== null ? { layerUuid: row.applied_layer_uuid } : {})
})

const changedItem = (row: ItemRow) => row.new_points !== null && (row.new_points !== row.old_points || row.new_verdict !== row.old_verdict)

/** A regrade with progress and one page of items (by position). */
const regradeView = (row: RegradeRow, query: { readonly cursor?: string | undefined; readonly limit?: number | undefined } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(query.cursor)
    const after = position._tag === "Some" ? Number(position.value.key) : -1
    const limit = query.limit ?? 100
    const [progress] = yield* Effect.flatMap(
      sql`
      SELECT count(*)::int AS total,
        count(*) FILTER (WHERE i.new_points IS NOT NULL OR j.status IN ('failed', 'cancelled'))::int AS done,
        count(*) FILTER (WHERE i.new_points IS NOT NULL AND (i.new_points IS DISTINCT FROM i.old_points OR i.new_verdict IS DISTINCT FROM i.old_verdict))::int AS changed,
        count(*) FILTER (WHERE i.new_points IS NULL AND j.status IN ('failed', 'cancelled'))::int AS failed,
        array_agg(i.uuid ORDER BY i.position) FILTER (WHERE i.skipped = 'frozen') AS frozen
      FROM learning_regrade_items i LEFT JOIN learning_grading_jobs j ON j.uuid = i.job_uuid WHERE i.regrade_uuid = ${row.uuid}`,
      decodeProgress
    )
    const items = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(itemColumns)} FROM learning_regrade_items
      WHERE regrade_uuid = ${row.uuid} AND position > ${Number.isInteger(after) ? after : -1} ORDER BY position LIMIT ${limit + 1}`,
      decodeItems
    )
    const page = pageOf(items, limit, (item) => ({ key: String(item.position), uuid: item.uuid }), itemView)
    const view: Regrade = {
      uuid: row.uuid,
      courseUuid: row.course_uuid,
      checkerUuid: row.checker_uuid,
      selector: row.selector,
      policy: row.policy,
      status: row.status === "ready" && row.expires_at !== null && row.expires_at.getTime() < Date.now() ? "expired" : row.status,
      progress: { total: progress!.total, done: progress!.done, changed: progress!.changed, failed: progress!.failed },
      frozen: progress!.frozen ?? [],
      items: page.items,
      ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      revision: row.revision,
      ...(row.expires_at !== null ? { expiresAt: row.expires_at } : {}),
      ...(row.applied_at !== null ? { appliedAt: row.applied_at } : {}),
      createdAt: row.created_at
    }
    return view
  })

const regradable = ["graded", "accepted", "revision_requested", "awaiting_review", "check_failed"] as const

export const createRegrade = (
  actor: Actor,
  courseUuid: string,
  input: { readonly requestUuid: string; readonly selector: RegradeSelector; readonly checkerUuid: string; readonly policy: "any" | "only_if_higher" }
) =>
  once(actor, "learning.regrades.create", input, Regrade, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.regrades.create", courseUuid, { lock: false })
    const checker = yield* loadChecker(courseUuid, input.checkerUuid, { lock: false })
    if (checker.status !== "ready") return yield* new CheckerNotReady({ message: `The checker is ${checker.status}; a regrade runs a ready version` })
    const selector = input.selector
    const rows = yield* Effect.flatMap(
      sql`
      SELECT uuid, enrollment_uuid, attempt_no, revision FROM learning_submissions
      WHERE course_uuid = ${courseUuid} AND node_key = ${selector.nodeKey} AND status IN ${sql.in(regradable)}
        ${selector.runUuid === undefined ? sql`` : sql`AND run_uuid = ${selector.runUuid}`}
        ${selector.submissionUuids === undefined ? sql`` : sql`AND uuid IN ${sql.in(selector.submissionUuids)}`}
      ORDER BY enrollment_uuid, attempt_no`,
      decodeSelectable
    )
    const layers = yield* layersOf(rows.map((row) => row.uuid))
    const which = selector.which ?? (selector.submissionUuids === undefined ? "latest" : "all")
    const chosen = new Map<string, (typeof rows)[number]>()
    for (const row of rows) {
      const key = which === "all" ? row.uuid : row.enrollment_uuid
      const held = chosen.get(key)
      const points = (uuid: string) => effectiveOf(layers.get(uuid) ?? [])?.points ?? -1
      if (held === undefined || (which === "latest" && row.attempt_no > held.attempt_no) || (which === "best" && points(row.uuid) > points(held.uuid))) {
        chosen.set(key, row)
      }
    }
    const selected = [...chosen.values()]
    if (selected.length > maxRegradeItems) {
      return yield* new InvalidRequest({ message: `selector: ${selected.length} submissions match; a regrade takes at most ${maxRegradeItems}` })
    }
    const uuid = crypto.randomUUID()
    const [regrade] = yield* Effect.flatMap(
      sql`INSERT INTO learning_regrades (uuid, course_uuid, checker_uuid, selector, policy, status, created_by, expires_at)
      VALUES (${uuid}, ${courseUuid}, ${checker.uuid}, ${JSON.stringify(selector)}::jsonb, ${input.policy},
        ${selected.length === 0 ? "ready" : "computing"}, ${actor.profileUuid},
        ${selected.length === 0 ? sql`now() + make_interval(hours => ${regradeHours})` : sql`NULL`})
      RETURNING ${sql.literal(regradeColumns)}`,
      decodeRegrades
    )
    for (const [index, row] of selected.entries()) {
      const jobUuid = crypto.randomUUID()
      const old = effectiveOf(layers.get(row.uuid) ?? [])
      yield* insertRegradeJob({
        uuid: jobUuid,
        courseUuid,
        enrollmentUuid: row.enrollment_uuid,
        nodeKey: selector.nodeKey,
        submissionUuid: row.uuid,
        checkerUuid: checker.uuid,
        requesterProfileUuid: actor.profileUuid,
        regradeUuid: uuid
      })
      yield* sql`INSERT INTO learning_regrade_items (uuid, regrade_uuid, submission_uuid, job_uuid, base_revision, old_points, old_verdict, position)
        VALUES (${crypto.randomUUID()}, ${uuid}, ${row.uuid}, ${jobUuid}, ${row.revision}, ${old?.points ?? null}, ${old?.verdict ?? null}, ${index})`
    }
    return yield* regradeView(regrade!)
  }))

/**
 * The grading worker's hook for a finished regrade job (inside its transaction): the item's new
 * points (the node's scoring, the first layer's lateness) or its platform error; the regrade is
 * ready for 24 h once no job of it is left.
 */
export const finishRegradeJob = (
  jobUuid: string,
  outcome: { readonly _tag: "verdict"; readonly result: CheckResult } | { readonly _tag: "platform_error"; readonly error: string }
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [item] = yield* Effect.flatMap(
      sql`SELECT uuid, regrade_uuid, submission_uuid
      FROM learning_regrade_items WHERE job_uuid = ${jobUuid}`,
      decodeJobItems
    )
    if (item === undefined) return
    if (outcome._tag === "platform_error") {
      yield* sql`UPDATE learning_regrade_items SET platform_error = ${outcome.error} WHERE uuid = ${item.uuid}`
    } else {
      const row = yield* Effect.orDie(loadSubmission(item.submission_uuid, { lock: false }))
      const node = yield* submissionNode(row)
      const first = ((yield* layersOf([row.uuid])).get(row.uuid) ?? [])[0]
      const scored = node?.grading === undefined ? { points: 0 } : scoreOf(node, outcome.result, first?.late ?? false)
      yield* sql`UPDATE learning_regrade_items SET new_points = ${scored.points}, new_verdict = ${outcome.result.verdict}, platform_error = NULL
        WHERE uuid = ${item.uuid}`
    }
    yield* sql`UPDATE learning_regrades r SET status = 'ready', revision = revision + 1, updated_at = now(),
        expires_at = now() + make_interval(hours => ${regradeHours})
      WHERE r.uuid = ${item.regrade_uuid} AND r.status = 'computing' AND NOT EXISTS (SELECT 1 FROM learning_grading_jobs j
        WHERE j.regrade_uuid = r.uuid AND j.status IN ('queued', 'running') AND j.uuid <> ${jobUuid})`
  })

const loadRegrade = (courseUuid: string, uuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(regradeColumns)} FROM learning_regrades WHERE uuid = ${uuid} AND course_uuid = ${courseUuid}
      ${options.lock ? sql`FOR UPDATE` : sql``}`,
      decodeRegrades
    )
    if (row === undefined) return yield* new NotFound({ message: `No regrade ${uuid} in this course` })
    return row
  })

export const getRegrade = (actor: Actor, courseUuid: string, uuid: string, query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    yield* courseFor(actor, "learning.regrades.get", courseUuid, { lock: false })
    return yield* regradeView(yield* loadRegrade(courseUuid, uuid, { lock: false }), query)
  })

export const applyRegrade = (
  actor: Actor,
  courseUuid: string,
  uuid: string,
  input: { readonly requestUuid: string; readonly itemUuids?: ReadonlyArray<string> | undefined }
) =>
  once(actor, "learning.regrades.apply", input, Regrade, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.regrades.apply", courseUuid, { lock: false })
    const regrade = yield* loadRegrade(courseUuid, uuid, { lock: true })
    if (regrade.status !== "ready") return yield* new InvalidState({ message: `A ${regrade.status} regrade cannot be applied` })
    if (regrade.expires_at !== null && regrade.expires_at.getTime() < Date.now()) {
      return yield* new PlanExpired({ message: `The regrade expired at ${regrade.expires_at.toISOString()}; create it again` })
    }
    const all = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(itemColumns)} FROM learning_regrade_items WHERE regrade_uuid = ${uuid} ORDER BY position`,
      decodeItems
    )
    let items = all
    if (input.itemUuids !== undefined) {
      const wanted = new Set(input.itemUuids)
      items = all.filter((item) => wanted.has(item.uuid))
      const unknown = input.itemUuids.find((item) => !all.some((one) => one.uuid === item))
      if (unknown !== undefined) return yield* new InvalidRequest({ message: `itemUuids: ${unknown} is not an item of this regrade` })
    }
    // Plan-then-commit: every chosen item's submission must be as the dry run saw it.
    const current = items.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT uuid, revision FROM learning_submissions
      WHERE uuid IN ${sql.in(items.map((item) => item.submission_uuid))} ORDER BY uuid FOR NO KEY UPDATE`,
      decodeRevisions
    )
    const revisions = new Map(current.map((row) => [row.uuid, row.revision]))
    const stale = items.filter((item) => revisions.get(item.submission_uuid) !== item.base_revision)
    if (stale.length > 0) {
      return yield* new PlanStale({ message: `${stale.length} submissions changed since the dry run (first ${stale[0]!.submission_uuid}); create the regrade again` })
    }
    const mark = (item: ItemRow, outcome: "applied" | "requeued" | "skipped", extra: { readonly skipped?: string; readonly layer?: string } = {}) =>
      sql`UPDATE learning_regrade_items SET outcome = ${outcome}, skipped = ${extra.skipped ?? null}, applied_layer_uuid = ${extra.layer ?? null}
        WHERE uuid = ${item.uuid}`
    const checker = yield* Effect.orDie(loadChecker(courseUuid, regrade.checker_uuid, { lock: false }))
    for (const item of items) {
      const row = yield* Effect.orDie(loadSubmission(item.submission_uuid, { lock: true }))
      if (yield* gradesFrozen(row.run_uuid)) {
        yield* mark(item, "skipped", { skipped: "frozen" })
        continue
      }
      if (item.new_points === null) {
        yield* mark(item, "skipped", { skipped: "failed" })
        continue
      }
      if (submissionAllows("requeue", row.status)) {
        // A failed check is graded again by the chosen version (no attempt: the failure refunded it).
        yield* setStatus(row.uuid, "requeue")
        yield* insertGradeJob({
          courseUuid,
          enrollmentUuid: row.enrollment_uuid,
          nodeKey: row.node_key,
          submissionUuid: row.uuid,
          checkerUuid: checker.uuid,
          requesterProfileUuid: actor.profileUuid,
          input: { regradeUuid: uuid }
        })
        yield* mark(item, "requeued")
        continue
      }
      if (!changedItem(item)) {
        yield* mark(item, "skipped", { skipped: "unchanged" })
        continue
      }
      const change = yield* appendScoreLayer({
        submissionUuid: row.uuid,
        kind: "regrade",
        points: Number(item.new_points),
        verdict: item.new_verdict ?? "accepted",
        reason: `regrade with checker ${checker.name} v${checker.version}`,
        byProfileUuid: actor.profileUuid,
        sourceUuid: uuid,
        onlyIfHigher: regrade.policy === "only_if_higher",
        requestUuid: input.requestUuid
      })
      yield* mark(item, "applied", { layer: change.layer.uuid })
    }
    const [applied] = yield* Effect.flatMap(
      sql`UPDATE learning_regrades SET status = 'applied', applied_at = now(), revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid} RETURNING ${sql.literal(regradeColumns)}`,
      decodeRegrades
    )
    return yield* regradeView(applied!)
  }))

/** A candidate row, in the order the candidates' subquery computes its columns. */
const CandidateRow = Schema.Struct({
  uuid: Schema.String,
  enrollment_uuid: Schema.String,
  node_key: Schema.String,
  status: Schema.String,
  checker_uuid: Schema.NullOr(Schema.String),
  submitted_at: Timestamp,
  position: Schema.String,
  incident: Schema.NullOr(Schema.String),
  reason: Schema.Literal("older_version", "check_failed", "incident_window"),
  newer: Schema.NullOr(Schema.String)
})
const candidateColumns = selectList(CandidateRow)
const decodeCandidates = rowsDecoder(CandidateRow)

/**
 * learning.regrades.candidates, newest first, one row per submission under its first reason:
 * `check_failed`; `incident_window` (submitted inside the window of an incident of its run, on the
 * incident's steps — all when it names none — and by its checker when it names one; the latest
 * such incident); `older_version` (graded by a checker version since superseded).
 */
export const regradeCandidates = (
  actor: Actor,
  courseUuid: string,
  query: { readonly reason?: "older_version" | "check_failed" | "incident_window" | undefined; readonly nodeKey?: string | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.regrades.candidates", courseUuid, { lock: false })
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(candidateColumns)} FROM (
        SELECT s.uuid, s.enrollment_uuid, s.node_key, s.status, s.checker_uuid, s.submitted_at, s.submitted_at::text AS position, incident.uuid AS incident,
          CASE WHEN s.status = 'check_failed' THEN 'check_failed' WHEN incident.uuid IS NOT NULL THEN 'incident_window'
            WHEN c.status = 'superseded' THEN 'older_version' END AS reason,
          (SELECT n.uuid FROM learning_checkers n WHERE n.lineage_uuid = c.lineage_uuid AND n.status IN ('ready', 'suspended')
            ORDER BY n.version DESC LIMIT 1) AS newer
        FROM learning_submissions s LEFT JOIN learning_checkers c ON c.uuid = s.checker_uuid
          LEFT JOIN LATERAL (SELECT i.uuid FROM learning_incidents i WHERE i.run_uuid = s.run_uuid
              AND s.submitted_at >= i.window_from AND s.submitted_at < i.window_to
              AND (jsonb_array_length(i.node_keys) = 0 OR i.node_keys @> jsonb_build_array(s.node_key))
              AND (i.checker_uuid IS NULL OR i.checker_uuid = s.checker_uuid)
            ORDER BY i.created_at DESC, i.uuid DESC LIMIT 1) incident ON s.checker_uuid IS NOT NULL AND s.status IN ${sql.in(regradable)}
        WHERE s.course_uuid = ${courseUuid} AND s.status IN ${sql.in(regradable)}
          ${query.nodeKey === undefined ? sql`` : sql`AND s.node_key = ${query.nodeKey}`}
      ) candidates
      WHERE reason IS NOT NULL ${query.reason === undefined ? sql`` : sql`AND reason = ${query.reason}`}
        ${position._tag === "Some" ? sql`AND (submitted_at, uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY submitted_at DESC, uuid DESC LIMIT ${limit + 1}`,
      decodeCandidates
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => ({
      submissionUuid: row.uuid,
      enrollmentUuid: row.enrollment_uuid,
      nodeKey: row.node_key,
      reason: row.reason,
      status: row.status,
      ...(row.checker_uuid !== null ? { checkerUuid: row.checker_uuid } : {}),
      ...(row.newer !== null ? { newerCheckerUuid: row.newer } : {}),
      ...(row.incident !== null && row.reason === "incident_window" ? { incidentUuid: row.incident } : {}),
      submittedAt: row.submitted_at
    }))
  })
