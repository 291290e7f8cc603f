import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { accountForVerifiedEmail } from "../auth/Accounts.js"
import { normalizeEmail } from "../auth/SignIn.js"
import { ServerSecret } from "../auth/ServerSecret.js"
import { actorForSession, createSession } from "../auth/Sessions.js"
import { SignInConfig } from "../auth/SignInSettings.js"
import { BlobStore, PostgresBlobStore } from "../files/BlobStore.js"
import { InvalidRequest } from "../kernel/ApiError.js"
import type { SessionActor } from "../kernel/Authentication.js"
import { Email } from "../kernel/Common.js"
import type { Mailer } from "../mail/Mailer.js"
import { latestMigrationId, migrationsTable } from "../store/Migrations.js"
import { rowsDecoder } from "../store/Rows.js"
import { WebhookSettings } from "../webhooks/WebhookSettings.js"
import type { Operations } from "./Operations.js"
import { PublicOrigin } from "./PublicOrigin.js"
import { Readiness } from "./Readiness.js"
import { OperationsLive } from "./ServiceOperations.js"

/** What the domain needs to know of the service it runs in. */
export interface DomainSettings {
  /**
   * The origin browsers use (`https://market.example`): approval pages, upload addresses and
   * sign-in links are built on it, and browser changes must carry it as `Origin`.
   */
  readonly publicOrigin: string
  /**
   * The key of keyed hashes (codes, tokens, API keys) and of encryption at rest. Every process on
   * one database uses the same; changing it invalidates sessions, keys and webhook secrets. At
   * least 32 characters of random text, as `BIRZHA_SECRET`.
   */
  readonly serverSecret: string | Redacted.Redacted<string>
  /** Accept webhook receivers at loopback addresses over plain HTTP (development only). Default false. */
  readonly allowHttpLoopbackWebhooks?: boolean
}

const decodePresent = rowsDecoder(Schema.Struct({ present: Schema.Boolean }))
const decodeLatest = rowsDecoder(Schema.Struct({ latest: Schema.NullOr(Schema.Number) }))

/**
 * Does the database answer within two seconds, and is the latest migration applied. Never fails:
 * what readyz reports (the hosts add their own start-up steps to it).
 */
export const migrationReadiness = (sql: SqlClient.SqlClient): Effect.Effect<{ readonly database: boolean; readonly migrations: boolean }> =>
  Effect.gen(function*() {
    const [table] = yield* Effect.flatMap(sql`SELECT to_regclass(${migrationsTable}) IS NOT NULL AS present`, decodePresent)
    if (table?.present !== true) return { database: true, migrations: false }
    const [latest] = yield* Effect.flatMap(sql`SELECT max(migration_id) AS latest FROM ${sql(migrationsTable)}`, decodeLatest)
    return { database: true, migrations: (latest?.latest ?? 0) >= latestMigrationId }
  }).pipe(
    Effect.timeoutFail({ duration: Duration.seconds(2), onTimeout: () => "timeout" as const }),
    Effect.orElseSucceed(() => ({ database: false, migrations: false }))
  )

/**
 * The whole catalog ready to run in this process (`Operations`, with the services its
 * implementations read), on the `SqlClient` and `Mailer` the program gives: a `pg` pool through
 * `@effect/sql-pg` or `@birzha/infrastructure`, any mailer. Migrations are the program's to run
 * (`runMigrations`) before the first call.
 */
export const DomainLive = (
  settings: DomainSettings
): Layer.Layer<Operations | ServerSecret | PublicOrigin | BlobStore | Readiness, never, SqlClient.SqlClient | Mailer> => {
  const secret = typeof settings.serverSecret === "string" ? Redacted.make(settings.serverSecret) : settings.serverSecret
  // The same rule as BIRZHA_SECRET (packages/infrastructure/src/Settings.ts): a short key is a mistake of the program, refused at once.
  if (Redacted.value(secret).length < 32) throw new Error("DomainLive: serverSecret must be at least 32 characters of random text")
  const services = Layer.mergeAll(
    Layer.succeed(ServerSecret, secret),
    Layer.succeed(PublicOrigin, settings.publicOrigin),
    Layer.succeed(SignInConfig, { publicOrigin: settings.publicOrigin }),
    Layer.succeed(WebhookSettings, { publicOrigin: settings.publicOrigin, allowHttpLoopback: settings.allowHttpLoopbackWebhooks ?? false }),
    Layer.effect(Readiness, Effect.map(SqlClient.SqlClient, (sql) => ({ check: migrationReadiness(sql) }))),
    PostgresBlobStore
  )
  return Layer.provideMerge(OperationsLive, services)
}

/**
 * The session actor of the person with this verified address, for a service that has
 * authenticated them itself: their account is created with its first profile on first use, as on
 * a first sign-in, and a session is opened for it. Operations run for this actor as for a browser
 * session of that person.
 */
export const actorForVerifiedEmail = (
  email: string
): Effect.Effect<SessionActor, InvalidRequest | SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const address = normalizeEmail(email)
    if (!Schema.is(Email)(address)) return yield* Effect.fail(new InvalidRequest({ message: "email: not an email address" }))
    const sql = yield* SqlClient.SqlClient
    const sessionUuid = yield* sql.withTransaction(Effect.gen(function*() {
      const account = yield* accountForVerifiedEmail(address)
      const session = yield* createSession(account.accountUuid, account.profileUuid)
      return session.sessionUuid
    }))
    const actor = yield* actorForSession(sessionUuid)
    return Option.getOrThrowWith(actor, () => new Error(`the session just opened for ${email} is not usable`))
  })
