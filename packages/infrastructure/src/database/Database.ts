import { syncConfiguredModerators, syncConfiguredOperators } from "@birzha/domain/internal"
import * as Store from "@birzha/domain/internal"
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Duration, Effect, Layer, Option, Redacted, Ref, Schedule, Stream } from "effect"
import { mkdirSync } from "node:fs"
import { resolve } from "node:path"
import Pg from "pg"
import { ModeratorsConfig, OperatorsConfig } from "../Settings.js"
import { StartupMemory } from "../StartupMemory.js"
import { DatabaseConfig } from "./DatabaseConfig.js"
import { makePgliteClient } from "./PgliteClient.js"
import { PatientPool } from "./PatientPool.js"
import { PreparingClient } from "./PreparingClient.js"

export interface ReadinessReport {
  readonly database: boolean
  readonly migrations: boolean
}

/** A connection pool's state at a moment: its size limit, its connections and the callers waiting for one. */
export interface PoolUse {
  /** The most connections the pool opens. */
  readonly max: number
  /** Connections open now, idle or in use. */
  readonly total: number
  /** Open connections no statement or transaction holds. */
  readonly idle: number
  /** Callers waiting for a connection. */
  readonly waiting: number
}

const poolUseOf = (pool: Pg.Pool) => (): PoolUse => ({
  max: pool.options.max ?? 10,
  total: pool.totalCount,
  idle: pool.idleCount,
  // Those waiting to ask a full server again hold no place in the pool's queue (PatientPool).
  waiting: pool.waitingCount + (pool instanceof PatientPool ? pool.retrying : 0)
})

/** Which store this process uses, and whether it can serve. */
export class Database extends Context.Tag("@birzha/infrastructure/Database")<Database, {
  readonly mode: "server" | "embedded"
  /** Where the data is, for the start-up log line; never the password. */
  readonly location: string
  /**
   * Does the database answer within two seconds, and is the latest migration applied (with this
   * process's start-up sync done, see `markStarted`). Never fails.
   */
  readonly readiness: Effect.Effect<ReadinessReport>
  /** `MigrationsAtStart` calls this once migrations and the settings sync are done. */
  readonly markStarted: Effect.Effect<void>
  /**
   * The payloads of `NOTIFY <channel>` as they are committed, by any process on a server (one
   * dedicated connection per stream), by this process on the embedded database. Fails when the
   * connection is lost; notifications sent meanwhile are lost, so a listener re-reads its state
   * after resubscribing.
   */
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
  /** The pool's connections now, on a server (the Prometheus page, `Metrics.ts`); the embedded database has no pool. */
  readonly poolUse?: () => PoolUse
}>() {}

const readinessOf = (sql: SqlClient.SqlClient): Effect.Effect<ReadinessReport> => Store.migrationReadiness(sql)

const serverClient = (url: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    // A lazy pool: the host starts while the server is down and answers readyz 503 until it is up.
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        // A server whose connection slots are all taken is waited for, up to the connection timeout (PatientPool).
        const pool = new PatientPool({
          // Parameterised statements are prepared per connection: Postgres plans them once (see PreparingClient).
          Client: PreparingClient,
          connectionString: Redacted.value(url),
          max: 10,
          connectionTimeoutMillis: 5_000,
          idleTimeoutMillis: 30_000,
          application_name: "birzha",
          // No JIT: this is a service of short statements, and a tiny table without statistics
          // (a cursor row, a counter row) is estimated at thousands of rows, which crosses
          // jit_above_cost and compiles for 20-100 ms to read one row. PGOPTIONS comes after, so
          // `-c jit=on` there turns it back on; an `options` parameter in DATABASE_URL replaces both.
          options: ["-c jit=off", process.env.PGOPTIONS ?? ""].join(" ").trim()
        })
        // An idle connection dropped by the server must not crash the process; the next query reconnects.
        pool.on("error", () => {})
        return pool
      }),
      // A release is uninterruptible: without `interruptible` the timeout could not cut a pool whose client is never given back.
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(Duration.seconds(2)))
    )
    const sql = yield* PgClient.fromPool({ acquire: Effect.succeed(pool), applicationName: "birzha" })
    // The per-request reads before any transaction go to the pool directly (PooledReads).
    return { sql, pooled: Store.pooledReadsOf(pool), listen: serverListen(url), poolUse: poolUseOf(pool) }
  })

/** A connection of its own for LISTEN, and how to give it back (end it, or release it to its pool destroyed). */
interface ListenConnection {
  readonly client: Pg.ClientBase
  readonly close: () => Promise<void>
}

/**
 * LISTEN on a connection of its own (a pooled connection shared with other users would lose its
 * LISTEN when it goes back), failing the stream when that connection errs or ends so the listener
 * can resubscribe. `@effect/sql-pg`'s `listen` keeps a dropped connection silently.
 */
