import * as Store from "@birzha/domain/store"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Schema } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makePgliteClient } from "./PgliteClient.js"

const dir = mkdtempSync(join(tmpdir(), "birzha-pglite-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Opens the embedded database in `dir`, runs `use`, and closes it again (as a host restart would). */
const withEmbedded = <A, E>(use: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makePgliteClient(dir), (sql) => Effect.provideService(use, SqlClient.SqlClient, sql))))

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
