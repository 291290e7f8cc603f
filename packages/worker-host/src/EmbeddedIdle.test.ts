import {
  accountForVerifiedEmail,
  appendEvent,
  approveWebhookEndpoint,
  createWebhookEndpoint,
  Mailer,
  runMigrations,
  sendTestDelivery,
  ServerSecret,
  WebhookSettings
} from "@birzha/domain/internal"
import { Database, DatabaseLive, makePgliteClient, MigrationsAtStart } from "@birzha/infrastructure"
import { SqlClient, Statement } from "@effect/sql"
import { ConfigProvider, Duration, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import Pg from "pg"
import { afterEach, describe, expect, it } from "vitest"
import { sessionActor } from "../../../testing/actors.js"
import { type EmbeddedDataDir, embeddedDataDir } from "../../../testing/pglite.js"
import { createTestDatabase } from "../../../testing/postgres.js"
import { startReceiver } from "../../../testing/webhookReceiver.js"
import { makeSequencerJob } from "./events/Sequencer.js"
import { makeWebhookJob } from "./webhooks/WebhookDispatcher.js"
import { DueSignalsLive, sequencerWakes, WorkerHostLive } from "./WorkerHost.js"
import { WorkerJobs, WorkerLoop } from "./WorkerLoop.js"

// The real loop on the real embedded database (PGlite through `DatabaseLive`, as `birzha serve`
// opens it). Counted are the SQL statements the worker runs (a statement transformer inherited by
// its fibers), not time; the bounds below are liveness bounds of a minute, far below the hour's
// fallback the latency test gives its jobs.

const initialise = (dir: string) => Effect.runPromise(Effect.scoped(makePgliteClient(dir)))
const bound = 60_000
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let data: EmbeddedDataDir | undefined
let scope: Scope.CloseableScope | undefined
afterEach(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  scope = undefined
  data?.remove()
  data = undefined
})

/** A migrated embedded database of the test's own, opened as `birzha serve` opens it. */
const openEmbedded = async (label: string) => {
  data = await embeddedDataDir(label, initialise)
  scope = await Effect.runPromise(Scope.make())
  const settings = Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["BIRZHA_DATA_DIR", data.home]])))
  const quiet = Logger.minimumLogLevel(LogLevel.None)
  const database = await Effect.runPromise(Layer.buildWithScope(DatabaseLive.pipe(Layer.provide(settings)), scope))
  // Migrated (and marked started, as at a host's start) before any worker runs.
  await Effect.runPromise(Layer.buildWithScope(MigrationsAtStart.pipe(Layer.provide(Layer.succeedContext(database)), Layer.provide(settings), Layer.provide(quiet)), scope))
  const ready = Effect.map(Effect.flatMap(Database, (db) => db.readiness), (report) => report.migrations).pipe(Effect.provide(database))
  for (let i = 0; !(await Effect.runPromise(ready)); i++) {
    if (i > 600) throw new Error("the embedded database was not migrated within a minute")
    await pause(100)
  }
  const sql = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
    Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text, params as Array<unknown>)).pipe(Effect.provide(database)))
  return { database, settings, quiet, sql, scope }
}

describe("the worker on the embedded database", () => {
  it("an idle worker sleeps: no poll query for 5 seconds once its jobs looked once", async () => {
    const { database, quiet, scope, settings } = await openEmbedded("idle")
    let statements = 0
    const counting = Statement.setTransformer((statement) =>
      Effect.sync(() => {
        statements++
        return statement
      })
    )
    // The host's own worker wiring: every job `birzha serve` runs, with its embedded sleeps.
    await Effect.runPromise(Layer.buildWithScope(
      WorkerHostLive.pipe(Layer.provide(Layer.succeedContext(database)), Layer.provide(settings), Layer.provide(counting), Layer.provide(quiet)),
      scope
    ))
    // Every job runs once at start (the counter sees them), then nothing is left to do.
    for (let i = 0; statements === 0; i++) {
      if (i > 600) throw new Error("the worker ran no statement within a minute")
      await pause(100)
    }
    await pause(1_000)
    const settled = statements
    await pause(5_000)
    expect(statements - settled).toBe(0)
  })

  it("an event written while the worker sleeps is sequenced and delivered without waiting for the long sleep", async () => {
    const { database, quiet, scope, sql } = await openEmbedded("wakeup")
    const receiver = await startReceiver()
    try {
      const services = Layer.mergeAll(
        Layer.succeedContext(database),
        Layer.succeed(ServerSecret, Redacted.make("e".repeat(32))),
        Layer.succeed(WebhookSettings, { publicOrigin: "http://localhost:8080", allowHttpLoopback: true }),
        Layer.succeed(Mailer, { send: () => Effect.void })
      )
      const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ServerSecret | WebhookSettings | Mailer>) =>
        Effect.runPromise(Effect.provide(effect, services))
      // The sequencer and webhook delivery with an hour's fallback: only a wake-up gets them going in time.
      const hour = Duration.hours(1)
      const jobs = Layer.scoped(
        WorkerJobs,
        Effect.all([
          Effect.map(makeSequencerJob({ every: hour }), (job) => ({ ...job, wakes: sequencerWakes })),
          makeWebhookJob({ allowHttpLoopback: true, every: hour })
        ])
      )
      await Effect.runPromise(Layer.buildWithScope(
        WorkerLoop.pipe(Layer.provide(Layer.merge(jobs, DueSignalsLive)), Layer.provide(services), Layer.provide(quiet)),
        scope
      ))
      await pause(1_000)
      const signedIn = await run(accountForVerifiedEmail("embedded.idle@example.com"))
      const actor = sessionActor(signedIn, "embedded")
      const created = await run(createWebhookEndpoint(actor, { requestUuid: crypto.randomUUID(), url: receiver.url, eventTypes: ["profile.*"] }))
      const uuid = created.endpoint.uuid
      await run(approveWebhookEndpoint(actor, uuid, { url: created.endpoint.url, expectedRevision: 1 }))
      // The test delivery is a new pending row: its notification wakes the sleeping delivery job.
      await run(sendTestDelivery(actor, uuid, { requestUuid: crypto.randomUUID() }))
      const until = async (done: () => Promise<boolean>, what: string) => {
        const end = Date.now() + bound
        while (!(await done())) {
          if (Date.now() > end) throw new Error(`${what} within a minute (the jobs' fallback is an hour)`)
          await pause(50)
        }
      }
      await until(async () => (await sql<{ state: string }>("SELECT state FROM webhook_endpoints WHERE uuid = $1", uuid))[0]?.state === "active",
        "the test delivery was not made")
      // Both jobs asleep again; an event written now wakes the sequencer, whose numbering wakes delivery.
      await pause(1_000)
      const event = await run(Effect.flatMap(SqlClient.SqlClient, (client) =>
        client.withTransaction(appendEvent({
          type: "profile.updated",
          aggregate: { kind: "profile", uuid: actor.profileUuid, revision: 2 },
          data: { objectUuid: actor.profileUuid, status: "updated" },
          context: { profileUuid: actor.profileUuid }
        }))
      ))
      await until(async () => (await sql<{ position: string | null }>("SELECT position FROM outbox_events WHERE uuid = $1", event))[0]?.position != null,
        "the event was not sequenced")
      await until(async () => receiver.ids().includes(event), "the event was not delivered")
    } finally {
      await receiver.stop()
    }
  })
})

