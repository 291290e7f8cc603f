import { Migrator, SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * Forward-only migrations, identical on a Postgres server and on embedded PGlite. A migration is
 * never edited once released; a change is a new entry with the next id. Each runs in the
 * migrator's transaction, one statement per call (PGlite's extended protocol takes one at a time).
 */
const statements = (...sql: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const client = yield* SqlClient.SqlClient
    for (const statement of sql) yield* client.unsafe(statement)
  })

export const migrations: ReadonlyArray<readonly [id: number, name: string, run: Effect.Effect<void, unknown, SqlClient.SqlClient>]> = [
  [
    1,
    "foundation",
    statements(
      `CREATE EXTENSION IF NOT EXISTS pg_trgm`,
      // Commands idempotent by requestUuid: the first result, stored with a hash of the request.
      `CREATE TABLE idempotency_keys (
        scope text NOT NULL,
        request_uuid uuid NOT NULL,
        operation_id text NOT NULL,
        request_hash text NOT NULL,
        response jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope, request_uuid)
      )`,
      `CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`,
      // The outbox: written in the business transaction; the sequencer gives committed rows a
      // gapless position later, in commit order of their transaction ids, never by uuid or time.
      `CREATE TABLE outbox_events (
        uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        type text NOT NULL,
        schema_version integer NOT NULL DEFAULT 1,
        occurred_at timestamptz NOT NULL DEFAULT now(),
        aggregate_kind text NOT NULL,
        aggregate_uuid uuid NOT NULL,
        aggregate_revision integer NOT NULL CHECK (aggregate_revision >= 0),
        data jsonb NOT NULL,
        context jsonb NOT NULL DEFAULT '{}'::jsonb,
        transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
        position bigint UNIQUE CHECK (position > 0)
      )`,
      `CREATE INDEX outbox_events_unsequenced ON outbox_events (transaction_id, uuid) WHERE position IS NULL`,
      `CREATE INDEX outbox_events_aggregate ON outbox_events (aggregate_kind, aggregate_uuid, position)`
    )
  ]
]

/** The id readiness waits for: the host is ready only once this one is applied. */
export const latestMigrationId: number = Math.max(...migrations.map(([id]) => id))

/** The table the migrator records applied migrations in. */
export const migrationsTable = "birzha_migrations"

// Any constant works; it only has to be the same in every process migrating one database.
const migrationLock = 0x6269727a68 // "birzh"

/**
 * Applies pending migrations. Concurrent starts (several hosts on one server) queue on an
 * advisory lock, so each migration runs exactly once. Returns the ids applied now.
 */
export const runMigrations: Effect.Effect<ReadonlyArray<readonly [number, string]>, Migrator.MigrationError | SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${migrationLock})`
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(migrationsTable)} (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
        return yield* Migrator.make({})({
          table: migrationsTable,
          loader: Effect.succeed(migrations.map(([id, name, run]) => [id, name, Effect.succeed(run)] as const))
        })
      })
    )
  })

