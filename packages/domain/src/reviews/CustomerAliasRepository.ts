import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import type { PooledRead } from "../store/PooledReads.js"
import { rowsDecoder, Timestamp } from "../store/Rows.js"

const decodeAlias = rowsDecoder(Schema.Struct({ alias: Schema.String }))
const decodeAliases = rowsDecoder(Schema.Struct({ profile_uuid: Schema.String, alias: Schema.String }))

/**
 * `customer_aliases` and `customer_stats`: the one reader and writer. A customer's alias is `c-` and 10 random lower-case
 * base32 characters (50 bits): stable, and not derived from anything, so it cannot be enumerated
 * nor linked to the profile.
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
      const [row] = yield* Effect.flatMap(sql`SELECT alias FROM customer_aliases WHERE profile_uuid = ${profileUuid}`, decodeAlias)
      if (row !== undefined) return row.alias
    }
    return yield* Effect.dieMessage("could not make a unique customer alias")
  })

/** The aliases some profiles have (a profile gets one when it is first a relation's customer). */
export const customerAliasesOf = (profileUuids: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, string>, SqlError, SqlClient.SqlClient> =>
  profileUuids.length === 0 ? Effect.succeed(new Map()) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT profile_uuid, alias FROM customer_aliases WHERE ${sql.in("profile_uuid", profileUuids)}`.pipe(
      Effect.flatMap(decodeAliases),
      Effect.map((rows) => new Map(rows.map((row) => [row.profile_uuid, row.alias])))
    ))

const aliasText = `SELECT a.profile_uuid, a.created_at FROM customer_aliases a
      JOIN profiles p ON p.uuid = a.profile_uuid WHERE a.alias = $1 AND p.deleted_at IS NULL`
const completedText = "SELECT completed_deals FROM customer_stats WHERE profile_uuid = $1"
const AliasProfile = Schema.Struct({ profile_uuid: Schema.String, created_at: Timestamp })
const decodeAliasProfile = rowsDecoder(AliasProfile)
const decodeCompleted = rowsDecoder(Schema.Struct({ completed_deals: Schema.Number }))

/** The reads of `customers.get`, through a pooled read (`makePooledRead`). */
export const customerReadsWith = (read: PooledRead) => ({
  /** The live profile behind an alias, with the alias's creation time. */
  profileOfAlias: (alias: string): Effect.Effect<Option.Option<typeof AliasProfile.Type>, SqlError> =>
    Effect.map(Effect.flatMap(read(aliasText, [alias]), decodeAliasProfile), (rows) => Option.fromNullable(rows[0])),
  /** Completed deals of a customer with profiles of other accounts. */
  completedDealsOf: (profileUuid: string): Effect.Effect<number, SqlError> =>
    Effect.map(Effect.flatMap(read(completedText, [profileUuid]), decodeCompleted), (rows) => rows[0]?.completed_deals ?? 0)
})

/**
 * Counts a deal that just completed for its customer, unless both parties belong to one account
 *. In the completing transaction.
 */
export const countCompletedDeal = (deal: {
  readonly initiator_profile_uuid: string
  readonly recipient_profile_uuid: string
  readonly initiator_role: string
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> => {
  if (deal.initiator_role !== "customer" && deal.initiator_role !== "contractor") return Effect.void
  const [customer, other] = deal.initiator_role === "customer"
    ? [deal.initiator_profile_uuid, deal.recipient_profile_uuid]
    : [deal.recipient_profile_uuid, deal.initiator_profile_uuid]
  return Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO customer_stats (profile_uuid, completed_deals)
      SELECT c.uuid, 1 FROM profiles c JOIN profiles o ON o.uuid = ${other}
      WHERE c.uuid = ${customer} AND c.account_uuid IS DISTINCT FROM o.account_uuid
      ON CONFLICT (profile_uuid) DO UPDATE SET completed_deals = customer_stats.completed_deals + 1`.pipe(Effect.asVoid))
}