describe("the worker started on the embedded database before its migrations", () => {
  it("looks at once when they are applied: events a previous start left are sequenced without waiting for the minute's fallback", async () => {
    data = await embeddedDataDir("restart", initialise)
    scope = await Effect.runPromise(Scope.make())
    const settings = Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["BIRZHA_DATA_DIR", data.home]])))
    const quiet = Logger.minimumLogLevel(LogLevel.None)
    const database = await Effect.runPromise(Layer.buildWithScope(DatabaseLive.pipe(Layer.provide(settings)), scope))
    const sql = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
      Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text, params as Array<unknown>)).pipe(Effect.provide(database)))
    // Migrated by a previous start, which left events unnumbered; this start has not re-applied its settings yet (not ready).
    await Effect.runPromise(Effect.provide(runMigrations, database))
    const signedIn = await Effect.runPromise(Effect.provide(accountForVerifiedEmail("embedded.restart@example.com"), database))
    await Effect.runPromise(Effect.provide(
      Effect.flatMap(SqlClient.SqlClient, (client) =>
        client.withTransaction(appendEvent({
          type: "profile.updated",
          aggregate: { kind: "profile", uuid: signedIn.profileUuid, revision: 2 },
          data: { objectUuid: signedIn.profileUuid, status: "updated" },
          context: { profileUuid: signedIn.profileUuid }
        }))),
      database
    ))
    const pending = async () => Number((await sql<{ n: string }>("SELECT count(*)::text AS n FROM outbox_events WHERE position IS NULL"))[0]!.n)
    expect(await pending()).toBeGreaterThan(0)
    await Effect.runPromise(Layer.buildWithScope(
      WorkerHostLive.pipe(Layer.provide(Layer.succeedContext(database)), Layer.provide(settings), Layer.provide(quiet)),
      scope
    ))
    // Its jobs looked once, found the database not ready, and sleep their minute.
    await pause(1_000)
    expect(await pending()).toBeGreaterThan(0)
    await Effect.runPromise(Layer.buildWithScope(MigrationsAtStart.pipe(Layer.provide(Layer.succeedContext(database)), Layer.provide(settings), Layer.provide(quiet)), scope))
    // A liveness bound well below the minute's fallback.
    const end = Date.now() + 40_000
    while ((await pending()) > 0) {
      if (Date.now() > end) throw new Error("the events were not sequenced within 40 s of the migrations (the fallback is a minute)")
      await pause(50)
    }
  })
})

describe("the worker on a Postgres server", () => {
  it("keeps polling: the queue tables send no notification on a server (migration 0035 creates nothing there)", async () => {
    const database = await createTestDatabase("embedded_work_signals", { migrated: true })
    const client = new Pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const applied = await client.query("SELECT 1 FROM birzha_migrations WHERE migration_id = 35")
      expect(applied.rowCount).toBe(1)
      const triggers = await client.query("SELECT tgname FROM pg_trigger WHERE tgname LIKE '%\\_work\\_%' OR tgname LIKE '%\\_work'")
      expect(triggers.rows).toEqual([])
      const functions = await client.query("SELECT proname FROM pg_proc WHERE proname = 'birzha_notify_work'")
      expect(functions.rows).toEqual([])
    } finally {
      await client.end()
      await database.drop()
    }
  })
})
