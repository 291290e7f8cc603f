import { type Caller, type SessionActor } from "@birzha/domain"
import { Mailer, WebhookSettings } from "@birzha/domain/internal"
import {
  accountForVerifiedEmail,
  actorForSession,
  approveWebhookEndpoint,
  createSession,
  Operations,
  OperationsLive,
  PublicOrigin,
  Readiness,
  ServerSecret,
  SignInConfig
} from "@birzha/domain/internal"
import { runMigrations } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, ManagedRuntime, Option, Redacted, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { startReceiver } from "../../../../testing/webhookReceiver.js"
import { sequencePending } from "../events/Sequencer.js"
import { makeWebhookJob } from "../webhooks/WebhookDispatcher.js"
import type { WorkerJob } from "../WorkerLoop.js"
import { makeAutomationsJob } from "./AutomationsJob.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

const origin = "http://localhost:8080"
let database: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<Operations | SqlClient.SqlClient, unknown>
let jobs: ReadonlyArray<WorkerJob>
let scope: Scope.CloseableScope

beforeAll(async () => {
  database = await createTestDatabase("automations_job", { migrated: true })
  const services = Layer.mergeAll(
    testPgLayer(database.url, 8),
    Layer.succeed(ServerSecret, Redacted.make("automations-job-test-secret-of-32-chars")),
    Layer.succeed(Mailer, { send: () => Effect.void }),
    Layer.succeed(SignInConfig, { publicOrigin: origin }),
    Layer.succeed(PublicOrigin, origin),
    Layer.succeed(WebhookSettings, { publicOrigin: origin, allowHttpLoopback: true }),
    Layer.succeed(Readiness, { check: Effect.succeed({ database: true, migrations: true }) })
  )
  runtime = ManagedRuntime.make(Layer.provideMerge(OperationsLive, services)) as typeof runtime
  await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, () => runMigrations))
  scope = Effect.runSync(Scope.make())
  jobs = await runtime.runPromise(Effect.gen(function*() {
    return [yield* makeAutomationsJob(), yield* makeWebhookJob({ allowHttpLoopback: true })]
  }).pipe(Scope.extend(scope)) as Effect.Effect<ReadonlyArray<WorkerJob>, never, Operations | SqlClient.SqlClient>)
})
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await runtime?.dispose()
  await database?.drop()
})

const invoke = (id: string, caller: Caller, input: Record<string, unknown> = {}) =>
  runtime.runPromise(Effect.flatMap(Operations, (operations) => operations.invoke(id, caller, input)))

/** Runs the worker's jobs (sequencer, automations, webhooks) until `done`. */
const workUntil = async (done: () => Promise<boolean>) => {
  for (let i = 0; i < 300; i++) {
    await runtime.runPromise(Effect.gen(function*() {
      yield* sequencePending(100)
      for (const job of jobs) yield* job.run
    }) as Effect.Effect<void, unknown, SqlClient.SqlClient>)
    if (await done()) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error("not done in time")
}

const sql = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
  runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text, params as Array<unknown>)))

const signIn = () =>
  runtime.runPromise(Effect.gen(function*() {
    const account = yield* accountForVerifiedEmail(`rules-${randomUUID()}@example.com`)
    const session = yield* createSession(account.accountUuid, account.profileUuid)
    return Option.getOrThrow(yield* actorForSession(session.sessionUuid))
  }) as Effect.Effect<SessionActor, unknown, SqlClient.SqlClient>)

const rule = (actor: SessionActor, action: Record<string, unknown>) =>
  invoke("automations.create", actor, {
    payload: {
      requestUuid: randomUUID(),
      name: `Правило ${String(action["type"])}`,
      trigger: { eventType: "publication.draft_saved", filter: { field: "aggregate.kind", op: "eq", value: "publication" } },
      action,
      limits: { maxRunsPerDay: 50 }
    }
  }).then((answer) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return (answer.body as { rule: { uuid: string } }).rule.uuid
  })

describe("automation rules with the worker running", () => {
  it("one saved draft: a notification in the inbox, a signed webhook to a real receiver, a draft saved through the registry", async () => {
    const receiver = await startReceiver()
    try {
      const owner = await signIn()
      // An active endpoint that subscribes to nothing the save emits: only the rule sends to it.
      const created = await invoke("webhooks.create", owner, { payload: { requestUuid: randomUUID(), url: receiver.url, eventTypes: ["file.ready"] } })
      const { endpoint, secret } = created.body as { endpoint: { uuid: string; url: string }; secret: string }
      await runtime.runPromise(approveWebhookEndpoint(owner, endpoint.uuid, { url: endpoint.url, expectedRevision: 1 }) as Effect.Effect<unknown, unknown, SqlClient.SqlClient>)
      await invoke("webhooks.test", owner, { path: { uuid: endpoint.uuid }, payload: { requestUuid: randomUUID() } })
      await workUntil(async () => (await sql<{ state: string }>("SELECT state FROM webhook_endpoints WHERE uuid = $1", endpoint.uuid))[0]?.state === "active")

      await rule(owner, { type: "notification.create" })
      await rule(owner, { type: "webhook.deliver", endpointUuid: endpoint.uuid })
      const copier = await rule(owner, { type: "command.execute", operationId: "articles.save", arguments: { data: { title: "Заметка от правила" } } })

      const saved = await invoke("articles.save", owner, { payload: { requestUuid: randomUUID(), data: { title: "Статья владельца" } } })
      expect(saved.status, JSON.stringify(saved.body)).toBe(200)
      const [event] = await sql<{ uuid: string }>("SELECT uuid FROM outbox_events WHERE aggregate_uuid = $1", (saved.body as { uuid: string }).uuid)

      await workUntil(async () => receiver.ids().includes(event!.uuid))
      const delivered = receiver.received.find((r) => r.headers["webhook-id"] === event!.uuid)!
      const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(delivered.headers[h])]))
      expect(new Webhook(secret).verify(delivered.body, headers)).toMatchObject({ uuid: event!.uuid, type: "publication.draft_saved" })

      await workUntil(async () => {
        const inbox = await invoke("learning.notifications.list", owner, { urlParams: { source: "automation" } })
        return (inbox.body as { items: Array<unknown> }).items.length >= 2
      })
      // Two notifications: the owner's save, and the draft the command rule saved (depth 1); that
      // draft's event reached the copier again only as skipped_chain.
      const drafts = await invoke("articles.list", owner, { urlParams: {} })
      expect((drafts.body as { items: Array<{ draft: { title: string } }> }).items.map((item) => item.draft.title).sort())
        .toEqual(["Заметка от правила", "Статья владельца"])
      const runs = await invoke("automations.executions", owner, { path: { uuid: copier } })
      expect((runs.body as { items: Array<{ status: string }> }).items.map((x) => x.status).sort()).toEqual(["skipped_chain", "succeeded"])
    } finally {
      await receiver.stop()
    }
  })
})