const listenOn = (open: () => Promise<ListenConnection>) => (channel: string): Stream.Stream<string, SqlError> =>
  Stream.asyncScoped<string, SqlError>((emit) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const connection = await open()
          const { client } = connection
          const lost = (cause: unknown) => void emit.fail(new SqlError({ cause, message: `The connection listening on ${channel} was lost` }))
          client.on("error", lost)
          client.on("end", () => lost("connection ended"))
          client.on("notification", (message) => {
            if (message.channel === channel && message.payload !== undefined) void emit.single(message.payload)
          })
          try {
            await client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`)
          } catch (error) {
            client.removeAllListeners()
            await connection.close().catch(() => undefined)
            throw error
          }
          return connection
        },
        catch: (cause) => new SqlError({ cause, message: `Could not listen on ${channel}` })
      }),
      (connection) =>
        Effect.promise(() => {
          connection.client.removeAllListeners()
          connection.client.on("error", () => {})
          return connection.close().catch(() => undefined)
        }).pipe(Effect.timeoutOption(Duration.seconds(2)))
    ))

const serverListen = (url: Redacted.Redacted<string>) =>
  listenOn(async () => {
    const client = new Pg.Client({ connectionString: Redacted.value(url), application_name: "birzha-listen", connectionTimeoutMillis: 5_000 })
    try {
      await client.connect()
    } catch (error) {
      await client.end().catch(() => undefined)
      throw error
    }
    return { client, close: () => client.end() }
  })

/**
 * The services every database gives: `SqlClient`, `Database` (its readiness waits for this
 * process's start-up steps, `markStarted`) and `PooledReads` (the pool's own query where there is
 * a pool).
 */
const databaseContext = (database: {
  readonly mode: "server" | "embedded"
  readonly location: string
  readonly sql: SqlClient.SqlClient
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
  readonly pooled: Context.Tag.Service<Store.PooledReads> | undefined
  readonly poolUse?: (() => PoolUse) | undefined
}) =>
  Effect.gen(function*() {
    const { sql } = database
    // Not ready before this process re-applied BIRZHA_MODERATORS and BIRZHA_OPERATORS: a request in between would see
    // the grants of the previous start (another host may have applied the migrations already).
    const started = yield* Ref.make(false)
    const readiness = Effect.zipWith(readinessOf(sql), Ref.get(started), (report, done) => ({
      database: report.database,
      migrations: report.migrations && done
    }))
    return Context.make(SqlClient.SqlClient, sql).pipe(
      Context.add(Database, {
        mode: database.mode,
        location: database.location,
        readiness,
        markStarted: Ref.set(started, true),
        listen: database.listen,
        ...(database.poolUse === undefined ? {} : { poolUse: database.poolUse })
      }),
      Context.add(
        Store.PooledReads,
        database.pooled ?? { query: (text, values) => sql.unsafe<object>(text, values as Array<unknown>) }
      )
    )
  })

/**
 * `SqlClient`, `Database` and `PooledReads` on a `pg` pool the program already has (an embedding
 * service's own): statements run on its connections, LISTEN takes one connection of it while a
 * worker runs, and the pool is left open when the layer is released (it is the program's).
 */
export const DatabaseFromPool = (
  pool: Pg.Pool,
  options: { readonly location?: string } = {}
): Layer.Layer<SqlClient.SqlClient | Database | Store.PooledReads, SqlError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const sql = yield* PgClient.fromPool({ acquire: Effect.succeed(pool) })
      return yield* databaseContext({
        mode: "server",
        location: options.location ?? (pool.options.connectionString !== undefined
          ? describeServer(pool.options.connectionString)
          : `${pool.options.host ?? "localhost"}:${pool.options.port ?? 5432}/${pool.options.database ?? ""}`),
        sql,
        pooled: Store.pooledReadsOf(pool),
        poolUse: poolUseOf(pool),
        listen: listenOn(async () => {
          const client = await pool.connect()
          // Destroyed rather than reused: a LISTEN must not stay on a connection others get.
          return { client, close: async () => client.release(true) }
        })
      })
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The same services on the embedded PGlite database kept in `dataDir` (created when absent): one
 * process's database, without a server.
 */
export const DatabaseEmbedded = (dataDir: string): Layer.Layer<SqlClient.SqlClient | Database | Store.PooledReads, SqlError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const location = resolve(dataDir)
      mkdirSync(location, { recursive: true })
      const client = yield* makePgliteClient(location)
      return yield* databaseContext({ mode: "embedded", location, sql: client, listen: client.listen, pooled: undefined })
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * `SqlClient` and `Database` from the configuration: `DATABASE_URL` gives `@effect/sql-pg`;
 * without it, embedded PGlite in `BIRZHA_DATA_DIR/pgdata`.
 */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const settings = yield* DatabaseConfig
    return Layer.scopedContext(
      Effect.gen(function*() {
        const embedded = Option.isNone(settings.url)
        const dataDir = resolve(settings.dataDir, "pgdata")
        if (embedded) mkdirSync(dataDir, { recursive: true })
        const server = Option.isSome(settings.url) ? yield* serverClient(settings.url.value) : undefined
        const embeddedClient = server === undefined ? yield* makePgliteClient(dataDir) : undefined
        const sql: SqlClient.SqlClient = server !== undefined ? server.sql : embeddedClient!
        const listen = server !== undefined ? server.listen : embeddedClient!.listen
        const location = Option.isSome(settings.url) ? describeServer(Redacted.value(settings.url.value)) : dataDir
        return yield* databaseContext({ mode: embedded ? "embedded" : "server", location, sql, listen, pooled: server?.pooled, poolUse: server?.poolUse })
      })
    ).pipe(Layer.provide(Reactivity.layer))
  })
)

const describeServer = (url: string): string => {
  const parsed = new URL(url)
  return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`
}

/**
 * Pending migrations, then what every start re-applies from the settings: the moderators of
 * `BIRZHA_MODERATORS` and the operators of `BIRZHA_OPERATORS` become exactly the `config` grants
 * of their role (grants by hand are kept). Returns the ids
 * applied now. `serve`, `worker` and `migrate` all run this.
 */
export const migrateAndSync = (moderators: ReadonlyArray<string>, operators: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const applied = yield* Store.runMigrations
    yield* syncConfiguredModerators(moderators)
    yield* syncConfiguredOperators(operators)
    return applied
  })

