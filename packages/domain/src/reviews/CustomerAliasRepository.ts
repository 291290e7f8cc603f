import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"

/**
 * `customer_aliases`: the one reader and writer. A customer's alias is `c-` and 10 random lower-case
 * base32 characters (50 bits): stable, and not derived from anything, so it cannot be enumerated
 * nor linked to the profile (MARKETPLACE §2.8).
 */
export const aliasPattern = /^c-[a-z2-7]{10}$/

const alphabet = "abcdefghijklmnopqrstuvwxyz234567"

export const newAlias = (): string => {
  const bytes = randomBytes(10)
  let out = "c-"
  for (const byte of bytes) out += alphabet[byte & 31]
  return out
}

/** The profile's alias, made now if it has none (in the caller's transaction). */
export const ensureCustomerAlias = (profileUuid: string): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let attempt = 0; attempt < 5; attempt++) {
      // A clash with another profile's alias inserts nothing and reads nothing: try another.
      yield* sql`INSERT INTO customer_aliases (profile_uuid, alias) VALUES (${profileUuid}, ${newAlias()}) ON CONFLICT DO NOTHING`
      const [row] = yield* sql<{ alias: string }>`SELECT alias FROM customer_aliases WHERE profile_uuid = ${profileUuid}`
      if (row !== undefined) return row.alias
    }
    return yield* Effect.dieMessage("could not make a unique customer alias")
  })

/** The live profile behind an alias, with the alias's creation time. */
export const profileOfAlias = (alias: string): Effect.Effect<Option.Option<{ profile_uuid: string; created_at: Date }>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ profile_uuid: string; created_at: Date }>`SELECT a.profile_uuid, a.created_at FROM customer_aliases a
      JOIN profiles p ON p.uuid = a.profile_uuid WHERE a.alias = ${alias} AND p.deleted_at IS NULL`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))
