import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, FiberRef, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import { RequestConflict } from "../api/ApiError.js"
import { selectList, findOne } from "./Rows.js"

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
    const path = yield* FiberRef.get(currentCommandPath)
    const hash = requestHash(command.operationId, path === undefined ? command.request : { path, request: command.request })
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
    const [gone] = yield* sql<{ n: number }>`WITH gone AS (
        DELETE FROM idempotency_keys WHERE ctid IN (
          SELECT ctid FROM idempotency_keys WHERE created_at < now() - make_interval(days => ${idempotencyRetentionDays}) LIMIT 5000)
        RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`
    total += gone?.n ?? 0
    if ((gone?.n ?? 0) < 5000) return total
  }
})
