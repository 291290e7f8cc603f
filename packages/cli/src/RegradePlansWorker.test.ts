import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runningCourse } from "../../domain/test/learning.js"
import { bodyOf, type Marketplace, openMarketplace } from "../../domain/test/marketplace.js"
import { untilDone } from "../../../testing/progress.js"

/**
 * A regrade plan of 10,000 items committed through the real worker process (`birzha worker`, the
 * built command): the worker is killed with SIGKILL in the middle of the commit, inside a chunk
 * whose layers, audit entries and events are written but not committed, after ten chunks are in;
 * a new worker resumes from the plan's durable cursor. Every item is applied exactly once (one
 * plan layer and one `score.plan` audit entry per submission) and the plan ends committed. Where
 * the kill lands does not depend on the machine's speed: the test holds a lock on the plan's item
 * 5001, so the worker's eleventh chunk waits there until it is killed.
 */

// The built command, as an operator runs it; `pnpm test` builds before running the tests.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")
const items = 10_000

let m: Marketplace
beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  m = await openMarketplace("cli_regrade_plans")
})
afterAll(async () => {
  await m?.close()
})

const worker = () => {
  const child: ChildProcess = spawn(process.execPath, [bin, "worker"], {
    cwd: tmpdir(),
    env: { PATH: process.env["PATH"] ?? "", DATABASE_URL: m.database.url, BIRZHA_SECRET: "regrade plan worker tests: a server secret of 32+ chars" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding("utf8").on("data", (chunk: string) => (output = (output + chunk).slice(-4000)))
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)))
  return { child, exited, output: () => output }
}

const ok = <A>(answer: { status: number; body: unknown }): A => {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(200)
  return bodyOf<A>(answer as never)
}

describe("regrade plan commits in the worker process", () => {
  it("kill -9 in the middle of a 10,000-item commit: a new worker resumes from the cursor, every item applied exactly once", async () => {
    const owner = await m.profile()
    const course = ok<{ uuid: string; revision: number }>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Пересчёт", kind: "single" } }))
    const nodes = [
      { nodeKey: "m1", kind: "module", title: "Модуль" },
      { nodeKey: "q", parentKey: "m1", kind: "step", stepType: "quiz", title: "Вопрос", body: "?", grading: { maxPoints: 10, check: { kind: "exact", answers: ["42"] } } }
    ]
    const { enrollment, run } = await runningCourse(m, owner, course, nodes)
    // 10,000 graded attempts (0 of 10 points), written directly.
    await m.sql(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, attempt_no,
        reply, status, attempt_counted)
      SELECT gen_random_uuid(), e.uuid, e.course_uuid, e.run_uuid, e.profile_uuid, 'q', 1, g, '"0"'::jsonb, 'graded', false
      FROM learning_enrollments e, generate_series(1, ${items}) g WHERE e.uuid = $1`, enrollment)
    await m.sql(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed)
      SELECT gen_random_uuid(), uuid, 'auto', 0, 10, 'wrong', false FROM learning_submissions WHERE enrollment_uuid = $1`, enrollment)
    const plan = ok<{ uuid: string; itemCount: number }>(await m.invoke("learning.regrade_plans.create", owner, {
      path: { course: course.uuid },
      payload: { requestUuid: randomUUID(), nodeKey: "q", rule: { kind: "full_credit" }, selector: { runUuid: run }, policy: "any" }
    }))
    expect(plan.itemCount).toBe(items)
    const committing = ok<{ status: string; progress: number }>(await m.invoke("learning.regrade_plans.commit", owner, {
      path: { course: course.uuid, plan: plan.uuid },
      payload: { requestUuid: randomUUID() }
    }))
    expect([committing.status, committing.progress]).toEqual(["committing", 0])

    const state = async () => (await m.sql<{ cursor: number; status: string; done: number; layers: number; audit: number }>(`SELECT p.cursor, p.status,
        (SELECT count(*)::int FROM learning_regrade_plan_items i WHERE i.plan_uuid = p.uuid AND i.done_at IS NOT NULL) AS done,
        (SELECT count(*)::int FROM learning_score_layers l WHERE l.kind = 'plan' AND l.source_uuid = p.uuid) AS layers,
        (SELECT count(*)::int FROM learning_audit_events a WHERE a.action = 'score.plan' AND a.course_uuid = p.course_uuid) AS audit
      FROM learning_regrade_plans p WHERE p.uuid = $1`, plan.uuid))[0]!

    // Item 5001 locked from another session: the eleventh chunk blocks on it when marking its items,
    // after writing its layers, audit entries and events (RegradePlans.applyChunk).
    const blocker = new Pg.Client({ connectionString: m.database.url })
    await blocker.connect()
    try {
      await blocker.query("BEGIN")
      await blocker.query("SELECT 1 FROM learning_regrade_plan_items WHERE plan_uuid = $1 AND n = 5001 FOR UPDATE", [plan.uuid])
      const first = worker()
      // Liveness bounds only (testing/progress.ts): they stop a run that stopped moving, they do not measure anything.
      const waiting = async () => (await m.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%learning_regrade_plan_items%'`))[0]!.n
      await untilDone(async () => ({ ...(await state()), waiting: await waiting() }), (now) => now.cursor >= 5000 && now.waiting > 0,
        (now) => [now.cursor, now.layers, now.waiting], () => `the worker to reach item 5001; its output:\n${first.output()}`, { everyMs: 50, stallMs: 120_000 })
      first.child.kill("SIGKILL")
      expect(await first.exited).toBe("SIGKILL")
    } finally {
      await blocker.query("ROLLBACK")
      await blocker.end()
    }
    const killed = await state()
    // What the killed worker left is whole chunks: the cursor, the items done, the layers and the audit entries agree.
    expect(killed).toEqual({ cursor: 5000, status: "committing", done: 5000, layers: 5000, audit: 5000 })

    // A new worker resumes after the last committed chunk.
    const second = worker()
    try {
      const now = await untilDone(state, (now) => now.status === "committed", (now) => [now.cursor, now.layers],
        () => `the second worker to finish the commit; its output:\n${second.output()}`, { stallMs: 120_000 })
      expect(now).toEqual({ cursor: items, status: "committed", done: items, layers: items, audit: items })
    } finally {
      second.child.kill("SIGTERM")
      await second.exited
    }
    const perSubmission = await m.sql<{ layers: number; plans: number; n: number }>(`SELECT layers, plans, count(*)::int AS n FROM (
        SELECT count(*)::int AS layers, count(*) FILTER (WHERE l.kind = 'plan')::int AS plans FROM learning_submissions s
        JOIN learning_score_layers l ON l.submission_uuid = s.uuid WHERE s.enrollment_uuid = $1 GROUP BY s.uuid) per GROUP BY layers, plans`, enrollment)
    expect(perSubmission).toEqual([{ layers: 2, plans: 1, n: items }])
    const applied = await m.sql<{ n: number }>(`SELECT count(*)::int AS n FROM learning_regrade_plan_items i JOIN learning_score_layers l ON l.uuid = i.applied_layer_uuid
      WHERE i.plan_uuid = $1 AND l.points = 10 AND l.source_uuid = $1`, plan.uuid)
    expect(applied).toEqual([{ n: items }])
  }, 1_800_000)
})
