import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { Int8Text, rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import { RegradePlan, type RegradePlanT, RegradeRule as RegradeRuleSchema, RegradeSelector } from "./CorrectionsModel.js"
import { appendScoreLayers } from "../grading/Layers.js"
import { PlanExpired, PlanStale } from "../LearningErrors.js"
import type { CourseNode } from "../courses/Model.js"
import { gradesFrozenAt } from "../courses/RunRepository.js"
import { effectiveLayer, type LayerRow, SubmissionRow, submissionColumns } from "../steps/SubmissionViews.js"

/**
 * Regrade plans: stored results of one
 * step re-evaluated under a changed rule — full credit, excuse, new maximum points, an accepted
 * answer, a late penalty — with no grader call. `create` writes only the plan and its items
 * (old → new, skipped frozen/unchanged); `commit` re-checks every item's base (the submission's
 * layers when planned: any score change since → 409 `plan_stale`) and appends `plan` layers for
 * exactly the planned items. Commits beyond one chunk continue in the worker: a durable cursor on
 * the plan, advanced in the same transaction as the chunk's layers, so a killed worker resumes
 * after the last committed chunk and no item is applied twice.
 */

const planHours = 24
/** Items applied per transaction (inline when the whole plan fits). */
export const regradeChunkSize = 500

export type RegradeRule = RegradePlanT["rule"]
const Policy = Schema.Literal("any", "only_if_higher")
type Policy = typeof Policy.Type
const Skip = Schema.Literal("frozen", "unchanged", "stale")
type Skip = typeof Skip.Type

const PlanRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  node_key: Schema.String,
  rule: RegradeRuleSchema,
  selector: RegradeSelector,
  policy: Policy,
  status: Schema.Literal("ready", "committing", "committed", "expired"),
  item_count: Schema.Number,
  cursor: Schema.Number,
  created_by: Schema.String,
  committed_by: Schema.NullOr(Schema.String),
  commit_request_uuid: Schema.NullOr(Schema.String),
  expires_at: Timestamp,
  created_at: Timestamp,
  committed_at: Schema.NullOr(Timestamp)
})
type PlanRow = typeof PlanRow.Type

const planColumns = selectList(PlanRow, "p")
const decodePlans = rowsDecoder(PlanRow)

const ItemRow = Schema.Struct({
  n: Schema.Number,
  uuid: Schema.String,
  submission_uuid: Schema.String,
  base: Schema.String,
  old_points: Schema.NullOr(Int8Text),
  new_points: Schema.NullOr(Int8Text),
  new_verdict: Schema.NullOr(Schema.String),
  new_passed: Schema.NullOr(Schema.Boolean),
  max_points: Schema.Number,
  skipped: Schema.NullOr(Skip),
  applied_layer_uuid: Schema.NullOr(Schema.String),
  done_at: Schema.NullOr(Timestamp)
})
type ItemRow = typeof ItemRow.Type

const itemColumns = selectList(ItemRow)
const decodeItems = rowsDecoder(ItemRow)
/** A submission locked for a plan chunk, with its base (`baseExpression`) to compare with the item's. */
const decodeLockedSubmissions = rowsDecoder(Schema.extend(SubmissionRow, Schema.Struct({ base: Schema.String })))
const decodeSkipCounts = rowsDecoder(Schema.Struct({ frozen: Schema.Number, unchanged: Schema.Number, stale: Schema.Number }))
const decodeMoved = rowsDecoder(Schema.Struct({ submission_uuid: Schema.String }))

/** What the freeze check reads of a run. */
const RunFreeze = Schema.Struct({ uuid: Schema.String, finished_at: Schema.NullOr(Timestamp), freeze_after_days: Schema.Number })
const decodeRunFreezes = rowsDecoder(RunFreeze)

/**
 * A version's node tree as stored: checked to be an array, not walked (it was decoded when the
 * version was published and never changes).
 */
const StoredNodes = Schema.declare(
  (value: unknown): value is ReadonlyArray<CourseNode> => Array.isArray(value),
  { identifier: "StoredNodes" }
)
const decodeVersions = rowsDecoder(Schema.Struct({ number: Schema.Number, nodes: StoredNodes }))

