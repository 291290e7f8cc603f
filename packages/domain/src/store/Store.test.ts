import { randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, FiberRef, HashMap, ManagedRuntime, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { NotFound, RequestConflict, RevisionConflict } from "../kernel/ApiError.js"
import { groupCommit } from "./GroupCommit.js"
import { idempotent, idempotentBatch, requestHash } from "./Idempotency.js"
import { latestMigrationId, migrations, migrationsTable, runMigrations } from "./Migrations.js"
import { appendEvent } from "./Outbox.js"
import { updateAtRevision } from "./Revision.js"
import { testPgLayer } from "../../test/pgLayer.js"

let database: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)
const exit = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromiseExit(effect)
const failure = <A, E>(result: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(result) && result.cause._tag === "Fail" ? result.cause.error : undefined

beforeAll(async () => {
  database = await createTestDatabase("store", { migrated: true })
  runtime = ManagedRuntime.make(testPgLayer(database.url, 30))
  await run(runMigrations)
  await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE widgets (
      uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(), name text NOT NULL,
      revision integer NOT NULL DEFAULT 1, updated_at timestamptz NOT NULL DEFAULT now())`
    yield* sql`CREATE TABLE writes (n serial PRIMARY KEY, label text NOT NULL)`
  }))
})

afterAll(async () => {
  await runtime?.dispose()
  await database?.drop()
})

const newWidget = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ uuid: string }>`INSERT INTO widgets (name) VALUES (${name}) RETURNING uuid`).pipe(
    Effect.map((rows) => rows[0]!.uuid)
  )
const widget = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ name: string; revision: number }>`SELECT name, revision FROM widgets WHERE uuid = ${uuid}`).pipe(
    Effect.map((rows) => rows[0])
  )

describe("migrations", () => {
  it("apply once even when several hosts start at the same time", async () => {
    const fresh = await createTestDatabase("migrate")
    const rt = ManagedRuntime.make(testPgLayer(fresh.url, 5))
    try {
      const results = await rt.runPromise(Effect.all([runMigrations, runMigrations, runMigrations], { concurrency: "unbounded" }))
      const all = migrations.map(([id]) => id)
      expect(results.flat().map(([id]) => id).sort((a, b) => a - b)).toEqual(all)
      const rows = await rt.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ migration_id: number }>`SELECT migration_id FROM ${sql(migrationsTable)}`)
      )
      expect(rows.map((r) => r.migration_id).sort((a, b) => a - b)).toEqual(all)
      expect(Math.max(...all)).toBe(latestMigrationId)
    } finally {
      await rt.dispose()
      await fresh.drop()
    }
  })
})

describe("revision check", () => {
  it("applies a change at the expected revision and bumps it by one", async () => {
    const uuid = await run(newWidget("first"))
    const revision = await run(updateAtRevision({ table: "widgets", kind: "widget", uuid, expectedRevision: 1, values: { name: "second" } }))
    expect(revision).toBe(2)
    expect(await run(widget(uuid))).toEqual({ name: "second", revision: 2 })
  })

  it("answers a stale expectedRevision with a 409 conflict and changes nothing", async () => {
    const uuid = await run(newWidget("kept"))
    await run(updateAtRevision({ table: "widgets", kind: "widget", uuid, expectedRevision: 1, values: { name: "kept too" } }))
    const stale = await exit(updateAtRevision({ table: "widgets", kind: "widget", uuid, expectedRevision: 1, values: { name: "lost" } }))
    const error = failure(stale)
    expect(error).toBeInstanceOf(RevisionConflict)
    expect(RevisionConflict.status).toBe(409)
    expect((error as RevisionConflict).message).toContain("revision 2")
    expect(await run(widget(uuid))).toEqual({ name: "kept too", revision: 2 })
  })

  it("answers a missing record with not found", async () => {
    const missing = await exit(
      updateAtRevision({ table: "widgets", kind: "widget", uuid: "00000000-0000-4000-8000-000000000000", expectedRevision: 1, values: { name: "x" } })
    )
    expect(failure(missing)).toBeInstanceOf(NotFound)
  })

  it("lets exactly one of two concurrent writers at the same revision win", async () => {
    const uuid = await run(newWidget("race"))
    const results = await Promise.all(
      ["a", "b"].map((name) => exit(updateAtRevision({ table: "widgets", kind: "widget", uuid, expectedRevision: 1, values: { name } })))
    )
    expect(results.filter(Exit.isSuccess)).toHaveLength(1)
    expect(results.map(failure).filter((e) => e instanceof RevisionConflict)).toHaveLength(1)
    expect((await run(widget(uuid)))?.revision).toBe(2)
  })
})

describe("idempotent commands", () => {
  const Result = Schema.Struct({ writeNumber: Schema.Number, label: Schema.String })
  const write = (label: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`INSERT INTO writes (label) VALUES (${label}) RETURNING n`).pipe(
      Effect.map((rows) => ({ writeNumber: rows[0]!.n, label }))
    )
  const writesOf = (label: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ count: string }>`SELECT count(*) AS count FROM writes WHERE label = ${label}`).pipe(
      Effect.map((rows) => Number(rows[0]!.count))
    )
  const command = (requestUuid: string, request: unknown, label: string) =>
    idempotent({ scope: "profile-1", operationId: "widgets.save", requestUuid, request, result: Result }, write(label))

  it("returns the stored first result to a retry with the same body", async () => {
    const key = crypto.randomUUID()
    const first = await run(command(key, { title: "a", tags: [1, 2] }, "retry"))
    const second = await run(command(key, { tags: [1, 2], title: "a" }, "retry"))
    expect(second).toEqual(first)
    expect(await run(writesOf("retry"))).toBe(1)
  })

  it("answers the same requestUuid with a different body with a 409 and writes nothing", async () => {
    const key = crypto.randomUUID()
    await run(command(key, { title: "a" }, "different"))
    const result = await exit(command(key, { title: "b" }, "different"))
    expect(failure(result)).toBeInstanceOf(RequestConflict)
    expect(RequestConflict.status).toBe(409)
    expect(await run(writesOf("different"))).toBe(1)
  })

  it("makes exactly one write for 20 concurrent identical requests", async () => {
    const key = crypto.randomUUID()
    const results = await Promise.all(Array.from({ length: 20 }, () => run(command(key, { title: "same" }, "concurrent"))))
    expect(new Set(results.map((r) => r.writeNumber)).size).toBe(1)
    expect(await run(writesOf("concurrent"))).toBe(1)
  })

  it("stores nothing for a failed command, so its retry runs again", async () => {
    const key = crypto.randomUUID()
    const failing = idempotent(
      { scope: "profile-1", operationId: "widgets.save", requestUuid: key, request: { title: "x" }, result: Result },
      Effect.zipRight(write("failed"), Effect.fail("invalid" as const))
    )
    expect(failure(await exit(failing))).toBe("invalid")
    expect(await run(writesOf("failed"))).toBe(0)
    await run(command(key, { title: "x" }, "failed"))
    expect(await run(writesOf("failed"))).toBe(1)
  })

  it("keeps requestUuids of different scopes apart", async () => {
    const key = crypto.randomUUID()
    await run(idempotent({ scope: "profile-a", operationId: "widgets.save", requestUuid: key, request: { t: 1 }, result: Result }, write("scoped")))
    await run(idempotent({ scope: "profile-b", operationId: "widgets.save", requestUuid: key, request: { t: 2 }, result: Result }, write("scoped")))
    expect(await run(writesOf("scoped"))).toBe(2)
  })

  it("hashes requests independently of key order but not of values or operation", () => {
    expect(requestHash("op", { a: 1, b: { c: 2, d: 3 } })).toBe(requestHash("op", { b: { d: 3, c: 2 }, a: 1 }))
    expect(requestHash("op", { a: 1 })).not.toBe(requestHash("op", { a: 2 }))
    expect(requestHash("op", { a: 1 })).not.toBe(requestHash("other", { a: 1 }))
  })
})

describe("outbox", () => {
  const events = (aggregateUuid: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ type: string; position: string | null; data: unknown; same_transaction: boolean }>`
        SELECT type, position, data, transaction_id = pg_current_xact_id_if_assigned() AS same_transaction
        FROM outbox_events WHERE aggregate_uuid = ${aggregateUuid}`)

  it("writes the event in the caller's transaction, unsequenced", async () => {
    const aggregate = crypto.randomUUID()
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* appendEvent({ type: "publication.draft_saved", aggregate: { kind: "publication", uuid: aggregate, revision: 1 }, data: { objectUuid: aggregate, status: "draft" } })
        const inside = yield* events(aggregate)
        expect(inside).toHaveLength(1)
        expect(inside[0]!.same_transaction).toBe(true)
      }))))
    const rows = await run(events(aggregate))
    expect(rows).toEqual([{ type: "publication.draft_saved", position: null, data: { objectUuid: aggregate, status: "draft" }, same_transaction: null }])
  })

  it("loses the event when the business change rolls back", async () => {
    const aggregate = crypto.randomUUID()
    const result = await exit(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* appendEvent({ type: "publication.submitted", aggregate: { kind: "publication", uuid: aggregate, revision: 2 }, data: { objectUuid: aggregate, status: "pending" } })
        return yield* Effect.fail("business rule" as const)
      }))))
    expect(failure(result)).toBe("business rule")
    expect(await run(events(aggregate))).toEqual([])
  })
})

class RequestProbe extends Context.Tag("test/RequestProbe")<RequestProbe, string>() {}

describe("group commit", () => {
  // A command that writes its label once per requestUuid; labels starting with "refused" fail
  // after their write (which must then not stay), "explode" makes its whole batch fail in SQL.
  interface Write { readonly requestUuid: string; readonly label: string; readonly hash: string }
  const commandOf = (write: Write) => ({ scope: "group", operationId: "writes.add", requestUuid: write.requestUuid, hash: write.hash })
  const insert = (label: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`INSERT INTO writes (label) VALUES (${label}) RETURNING n`).pipe(
      Effect.map((rows) => rows[0]!.n)
    )
  // "locked:<widget>" waits for that widget's row lock first, as a send waits for its thread.
  const lockWidgets = (labels: ReadonlyArray<string>) => {
    const widgets = labels.filter((label) => label.startsWith("locked:")).map((label) => label.slice("locked:".length))
    return widgets.length === 0
      ? Effect.void
      : Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 FROM widgets WHERE ${sql.in("uuid", widgets)} ORDER BY uuid FOR UPDATE`)
  }
  const alone = (write: Write) =>
    idempotent({ ...commandOf(write), request: { label: write.label }, result: Schema.Number }, Effect.gen(function*() {
      yield* lockWidgets([write.label])
      const n = yield* insert(write.label)
      if (write.label.startsWith("refused")) return yield* new NotFound({ message: `refused ${n}` })
      return n
    }))
  const batches: Array<number> = []
  /** What the batch bodies saw of the requests' own services and log annotations. */
  const seenInBatches: Array<string> = []
  const add = groupCommit<Write, number, NotFound | RequestConflict>({
    maxBatch: 8,
    maxConcurrent: 2,
    alone,
    batch: (writes) =>
      idempotentBatch(writes, commandOf, Schema.Number, (claimed) =>
        Effect.gen(function*() {
          batches.push(claimed.length)
          const probe = yield* Effect.serviceOption(RequestProbe)
          const annotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
          seenInBatches.push(`${probe._tag}:${HashMap.size(annotations)}`)
          const sql = yield* SqlClient.SqlClient
          if (claimed.some((write) => write.label === "explode")) yield* sql`SELECT 1 / 0`
          yield* lockWidgets(claimed.map((write) => write.label))
          const rows = yield* sql<{ n: number; label: string }>`INSERT INTO writes (label)
            SELECT label FROM jsonb_array_elements_text(${JSON.stringify(claimed.map((write) => write.label))}::jsonb) AS label
            RETURNING n, label`
          const byLabel = new Map(rows.map((row) => [row.label, row.n]))
          // A refused item's own write stays in the batch: the group commit rolls the batch back and runs the rest again.
          return claimed.map((write) =>
            write.label.startsWith("refused") ? Exit.fail(new NotFound({ message: "refused" })) : Exit.succeed(byLabel.get(write.label)!))
        }))
  })
  const write = (label: string, requestUuid = randomUUID()): Write => ({ requestUuid, label, hash: requestHash("writes.add", { label }) })
  const labelled = (prefix: string) =>
    run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ label: string; tx: string }>`SELECT label, xmin::text AS tx FROM writes WHERE label LIKE ${prefix + "%"}`))
  const keys = (uuids: ReadonlyArray<string>) =>
    run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE scope = 'group' AND ${sql.in("request_uuid", uuids)}`))

  it("answers concurrent commands from shared transactions, each with its own outcome; a refused one keeps nothing, not even its key", async () => {
    batches.length = 0
    const writes = [...Array.from({ length: 30 }, (_, i) => write(`shared-${i}`)), write("refused-shared-1"), write("refused-shared-2")]
    const results = await Promise.all(writes.map((w) => exit(add(w))))
    const answered = results.map((result, i) => (Exit.isSuccess(result) ? result.value : writes[i]!.label.startsWith("refused") ? failure(result) : result))
    expect(answered.filter((answer) => typeof answer === "number")).toHaveLength(30)
    expect(answered.filter((answer) => answer instanceof NotFound)).toHaveLength(2)
    const rows = await labelled("shared-")
    expect(rows.map((row) => row.label).sort()).toEqual(writes.slice(0, 30).map((w) => w.label).sort())
    // Fewer transactions than commands: they were committed together, at most 8 to a batch.
    expect(new Set(rows.map((row) => row.tx)).size).toBeLessThan(30)
    expect(Math.max(...batches)).toBeLessThanOrEqual(8)
    expect(await labelled("refused-shared")).toEqual([])
    expect((await keys(writes.map((w) => w.requestUuid)))[0]?.n).toBe(30)
    // The refused command's key was released: its retry runs again.
    const retry = await exit(add(writes[30]!))
    expect(failure(retry)).toBeInstanceOf(NotFound)
  })

  it("commits no write at all for a refused command: its key is never claimed and given back in a committed transaction", async () => {
    const sql = (text: string) => run(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe(text)))
    await sql(`CREATE TABLE key_writes (op text, request_uuid uuid);
      CREATE FUNCTION log_key_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO key_writes VALUES (TG_OP, CASE WHEN TG_OP = 'DELETE' THEN OLD.request_uuid ELSE NEW.request_uuid END); RETURN NULL; END $$;
      CREATE TRIGGER log_key_write AFTER INSERT OR UPDATE OR DELETE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION log_key_write()`)
    try {
      const writes = [...Array.from({ length: 12 }, (_, i) => write(`clean-${i}`)), write("refused-clean-1"), write("refused-clean-2")]
      const results = await Promise.all(writes.map((w) => exit(add(w))))
      expect(results.map((result) => Exit.isSuccess(result))).toEqual(writes.map((w) => !w.label.startsWith("refused")))
      const logged = await run(Effect.flatMap(SqlClient.SqlClient, (client) =>
        client<{ op: string; request_uuid: string }>`SELECT op, request_uuid::text AS request_uuid FROM key_writes`))
      const refused = new Set(writes.slice(12).map((w) => w.requestUuid))
      expect(logged.filter((row) => refused.has(row.request_uuid))).toEqual([])
      // Each stored command: its key inserted and its answer stored, nothing deleted.
      expect(logged.filter((row) => row.op === "DELETE")).toEqual([])
      expect(logged.filter((row) => row.op === "INSERT")).toHaveLength(12)
      expect(await labelled("refused-clean")).toEqual([])
    } finally {
      await sql("DROP TRIGGER log_key_write ON idempotency_keys; DROP FUNCTION log_key_write(); DROP TABLE key_writes")
    }
  })

  it("runs a batch apart from the request that started it: none of its services or log annotations reach the others' transaction", async () => {
    seenInBatches.length = 0
    const writes = Array.from({ length: 10 }, (_, i) => write(`apart-${i}`))
    // Each request carries a service and a log annotation of its own (as an HTTP request carries its actor and span).
    const results = await Promise.all(writes.map((w, i) =>
      run(add(w).pipe(Effect.provideService(RequestProbe, `request ${i}`), Effect.annotateLogs("request", String(i))))))
    expect(results.every((n) => typeof n === "number")).toBe(true)
    expect(seenInBatches.length).toBeGreaterThan(0)
    expect(new Set(seenInBatches)).toEqual(new Set(["None:0"]))
  })

  it("runs a reused requestUuid once, answers its retries with the first result and a different body with 409", async () => {
    const requestUuid = randomUUID()
    const results = await Promise.all([
      ...Array.from({ length: 12 }, () => run(add(write("once", requestUuid)))),
      exit(add(write("other body", requestUuid)))
    ])
    const answers = results.slice(0, 12) as Array<number>
    expect(new Set(answers).size).toBe(1)
    expect(failure(results[12] as Exit.Exit<number, unknown>)).toBeInstanceOf(RequestConflict)
    expect(await labelled("once")).toHaveLength(1)
  })

  it("runs every item of a batch that failed in SQL by itself, so none is lost and none is written twice", async () => {
    const writes = [write("explode"), ...Array.from({ length: 10 }, (_, i) => write(`survivor-${i}`))]
    const results = await Promise.all(writes.map((w) => run(add(w))))
    expect(results.every((n) => typeof n === "number")).toBe(true)
    expect((await labelled("survivor-")).map((row) => row.label).sort()).toEqual(writes.slice(1).map((w) => w.label).sort())
    expect(await labelled("explode")).toHaveLength(1)
  })

  it("does not hold up other commands behind a lock held elsewhere: the batch gives up on it and its items wait alone", async () => {
    const widget = await run(newWidget("held"))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => (locked = resolve))
    // Another transaction holds the widget's row for 2 s.
    const holder = run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM widgets WHERE uuid = ${widget} FOR UPDATE`
        locked()
        yield* Effect.promise(() => released)
      }))))
    await isLocked
    // Apart in time, so that each takes a batch slot of its own.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 100))
    const waiting = [run(add(write(`locked:${widget}`)))]
    await pause()
    waiting.push(run(add(write(`locked:${widget}`))))
    await pause()
    const started = Date.now()
    const other = await run(add(write("unrelated-while-locked")))
    const otherMs = Date.now() - started
    setTimeout(release, 2000)
    await holder
    const answers = await Promise.all(waiting)
    expect(typeof other).toBe("number")
    // The holder lets go only 2 s after the unrelated command was answered: had that command waited
    // for the row, it would wait until the test times out. The bound is for liveness only.
    expect(otherMs).toBeLessThan(10_000)
    expect(answers.every((n) => typeof n === "number")).toBe(true)
    expect(await labelled(`locked:${widget}`)).toHaveLength(2)
  })

  it("runs inside the caller's transaction when there is one, and rolls back with it", async () => {
    const inside = write("inside-rolled-back")
    const result = await exit(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.zipRight(add(inside), Effect.fail("business rule")))))
    expect(failure(result)).toBe("business rule")
    expect(await labelled("inside-")).toEqual([])
    expect((await keys([inside.requestUuid]))[0]?.n).toBe(0)
  })
})
