import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { reviewWindowMs } from "../reviews/Review.js"
import { rowsDecoder } from "../store/Rows.js"

/**
 * Three demo accounts a newcomer signs in as to see the marketplace from the inside: a customer
 * and a contractor in the middle of a deal (its thread has messages), who also finished an earlier
 * deal together on which the customer's review is written and still sealed; and a moderator.
 * Seeded like the rest of the demo data (DemoRelations.ts), after it: no events, no idempotency keys.
 */
export interface DemoAccount {
  readonly role: "customer" | "contractor" | "moderator"
  readonly email: string
  readonly profileName: string
}

const uuidOf = (seed: number, what: string): string => {
  const hex = createHash("sha1").update(`birzha-demo-accounts:${seed}:${what}`).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${hex.slice(18, 20)}-${hex.slice(20, 32)}`
}

const demoProfiles = (domain: string) => `SELECT p.uuid FROM profiles p JOIN accounts a ON a.uuid = p.account_uuid WHERE a.email LIKE '%@${domain}'`

const decodeDeals = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  customer: Schema.String,
  contractor: Schema.String,
  publication: Schema.NullOr(Schema.String)
}))
const decodePeople = rowsDecoder(Schema.Struct({ role: Schema.String, email: Schema.String, name: Schema.String }))
const decodeEmails = rowsDecoder(Schema.Struct({ email: Schema.String }))

/**
 * The customer and contractor of the first demo deal in progress with messages, an earlier deal of
 * theirs completed two days ago with the customer's review sealed on it, and the moderator role
 * for a third demo account. Nothing when the demo has no deal in progress (too few publications).
 */
export const seedDemoAccounts = (seed: number, domain: string, now = Date.now()): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deals = yield* Effect.flatMap(
      sql`SELECT d.uuid,
          CASE WHEN d.initiator_role = 'customer' THEN d.initiator_profile_uuid ELSE d.recipient_profile_uuid END AS customer,
          CASE WHEN d.initiator_role = 'customer' THEN d.recipient_profile_uuid ELSE d.initiator_profile_uuid END AS contractor,
          d.publication_uuid AS publication
        FROM relations d
        WHERE d.kind = 'deal' AND d.status IN ('active', 'results_submitted')
          AND d.initiator_profile_uuid IN (${sql.literal(demoProfiles(domain))})
          AND EXISTS (SELECT 1 FROM threads t JOIN messages m ON m.thread_uuid = t.uuid WHERE t.relation_uuid = d.origin_relation_uuid)
        ORDER BY d.status, d.uuid LIMIT 1`,
      decodeDeals
    )
    const deal = deals[0]
    if (deal === undefined) return
    const at = (daysAgo: number, hours = 0) => new Date(now - daysAgo * 86_400_000 + hours * 3_600_000).toISOString()
    const offer = uuidOf(seed, "offer")
    const earlier = uuidOf(seed, "deal")
    const completedAt = at(2)
    yield* sql`INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, publication_uuid,
        origin_relation_uuid, body, budget, deadline, completed_at, revision, created_at, updated_at)
      VALUES
        (${offer}, 'offer', 'accepted', ${deal.customer}, ${deal.contractor}, 'customer', NULL, NULL,
          'Нужна небольшая доработка к прошлому заказу: поправить тексты и картинки.', '8 000 ₽', 'неделя', NULL, 2, ${at(9)}, ${at(9, 1)}),
        (${earlier}, 'deal', 'completed', ${deal.customer}, ${deal.contractor}, 'customer', NULL, ${offer},
          'Нужна небольшая доработка к прошлому заказу: поправить тексты и картинки.', '8 000 ₽', 'неделя', ${completedAt}, 3, ${at(9, 1)}, ${completedAt})`
    yield* sql`INSERT INTO relation_history (relation_uuid, status, by_role, at) VALUES
      (${offer}, 'pending', 'customer', ${at(9)}), (${offer}, 'accepted', 'contractor', ${at(9, 1)}),
      (${earlier}, 'active', 'customer', ${at(9, 1)}), (${earlier}, 'results_submitted', 'contractor', ${at(3)}),
      (${earlier}, 'completed', 'customer', ${completedAt})`
    yield* sql`INSERT INTO relation_results (relation_uuid, version, body, submitted_at)
      VALUES (${earlier}, 1, 'Готово: тексты и картинки обновлены, архив во вложении.', ${at(3)})`
    // The customer has written; the contractor has not yet: the review stays sealed until they do or the window closes.
    yield* sql`INSERT INTO reviews (uuid, relation_uuid, author_profile_uuid, subject_profile_uuid, subject_role, rating, body, status,
        window_ends_at, created_at, updated_at)
      VALUES (${uuidOf(seed, "review")}, ${earlier}, ${deal.customer}, ${deal.contractor}, 'specialist', 5,
        'Всё сделали быстро и аккуратно, спасибо!', 'submitted', ${new Date(Date.parse(completedAt) + reviewWindowMs).toISOString()},
        ${at(1)}, ${at(1)})`
    const moderators = yield* Effect.flatMap(
      sql`SELECT a.email FROM accounts a JOIN profiles p ON p.account_uuid = a.uuid
        WHERE a.email LIKE ${`%@${domain}`} AND a.deleted_at IS NULL AND NOT ${sql.in("p.uuid", [deal.customer, deal.contractor])}
        ORDER BY a.email LIMIT 1`,
      decodeEmails
    )
    for (const { email } of moderators) {
      yield* sql`INSERT INTO moderators (email, source) VALUES (${email.toLowerCase()}, 'cli') ON CONFLICT (email) DO NOTHING`
    }
  })

/**
 * The demo accounts to sign in as, found again in the database (so `birzha demo` prints them also
 * when the demo data was already there): the author and the subject of a sealed demo review with
 * a deal in progress between them, and a demo moderator.
 */
export const demoSignInAccounts = (domain: string): Effect.Effect<ReadonlyArray<DemoAccount>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pattern = `%@${domain}`
    const people = yield* Effect.flatMap(
      sql`WITH pair AS (
          SELECT r.author_profile_uuid AS customer, r.subject_profile_uuid AS contractor FROM reviews r
          JOIN profiles p ON p.uuid = r.author_profile_uuid JOIN accounts a ON a.uuid = p.account_uuid
          WHERE r.status = 'submitted' AND a.email LIKE ${pattern}
            AND EXISTS (SELECT 1 FROM relations d WHERE d.kind = 'deal' AND d.status IN ('active', 'results_submitted')
              AND ((d.initiator_profile_uuid = r.author_profile_uuid AND d.recipient_profile_uuid = r.subject_profile_uuid)
                OR (d.initiator_profile_uuid = r.subject_profile_uuid AND d.recipient_profile_uuid = r.author_profile_uuid)))
          ORDER BY r.created_at, r.uuid LIMIT 1
        )
        SELECT 'customer' AS role, a.email, p.name FROM pair JOIN profiles p ON p.uuid = pair.customer JOIN accounts a ON a.uuid = p.account_uuid
        UNION ALL
        SELECT 'contractor' AS role, a.email, p.name FROM pair JOIN profiles p ON p.uuid = pair.contractor JOIN accounts a ON a.uuid = p.account_uuid
        UNION ALL
        (SELECT 'moderator' AS role, a.email, p.name FROM moderators m JOIN accounts a ON lower(a.email) = m.email
          JOIN profiles p ON p.account_uuid = a.uuid AND p.deleted_at IS NULL
          WHERE m.email LIKE ${pattern} AND a.deleted_at IS NULL ORDER BY a.email, p.created_at LIMIT 1)`,
      decodePeople
    )
    return people.map((person) => ({ role: person.role as DemoAccount["role"], email: person.email, profileName: person.name }))
  })