/** A score layer as `to_jsonb` gives it: numeric points a JSON number, timestamps ISO text. */
const LayerJson = Schema.Struct({
  uuid: Schema.String,
  submission_uuid: Schema.String,
  kind: Schema.Literal("auto", "review", "appeal", "override", "regrade", "plan", "incident"),
  points: Schema.Number,
  max_points: Schema.Number,
  verdict: Schema.String,
  feedback: Schema.String,
  passed: Schema.Boolean,
  late: Schema.Boolean,
  released: Schema.Boolean,
  only_if_higher: Schema.Boolean,
  source_uuid: Schema.NullOr(Schema.String),
  by_profile_uuid: Schema.NullOr(Schema.String),
  reason: Schema.String,
  revoked_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
})

/** The base of a submission's scores: its layers and their revocations (any later score change alters it). */
const baseExpression = (alias: string) =>
  `(SELECT md5(coalesce(string_agg(l.uuid::text || CASE WHEN l.revoked_at IS NULL THEN '' ELSE 'r' END, ',' ORDER BY l.created_at, l.uuid), ''))
    FROM learning_score_layers l WHERE l.submission_uuid = ${alias}.uuid)`

const round2 = (value: number) => Math.round(value * 100) / 100

interface Candidate {
  readonly row: Pick<SubmissionRow, "reply">
  readonly layers: ReadonlyArray<LayerRow>
  readonly base: string
  readonly node: CourseNode | undefined
  readonly late: boolean
}

/** The new score of one stored result under the rule, or undefined when the rule does not change it. */
export const reevaluate = (rule: RegradeRule, candidate: Candidate): { points: number; maxPoints: number; verdict: string; passed: boolean } | undefined => {
  const effective = effectiveLayer(candidate.layers)
  const grading = candidate.node?.grading
  if (effective === undefined || grading === undefined) return undefined
  const old = Number(effective.points)
  const threshold = grading.passThreshold ?? grading.maxPoints
  switch (rule.kind) {
    case "full_credit":
      return { points: grading.maxPoints, maxPoints: grading.maxPoints, verdict: "accepted", passed: true }
    case "excuse":
      return { points: grading.maxPoints, maxPoints: grading.maxPoints, verdict: "excused", passed: true }
    case "max_points": {
      // Full credit now at `maxPoints`: a score of p counts as p / maxPoints of the step's points (capped).
      const full = candidate.layers[0]!.max_points
      const points = rule.maxPoints === 0 ? full : round2(Math.min(full, (old * full) / rule.maxPoints))
      return { points, maxPoints: full, verdict: effective.verdict, passed: points >= threshold }
    }
    case "accept_answer": {
      const reply = typeof candidate.row.reply === "string" ? candidate.row.reply.trim() : JSON.stringify(candidate.row.reply)
      if (reply !== rule.answer.trim()) return undefined
      return { points: grading.maxPoints, maxPoints: grading.maxPoints, verdict: "accepted", passed: true }
    }
    case "late_penalty": {
      // The first layer's points before the penalty it was given, then the new penalty when late now.
      const first = candidate.layers[0]!
      const given = first.late && grading.latePolicy?.mode === "penalty" ? (grading.latePolicy.penaltyPercent ?? 0) / 100 : 0
      const raw = given >= 1 ? Number(first.points) : Number(first.points) / (1 - given)
      const points = round2(Math.min(grading.maxPoints, raw * (candidate.late ? 1 - rule.penaltyPercent / 100 : 1)))
      return { points, maxPoints: first.max_points, verdict: effective.verdict, passed: points >= threshold }
    }
  }
}

/** old → new of one candidate: a planned item, or the reason it is skipped. */
export const planItem = (rule: RegradeRule, policy: Policy, candidate: Candidate, frozen: boolean) => {
  const effective = effectiveLayer(candidate.layers)
  const old = effective === undefined ? undefined : Number(effective.points)
  const next = reevaluate(rule, candidate)
  const maxPoints = next?.maxPoints ?? effective?.max_points ?? candidate.node?.grading?.maxPoints ?? 0
  let skipped: Skip | undefined
  if (next === undefined || (next.points === old && next.maxPoints === effective?.max_points && next.passed === effective?.passed)) skipped = "unchanged"
  else if (policy === "only_if_higher" && old !== undefined && next.points <= old) skipped = "unchanged"
  if (frozen) skipped = "frozen"
  return { old, next, maxPoints, skipped }
}

