import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addRun, enrollDirectly, ok, only, runningCourse } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import type { RegradePlanT } from "./CorrectionsModel.js"
import { appendScoreLayer } from "../grading/Layers.js"
import { advanceRegradePlans } from "./RegradePlans.js"

/**
 * Regrade plan commits written in batches (`RegradePlans.applyChunk` through
 * `Layers.appendScoreLayers`) on real Postgres: the rows, audit entries and events are those of
 * appending the same layers one by one with `appendScoreLayer`, the per-item writer the commit
 * used before; and a chunk that fails at its last statement, when its layers, audit entries and
 * events are all written, leaves nothing behind and is applied exactly once on resume.
 */

let m: Marketplace
let owner: SessionActor
beforeAll(async () => {
  m = await openMarketplace("learning_regrade_plans")
  owner = await m.profile({ name: "Автор" })
})
afterAll(async () => {
  await m?.close()
})

const nodes = [
  { nodeKey: "m1", kind: "module", title: "Модуль" },
  { nodeKey: "q", parentKey: "m1", kind: "step", stepType: "quiz", title: "Вопрос", body: "?", grading: { maxPoints: 10, check: { kind: "exact", answers: ["42"] } } }
]

/**
 * One learner's submissions on `q`, written directly: each a status, its first (auto) layer's
 * points and optionally an unreleased override on top (staff see it, the learner does not).
 */
const shapes: ReadonlyArray<{ status: string; points: number; hidden?: number }> = [
  { status: "graded", points: 0 }, // 0 → 0: unchanged, skipped
  { status: "graded", points: 3 }, // 3 → 6: graded, not passed
  { status: "graded", points: 5 }, // 5 → 10: passes, graded → accepted (two events, two revisions)
  { status: "revision_requested", points: 6 }, // 6 → 10: passes, no accept move from here, both events
  { status: "accepted", points: 10 }, // 10 → 10: unchanged
  { status: "graded", points: 1, hidden: 4 }, // staff 4 → 8, the learner 1 → 8
  { status: "graded", points: 2, hidden: 5 } // staff 5 → 10, the learner 2 → 10: passes
]

