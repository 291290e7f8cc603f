import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runningCourse } from "../../domain/test/learning.js"
import { bodyOf, type Marketplace, openMarketplace } from "../../domain/test/marketplace.js"

/**
 * A regrade plan of 10,000 items committed through the real worker process (`birzha worker`, the
 * built command): the worker is killed with SIGKILL in the middle of the commit, when some but not
 * all chunks are applied; a new worker resumes from the plan's durable cursor. Every item is
 * applied exactly once (one plan layer and one `score.plan` audit entry per submission) and the
 * plan ends committed.
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

    // The first worker applies chunks; it is killed once at least one chunk is in and the commit is not finished.
    const first = worker()
    const deadline = Date.now() + 60_000
    let seen = await state()
    while (seen.cursor === 0) {
      if (Date.now() > deadline) throw new Error(`the worker applied no chunk within 60 s; its output:\n${first.output()}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
      seen = await state()
    }
    first.child.kill("SIGKILL")
    expect(await first.exited).toBe("SIGKILL")
    const killed = await state()
    expect(killed.status).toBe("committing")
    expect(killed.cursor).toBeGreaterThan(0)
    expect(killed.cursor).toBeLessThan(items)
    expect(killed.cursor % 500).toBe(0)
    // What the killed worker left is whole chunks: the cursor, the items done, the layers and the audit entries agree.
    expect([killed.done, killed.layers, killed.audit]).toEqual([killed.cursor, killed.cursor, killed.cursor])

    // A new worker resumes after the last committed chunk.
    const second = worker()
    try {
      let now = await state()
      while (now.status !== "committed") {
        if (Date.now() > deadline + 60_000) throw new Error(`the second worker did not finish the commit; its output:\n${second.output()}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
        now = await state()
      }
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
  }, 180_000)
})