/**
 * Migrations and the start-up sync now, in the caller's fiber (failing if the database does): for a
 * program that wants its database up to date before its first call, where the hosts use
 * `MigrationsAtStart`. Marks this process's database started, so readiness (and the workers,
 * which wait for it) go ahead.
 */
export const migrateNow = Effect.gen(function*() {
  const database = yield* Database
  const applied = yield* migrateAndSync(yield* ModeratorsConfig, yield* OperatorsConfig)
  yield* database.markStarted
  return applied
})

/**
 * Migrations in the background at start: the host serves (healthz 200, readyz 503) while the
 * database is unreachable, and keeps retrying until the migrations are applied. Then, where the
 * process provides `StartupMemory` (`birzha serve`, `birzha worker`), the start-up collection runs
 * before readiness says ready, so a load balancer that waits for readyz sends nothing during its
 * pause.
 */
export const MigrationsAtStart = Layer.scopedDiscard(
  Effect.gen(function*() {
    const database = yield* Database
    // Read here too, since tests build the service layer without `validateSettings`: a bad value stops the start.
    const moderators = yield* ModeratorsConfig
    const operators = yield* OperatorsConfig
    yield* Effect.logInfo("database").pipe(Effect.annotateLogs({ mode: database.mode, location: database.location }))
    const attempt = migrateAndSync(moderators, operators).pipe(
      Effect.tap((applied) =>
        Effect.logInfo("migrations applied").pipe(
          Effect.annotateLogs({
            applied: applied.map(([id, name]) => `${id}_${name}`).join(",") || "none pending",
            configuredModerators: moderators.length,
            configuredOperators: operators.length
          })
        )
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("migrations failed; retrying").pipe(
          Effect.annotateLogs({ reason: describeFailure(Cause.squash(cause)) })
        ).pipe(Effect.zipRight(Effect.failCause(cause)))
      )
    )
    // A process that owns its Node frees what starting left behind before it says ready (StartupMemory.ts).
    const startupMemory = yield* Effect.serviceOption(StartupMemory)
    // Whatever the step does, readiness follows it: a defect in it is logged, not left to hold readyz at 503.
    const beforeReady = Option.match(startupMemory, {
      onNone: () => Effect.void,
      onSome: (memory) => Effect.catchAllCause(memory.release, (cause) => Effect.logWarning("start-up step failed", cause))
    })
    yield* Effect.forkScoped(
      Effect.retry(attempt, Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))).pipe(
        Effect.zipRight(beforeReady),
        Effect.zipRight(database.markStarted),
        Effect.ignore
      )
    )
  })
)

// The one line an operator needs ("connect ECONNREFUSED 127.0.0.1:5432"), not the whole error tree.
const describeFailure = (error: unknown): string => {
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : undefined
  const inner = cause instanceof Error ? cause.message : undefined
  const outer = error instanceof Error ? error.message : String(error)
  return inner !== undefined && inner !== outer ? `${outer}: ${inner}` : outer
}