const itemView = (row: ItemRow) => ({
  uuid: row.uuid,
  n: row.n,
  submissionUuid: row.submission_uuid,
  ...(row.old_points !== null ? { old: Number(row.old_points) } : {}),
  ...(row.new_points !== null ? { new: Number(row.new_points) } : {}),
  maxPoints: row.max_points,
  ...(row.skipped !== null ? { skipped: row.skipped } : {}),
  ...(row.applied_layer_uuid !== null ? { appliedLayerUuid: row.applied_layer_uuid } : {})
})

/** The plan with one page of its items (by position) and the skip counts. */
const planView = (plan: PlanRow, query: { readonly cursor?: string | undefined; readonly limit?: number | undefined } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 100
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(itemColumns)} FROM learning_regrade_plan_items WHERE plan_uuid = ${plan.uuid}
      ${position._tag === "Some" ? sql`AND n > ${Number(position.value.key)}` : sql``} ORDER BY n LIMIT ${limit + 1}`,
      decodeItems
    )
    const page = pageOf(rows, limit, (row) => ({ key: String(row.n), uuid: row.uuid }), itemView)
    const [counts] = yield* Effect.flatMap(
      sql`SELECT
        count(*) FILTER (WHERE skipped = 'frozen')::int AS frozen, count(*) FILTER (WHERE skipped = 'unchanged')::int AS unchanged,
        count(*) FILTER (WHERE skipped = 'stale')::int AS stale
      FROM learning_regrade_plan_items WHERE plan_uuid = ${plan.uuid}`,
      decodeSkipCounts
    )
    return {
      uuid: plan.uuid,
      courseUuid: plan.course_uuid,
      nodeKey: plan.node_key,
      rule: plan.rule,
      selector: plan.selector,
      policy: plan.policy,
      status: plan.status === "ready" && plan.expires_at.getTime() <= Date.now() ? "expired" as const : plan.status,
      itemCount: plan.item_count,
      progress: plan.cursor,
      skipped: counts!,
      items: page.items,
      ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      expiresAt: plan.expires_at,
      createdAt: plan.created_at,
      ...(plan.committed_at !== null ? { committedAt: plan.committed_at } : {})
    }
  })

const loadPlan = (courseUuid: string, uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(planColumns)} FROM learning_regrade_plans p WHERE p.uuid = ${uuid} AND p.course_uuid = ${courseUuid}
      ${lock ? sql.literal("FOR UPDATE") : sql``}`,
      decodePlans
    )
    return row === undefined ? yield* new NotFound({ message: `No regrade plan ${uuid}` }) : row
  })

const frozenRuns = (runUuids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (runUuids.length === 0) return new Set<string>()
    const runs = yield* Effect.flatMap(
      sql`SELECT r.uuid, r.finished_at, c.freeze_after_days
      FROM learning_runs r JOIN learning_courses c ON c.uuid = r.course_uuid WHERE r.uuid IN ${sql.in(runUuids)}`,
      decodeRunFreezes
    )
    const now = Date.now()
    return new Set(runs.filter((run) => (gradesFrozenAt(run)?.getTime() ?? Infinity) <= now).map((run) => run.uuid))
  })

/** A stored result a plan re-evaluates: what the rules read of it, its scores' base and its layers. */
const PlannedSubmission = Schema.Struct({
  uuid: Schema.String,
  enrollment_uuid: Schema.String,
  run_uuid: Schema.String,
  version_number: Schema.Number,
  attempt_no: Schema.Number,
  reply: Schema.Unknown,
  submitted_at: Timestamp,
  base: Schema.String,
  layers: Schema.Array(LayerJson)
})
type PlannedSubmission = typeof PlannedSubmission.Type
const plannedColumns = selectList(PlannedSubmission, "s", {
  base: baseExpression("s"),
  layers:
    "coalesce((SELECT jsonb_agg(to_jsonb(l) ORDER BY l.created_at, l.uuid) FROM learning_score_layers l WHERE l.submission_uuid = s.uuid), '[]'::jsonb)"
})
const decodePlanned = rowsDecoder(PlannedSubmission)

export interface RegradePlanInput {
  readonly requestUuid: string
  readonly nodeKey: string
  readonly rule: RegradeRule
  readonly selector: RegradePlanT["selector"]
  readonly policy: Policy
}

