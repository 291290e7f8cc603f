import { readSequencedEvents } from "@birzha/domain/internal"
import * as Store from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Exit, Fiber, Layer, Logger, LogLevel, ManagedRuntime, Ref, Scope } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmbeddedDataDir, embeddedDataDir } from "../../../../testing/pglite.js"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { makePgliteClient } from "@birzha/infrastructure"
import { WorkerJobs, WorkerLoop } from "../WorkerLoop.js"
import { makeSequencerJob, sequenceBatch, sequencerLockKey } from "./Sequencer.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

let database: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)

beforeAll(async () => {
  database = await createTestDatabase("sequencer", { migrated: true })
  runtime = ManagedRuntime.make(testPgLayer(database.url, 30))
  await run(Store.runMigrations)
})
afterAll(async () => {
  await runtime?.dispose()
  await database?.drop()
})

const connect = async () => {
  const client = new Pg.Client({ connectionString: database.url })
  await client.connect()
  return client
}

/** An outbox row written the way `appendEvent` writes it, on a raw connection the test steers. */
const insertRaw = async (client: Pg.Client, label: string) => {
  const { rows } = await client.query<{ uuid: string }>(
    `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data)
     VALUES ('profile.updated', 'profile', gen_random_uuid(), 1, jsonb_build_object('objectUuid', gen_random_uuid(), 'status', $1::text))
     RETURNING uuid`,
    [label]
  )
  return rows[0]!.uuid
}

const positionsOf = async (client: Pg.Client, uuids: ReadonlyArray<string>) => {
  const { rows } = await client.query<{ uuid: string; position: string | null }>(
    "SELECT uuid, position FROM outbox_events WHERE uuid = ANY($1::uuid[])",
    [uuids]
  )
  const byUuid = new Map(rows.map((row) => [row.uuid, row.position === null ? null : Number(row.position)]))
  return uuids.map((uuid) => byUuid.get(uuid))
}

/** Numbers everything committed so far, as the worker would over a few polls. */
const drain = () => run(Effect.gen(function*() {
  let total = 0
  for (;;) {
    const n = yield* sequenceBatch(1000)
    total += n
    if (n === 0) return total
  }
}))

