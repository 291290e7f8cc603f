import { Mailer, WebhookSettings } from "@birzha/domain/internal"
import { newSigningSecret, OperationsLive, PublicOrigin, Readiness, sealSecret, ServerSecret, SignInConfig } from "@birzha/domain/internal"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { advanceRuns } from "../../domain/src/learning/courses/Runs.js"
import { ok } from "../../domain/test/learning.js"
import { type Marketplace, openMarketplace } from "../../domain/test/marketplace.js"
import { testPostgresUrl } from "../../../testing/postgres.js"
import { untilDone } from "../../../testing/progress.js"
import { startReceiver } from "../../../testing/webhookReceiver.js"
import { makeAutomationsJobs } from "./automations/AutomationsJob.js"
import { makeSequencerJob } from "./events/Sequencer.js"
import { makeLearningGradingJob } from "./learning/GradingJob.js"
import { makeWebhookJob } from "./webhooks/WebhookDispatcher.js"
import { WorkerJobs, WorkerLoop } from "./WorkerLoop.js"
import { sequencerWakes } from "./WorkerHost.js"
import { testPgLayer } from "../../domain/test/pgLayer.js"

/**
 * Scaled out (docs/decisions.md "Lock order"): three worker processes' loops — each its own
 * runtime and connection pool, the jobs of `WorkerJobsLive` that share rows (sequencer, webhook
 * delivery, automations, learning grading) — on one Postgres under a mixed load: several
 * endpoints sharing every event and a receiver that answers 500 or 200 at random (failing streaks
 * start and end over overlapping sets of endpoints), automation rules queueing deliveries to
 * those endpoints, and learners submitting to several auto-graded steps of their enrollment
 * while the workers grade them; one worker is stopped and replaced midway. Postgres must report
 * no deadlock for the database (`pg_stat_database.deadlocks`, read after every connection closed,
 * since a backend flushes its counters at exit at the latest).
 */

const origin = "http://localhost:8080"
const secret = "scaled-out-test-secret-of-32-characters"
let m: Marketplace
let disposed = false
beforeAll(async () => {
  m = await openMarketplace("scaled_out")
})
afterAll(async () => {
  if (!disposed) await m?.runtime.dispose()
  await m?.database.drop()
})

/** One worker process: its own pool, the jobs that share rows, run by the worker loop as `birzha worker` does. */
const startWorker = async (url: string) => {
  const services = Layer.mergeAll(
    testPgLayer(url, 6),
    Layer.succeed(ServerSecret, Redacted.make(secret)),
    Layer.succeed(Mailer, { send: () => Effect.void }),
    Layer.succeed(SignInConfig, { publicOrigin: origin }),
    Layer.succeed(PublicOrigin, origin),
    Layer.succeed(WebhookSettings, { publicOrigin: origin, allowHttpLoopback: true }),
    Layer.succeed(Readiness, { check: Effect.succeed({ database: true, migrations: true }) })
  )
  const jobs = Layer.scoped(WorkerJobs, Effect.gen(function*() {
    return [
      { ...(yield* makeSequencerJob({ every: "20 millis" })), wakes: sequencerWakes },
      yield* makeWebhookJob({ allowHttpLoopback: true, every: "10 millis" }),
      yield* makeLearningGradingJob({ allowHttpLoopback: true, every: "50 millis" }),
      ...(yield* makeAutomationsJobs({ every: "20 millis" }))
    ]
  }))
  const runtime = ManagedRuntime.make(WorkerLoop.pipe(Layer.provide(jobs), Layer.provide(Layer.provideMerge(OperationsLive, services))))
  await runtime.runPromise(Effect.void)
  return runtime
}

const deadlocksOf = async (name: string) => {
  const client = new Pg.Client({ connectionString: testPostgresUrl })
  await client.connect()
  try {
    await client.query("SELECT pg_stat_clear_snapshot()")
    const { rows } = await client.query<{ deadlocks: string }>("SELECT deadlocks::text FROM pg_stat_database WHERE datname = $1", [name])
    return Number(rows[0]?.deadlocks ?? 0)
  } finally {
    await client.end()
  }
}

