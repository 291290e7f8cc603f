import { runMigrations } from "@birzha/domain/internal"
import { DatabaseLive, makePgliteClient } from "@birzha/infrastructure"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Duration, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { embeddedDataDir } from "../../../testing/pglite.js"
import { runningCourse } from "../../domain/test/learning.js"
import { bodyOf, type Marketplace, openMarketplace } from "../../domain/test/marketplace.js"
import { makeLearningCorrectionsJob, makeLearningEnrollmentsJob, makeLearningRunsJob } from "./learning/LearningJobs.js"
import { makeDealsJob } from "./marketplace/MarketplaceJobs.js"
import { DueSignalsLive } from "./WorkerHost.js"
import { WorkerJobs, WorkerLoop } from "./WorkerLoop.js"

// The real loop and the real jobs, on a Postgres server through `DatabaseLive`, the worker's own
// database layer. Their fallback poll (`every`, a minute in production) is set to an hour here and
// every bound below is a liveness bound of a minute: a worker that only polled would fail them on
// any machine, one that sleeps until the due moment passes them however busy the machine is.

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("time_driven_jobs")
})
afterAll(async () => {
  await m?.close()
})

/** A fallback poll no bound below waits for. */
const fallback = { every: Duration.hours(1) }
/** How long a due transition may take on a busy machine: a liveness bound, far below `fallback`. */
const bound = 60_000

/**
 * Starts a worker process's loop over the run, enrollment and deal clocks and the corrections job
 * (each on an hour's fallback poll); `signals`: with the `birzha_due` wake-ups.
 */
const startWorker = async (signals: boolean) => {
  const scope = await Effect.runPromise(Scope.make())
  const jobs = Layer.effect(WorkerJobs, Effect.all([
    makeLearningRunsJob(fallback),
    makeLearningEnrollmentsJob(fallback),
    makeDealsJob(fallback),
    makeLearningCorrectionsJob(fallback)
  ]))
  const layer = WorkerLoop.pipe(
    Layer.provide(signals ? Layer.merge(jobs, DueSignalsLive) : jobs),
    Layer.provide(DatabaseLive.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", m.database.url]])))))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.None))
  )
  await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return { stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const call = async (id: string, actor: Parameters<Marketplace["invoke"]>[1], input: object) => {
  const answer = await m.invoke(id, actor, input)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return bodyOf<{ uuid: string; revision: number; status: string }>(answer)
}

/** A published one-step course and a scheduled cohort run of it starting at `startsAt`. */
const scheduledRun = async (startsAt: Date) => {
  const owner = await m.profile()
  const nodes = [{ nodeKey: "m1", kind: "module", title: "Модуль" }, { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "Шаг", body: "Текст" }]
  const course = await call("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } })
  const edited = await call("learning.courses.update", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: course.revision, nodes } })
  await call("learning.courses.publish", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } })
  const run = await call("learning.runs.create", owner, {
    path: { course: course.uuid },
    payload: {
      requestUuid: randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: startsAt.toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
    }
  })
  const published = await call("learning.runs.update", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, publish: true } })
  expect(published.status).toBe("scheduled")
  return run.uuid
}