describe("the sequencer", () => {
  it("never numbers past a lower transaction that is still open, and keeps append order inside a transaction", async () => {
    await drain()
    const slow = await connect()
    const fast = await connect()
    try {
      await slow.query("BEGIN")
      const first = await insertRaw(slow, "slow-1")
      await fast.query("BEGIN")
      const later = await insertRaw(fast, "fast")
      await fast.query("COMMIT")
      // The committed row belongs to a transaction above xmin: numbering it now could put it
      // before the slow transaction's rows, which a reader past it would never see.
      expect(await drain()).toBe(0)
      expect(await positionsOf(fast, [later])).toEqual([null])
      const second = await insertRaw(slow, "slow-2")
      await slow.query("COMMIT")
      expect(await drain()).toBe(3)
      const [a, b, c] = await positionsOf(fast, [first, second, later])
      expect([b! - a!, c! - b!]).toEqual([1, 1])
    } finally {
      await slow.end()
      await fast.end()
    }
  })

  it("is not held back by a long transaction that writes no events (here or in another database)", async () => {
    await drain()
    const elsewhere = await createTestDatabase("sequencer_elsewhere")
    const unrelated = await connect()
    const other = new Pg.Client({ connectionString: elsewhere.url })
    await other.connect()
    const writer = await connect()
    try {
      for (const client of [unrelated, other]) {
        await client.query("BEGIN")
        await client.query("SELECT pg_current_xact_id()") // now it has a transaction id, below the event's
      }
      const uuid = await insertRaw(writer, "not held back")
      expect(await drain()).toBe(1)
      expect((await positionsOf(writer, [uuid]))[0]).toBeGreaterThan(0)
    } finally {
      await unrelated.end()
      await other.end()
      await writer.end()
      await elsewhere.drop()
    }
  })

  it("numbers nothing while another sequencer holds the lock", async () => {
    await drain()
    const leader = await connect()
    const writer = await connect()
    try {
      await leader.query("BEGIN")
      await leader.query("SELECT pg_advisory_xact_lock($1)", [sequencerLockKey])
      const uuid = await insertRaw(writer, "waiting")
      expect(await drain()).toBe(0)
      await leader.query("COMMIT")
      expect(await drain()).toBe(1)
      expect((await positionsOf(writer, [uuid]))[0]).toBeGreaterThan(0)
    } finally {
      await leader.end()
      await writer.end()
    }
  })

  it("gives every event of 20 concurrent writers, some slow, exactly one position: a reader following the position sees each once, in order, without gaps, while two sequencers compete", async () => {
    await drain()
    const [start] = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ p: string }>`SELECT last_position::text AS p FROM event_sequence`))
    const writers = 20
    const transactionsPerWriter = 15
    // Each writer: transactions of 1 to 3 events; every third transaction sleeps inside, between
    // its events, so commits land out of transaction-id order all the time.
    const writer = (w: number) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const transactions: Array<ReadonlyArray<string>> = []
        for (let t = 0; t < transactionsPerWriter; t++) {
          const events = 1 + ((w + t) % 3)
          const uuids = yield* sql.withTransaction(Effect.gen(function*() {
            const out: Array<string> = []
            for (let e = 0; e < events; e++) {
              out.push(yield* Store.appendEvent({
                type: "profile.updated",
                aggregate: { kind: "profile", uuid: crypto.randomUUID(), revision: t + 1 },
                data: { objectUuid: crypto.randomUUID(), status: "updated" },
                context: { writer: w, transaction: t, event: e }
              }))
              if (t % 3 === 0 && e === 0) yield* sql`SELECT pg_sleep(${0.02 + ((w * 7 + t) % 10) / 100})`
            }
            return out
          }))
          transactions.push(uuids)
        }
        return transactions
      })

    // A second process: its own pool, competing for the same lock.
    const second = ManagedRuntime.make(testPgLayer(database.url, 3))
    const numberedBy = [0, 0]
    const failures: Array<unknown> = []
    const sequencer = (index: number) =>
      Effect.forever(Effect.gen(function*() {
        // A batch and its count as one step: a sequencer stopped below never leaves a committed
        // batch uncounted (the reader may see its events before the count is added).
        yield* Effect.uninterruptible(sequenceBatch(50).pipe(
          Effect.catchAllCause((cause) => Effect.sync(() => failures.push(cause)).pipe(Effect.as(0))),
          Effect.tap((numbered) => Effect.sync(() => numberedBy[index]! += numbered))
        ))
        yield* Effect.sleep(Duration.millis(3))
      }))
    const expected = writers * transactionsPerWriter * 2
    const seen: Array<{ position: number; uuid: string }> = []
    const reader = Effect.gen(function*() {
      let after = Number(start!.p)
      while (seen.length < expected) {
        const page = yield* readSequencedEvents({ after: String(after), limit: 37 })
        for (const item of page) {
          // A gap seen by a follower would be an event it skips for ever.
          if (Number(item.position) !== after + 1) return yield* Effect.die(new Error(`gap: ${after} then ${item.position}`))
          after = Number(item.position)
          seen.push({ position: after, uuid: item.event.uuid })
        }
        if (page.length === 0) yield* Effect.sleep(Duration.millis(5))
      }
    })

    const secondFiber = second.runFork(sequencer(1))
    try {
      const written = await run(Effect.gen(function*() {
        const first = yield* Effect.fork(sequencer(0))
        const following = yield* Effect.fork(reader)
        const all = yield* Effect.all(Array.from({ length: writers }, (_, w) => writer(w)), { concurrency: "unbounded" })
        yield* Fiber.join(following).pipe(Effect.timeoutFail({ duration: Duration.seconds(60), onTimeout: () => new Error("reader timed out") }))
        yield* Fiber.interrupt(first)
        return all.flat()
      }))
      // Both stopped, each after its last batch is counted.
      await Effect.runPromise(Fiber.interrupt(secondFiber))
      const uuids = written.flat()
      expect(uuids).toHaveLength(expected)
      expect(seen).toHaveLength(expected)
      expect(new Set(seen.map((s) => s.uuid))).toEqual(new Set(uuids))
      // Events of one transaction sit next to each other, in the order they were appended.
      const positionOf = new Map(seen.map((s) => [s.uuid, s.position]))
      for (const transaction of written) {
        const positions = transaction.map((uuid) => positionOf.get(uuid)!)
        expect(positions).toEqual(positions.map((_, i) => positions[0]! + i))
      }
      // Both took part, neither ever failed (a double numbering breaks the unique position).
      expect(failures).toEqual([])
      expect(numberedBy[0]! + numberedBy[1]!).toBe(expected)
      expect(Math.min(...numberedBy)).toBeGreaterThan(0)
      const [counter] = await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ last: string; unsequenced: number }>`SELECT (SELECT last_position::text FROM event_sequence) AS last,
          (SELECT count(*)::int FROM outbox_events WHERE position IS NULL) AS unsequenced`))
      expect(counter).toEqual({ last: String(Number(start!.p) + expected), unsequenced: 0 })
    } finally {
      await Effect.runPromise(Fiber.interrupt(secondFiber))
      await second.dispose()
    }
  })

  it("runs as a worker job that numbers a new event within a few polls", async () => {
    await drain()
    const job = await run(makeSequencerJob({ every: Duration.millis(20) }))
    const loop = WorkerLoop.pipe(Layer.provide(Layer.succeed(WorkerJobs, [job])), Layer.provide(Logger.minimumLogLevel(LogLevel.None)))
    const client = await connect()
    const stop = await Effect.runPromise(Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(loop, scope)
      return scope
    }))
    try {
      const uuid = await insertRaw(client, "job")
      const started = Date.now()
      let position: number | null | undefined = null
      while (position === null && Date.now() - started < 15_000) {
        await new Promise((resolve) => setTimeout(resolve, 5))
        position = (await positionsOf(client, [uuid]))[0]
      }
      expect(position).toBeGreaterThan(0)
      // Polled every 20 ms: numbered long before a stuck job would be noticed (a liveness bound, not a speed limit).
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      await Effect.runPromise(Scope.close(stop, Exit.void))
      await client.end()
    }
  })

  it("logs a database that is not migrated once, not on every poll, and recovers", async () => {
    const empty = await createTestDatabase("sequencer_empty")
    const rt = ManagedRuntime.make(testPgLayer(empty.url, 2))
    try {
      const warnings = await rt.runPromise(Effect.gen(function*() {
        const lines = yield* Ref.make<Array<string>>([])
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning" || logLevel._tag === "Info") Effect.runSync(Ref.update(lines, (all) => [...all, `${logLevel.label} ${String(message)}`]))
        })
        const job = yield* makeSequencerJob()
        const poll = (times: number) =>
          Effect.forEach(Array.from({ length: times }), () => Effect.zipRight(job.run, Effect.sleep(Duration.millis(20))), { discard: true })
        yield* poll(10).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        yield* Store.runMigrations
        yield* Effect.sleep(Duration.millis(450))
        yield* poll(2).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        return yield* Ref.get(lines)
      }))
      expect(warnings.filter((line) => line.includes("sequencer cannot number events"))).toHaveLength(1)
      expect(warnings.filter((line) => line.includes("sequencer recovered"))).toHaveLength(1)
    } finally {
      await rt.dispose()
      await empty.drop()
    }
  })
})

