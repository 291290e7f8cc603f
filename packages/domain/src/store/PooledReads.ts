import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Option } from "effect"

/**
 * One statement on a pooled connection, for the reads that run on every request before any
 * transaction (authentication, public reads). `@effect/sql` runs a statement through a span, its
 * attributes, the statement compiler and a scoped connection: 100–150 µs of CPU and most of the
 * request's garbage per read on this machine (bench/README.md). A server
 * database provides the pool's own `query` here (the host's `DatabaseLive`); without it (PGlite,
 * tests) the statement runs through the `SqlClient` as any other.
 *
 * Inside a transaction the statement always runs on the transaction's connection through the
 * `SqlClient`, so a read never sees less than its transaction wrote.
 */
export class PooledReads extends Context.Tag("@birzha/domain/PooledReads")<PooledReads, {
  /** `text` with `$1…$n` placeholders and their values; the rows as the driver returns them. */
  readonly query: (text: string, values: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<unknown>, SqlError>
}>() {}

/** A statement runner from `makePooledRead`. */
export type PooledRead = (text: string, values: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<unknown>, SqlError>

/**
 * The runner of `text` for this context, resolved once (a module's `make…` effect): the pool's own
 * query where the host provides one, the `SqlClient` otherwise, and the `SqlClient` inside a
 * transaction either way.
 */
export const makePooledRead: Effect.Effect<PooledRead, never, SqlClient.SqlClient> = Effect.map(
  Effect.all([SqlClient.SqlClient, Effect.serviceOption(PooledReads)]),
  ([sql, pooled]) => {
    const viaSql: PooledRead = (text, values) => sql.unsafe<object>(text, values as Array<unknown>)
    if (Option.isNone(pooled)) return viaSql
    const direct = pooled.value.query
    return (text, values): ReturnType<PooledRead> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
        Option.isSome(transaction) ? viaSql(text, values) : direct(text, values))
  }
)

/**
 * `PooledReads` on a node-postgres pool: `pool.query` with one callback, nothing else per call.
 * Interruption cannot recall a statement already sent; its answer is dropped and the connection
 * goes back to the pool as node-postgres does.
 */
export const pooledReadsOf = (pool: {
  readonly query: (text: string, values: Array<unknown>, callback: (error: Error | null | undefined, result: { rows: Array<unknown> }) => void) => unknown
}): Context.Tag.Service<PooledReads> => ({
  query: (text, values) =>
    Effect.async<ReadonlyArray<unknown>, SqlError>((resume) => {
      pool.query(text, values as Array<unknown>, (error, result) => {
        // pg-pool answers `undefined` for no error, pg itself `null`.
        resume(error == null ? Effect.succeed(result.rows) : Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" })))
      })
    })
})
