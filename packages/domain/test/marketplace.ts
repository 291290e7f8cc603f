import { SqlClient } from "@effect/sql"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import type { SessionActor } from "../src/kernel/Authentication.js"
import { accountForVerifiedEmail } from "../src/auth/Accounts.js"
import { ServerSecret } from "../src/auth/ServerSecret.js"
import { actorForSession, createSession } from "../src/auth/Sessions.js"
import { SignInConfig } from "../src/auth/SignInSettings.js"
import { Mailer, type MailMessage } from "../src/mail/Mailer.js"
import { EncodedJson } from "../src/operations/Implementation.js"
import {
  type Answer,
  answerOfCause,
  callOperation,
  type InputOf,
  type OperationId,
  Operations,
  type RawInput,
  type SuccessOf
} from "../src/operations/Operations.js"
import { PublicOrigin } from "../src/operations/PublicOrigin.js"
import { Readiness } from "../src/operations/Readiness.js"
import { OperationsLive } from "../src/operations/ServiceOperations.js"
import { runMigrations } from "../src/store/Migrations.js"
import { WebhookSettings } from "../src/webhooks/WebhookSettings.js"
import type { Caller } from "../src/kernel/Authentication.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { testPgLayer } from "./pgLayer.js"

/**
 * One migrated database and the operation registry over it, for a marketplace test file: profiles
 * made directly (no mail), publications inserted as approved with SQL, and calls through
 * `Operations.invoke` exactly as every transport makes them.
 */