const count = async (text: string, ...params: ReadonlyArray<unknown>) => (await m.sql<{ n: number }>(text, ...params))[0]!.n

describe("three workers on one database", () => {
  it("deliveries to a failing receiver, automations and auto-graded submissions: every guarantee, and no deadlock", async () => {
    const receiver = await startReceiver()
    receiver.answerWith((_request, response) => {
      response.statusCode = Math.random() < 0.6 ? 500 : 200
      response.end()
    })
    const workers: Array<Awaited<ReturnType<typeof startWorker>>> = []
    try {
      const before = await deadlocksOf(m.database.name)
      // Webhooks: six active endpoints of one profile, every one subscribed to its events.
      const owner = await m.profile()
      const endpoints: Array<string> = []
      for (let i = 0; i < 6; i++) {
        const uuid = randomUUID()
        await m.sql(`INSERT INTO webhook_endpoints (uuid, profile_uuid, url, event_types, payload_mode, secret_sealed, approved_at, verified_at, after_position)
          VALUES ($1, $2, $3, '["profile.*"]'::jsonb, 'reference', $4, now(), now(), (SELECT last_position FROM event_sequence))`,
          uuid, owner.profileUuid, receiver.url, sealSecret(Redacted.make(secret), uuid, newSigningSecret()))
        endpoints.push(uuid)
      }
      // Automations: each event also queues a delivery to two of the endpoints and a notification.
      for (const action of [
        { type: "webhook.deliver", endpointUuid: endpoints[0] },
        { type: "webhook.deliver", endpointUuid: endpoints[3] },
        { type: "notification.create" }
      ]) {
        await m.sql(`INSERT INTO automation_rules (uuid, profile_uuid, account_uuid, name, event_type, action, max_runs_per_day, created_via, start_position)
          VALUES (gen_random_uuid(), $1, $2, 'Правило', 'profile.updated', $3::jsonb, 1000, 'session', (SELECT last_position FROM event_sequence))`,
          owner.profileUuid, owner.accountUuid, JSON.stringify(action))
      }
      // Learning: a course of four steps graded by a declarative checker (evaluated by the workers), four learners.
      const author = await m.profile()
      const course = ok<{ uuid: string; revision: number }>(await m.invoke("learning.courses.create", author, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } }))
      const checker = randomUUID()
      await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, rules, status, concurrency)
        VALUES ($1, $2, $1, 'declarative', '{"kind":"exact","answers":["42"]}'::jsonb, 'ready', 64)`, checker, course.uuid)
      const steps = ["q1", "q2", "q3", "q4"]
      const nodes = [
        { nodeKey: "m1", kind: "module", title: "Модуль" },
        ...steps.map((nodeKey) => ({ nodeKey, parentKey: "m1", kind: "step", stepType: "code", title: nodeKey, body: "Ответ?", grading: { maxPoints: 10, checkerUuid: checker, attempts: 100 } }))
      ]
      const edited = ok<{ revision: number }>(await m.invoke("learning.courses.update", author, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: course.revision, nodes } }))
      ok(await m.invoke("learning.courses.publish", author, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } }))
      const run = ok<{ uuid: string; revision: number }>(await m.invoke("learning.runs.create", author, {
        path: { course: course.uuid },
        payload: {
          requestUuid: randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 60_000).toISOString(),
          admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
        }
      }))
      ok(await m.invoke("learning.runs.update", author, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, publish: true } }))
      await m.runtime.runPromise(advanceRuns(new Date()))
      const learners = await Promise.all([0, 1, 2, 3].map(async () => {
        const learner = await m.profile()
        const enrolled = ok<{ uuid: string; revision: number }>(await m.invoke("learning.enrollments.enroll", learner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID() } }))
        ok(await m.invoke("learning.enrollments.start", learner, { path: { enrollment: enrolled.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: enrolled.revision } }))
        return { learner, enrollment: enrolled.uuid }
      }))

      for (let i = 0; i < 3; i++) workers.push(await startWorker(m.database.url))
      const end = Date.now() + 20_000
      let stopped = false
      // Events for the endpoints and rules, in bursts, until the end.
      const events = (async () => {
        while (Date.now() < end) {
          await m.sql(`INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
            SELECT 'profile.updated', 'profile', $1::uuid, g, jsonb_build_object('objectUuid', $1::text, 'status', 'updated'),
              jsonb_build_object('profileUuid', $1::text)
            FROM generate_series(1, 20) g`, owner.profileUuid)
          if (!stopped && Date.now() > end - 10_000) {
            // One worker stops midway (its leases come back to the others) and another takes its place.
            stopped = true
            await workers[0]!.dispose()
            workers[0] = await startWorker(m.database.url)
          }
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      })()
      // Each learner submits to every step at once, wrong answers for most of the time, then the right one (which
      // completes the steps, the module and the course while the other learners still submit).
      let submitted = 0
      const submitting = Promise.all(learners.map(async ({ enrollment, learner }) => {
        for (let round = 0;; round++) {
          const last = Date.now() > end - 8_000
          const reply = last ? "42" : `неверно ${round}`
          const answers = await Promise.all(steps.map((node) =>
            m.invoke("learning.submissions.create", learner, { path: { enrollment, node }, payload: { requestUuid: randomUUID(), reply } })))
          for (const answer of answers) expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200)
          submitted += answers.length
          if (last) return
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }))
      await Promise.all([events, submitting])
      // Everything queued is graded once the load stops (a grade rolled back by a deadlock would wait for its lease instead):
      // the wait fails only if grading stands still (testing/progress.ts), however slow the machine.
      await untilDone(
        () => count("SELECT count(*)::int AS n FROM learning_grading_jobs WHERE status IN ('queued', 'running')"),
        (left) => left === 0,
        (left) => left,
        (left) => `${left} grading jobs left`,
        { everyMs: 200 }
      )
      for (const worker of workers.splice(0)) await worker.dispose()
      disposed = true
      await m.runtime.dispose()
      expect(await deadlocksOf(m.database.name) - before, "deadlocks Postgres detected in the test database").toBe(0)

      // The load happened: attempts to every endpoint, streaks started and ended, rules ran, every submission graded, courses completed.
      const probe = new Pg.Client({ connectionString: m.database.url })
      await probe.connect()
      try {
        const one = async (text: string) => Number((await probe.query<{ n: string }>(text)).rows[0]!.n)
        // (No volume is asserted: how much a machine gets through in 20 s is not this test's business.)
        expect(await one("SELECT count(DISTINCT endpoint_uuid) AS n FROM webhook_attempts")).toBe(6)
        expect(await one("SELECT count(*) AS n FROM webhook_attempts WHERE NOT succeeded")).toBeGreaterThan(0)
        expect(await one("SELECT count(*) AS n FROM webhook_attempts WHERE succeeded")).toBeGreaterThan(0)
        expect(await one("SELECT count(*) AS n FROM automation_executions WHERE status = 'succeeded'")).toBeGreaterThan(0)
        expect(await one("SELECT count(*) AS n FROM webhook_deliveries d JOIN automation_executions x ON x.event_uuid = d.event_uuid")).toBeGreaterThan(0)
        expect(await one("SELECT count(*) AS n FROM learning_submissions WHERE status IN ('submitted', 'checking')")).toBe(0)
        expect(await one("SELECT count(*) AS n FROM learning_submissions")).toBe(submitted)
        expect(await one("SELECT count(*) AS n FROM learning_submissions WHERE status = 'accepted'")).toBeGreaterThan(0)
        // Each learner's course completed exactly once.
        expect(await one("SELECT count(*) AS n FROM outbox_events WHERE type = 'learning.course.completed'")).toBe(learners.length)
        expect(await one("SELECT count(*) AS n FROM outbox_events WHERE type = 'learning.module.completed'")).toBe(learners.length)
      } finally {
        await probe.end()
      }
    } finally {
      for (const worker of workers) await worker.dispose()
      await receiver.stop()
    }
  })
})
