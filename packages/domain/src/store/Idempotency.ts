import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, FiberRef, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import { RequestConflict } from "../kernel/ApiError.js"
import { type BatchOutcome, Rerun, runAlone } from "./GroupCommit.js"
import { findOne, rowsDecoder, selectList } from "./Rows.js"

/** JSON with object keys sorted at every level, so equal requests hash equally whatever their key order. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v)

export const requestHash = (operationId: string, request: unknown): string =>
  createHash("sha256").update(operationId).update("\n").update(canonicalJson(request)).digest("hex")

/**
 * The path parameters of the command being run (`Operations.run` sets them): a `requestUuid`
 * reused with the same body on another record (`/runs/{run}/cancel` of a different run) is a
 * different request, so the path is part of the hash. Commands without path parameters (the
 * marketplace's `/commands/…`) hash their body alone, as before.
 */
export const currentCommandPath: FiberRef.FiberRef<Readonly<Record<string, unknown>> | undefined> = FiberRef.unsafeMake<
  Readonly<Record<string, unknown>> | undefined
>(undefined)

const decodeClaimed = rowsDecoder(Schema.Struct({ scope: Schema.String, request_uuid: Schema.String }))
const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))

/** `idempotency_keys`: this module is its one reader and writer. */
const IdempotencyKeyRow = Schema.Struct({
  scope: Schema.String,
  request_uuid: Schema.String,
  operation_id: Schema.String,
  request_hash: Schema.String,
  /** jsonb: the first result, encoded with the command's result schema; null until the command's transaction stores it. */
  response: Schema.Unknown,
  created_at: Schema.DateFromSelf
})
const StoredRequest = Schema.Struct({
  operation_id: IdempotencyKeyRow.fields.operation_id,
  request_hash: IdempotencyKeyRow.fields.request_hash,
  response: IdempotencyKeyRow.fields.response
})
const storedRequest = (sql: SqlClient.SqlClient, scope: string, requestUuid: string) =>
  findOne({
    Request: Schema.Struct({ scope: Schema.String, requestUuid: Schema.String }),
    Result: StoredRequest,
    execute: (key) =>
      sql`SELECT ${sql.literal(selectList(StoredRequest))} FROM idempotency_keys
        WHERE scope = ${key.scope} AND request_uuid = ${key.requestUuid}`
  })({ scope, requestUuid })

export interface IdempotentCommand<A, I> {
  /** Whose key space the `requestUuid` lives in: the acting profile (or account). */
  readonly scope: string
  readonly operationId: string
  readonly requestUuid: string
  /** The decoded request, as the caller sent it; its canonical hash decides "same body". */
  readonly request: unknown
  /** How the first result is stored and returned again to retries. */
  readonly result: Schema.Schema<A, I>
  /** The request's hash when taken earlier in the request's own fiber (`commandHash`); else taken here. */
  readonly hash?: string | undefined
}

/**
 * Runs a command at most once per `(scope, requestUuid)`, in one transaction with its effect.
 *
 * The key row is claimed with `INSERT … ON CONFLICT DO NOTHING`: a concurrent retry blocks on the
 * unique index until the first transaction ends. If that one committed, the retry reads the stored
 * result (or a `RequestConflict` when its body differs); if it rolled back (the command failed),
 * the retry claims the key itself. So concurrent identical requests make exactly one write, and a
 * failed command stores nothing.
 */
export const idempotent = <A, I, E, R>(
  command: IdempotentCommand<A, I>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | RequestConflict | SqlError, R | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hash = command.hash ?? (yield* commandHash(command.operationId, command.request))
    const run: Effect.Effect<A, E | RequestConflict | SqlError, R> = Effect.gen(function*() {
      const claimed = yield* sql`
        INSERT INTO idempotency_keys (scope, request_uuid, operation_id, request_hash)
        VALUES (${command.scope}, ${command.requestUuid}, ${command.operationId}, ${hash})
        ON CONFLICT (scope, request_uuid) DO NOTHING
        RETURNING request_uuid`
      if (claimed.length === 1) {
        const result = yield* effect
        const stored = yield* Schema.encode(command.result)(result).pipe(Effect.orDie)
        yield* sql`UPDATE idempotency_keys SET response = ${JSON.stringify(stored)}::jsonb
          WHERE scope = ${command.scope} AND request_uuid = ${command.requestUuid}`
        return result
      }
      const first = Option.getOrUndefined(yield* storedRequest(sql, command.scope, command.requestUuid))
      // Gone between the claim and the read: retention forgot an expired key. Claim it afresh.
      if (first === undefined) return yield* run
      if (first.request_hash !== hash) {
        return yield* new RequestConflict({
          message: `requestUuid ${command.requestUuid} was already used for a different request; use a new requestUuid for a new command`
        })
      }
      return yield* Schema.decodeUnknown(command.result)(parseJson(first.response)).pipe(Effect.orDie)
    })
    return yield* sql.withTransaction(run)
  })

/** The hash of a command's request with the path parameters of the command being run (`currentCommandPath`). */
export const commandHash = (operationId: string, request: unknown): Effect.Effect<string> =>
  Effect.map(FiberRef.get(currentCommandPath), (path) => requestHash(operationId, path === undefined ? request : { path, request }))

