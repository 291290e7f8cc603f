import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import * as Reactivity from "@effect/experimental/Reactivity"
import { Effect, Layer, Stream } from "effect"
import { readFileSync, unlinkSync, writeFileSync } from "node:fs"
import { recordStatement } from "./StatementMetrics.js"

// Read int8 and numeric as text, as node-postgres does, so rows look the same on both stores.
const parsers = { 20: (value: string) => value, 1700: (value: string) => value }

/**
 * The embedded database's shared buffers: 16 MB, not Postgres's 128 MB. PGlite allocates and clears
 * them inside its WebAssembly memory at every open, which cost a one-shot command (`birzha mail
 * list`) ~0.4 s and every embedded process ~110 MB of RSS it never gives back; pages beyond them are
 * read from the data directory's files, which the operating system caches (bench/README.md, "The
 * command's start").
 */
const embeddedSharedBuffers = "16MB"

const wrap = <A>(run: () => Promise<A>, message: string) =>
  Effect.tryPromise({ try: run, catch: (cause) => new SqlError({ cause, message }) })

/** A statement, timed from its call to its result (`StatementMetrics.ts`). */
const statement = <A>(run: () => Promise<A>) =>
  wrap(() => {
    const started = performance.now()
    return run().finally(() => recordStatement(started))
  }, "Failed to execute statement")

/** Whether a process with this pid is running (EPERM: it is, as another user). */
export const isProcessRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * PGlite is one process's database: a second process opening the same directory (the CLI while
 * `serve` runs) would write over it. `<dataDir>.lock` holds the pid of the process that has it
 * open; another live pid there refuses the open with a clear error, a dead one (a killed host) is
 * taken over. Released when the database closes.
 */
export const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const path = `${dataDir}.lock`
        try {
          writeFileSync(path, String(process.pid), { flag: "wx" })
          return path
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
        }
        const holder = Number.parseInt(readFileSync(path, "utf8"), 10)
        if (Number.isInteger(holder) && holder !== process.pid && isProcessRunning(holder)) {
          throw { inUseBy: holder }
        }
        writeFileSync(path, String(process.pid))
        return path
      },
      catch: (cause) =>
        typeof cause === "object" && cause !== null && "inUseBy" in cause
          ? new SqlError({
            cause: `process ${String(cause.inUseBy)}`,
            message: `The embedded database in ${dataDir} is in use by process ${String(cause.inUseBy)}: stop that process ` +
              "(e.g. birzha serve) first, or set DATABASE_URL to use a Postgres server"
          })
          : new SqlError({ cause, message: `Could not lock the embedded database in ${dataDir}` })
    }),
    (path) =>
      Effect.sync(() => {
        try {
          if (readFileSync(path, "utf8") === String(process.pid)) unlinkSync(path)
        } catch {
          // Already gone.
        }
      })
  )

/**
 * An in-process `SqlClient` over embedded PGlite (Postgres in WebAssembly).
 *
 * PGlite is one database session, so statements of two transactions would interleave on it. The
 * acquirer is therefore a one-permit semaphore held for the whole scope of a connection use —
 * a statement, or a transaction from BEGIN to COMMIT — the pattern of `@effect/sql-sqlite-node`.
 * The statement compiler is `@effect/sql-pg`'s, so the SQL is exactly what a server receives.
 */
export const makePgliteClient = (dataDir: string) =>
  Effect.gen(function*() {
    yield* lockDataDir(dataDir)
    const db = yield* Effect.acquireRelease(
      // Loaded here, not with this module: a host on a Postgres server never loads PGlite (bench/README.md, `memory`).
      wrap(async () => {
        const [{ PGlite }, { pg_trgm }] = await Promise.all([import("@electric-sql/pglite"), import("@electric-sql/pglite/contrib/pg_trgm")])
        return PGlite.create(dataDir, {
          extensions: { pg_trgm },
          parsers,
          startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${embeddedSharedBuffers}`]
        })
      }, `Could not open the embedded database in ${dataDir}`),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )

    const connection: Connection = {
      execute: (sql, params, transformRows) =>
        statement(() => db.query<Record<string, unknown>>(sql, [...params])).pipe(
          Effect.map((result) => (transformRows ? transformRows(result.rows) : result.rows))
        ),
      executeRaw: (sql, params) => statement(() => db.query(sql, [...params])),
      executeValues: (sql, params) =>
        statement(() => db.query<Array<unknown>>(sql, [...params], { rowMode: "array" })).pipe(
          Effect.map((result) => result.rows)
        ),
      executeUnprepared: (sql, params, transformRows) =>
        (params.length === 0
          ? statement(() => db.exec(sql)).pipe(
            Effect.map((results) => (results.at(-1)?.rows ?? []) as ReadonlyArray<Record<string, unknown>>)
          )
          : statement(() => db.query<Record<string, unknown>>(sql, [...params])).pipe(
            Effect.map((result) => result.rows)
          )).pipe(Effect.map((rows) => (transformRows ? transformRows(rows) : rows))),
      executeStream: (sql, params, transformRows) =>
        Stream.fromIterableEffect(
          statement(() => db.query<Record<string, unknown>>(sql, [...params])).pipe(
            Effect.map((result) => (transformRows ? transformRows(result.rows) : result.rows))
          )
        )
    }

    const session = yield* Effect.makeSemaphore(1)
    const acquirer = Effect.as(Effect.acquireRelease(session.take(1), () => session.release(1)), connection)

    const client = yield* SqlClient.make({
      acquirer,
      transactionAcquirer: acquirer,
      compiler: makeCompiler(),
      spanAttributes: [["db.system", "postgresql"], ["db.name", "pglite"]]
    }).pipe(Effect.provide(Reactivity.layer))

    // LISTEN while holding the session: between another use's BEGIN and COMMIT it would belong to
    // that transaction (and be undone with it). Notifications arrive with the results of whichever
    // statement commits the NOTIFY, in this process.
    const listen = (channel: string): Stream.Stream<string, SqlError> =>
      Stream.asyncScoped<string, SqlError>((emit) =>
        Effect.acquireRelease(
          session.withPermits(1)(wrap(() => db.listen(channel, (payload) => void emit.single(payload)), `Could not listen on ${channel}`)),
          (unlisten) => session.withPermits(1)(wrap(() => unlisten(), `Could not stop listening on ${channel}`)).pipe(Effect.ignore)
        )
      )
    return Object.assign(client, { listen }) as ListeningClient
  })

/** A `SqlClient` that also delivers `NOTIFY` payloads of a channel (`Database.listen`). */
export type ListeningClient = SqlClient.SqlClient & { readonly listen: (channel: string) => Stream.Stream<string, SqlError> }

export const PgliteClientLive = (dataDir: string): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, makePgliteClient(dataDir))