const learnerWith = async (course: { uuid: string; revision: number } | string, copies: number) => {
  const { enrollment, run } = typeof course === "string"
    ? { enrollment: await enrollAnother(course), run: course }
    : await runningCourse(m, owner, course, nodes)
  const uuids: Array<string> = []
  for (let copy = 0; copy < copies; copy++) {
    for (const [i, shape] of shapes.entries()) {
      const [row] = await m.sql<{ uuid: string }>(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key,
          version_number, attempt_no, reply, status, attempt_counted)
        SELECT gen_random_uuid(), e.uuid, e.course_uuid, e.run_uuid, e.profile_uuid, 'q', 1, $2, '"0"'::jsonb, $3, false
        FROM learning_enrollments e WHERE e.uuid = $1 RETURNING uuid`, enrollment, copy * shapes.length + i + 1, shape.status)
      await m.sql(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed)
        VALUES (gen_random_uuid(), $1, 'auto', $2, 10, 'wrong', $3)`, row!.uuid, shape.points, shape.points >= 10)
      if (shape.hidden !== undefined) {
        await m.sql(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed, released, by_profile_uuid, reason)
          VALUES (gen_random_uuid(), $1, 'override', $2, 10, 'wrong', false, false, $3, 'hidden')`, row!.uuid, shape.hidden, owner.profileUuid)
      }
      uuids.push(row!.uuid)
    }
  }
  return { run, enrollment, uuids }
}

const enrollAnother = async (run: string) => {
  const learner = await m.profile()
  const enrollment = ok<{ uuid: string; revision: number }>(await m.invoke("learning.enrollments.enroll", learner, { path: { run }, payload: { requestUuid: randomUUID() } }))
  ok(await m.invoke("learning.enrollments.start", learner, { path: { enrollment: enrollment.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: enrollment.revision } }))
  return enrollment.uuid
}

const planOf = (courseUuid: string, uuids: ReadonlyArray<string>) =>
  m.invoke("learning.regrade_plans.create", owner, {
    path: { course: courseUuid },
    payload: { requestUuid: randomUUID(), nodeKey: "q", rule: { kind: "max_points", maxPoints: 5 }, selector: { submissionUuids: uuids }, policy: "any" }
  }).then((answer) => ok<RegradePlanT>(answer))

/**
 * Everything a commit writes about the given submissions, with uuids replaced by positions (the
 * submission's index, the layer's order) so two twins compare equal.
 */
const written = async (uuids: ReadonlyArray<string>, planUuid: string) => {
  const index = new Map(uuids.map((uuid, i) => [uuid, i]))
  const layers = await m.sql<{ uuid: string; submission_uuid: string; kind: string } & Record<string, unknown>>(`SELECT uuid, submission_uuid, kind, points, max_points, verdict,
      feedback, passed, late, released, only_if_higher, source_uuid = $2 AS from_plan, by_profile_uuid, replace(reason, $2::text, 'PLAN') AS reason,
      revoked_at IS NULL AS active
    FROM learning_score_layers WHERE submission_uuid = ANY($1::uuid[]) ORDER BY created_at, uuid`, uuids, planUuid)
  const layerIndex = new Map(layers.map((layer, i) => [layer.uuid, `${index.get(layer.submission_uuid)}:${layers.filter((l, j) => j < i && l.submission_uuid === layer.submission_uuid).length}`]))
  const anonymous = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null), (_, v) =>
    typeof v === "string" ? layerIndex.get(v) ?? (index.has(v) ? `s${index.get(v)}` : v) : v)
  const submissions = await m.sql<{ uuid: string; status: string; revision: number }>(
    "SELECT uuid, status, revision FROM learning_submissions WHERE uuid = ANY($1::uuid[])", uuids)
  const audit = await m.sql<{ subject_uuid: string; action: string; before: unknown; after: unknown; reason: string; actor_profile_uuid: string }>(`SELECT subject_uuid,
      action, before, after, replace(reason, $2::text, 'PLAN') AS reason, actor_profile_uuid FROM learning_audit_events
    WHERE subject_uuid = ANY($1::uuid[]) ORDER BY created_at, uuid`, uuids, planUuid)
  const events = await m.sql<{ aggregate_uuid: string; type: string; aggregate_revision: number; data: unknown; context: Record<string, unknown> }>(`SELECT aggregate_uuid,
      type, aggregate_revision, data, context FROM outbox_events WHERE aggregate_uuid = ANY($1::uuid[]) ORDER BY aggregate_revision, type`, uuids)
  return {
    layers: layers.map(({ submission_uuid, uuid: _, ...rest }) => ({ s: index.get(submission_uuid), ...rest })).sort((a, b) => a.s! - b.s!),
    submissions: submissions.map((row) => ({ s: index.get(row.uuid)!, status: row.status, revision: row.revision })).sort((a, b) => a.s - b.s),
    audit: audit.map((row) => ({ s: index.get(row.subject_uuid), action: row.action, before: anonymous(row.before), after: anonymous(row.after), reason: row.reason, actor: row.actor_profile_uuid })),
    events: events.map((row) => ({
      s: index.get(row.aggregate_uuid)!,
      type: row.type,
      revision: row.aggregate_revision,
      data: anonymous(row.data),
      context: anonymous({ ...row.context, profileUuid: "learner", audience: ["learner"], enrollmentUuid: "enrollment" })
    })).sort((a, b) => a.s - b.s || a.revision - b.revision || a.type.localeCompare(b.type))
  }
}

describe("regrade plan commits in batches", () => {
  it("writes the same layers, submissions, audit entries and events as appending each item's layer one by one", async () => {
    const course = ok<{ uuid: string; revision: number }>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } }))
    // Two twins: the same submissions of two learners in one run; 3 copies each, so a plan of 21 items commits inline.
    const batch = await learnerWith(course, 3)
    const single = await learnerWith(batch.run, 3)
    const batchPlan = await planOf(course.uuid, batch.uuids)
    const singlePlan = await planOf(course.uuid, single.uuids)
    expect(batchPlan.items.map((item) => [item.old, item.new, item.skipped])).toEqual(singlePlan.items.map((item) => [item.old, item.new, item.skipped]))
    expect(batchPlan.skipped.unchanged).toBe(6)

    const requestUuid = randomUUID()
    const committed = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.commit", owner, { path: { course: course.uuid, plan: batchPlan.uuid }, payload: { requestUuid } }))
    expect([committed.status, committed.progress, committed.items.filter((item) => item.appliedLayerUuid !== undefined).length]).toEqual(["committed", 21, 15])

    // The reference: the twin's planned items through the one-item writer, in item order, in one transaction, as the commit does.
    const items = await m.sql<{ submission_uuid: string; new_points: string; new_verdict: string | null }>(`SELECT submission_uuid, new_points::text, new_verdict
      FROM learning_regrade_plan_items WHERE plan_uuid = $1 AND skipped IS NULL ORDER BY n`, singlePlan.uuid)
    await m.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.forEach(items, (item) =>
        appendScoreLayer({
          submissionUuid: item.submission_uuid,
          kind: "plan",
          points: Number(item.new_points),
          verdict: item.new_verdict ?? "regraded",
          onlyIfHigher: false,
          sourceUuid: singlePlan.uuid,
          byProfileUuid: owner.profileUuid,
          reason: `regrade plan ${singlePlan.uuid}: max_points`,
          requestUuid
        }), { discard: true }))))

    const got = await written(batch.uuids, batchPlan.uuid)
    const want = await written(single.uuids, singlePlan.uuid)
    expect(got).toEqual(want)
    // And it is not vacuous: the twins' writes cover every branch of the layer writer.
    expect(got.layers.filter((layer) => layer.kind === "plan")).toHaveLength(15)
    expect(got.audit).toHaveLength(15)
    expect(got.submissions.map((row) => row.status)).toEqual(Array.from({ length: 3 }, () => ["graded", "graded", "accepted", "revision_requested", "accepted", "graded", "accepted"]).flat())
    expect(got.events.filter((event) => event.type === "learning.submission.accepted")).toHaveLength(9)
    expect(got.events.filter((event) => event.type === "learning.submission.graded")).toHaveLength(15)
    const [requests] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_audit_events WHERE subject_uuid = ANY($1::uuid[]) AND request_uuid = $2", batch.uuids, requestUuid)
    expect(requests!.n).toBe(15)
  })

  it("skips the items of a run frozen after the plan as frozen and applies the rest in the same chunk", async () => {
    const course = ok<{ uuid: string; revision: number }>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } }))
    const open = await learnerWith(course, 1)
    // A second run of the course with one learner and the same submissions.
    const later = await addRun(m, owner, course.uuid)
    const enrollment = await enrollDirectly(m, { uuid: course.uuid, run: later }, await m.profile())
    const frozen: Array<string> = []
    for (const [i, shape] of shapes.entries()) {
      const [row] = await m.sql<{ uuid: string }>(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key,
          version_number, attempt_no, reply, status, attempt_counted)
        SELECT gen_random_uuid(), e.uuid, e.course_uuid, e.run_uuid, e.profile_uuid, 'q', 1, $2, '"0"'::jsonb, $3, false
        FROM learning_enrollments e WHERE e.uuid = $1 RETURNING uuid`, enrollment, i + 1, shape.status)
      await m.sql(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed)
        VALUES (gen_random_uuid(), $1, 'auto', $2, 10, 'wrong', $3)`, row!.uuid, shape.points, shape.points >= 10)
      frozen.push(row!.uuid)
    }
    const plan = await planOf(course.uuid, [...open.uuids, ...frozen])
    expect(plan.skipped).toEqual({ frozen: 0, unchanged: 4, stale: 0 })
    // The second run finishes 40 days ago between the plan and its commit: its grades are frozen now (after 30 days).
    await m.sql("UPDATE learning_runs SET status = 'finished', finished_at = now() - interval '40 days' WHERE uuid = $1", later)
    const committed = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.commit", owner, { path: { course: course.uuid, plan: plan.uuid }, payload: { requestUuid: randomUUID() } }))
    expect([committed.status, committed.skipped]).toEqual(["committed", { frozen: 5, unchanged: 4, stale: 0 }])
    const applied = new Set(committed.items.filter((item) => item.appliedLayerUuid !== undefined).map((item) => item.submissionUuid))
    expect(applied.size).toBe(5)
    expect(frozen.some((uuid) => applied.has(uuid))).toBe(false)
    expect(await m.sql("SELECT 1 FROM learning_score_layers WHERE kind = 'plan' AND submission_uuid = ANY($1::uuid[])", frozen)).toEqual([])
  })

  it("a chunk that fails at its last statement leaves none of its layers, audit entries or events, and resumes applying each item once", async () => {
    const course = ok<{ uuid: string; revision: number }>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } }))
    const { enrollment, run } = await runningCourse(m, owner, course, nodes)
    await m.sql(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, attempt_no,
        reply, status, attempt_counted)
      SELECT gen_random_uuid(), e.uuid, e.course_uuid, e.run_uuid, e.profile_uuid, 'q', 1, g, '"0"'::jsonb, 'graded', false
      FROM learning_enrollments e, generate_series(1, 1200) g WHERE e.uuid = $1`, enrollment)
    await m.sql(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed)
      SELECT gen_random_uuid(), uuid, 'auto', 0, 10, 'wrong', false FROM learning_submissions WHERE enrollment_uuid = $1`, enrollment)
    const plan = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.create", owner, {
      path: { course: course.uuid },
      payload: { requestUuid: randomUUID(), nodeKey: "q", rule: { kind: "full_credit" }, selector: { runUuid: run }, policy: "any" }
    }))
    expect(ok<RegradePlanT>(await m.invoke("learning.regrade_plans.commit", owner, { path: { course: course.uuid, plan: plan.uuid }, payload: { requestUuid: randomUUID() } })).status)
      .toBe("committing")
    const state = async () => only(await m.sql<{ cursor: number; status: string; done: number; layers: number; audit: number; events: number; revisions: number }>(`SELECT p.cursor,
        p.status,
        (SELECT count(*)::int FROM learning_regrade_plan_items i WHERE i.plan_uuid = p.uuid AND i.done_at IS NOT NULL) AS done,
        (SELECT count(*)::int FROM learning_score_layers l WHERE l.kind = 'plan' AND l.source_uuid = p.uuid) AS layers,
        (SELECT count(*)::int FROM learning_audit_events a WHERE a.action = 'score.plan' AND a.course_uuid = p.course_uuid) AS audit,
        (SELECT count(*)::int FROM outbox_events o JOIN learning_submissions s ON s.uuid = o.aggregate_uuid WHERE s.enrollment_uuid = $2) AS events,
        (SELECT sum(revision - 1)::int FROM learning_submissions s WHERE s.enrollment_uuid = $2) AS revisions
      FROM learning_regrade_plans p WHERE p.uuid = $1`, plan.uuid, enrollment))
    expect(await m.runtime.runPromise(advanceRegradePlans())).toBe(500)
    // Each applied item: one layer, one audit entry, graded + accepted (two revisions: bump, accept).
    expect(await state()).toEqual({ cursor: 500, status: "committing", done: 500, layers: 500, audit: 500, events: 1000, revisions: 1000 })
    // The next chunk fails at its very last statement (the plan's cursor), after everything else of it is written.
    await m.sql(`CREATE FUNCTION regrade_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'crash before the cursor moves'; END $$`)
    await m.sql("CREATE TRIGGER regrade_test_fail BEFORE UPDATE OF cursor ON learning_regrade_plans FOR EACH ROW EXECUTE FUNCTION regrade_test_fail()")
    const crashed = await m.runtime.runPromise(Effect.either(advanceRegradePlans()))
    await m.sql("DROP TRIGGER regrade_test_fail ON learning_regrade_plans")
    await m.sql("DROP FUNCTION regrade_test_fail()")
    expect(crashed._tag).toBe("Left")
    expect(String(crashed._tag === "Left" ? crashed.left.cause : "")).toContain("crash before the cursor moves")
    expect(await state()).toEqual({ cursor: 500, status: "committing", done: 500, layers: 500, audit: 500, events: 1000, revisions: 1000 })
    // Resumed: the rest, each item once.
    expect([await m.runtime.runPromise(advanceRegradePlans()), await m.runtime.runPromise(advanceRegradePlans()), await m.runtime.runPromise(advanceRegradePlans())])
      .toEqual([500, 200, 0])
    expect(await state()).toEqual({ cursor: 1200, status: "committed", done: 1200, layers: 1200, audit: 1200, events: 2400, revisions: 2400 })
    const twice = await m.sql("SELECT submission_uuid FROM learning_score_layers WHERE kind = 'plan' AND source_uuid = $1 GROUP BY submission_uuid HAVING count(*) > 1", plan.uuid)
    expect(twice).toEqual([])
    expect(await m.sql("SELECT DISTINCT status FROM learning_submissions WHERE enrollment_uuid = $1", enrollment)).toEqual([{ status: "accepted" }])
  })
})