/** Polls the run until it is running or `until` passed; answers when it was seen running (ms since the epoch) or undefined. */
const seenRunning = async (runUuid: string, until: number) => {
  for (;;) {
    const [row] = await m.sql<{ status: string }>("SELECT status FROM learning_runs WHERE uuid = $1", runUuid)
    if (row!.status === "running") return Date.now()
    if (Date.now() > until) return undefined
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("time-driven worker jobs", () => {
  it("start a run at its startsAt: the worker sleeps until the earliest due moment, not until its fallback poll", async () => {
    const startsAt = new Date(Date.now() + 2_000)
    const run = await scheduledRun(startsAt)
    // Started after the run was written, without wake-ups: only the due moment it reads can wake it.
    const worker = await startWorker(false)
    try {
      const at = await seenRunning(run, startsAt.getTime() + bound)
      expect(at, "the run did not start within a minute of its startsAt").toBeDefined()
      // Never before its moment.
      expect(at!).toBeGreaterThanOrEqual(startsAt.getTime())
    } finally {
      await worker.stop()
    }
  })

  it("wake when a new earlier moment is written while the worker sleeps (NOTIFY birzha_due)", async () => {
    const worker = await startWorker(true)
    try {
      // Let it look once and go to sleep: nothing is due, so until its fallback an hour away.
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const startsAt = new Date(Date.now() + 1_500)
      const run = await scheduledRun(startsAt)
      const at = await seenRunning(run, startsAt.getTime() + bound)
      expect(at, "the sleeping worker did not start the run within a minute of its startsAt").toBeDefined()
      expect(at!).toBeGreaterThanOrEqual(startsAt.getTime())
    } finally {
      await worker.stop()
    }
  })

  it("continue a regrade plan's commit at once when it starts committing, not at the corrections job's next tick", async () => {
    const owner = await m.profile()
    const course = await call("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } })
    const quiz = [
      { nodeKey: "m1", kind: "module", title: "Модуль" },
      { nodeKey: "q", parentKey: "m1", kind: "step", stepType: "quiz", title: "Вопрос", body: "?", grading: { maxPoints: 10, check: { kind: "exact", answers: ["42"] } } }
    ]
    const { enrollment } = await runningCourse(m, owner, course, quiz)
    const [submission] = await m.sql<{ uuid: string }>(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key,
        version_number, attempt_no, reply, status, attempt_counted)
      SELECT gen_random_uuid(), e.uuid, e.course_uuid, e.run_uuid, e.profile_uuid, 'q', 1, 1, '"0"'::jsonb, 'graded', false
      FROM learning_enrollments e WHERE e.uuid = $1 RETURNING uuid`, enrollment)
    await m.sql(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed)
      VALUES (gen_random_uuid(), $1, 'auto', 3, 10, 'wrong', false)`, submission!.uuid)
    const plan = await call("learning.regrade_plans.create", owner, {
      path: { course: course.uuid },
      payload: { requestUuid: randomUUID(), nodeKey: "q", rule: { kind: "max_points", maxPoints: 5 }, selector: { submissionUuids: [submission!.uuid] }, policy: "any" }
    })
    const worker = await startWorker(true)
    try {
      // Let it look once and go to sleep: nothing is committing, its fallback is an hour away.
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      // As a commit too large to finish in its request leaves it: committing, continued by the worker.
      const started = Date.now()
      await m.sql("UPDATE learning_regrade_plans SET status = 'committing', committed_by = created_by WHERE uuid = $1", plan.uuid)
      let committedAt: number | undefined
      while (committedAt === undefined && Date.now() <= started + bound) {
        const [row] = await m.sql<{ status: string }>("SELECT status FROM learning_regrade_plans WHERE uuid = $1", plan.uuid)
        if (row!.status === "committed") committedAt = Date.now()
        else await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(committedAt, "the sleeping worker did not continue the commit within a minute").toBeDefined()
    } finally {
      await worker.stop()
    }
  })

  it("on the embedded database too: a deal handed over while the worker sleeps completes at its moment (PGlite's in-process NOTIFY)", async () => {
    const data = await embeddedDataDir("time-driven", (dir) => Effect.runPromise(Effect.scoped(makePgliteClient(dir))))
    const scope = await Effect.runPromise(Scope.make())
    try {
      const settings = Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["BIRZHA_DATA_DIR", data.home]])))
      const database = await Effect.runPromise(Layer.buildWithScope(DatabaseLive.pipe(Layer.provide(settings)), scope))
      const sql = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
        Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text, params as Array<unknown>)).pipe(Effect.provide(database)))
      await Effect.runPromise(Effect.provide(runMigrations, database))
      const worker = WorkerLoop.pipe(
        Layer.provide(Layer.merge(Layer.effect(WorkerJobs, Effect.all([makeDealsJob(fallback)])), DueSignalsLive)),
        Layer.provide(Layer.succeedContext(database)),
        Layer.provide(Logger.minimumLogLevel(LogLevel.None))
      )
      await Effect.runPromise(Effect.asVoid(Layer.buildWithScope(worker, scope)))
      // Nothing due: it sleeps until its fallback an hour away.
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      await sql(`INSERT INTO accounts (uuid, email, current_profile_uuid)
        SELECT md5('ta' || g)::uuid, 'time' || g || '@example.com', md5('tp' || g)::uuid FROM generate_series(1, 2) g`)
      await sql(`INSERT INTO profiles (uuid, id, account_uuid, name, type, is_public)
        SELECT md5('tp' || g)::uuid, 'time' || g, md5('ta' || g)::uuid, 'Сторона ' || g, 'Физлицо', true FROM generate_series(1, 2) g`)
      const due = Date.now() + 1_500
      await sql(`INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body, budget)
        VALUES (md5('to')::uuid, 'offer', 'accepted', md5('tp1')::uuid, md5('tp2')::uuid, 'customer', 'Предложение', '1000 ₽')`)
      await sql(`INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, origin_relation_uuid, body, budget,
          auto_complete_at) VALUES (md5('td')::uuid, 'deal', 'results_submitted', md5('tp1')::uuid, md5('tp2')::uuid, 'customer', md5('to')::uuid, 'Сделка',
          '1000 ₽', to_timestamp($1 / 1000.0))`, due)
      let completedAt: number | undefined
      while (completedAt === undefined && Date.now() <= due + bound) {
        const [row] = await sql<{ status: string }>("SELECT status FROM relations WHERE uuid = md5('td')::uuid")
        if (row!.status === "completed") completedAt = Date.now()
        else await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(completedAt, "the deal did not complete within a minute of its moment").toBeDefined()
      expect(completedAt!).toBeGreaterThanOrEqual(due)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      data.remove()
    }
  })
})
