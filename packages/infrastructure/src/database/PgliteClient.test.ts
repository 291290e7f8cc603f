import * as Store from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Metric, Schema } from "effect"
import { spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmbeddedDataDir, embeddedDataDir } from "../../../../testing/pglite.js"
import { makePgliteClient } from "./PgliteClient.js"
import { statementDuration } from "./StatementMetrics.js"

/** PGlite's initdb, run once per test run for the template data directory. */
const initialise = (dir: string) => Effect.runPromise(Effect.scoped(makePgliteClient(dir)))
let data: EmbeddedDataDir
beforeAll(async () => {
  data = await embeddedDataDir("pglite", initialise)
})
afterAll(() => data?.remove())

/** Opens the embedded database in `dir`, runs `use`, and closes it again (as a host restart would). */
const withEmbedded = <A, E>(use: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makePgliteClient(data.dir), (sql) => Effect.provideService(use, SqlClient.SqlClient, sql))))

const sql = SqlClient.SqlClient

describe("embedded PGlite database", () => {
  it("applies the same migrations, with pg_trgm, as a Postgres server", async () => {
    const applied = await withEmbedded(Store.runMigrations)
    expect(applied.map(([id]) => id)).toEqual(Store.migrations.map(([id]) => id))
    const [row] = await withEmbedded(Effect.flatMap(sql, (q) => q<{ s: number }>`SELECT similarity('ёжик', 'ёжики') AS s`))
    expect(row!.s).toBeGreaterThan(0.5)
  })

  it("keeps committed data across a close and reopen", async () => {
    await withEmbedded(Effect.flatMap(sql, (q) =>
      Effect.zipRight(q`CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)`, q`INSERT INTO notes (body) VALUES ('persisted')`)))
    const rows = await withEmbedded(Effect.flatMap(sql, (q) => q<{ body: string }>`SELECT body FROM notes`))
    expect(rows).toEqual([{ body: "persisted" }])
    const again = await withEmbedded(Store.runMigrations)
    expect(again).toEqual([])
  })

  it("opens with 16 MB of shared buffers, not Postgres's 128 MB", async () => {
    const rows = await withEmbedded(Effect.flatMap(sql, (q) => q`SHOW shared_buffers`))
    expect(rows).toEqual([{ shared_buffers: "16MB" }])
  })

  it("times each statement it runs, as a server's client does (birzha_db_statement_duration_seconds)", async () => {
    // Statements over 25 ms so far, and all of them.
    const read = () => {
      const state = Effect.runSync(Metric.value(statementDuration))
      return { all: state.count, slow: state.count - state.buckets.find(([bound]) => bound === 0.025)![1] }
    }
    const before = read()
    const slept = await withEmbedded(Effect.flatMap(sql, (q) => Effect.zipRight(q`SELECT 1`, q<{ ok: number }>`SELECT 1 AS ok FROM pg_sleep(0.05)`)))
    expect(slept).toEqual([{ ok: 1 }])
    const after = read()
    expect(after.all).toBeGreaterThanOrEqual(before.all + 2)
    // The sleeping statement's 50 ms fell in a bucket above 25 ms.
    expect(after.slow).toBeGreaterThanOrEqual(before.slow + 1)
  })

  it("rolls a failed transaction back", async () => {
    const result = await withEmbedded(Effect.flatMap(sql, (q) =>
      Effect.exit(q.withTransaction(Effect.zipRight(q`INSERT INTO notes (body) VALUES ('rolled back')`, Effect.fail("abort"))))))
    expect(Exit.isFailure(result)).toBe(true)
    const rows = await withEmbedded(Effect.flatMap(sql, (q) => q<{ body: string }>`SELECT body FROM notes ORDER BY id`))
    expect(rows).toEqual([{ body: "persisted" }])
  })

  it("serialises concurrent transactions on its one session", async () => {
    // Read-modify-write with a pause inside: interleaved on one session, both would read 0.
    const increment = Effect.flatMap(sql, (q) =>
      q.withTransaction(Effect.gen(function*() {
        const [row] = yield* q<{ n: number }>`SELECT n FROM counter`
        yield* Effect.sleep("20 millis")
        yield* q`UPDATE counter SET n = ${row!.n + 1}`
      })))
    const total = await withEmbedded(Effect.gen(function*() {
      const q = yield* sql
      yield* q`CREATE TABLE counter (n integer NOT NULL)`
      yield* q`INSERT INTO counter VALUES (0)`
      yield* Effect.all(Array.from({ length: 5 }, () => increment), { concurrency: "unbounded" })
      const [row] = yield* q<{ n: number }>`SELECT n FROM counter`
      return row!.n
    }))
    expect(total).toBe(5)
  })

  it("runs idempotent commands and the outbox like the server does", async () => {
    const key = crypto.randomUUID()
    const Result = Schema.Struct({ uuid: Schema.String })
    const save = Store.idempotent(
      { scope: "p", operationId: "x.save", requestUuid: key, request: { a: 1 }, result: Result },
      Effect.map(
        Store.appendEvent({ type: "publication.draft_saved", aggregate: { kind: "publication", uuid: key, revision: 1 }, data: { objectUuid: key, status: "draft" } }),
        (uuid) => ({ uuid })
      )
    )
    const [first, second] = await withEmbedded(Effect.all([save, save], { concurrency: "unbounded" }))
    expect(second).toEqual(first)
    const [count] = await withEmbedded(Effect.flatMap(sql, (q) => q<{ n: string }>`SELECT count(*) AS n FROM outbox_events WHERE aggregate_uuid = ${key}`))
    expect(count!.n).toBe("1")
  })
})

describe("one process at a time on an embedded database", () => {
  it("refuses to open a data directory another live process holds, and takes over the lock of a dead one", async () => {
    const locked = await embeddedDataDir("pglite-lock", initialise)
    const data = locked.dir
    // Another process, alive: its pid in the lock, as `birzha serve` leaves it while running.
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" })
    try {
      writeFileSync(`${data}.lock`, String(other.pid))
      const refused = await Effect.runPromiseExit(Effect.scoped(makePgliteClient(data)))
      expect(Exit.isFailure(refused)).toBe(true)
      expect(JSON.stringify(refused)).toContain(`in use by process ${other.pid}`)
      expect(readFileSync(`${data}.lock`, "utf8")).toBe(String(other.pid))
    } finally {
      other.kill("SIGKILL")
      await new Promise((resolve) => other.once("exit", resolve))
    }
    // The holder died without cleaning up (kill -9): the lock is stale and this process takes it.
    const rows = await Effect.runPromise(Effect.scoped(Effect.flatMap(makePgliteClient(data), (q) => q<{ one: number }>`SELECT 1 AS one`)))
    expect(rows).toEqual([{ one: 1 }])
    // Closed: the lock is released.
    expect(existsSync(`${data}.lock`)).toBe(false)
    locked.remove()
  })
})