/** PGlite's initdb, run once per test run for the template data directory. */
const initialise = (dir: string) => Effect.runPromise(Effect.scoped(makePgliteClient(dir)))

describe("the sequencer on embedded PGlite", () => {
  let data: EmbeddedDataDir
  beforeAll(async () => {
    data = await embeddedDataDir("sequencer", initialise)
  })
  afterAll(() => data?.remove())

  it("numbers committed events in transaction and append order", async () => {
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* makePgliteClient(data.dir)
      return yield* Effect.gen(function*() {
        yield* Store.runMigrations
        const append = (label: string) =>
          Store.appendEvent({
            type: "profile.updated",
            aggregate: { kind: "profile", uuid: crypto.randomUUID(), revision: 1 },
            data: { objectUuid: crypto.randomUUID(), status: label }
          })
        const a = yield* sql.withTransaction(Effect.all([append("a1"), append("a2")]))
        const b = yield* append("b")
        const numbered = yield* sequenceBatch(1000)
        const again = yield* sequenceBatch(1000)
        const events = yield* readSequencedEvents({ after: "0", limit: 10 })
        return { numbered, again, order: events.map((e) => e.event.uuid), positions: events.map((e) => e.position), expected: [...a, b] }
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    })))
    expect(result.numbered).toBe(3)
    expect(result.again).toBe(0)
    expect(result.order).toEqual(result.expected)
    expect(result.positions).toEqual(["1", "2", "3"])
  })
})