export interface Marketplace {
  readonly database: TestDatabase
  readonly runtime: ManagedRuntime.ManagedRuntime<Operations | SqlClient.SqlClient | ServerSecret, unknown>
  readonly invoke: (id: string, caller: Caller, input?: RawInput) => Promise<Answer>
  /**
   * The same call typed from the catalog (`callOperation`): the input as the operation declares it
   * (a misspelt id or field does not compile), the answer its decoded success; a refusal rejects.
   */
  readonly call: <Id extends OperationId>(id: Id, caller: Caller, input: InputOf<Id>) => Promise<SuccessOf<Id>>
  /** A typed call that must be refused: `[status, code]` as every transport answers it (`[200, undefined]` when it succeeds). */
  readonly refusalOf: <Id extends OperationId>(id: Id, caller: Caller, input: InputOf<Id>) => Promise<ReadonlyArray<unknown>>
  readonly sql: <A extends object = Record<string, unknown>>(text: string, ...params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<A>>
  readonly profile: (options?: { readonly public?: boolean; readonly name?: string }) => Promise<SessionActor>
  readonly publication: (owner: SessionActor, kind: string, options?: { readonly title?: string; readonly closed?: boolean; readonly visible?: boolean }) => Promise<string>
  /**
   * An approved, verified endpoint of a new profile for `profile.*` events, written as a row (no
   * operation, no test message), behind the event sequence's position `afterPosition` (-1: every
   * event is new to it).
   */
  readonly webhookEndpoint: (afterPosition?: number | string) => Promise<{ readonly owner: SessionActor; readonly uuid: string }>
  readonly close: () => Promise<void>
}

const origin = "http://localhost:8080"

/** What a test may watch: every mail the service sends, every line it logs. */
export interface MarketplaceOptions {
  readonly mail?: (message: MailMessage) => void
  readonly log?: (line: string) => void
}

export const openMarketplace = async (label: string, options: MarketplaceOptions = {}): Promise<Marketplace> => {
  const database = await createTestDatabase(label, { migrated: true })
  const services = Layer.mergeAll(
    testPgLayer(database.url, 24),
    Layer.succeed(ServerSecret, Redacted.make("marketplace-test-secret-of-32-characters")),
    Layer.succeed(Mailer, { send: (message) => Effect.sync(() => options.mail?.(message)) }),
    options.log === undefined
      ? Layer.empty
      : Layer.merge(Logger.add(Logger.map(Logger.logfmtLogger, (line) => options.log!(line))), Logger.minimumLogLevel(LogLevel.All)),
    Layer.succeed(SignInConfig, { publicOrigin: origin }),
    Layer.succeed(PublicOrigin, origin),
    Layer.succeed(WebhookSettings, { publicOrigin: origin, allowHttpLoopback: true }),
    Layer.succeed(Readiness, { check: Effect.succeed({ database: true, migrations: true }) })
  )
  const runtime = ManagedRuntime.make(Layer.provideMerge(OperationsLive, services))
  await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, () => runMigrations))
  const sql = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
    runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text, params as Array<unknown>)))
  let n = 0
  const marketplace: Marketplace = {
    database,
    runtime,
    sql,
    invoke: (id, caller, input = {}) => runtime.runPromise(Effect.flatMap(Operations, (operations) => operations.invoke(id, caller, input))),
    call: (id, caller, input) => runtime.runPromise(callOperation(id, caller, input)),
    refusalOf: (id, caller, input) =>
      runtime.runPromise(Effect.matchCauseEffect(callOperation(id, caller, input), {
        onSuccess: (): Effect.Effect<ReadonlyArray<unknown>> => Effect.succeed([200, undefined]),
        onFailure: (cause) => Effect.map(answerOfCause(cause), refusal)
      })),
    profile: async (options = {}) => {
      const actor = await runtime.runPromise(Effect.gen(function*() {
        const account = yield* accountForVerifiedEmail(`${label}-${++n}-${randomUUID()}@example.com`)
        const session = yield* createSession(account.accountUuid, account.profileUuid)
        return Option.getOrThrow(yield* actorForSession(session.sessionUuid))
      }))
      await sql("UPDATE profiles SET is_public = $1, name = $2 WHERE uuid = $3", options.public ?? false, options.name ?? `Профиль ${n}`, actor.profileUuid)
      return { ...actor, profileName: options.name ?? `Профиль ${n}` } as SessionActor
    },
    publication: async (owner, kind, options = {}) => {
      const title = options.title ?? `Публикация ${kind}`
      const data = JSON.stringify(kind === "task"
        ? { title, category: "Сайты", description: "Нужно сделать работу по описанию, подробности в переписке", budget: "до 5 000 ₽", deadline: "неделя", files: [] }
        : { title })
      const visible = options.visible ?? true
      const [row] = await sql<{ uuid: string }>(
        `INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at, closed)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8) RETURNING uuid`,
        `pub-${randomUUID()}`, kind, owner.profileUuid, visible ? "approved" : "draft", data, visible ? data : null,
        visible ? new Date() : null, options.closed ?? false
      )
      return row!.uuid
    },
    webhookEndpoint: async (afterPosition = -1) => {
      const owner = await marketplace.profile()
      const uuid = randomUUID()
      await sql(`INSERT INTO webhook_endpoints (uuid, profile_uuid, url, event_types, payload_mode, secret_sealed, approved_at, verified_at, after_position)
        VALUES ($1, $2, 'https://receiver.example/hook', '["profile.*"]'::jsonb, 'reference', 'sealed', now(), now(), $3::bigint)`, uuid, owner.profileUuid, afterPosition)
      return { owner, uuid }
    },
    close: async () => {
      await runtime.dispose()
      await database.drop()
    }
  }
  return marketplace
}

/** The answer's body; one already encoded as JSON text (a public read's) parsed, as a client sees it. */
export const bodyOf = <A = Record<string, unknown>>(answer: Answer): A =>
  (answer.body instanceof EncodedJson ? JSON.parse(answer.body.json) : answer.body) as A
export const codeOf = (answer: Answer) => (answer.body as { error?: { code?: string } } | undefined)?.error?.code

/** The body of a 200 answer; any other answer fails the test, showing the start of its body. */
export const okBody = <A>(answer: Answer): A => {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(200)
  return bodyOf<A>(answer)
}

/** A refusal as `[status, code]`, to compare with the expected one. */
export const refusal = (answer: Answer) => [answer.status, codeOf(answer)]

/** Runs `tasks` with at most `width` at a time. */
export const pool = async <A>(width: number, tasks: ReadonlyArray<() => Promise<A>>): Promise<Array<A>> => {
  const results: Array<A> = new Array(tasks.length)
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < tasks.length) {
      const at = next++
      results[at] = await tasks[at]!()
    }
  }))
  return results
}