export const createRegradePlan = (actor: Actor, courseUuid: string, input: RegradePlanInput) =>
  once(actor, "learning.regrade_plans.create", input, RegradePlan, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* courseFor(actor, "learning.regrade_plans.create", courseUuid, {
      lock: false,
      ...(input.selector.runUuid !== undefined ? { runUuid: input.selector.runUuid } : {})
    })
    if (course.latest_version === 0) return yield* new InvalidRequest({ message: "nodeKey: the course has no published version" })
    const versions = yield* Effect.flatMap(
      sql`SELECT number, nodes FROM learning_course_versions
      WHERE course_uuid = ${courseUuid}`,
      decodeVersions
    )
    const nodeAt = new Map(versions.map((version) => [version.number, version.nodes.find((node) => node.nodeKey === input.nodeKey)]))
    if (![...nodeAt.values()].some((node) => node?.kind === "step" && node.grading !== undefined)) {
      return yield* new InvalidRequest({ message: `nodeKey: no graded step "${input.nodeKey}" in the course's versions` })
    }
    const which = input.selector.which ?? "all"
    const rows = yield* Effect.flatMap(
      sql`
      SELECT ${sql.literal(plannedColumns)}
      FROM learning_submissions s WHERE s.course_uuid = ${courseUuid} AND s.node_key = ${input.nodeKey}
        AND s.status IN ('graded', 'accepted', 'revision_requested')
        ${input.selector.runUuid !== undefined ? sql`AND s.run_uuid = ${input.selector.runUuid}` : sql``}
        ${input.selector.submissionUuids !== undefined ? sql`AND s.uuid IN ${sql.in(input.selector.submissionUuids)}` : sql``}
      ORDER BY s.submitted_at, s.uuid`,
      decodePlanned
    )
    const layersOf = (row: PlannedSubmission): ReadonlyArray<LayerRow> =>
      row.layers.map((layer) => ({
        ...layer,
        points: String(layer.points),
        created_at: new Date(layer.created_at),
        revoked_at: layer.revoked_at === null ? null : new Date(layer.revoked_at)
      }))
    // latest / best: one submission per enrollment.
    let chosen = rows
    if (which !== "all") {
      const byEnrollment = new Map<string, (typeof rows)[number]>()
      for (const row of rows) {
        const held = byEnrollment.get(row.enrollment_uuid)
        const better = held === undefined || (which === "latest"
          ? row.attempt_no > held.attempt_no
          : Number(effectiveLayer(layersOf(row))?.points ?? -1) > Number(effectiveLayer(layersOf(held))?.points ?? -1))
        if (better) byEnrollment.set(row.enrollment_uuid, row)
      }
      const keep = new Set([...byEnrollment.values()].map((row) => row.uuid))
      chosen = rows.filter((row) => keep.has(row.uuid))
    }
    const frozen = yield* frozenRuns([...new Set(chosen.map((row) => row.run_uuid))])
    // Lateness against the current effective due (late_penalty only): the step's due per enrollment.
    const dues = new Map<string, Date | undefined>()
    if (input.rule.kind === "late_penalty") {
      const { stepDates } = yield* Effect.promise(() => import("../enrollments/Dates.js"))
      for (const enrollmentUuid of new Set(chosen.map((row) => row.enrollment_uuid))) {
        dues.set(enrollmentUuid, (yield* stepDates(enrollmentUuid)).get(input.nodeKey)?.dueAt)
      }
    }
    const items = chosen.map((row, i) => {
      const due = dues.get(row.enrollment_uuid)
      const candidate = { row, layers: layersOf(row), base: row.base, node: nodeAt.get(row.version_number), late: due !== undefined && row.submitted_at.getTime() > due.getTime() }
      const { maxPoints, next, old, skipped } = planItem(input.rule, input.policy, candidate, frozen.has(row.run_uuid))
      return {
        n: i + 1,
        uuid: crypto.randomUUID(),
        submission_uuid: row.uuid,
        base: row.base,
        old_points: old ?? null,
        new_points: next?.points ?? null,
        new_verdict: next?.verdict ?? null,
        new_passed: next?.passed ?? null,
        max_points: maxPoints,
        skipped: skipped ?? null
      }
    })
    const uuid = crypto.randomUUID()
    const [plan] = yield* Effect.flatMap(
      sql`INSERT INTO learning_regrade_plans AS p (uuid, course_uuid, node_key, rule, selector, policy, item_count, created_by, expires_at)
      VALUES (${uuid}, ${courseUuid}, ${input.nodeKey}, ${JSON.stringify(input.rule)}::jsonb, ${JSON.stringify(input.selector)}::jsonb, ${input.policy},
        ${items.length}, ${actor.profileUuid}, now() + make_interval(hours => ${planHours}))
      RETURNING ${sql.literal(planColumns)}`,
      decodePlans
    )
    for (let i = 0; i < items.length; i += 2000) {
      yield* sql`INSERT INTO learning_regrade_plan_items (plan_uuid, n, uuid, submission_uuid, base, old_points, new_points, new_verdict, new_passed,
          max_points, skipped)
        SELECT ${uuid}, t.n, t.uuid, t.submission_uuid, t.base, t.old_points, t.new_points, t.new_verdict, t.new_passed, t.max_points, t.skipped
        FROM jsonb_to_recordset(${JSON.stringify(items.slice(i, i + 2000))}::jsonb) AS t(n int, uuid uuid, submission_uuid uuid, base text,
          old_points numeric, new_points numeric, new_verdict text, new_passed boolean, max_points int, skipped text)`
    }
    return yield* planView(plan!)
  }))