/** A command of a batch, its hash taken in the request's own fiber (`commandHash`). */
export interface BatchedCommand {
  readonly scope: string
  readonly operationId: string
  readonly requestUuid: string
  readonly hash: string
}

const keyOf = (command: BatchedCommand) => `${command.scope}\n${command.requestUuid.toLowerCase()}`

/**
 * `idempotent` for a batch of one operation's commands inside the caller's transaction (the
 * `groupCommit` of the operation): the keys are claimed in one statement, in key order (two
 * batches never wait on each other crosswise); `body` runs the claimed items and answers each;
 * then one statement stores their results. When `body` refuses an item (or sends it to run
 * alone), the batch fails with `Rerun`: the transaction rolls back, so the item's claimed key
 * and anything written for it are gone as with a rolled-back single command, and the others run
 * again. An item whose key was already claimed (by an earlier request, or by an item before it in
 * the batch) is answered `runAlone`: after the batch it runs through `idempotent`, which waits for
 * the first and returns its stored result, or `RequestConflict` when its body differs.
 */
export const idempotentBatch = <T, A, I, E, R>(
  items: ReadonlyArray<T>,
  commandOf: (item: T) => BatchedCommand,
  result: Schema.Schema<A, I>,
  /** One outcome per claimed item; a failure or `runAlone` rolls the batch back (`Rerun`). */
  body: (claimed: ReadonlyArray<T>) => Effect.Effect<ReadonlyArray<BatchOutcome<A, E>>, SqlError, R>,
  /** Items known before any read to need the single path: answered `runAlone`, their keys never claimed here. */
  alone: (items: ReadonlyArray<T>) => ReadonlySet<number> = () => new Set()
): Effect.Effect<ReadonlyArray<BatchOutcome<A, E>>, SqlError | Rerun<A, E>, R | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const first = new Map<string, number>()
    const apart = alone(items)
    items.forEach((item, index) => {
      const key = keyOf(commandOf(item))
      if (!first.has(key) && !apart.has(index)) first.set(key, index)
    })
    const wanted = [...first.values()].map((index) => {
      const command = commandOf(items[index]!)
      return { scope: command.scope, request_uuid: command.requestUuid, operation_id: command.operationId, request_hash: command.hash }
    })
    const claimed = new Set((yield* Effect.flatMap(sql`
      INSERT INTO idempotency_keys (scope, request_uuid, operation_id, request_hash)
      SELECT scope, request_uuid, operation_id, request_hash
      FROM jsonb_to_recordset(${JSON.stringify(wanted)}::jsonb) AS k(scope text, request_uuid uuid, operation_id text, request_hash text)
      ORDER BY scope, request_uuid
      ON CONFLICT (scope, request_uuid) DO NOTHING
      RETURNING scope, request_uuid::text AS request_uuid`, decodeClaimed)).map((row) => `${row.scope}\n${row.request_uuid}`))
    const mine = items.flatMap((item, index) => {
      const key = keyOf(commandOf(item))
      return first.get(key) === index && claimed.has(key) ? [index] : []
    })
    const outcomes: Array<BatchOutcome<A, E>> = items.map(() => runAlone)
    if (mine.length === 0) return outcomes
    const answers = yield* body(mine.map((index) => items[index]!))
    const settled = new Map<number, Exit.Exit<A, E> | typeof runAlone>()
    const stored: Array<{ scope: string; request_uuid: string; response: unknown }> = []
    for (const [j, index] of mine.entries()) {
      const answer = answers[j]!
      const command = commandOf(items[index]!)
      if (answer !== runAlone && Exit.isSuccess(answer)) {
        stored.push({ scope: command.scope, request_uuid: command.requestUuid, response: yield* Schema.encode(result)(answer.value).pipe(Effect.orDie) })
      } else settled.set(index, answer)
      outcomes[index] = answer
    }
    if (settled.size > 0) return yield* Effect.fail(new Rerun(settled))
    yield* sql`UPDATE idempotency_keys k SET response = s.response
      FROM jsonb_to_recordset(${JSON.stringify(stored)}::jsonb) AS s(scope text, request_uuid uuid, response jsonb)
      WHERE k.scope = s.scope AND k.request_uuid = s.request_uuid`
    return outcomes
  })

// pg parses jsonb; PGlite does too, but a driver that hands back text still decodes the same.
const parseJson = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

/**
 * How long a `requestUuid` is remembered: a retry within it returns the first result, a request
 * after it runs as new. Stripe keeps keys 24 hours; agents and queues retry much later than a
 * browser, so 30 days. Records a command's result points at (an unfinished file) stay at least as
 * long, so a remembered result never names something already cleaned away.
 */
export const idempotencyRetentionDays = 30

/** Forgets keys older than the retention, in batches; returns how many went. */
export const cleanIdempotencyKeys: Effect.Effect<number, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let total = 0
  for (;;) {
    const [gone] = yield* Effect.flatMap(sql`WITH gone AS (
        DELETE FROM idempotency_keys WHERE ctid IN (
          SELECT ctid FROM idempotency_keys WHERE created_at < now() - make_interval(days => ${idempotencyRetentionDays}) LIMIT 5000)
        RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`, decodeCount)
    total += gone?.n ?? 0
    if ((gone?.n ?? 0) < 5000) return total
  }
})
