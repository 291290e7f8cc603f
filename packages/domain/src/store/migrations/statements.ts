import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A migration: statements run in order in the migrator's transaction, one per call (PGlite's extended protocol takes one at a time). */
export const statements = (...sql: ReadonlyArray<string>): Effect.Effect<void, unknown, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const client = yield* SqlClient.SqlClient
    for (const statement of sql) yield* client.unsafe(statement)
  })