export const getRegradePlan = (
  actor: Actor,
  courseUuid: string,
  planUuid: string,
  query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    yield* courseFor(actor, "learning.regrade_plans.get", courseUuid, { lock: false })
    return yield* planView(yield* loadPlan(courseUuid, planUuid, false), query)
  })

/**
 * Applies the next chunk of a committing plan (its caller holds the plan's lock): each item's base
 * is re-checked under the submission's lock (changed since the commit check → `stale`), a run
 * frozen since → `frozen`, else a `plan` layer is appended; the items are marked done and the
 * cursor advanced in the same transaction. The chunk is written in batches — the layers through
 * `appendScoreLayers` (one statement per table for the whole chunk, the same rows, audit entries
 * and events as one `appendScoreLayer` per item) and the items' marks in one statement each — so
 * its cost is a fixed number of round trips, not several per item. Returns how many items it processed.
 */
const applyChunk = (plan: PlanRow, chunk: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const items = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(itemColumns)} FROM learning_regrade_plan_items
      WHERE plan_uuid = ${plan.uuid} AND n > ${plan.cursor} ORDER BY n LIMIT ${chunk}`,
      decodeItems
    )
    const live = items.filter((item) => item.skipped === null)
    const submissions = live.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT ${sql.literal(submissionColumns)}, ${sql.literal(baseExpression("s"))} AS base FROM learning_submissions s
      WHERE s.uuid IN ${sql.in(live.map((item) => item.submission_uuid))} ORDER BY s.uuid FOR UPDATE OF s`,
      decodeLockedSubmissions
    )
    const byUuid = new Map(submissions.map((row) => [row.uuid, row]))
    const frozen = yield* frozenRuns([...new Set(submissions.map((row) => row.run_uuid))])
    const skipped: Array<{ n: number; skipped: Skip }> = []
    const applicable: Array<ItemRow> = []
    for (const item of live) {
      const row = byUuid.get(item.submission_uuid)!
      if (row.base !== item.base) skipped.push({ n: item.n, skipped: "stale" })
      else if (frozen.has(row.run_uuid)) skipped.push({ n: item.n, skipped: "frozen" })
      else applicable.push(item)
    }
    // The shared layer writer: freeze check, effective score, audit (per score change) and events, in item order.
    const changes = yield* appendScoreLayers(applicable.map((item) => ({
      submissionUuid: item.submission_uuid,
      kind: "plan" as const,
      points: Number(item.new_points),
      verdict: item.new_verdict ?? "regraded",
      onlyIfHigher: plan.policy === "only_if_higher",
      sourceUuid: plan.uuid,
      byProfileUuid: plan.committed_by ?? plan.created_by,
      reason: `regrade plan ${plan.uuid}: ${plan.rule.kind}`,
      ...(plan.commit_request_uuid !== null ? { requestUuid: plan.commit_request_uuid } : {})
    })), { locked: submissions }).pipe(Effect.catchTags({ GradeFrozen: Effect.die, NotFound: Effect.die, InvalidState: Effect.die, InvalidRequest: Effect.die }))
    // Every item of the chunk done in one statement: stale and frozen ones marked, applied ones with their layer.
    const marks = new Map<number, { readonly skipped?: Skip; readonly layer?: string }>([
      ...skipped.map((mark) => [mark.n, { skipped: mark.skipped }] as const),
      ...applicable.map((item, i) => [item.n, { layer: changes[i]!.layer.uuid }] as const)
    ])
    if (items.length > 0) {
      yield* sql`UPDATE learning_regrade_plan_items i SET skipped = coalesce(m.skipped, i.skipped), applied_layer_uuid = m.layer, done_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(items.map((item) => ({ n: item.n, skipped: marks.get(item.n)?.skipped ?? null, layer: marks.get(item.n)?.layer ?? null })))}::jsonb)
          AS m(n int, skipped text, layer uuid)
        WHERE i.plan_uuid = ${plan.uuid} AND i.n = m.n`
    }
    const cursor = items.at(-1)?.n ?? plan.cursor
    const finished = cursor >= plan.item_count
    yield* sql`UPDATE learning_regrade_plans SET cursor = ${cursor}
      ${finished ? sql`, status = 'committed', committed_at = now()` : sql``} WHERE uuid = ${plan.uuid}`
    return items.length
  })

export const commitRegradePlan = (actor: Actor, courseUuid: string, planUuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.regrade_plans.commit", input, RegradePlan, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.regrade_plans.commit", courseUuid, { lock: false })
    const plan = yield* loadPlan(courseUuid, planUuid, true)
    if (plan.status !== "ready") return yield* new InvalidState({ message: `The plan is ${plan.status}` })
    if (plan.expires_at.getTime() <= Date.now()) return yield* new PlanExpired({ message: "The plan is older than 24 hours; create it again" })
    // Every planned item's base, checked at once: any score change since the plan refuses the commit.
    const [moved] = yield* Effect.flatMap(
      sql`SELECT i.submission_uuid FROM learning_regrade_plan_items i
        JOIN learning_submissions s ON s.uuid = i.submission_uuid
      WHERE i.plan_uuid = ${planUuid} AND i.skipped IS NULL AND i.base <> ${sql.literal(baseExpression("s"))} LIMIT 1`,
      decodeMoved
    )
    if (moved !== undefined) {
      return yield* new PlanStale({ message: `The score of submission ${moved.submission_uuid} changed since the plan; create it again` })
    }
    const [committing] = yield* Effect.flatMap(
      sql`UPDATE learning_regrade_plans p SET status = 'committing', committed_by = ${actor.profileUuid},
        commit_request_uuid = ${input.requestUuid} WHERE p.uuid = ${planUuid} RETURNING ${sql.literal(planColumns)}`,
      decodePlans
    )
    let current = committing!
    // Small plans commit here in full; larger ones continue in the worker chunk by chunk (`advanceRegradePlans`).
    if (current.item_count <= regradeChunkSize) {
      while (current.status === "committing") {
        yield* applyChunk(current, regradeChunkSize)
        current = yield* loadPlan(courseUuid, planUuid, true)
      }
    }
    return yield* planView(current)
  }))

const decodeCommitting = rowsDecoder(Schema.Struct({ at: Schema.NullOr(Timestamp) }))

/**
 * The worker's next moment for plan commits: now while a plan is committing (migration 0031 wakes
 * the worker when one starts), none otherwise.
 */
export const nextCommittingPlanMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT min(created_at) AS at FROM learning_regrade_plans WHERE status = 'committing'`.pipe(
    Effect.flatMap(decodeCommitting),
    Effect.map(([row]) => row?.at ?? undefined)
  ))

/**
 * W: one chunk of one committing plan per call (`SKIP LOCKED`, so workers share plans), in its
 * own transaction. Returns the items processed (0: nothing to do).
 */
export const advanceRegradePlans = (chunk = regradeChunkSize): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const [plan] = yield* Effect.flatMap(
        sql`SELECT ${sql.literal(planColumns)} FROM learning_regrade_plans p WHERE p.status = 'committing'
        ORDER BY p.created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        decodePlans
      )
      return plan === undefined ? 0 : yield* applyChunk(plan, chunk)
    })))
