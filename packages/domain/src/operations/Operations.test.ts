import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { taskDraft } from "../../../../testing/drafts.js"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { anonymous, type AutomationActor, type KeyActor, type SessionActor, type SystemCaller } from "../kernel/Authentication.js"
import { catalog } from "../api/BirzhaApi.js"
import { accountForVerifiedEmail } from "../auth/Accounts.js"
import { ServerSecret } from "../auth/ServerSecret.js"
import { actorForSession, createSession } from "../auth/Sessions.js"
import { SignInConfig } from "../auth/SignInSettings.js"
import { type MailMessage, Mailer } from "../mail/Mailer.js"
import { grantModerator } from "../publications/Moderation.js"
import { runMigrations } from "../store/Migrations.js"
import { WebhookSettings } from "../webhooks/WebhookSettings.js"
import { EncodedJson } from "./Implementation.js"
import { type Answer, callOperation, Operations, runOperation } from "./Operations.js"
import { PublicOrigin } from "./PublicOrigin.js"
import { Readiness } from "./Readiness.js"
import { OperationsLive, serviceImplementations } from "./ServiceOperations.js"
import { testPgLayer } from "../../test/pgLayer.js"

// Every area's operations run here through the registry alone: no HTTP, no request, real Postgres.
const origin = "http://localhost:8080"
const mailbox: Array<MailMessage> = []
let database: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<Operations | SqlClient.SqlClient | ServerSecret, unknown>

beforeAll(async () => {
  database = await createTestDatabase("operations", { migrated: true })
  const services = Layer.mergeAll(
    testPgLayer(database.url),
    Layer.succeed(ServerSecret, Redacted.make("operations-test-secret-of-32-characters")),
    // Sign-in mail kept in the process: these tests read the code the way a person reads their mail.
    Layer.succeed(Mailer, { send: (message) => Effect.sync(() => void mailbox.push(message)) }),
    Layer.succeed(SignInConfig, { publicOrigin: origin }),
    Layer.succeed(PublicOrigin, origin),
    Layer.succeed(WebhookSettings, { publicOrigin: origin, allowHttpLoopback: true }),
    Layer.succeed(Readiness, { check: Effect.succeed({ database: true, migrations: true }) })
  )
  runtime = ManagedRuntime.make(Layer.provideMerge(OperationsLive, services))
  await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, () => runMigrations))
})
afterAll(async () => {
  await runtime?.dispose()
  await database?.drop()
})

const run = <A, E>(effect: Effect.Effect<A, E, Operations | SqlClient.SqlClient | ServerSecret>) => runtime.runPromise(effect)
const invoke = (id: string, caller: Parameters<Operations["Type"]["invoke"]>[1], input: Parameters<Operations["Type"]["invoke"]>[2] = {}) =>
  run(Effect.flatMap(Operations, (operations) => operations.invoke(id, caller, input)))
const codeOf = (answer: Answer) => (answer.body as { error?: { code?: string } }).error?.code

const sessionFor = async (email: string): Promise<SessionActor> =>
  run(Effect.gen(function*() {
    const account = yield* accountForVerifiedEmail(email)
    const session = yield* createSession(account.accountUuid, account.profileUuid)
    return Option.getOrThrow(yield* actorForSession(session.sessionUuid))
  }))

const keyFrom = (session: SessionActor, scopes: ReadonlyArray<string>, via: "key" | "mcp" = "key"): KeyActor => ({
  ...session,
  via,
  keyUuid: randomUUID(),
  keyName: "test",
  keyKind: "application",
  scopes,
  httpEnabled: true,
  mcpEnabled: true
})


describe("the registry", () => {
  it("serves every operation of the catalog (the registry refuses to start otherwise), grouped as declared", async () => {
    expect(serviceImplementations.map((group) => group.group).sort()).toEqual([...new Set(catalog.map((entry) => entry.group))].sort())
    const served = await run(Effect.map(Operations, (operations) => [...operations.entries.keys()].sort()))
    expect(served).toEqual(catalog.map((entry) => entry.id).sort())
  })

  it("refuses to start when an operation of its catalog has no implementation", async () => {
    const partial = ManagedRuntime.make(Operations.layer(catalog.filter((entry) => entry.group === "events"), []))
    await expect(partial.runPromise(Operations)).rejects.toThrow(/events\.\w+ has no implementation/)
    await partial.dispose()
    const stray = ManagedRuntime.make(Operations.layer([], [{ group: "events", build: Effect.succeed({ "events.nothing": () => Effect.void }) }]))
    await expect(stray.runPromise(Operations)).rejects.toThrow(/events\.nothing has no operation in the catalog/)
    await stray.dispose()
  })

  it("health and events answer anyone", async () => {
    expect(await run(runOperation("health.ready", anonymous, {}))).toEqual({ status: "ready", database: "ok", migrations: "ok" })
    const types = await run(runOperation("events.types", anonymous, {}))
    expect(types.types).toContain("publication.submitted")
  })

  it("runs a call typed from the catalog: decoded input encoded by the operation's own schemas, the answer typed", async () => {
    const session = await sessionFor(`typed-${randomUUID()}@example.com`)
    // `limit` is a number here (the query's decoded form); the call encodes it as the query string.
    const page = await run(callOperation("keys.list", session, { urlParams: { limit: 1 } }))
    expect(page.items.map((key) => key.kind)).toEqual(["personal"])
    expect((await run(callOperation("health.ready", anonymous, {}))).status).toBe("ready")
    // A misspelt id or field does not compile.
    // @ts-expect-error: no such operation
    await expect(run(callOperation("keys.lists", session, {}))).rejects.toThrow(/keys\.lists/)
    // @ts-expect-error: keys.create takes a payload with a name
    void callOperation("keys.create", session, { payload: { nam: "x" } })
  })

  it("auth: sign-in by code hands the new session to the transport as a fact, not in the answer", async () => {
    const email = `reader-${randomUUID()}@example.com`
    const started = await invoke("auth.email.start", anonymous, { payload: { email } })
    expect(started.status).toBe(200)
    const mail = mailbox.find((message) => message.to === email)
    const code = /\b(\d{6})\b/.exec(mail?.text ?? "")?.[1]
    expect(code).toMatch(/^\d{6}$/)
    const challengeUuid = (started.body as { challengeUuid: string }).challengeUuid
    const verified = await invoke("auth.email.verify", anonymous, { payload: { challengeUuid, code } })
    expect(verified.status).toBe(200)
    const session = verified.facts.session
    expect(typeof session === "object" && session.token.length).toBeGreaterThan(20)
    expect(JSON.stringify(verified.body)).not.toContain(typeof session === "object" ? session.token : "none")
  })

  it("account, keys, webhooks, files, comments and publications run for a session", async () => {
    const session = await sessionFor(`owner-${randomUUID()}@example.com`)
    expect((await run(runOperation("auth.session", session, {}))).user.email).toBe(session.email)
    expect((await run(runOperation("profiles.get_own", session, {}))).profiles.length).toBe(1)
    expect((await run(runOperation("keys.list", session, {}))).items[0]?.kind).toBe("personal")
    expect((await run(runOperation("webhooks.list", session, {}))).items).toEqual([])
    const prepared = await run(runOperation("files.prepare", session, {
      payload: { requestUuid: randomUUID(), purpose: "publication_asset", name: "a.png", mimeType: "image/png", size: 100 }
    }))
    expect(prepared.upload?.url.startsWith(origin)).toBe(true)
    const task = await run(runOperation("tasks.save", session, { payload: { requestUuid: randomUUID(), data: taskDraft } }))
    expect(task.status).toBe("draft")
    const comments = await invoke("comments.list", session, { path: { uuid: task.uuid } })
    expect(comments.status).toBe(404)
  })

  it("moderation runs for the operator (CLI) and refuses the operator elsewhere", async () => {
    const operator: SystemCaller = { via: "system", name: "cli" }
    const queue = await run(runOperation("moderation.queue", operator, { urlParams: { limit: "5" } }))
    expect(Array.isArray(queue.items)).toBe(true)
    expect(codeOf(await invoke("tasks.list", operator))).toBe("unauthenticated")
    const session = await sessionFor(`moderator-${randomUUID()}@example.com`)
    expect(codeOf(await invoke("moderation.queue", session))).toBe("forbidden")
    await run(grantModerator(session.email))
    expect((await invoke("moderation.queue", session)).status).toBe(200)
  })

  it("the public catalog comes collected as JSON text to a caller that does not stream, and a typed caller still gets the value", async () => {
    const answer = await invoke("getCatalog", anonymous)
    expect(answer.body).toBeInstanceOf(EncodedJson)
    const value = await run(runOperation("getCatalog", anonymous, {}))
    expect(value.schemaVersion).toBe(1)
  })
})

describe("authorization comes from the declaration", () => {
  it("refuses anonymous callers of authenticated operations with 401", async () => {
    const answer = await invoke("tasks.list", anonymous)
    expect([answer.status, codeOf(answer)]).toEqual([401, "unauthenticated"])
  })

  it("a key needs the operation's scope, and an approval operation the approval flow", async () => {
    const session = await sessionFor(`keyowner-${randomUUID()}@example.com`)
    const reader = keyFrom(session, ["tasks:read"])
    expect((await invoke("tasks.list", reader)).status).toBe(200)
    expect(codeOf(await invoke("tasks.save", reader, { payload: { requestUuid: randomUUID(), data: taskDraft } }))).toBe("insufficient_scope")
    const submitter = keyFrom(session, ["tasks:submit"])
    const submit = { requestUuid: randomUUID(), publicationUuid: randomUUID(), expectedRevision: 1 }
    expect(codeOf(await invoke("tasks.submit", submitter, { payload: submit }))).toBe("approval_required")
    expect(codeOf(await invoke("keys.list", reader))).toBe("session_required")
    expect(codeOf(await invoke("integrationCommands.prepare", session, { payload: { operationId: "tasks.submit", arguments: {} } }))).toBe("key_required")
  })

  it("an input flag never widens a call: tasks.save with submit needs what tasks.submit needs (scope and approval)", async () => {
    const session = await sessionFor(`widen-${randomUUID()}@example.com`)
    const save = (submit: boolean) => ({ payload: { requestUuid: randomUUID(), data: taskDraft, submit } })
    expect(codeOf(await invoke("tasks.save", keyFrom(session, ["tasks:write"]), save(true)))).toBe("insufficient_scope")
    expect(codeOf(await invoke("tasks.save", keyFrom(session, ["tasks:write", "tasks:submit"]), save(true)))).toBe("approval_required")
    expect(codeOf(await invoke("tasks.save", keyFrom(session, ["tasks:write", "tasks:submit"], "mcp"), save(true)))).toBe("approval_required")
    expect(codeOf(await invoke("publications.create", keyFrom(session, ["tasks:write", "tasks:submit"]), {
      payload: { kind: "task", requestUuid: randomUUID(), data: taskDraft, submit: true }
    }))).toBe("approval_required")
    // Refused before anything was written: the key's profile still has no task.
    expect((await run(runOperation("tasks.list", session, {}))).items).toEqual([])
    expect((await invoke("tasks.save", keyFrom(session, ["tasks:write"]), save(false))).status).toBe(200)
    const submitted = await invoke("tasks.save", session, save(true))
    expect([submitted.status, (submitted.body as { status: string }).status]).toEqual([200, "pending"])
  })

  it("a key with MCP turned off may not call over MCP; HTTP off does not stop MCP", async () => {
    const session = await sessionFor(`mcp-${randomUUID()}@example.com`)
    const key = { ...keyFrom(session, ["tasks:read"], "mcp"), mcpEnabled: false }
    expect(codeOf(await invoke("tasks.list", key))).toBe("key_mcp_disabled")
    expect((await invoke("tasks.list", { ...key, mcpEnabled: true, httpEnabled: false })).status).toBe(200)
  })

  it("an automation rule holds only its scopes and never passes an approval", async () => {
    const session = await sessionFor(`rule-${randomUUID()}@example.com`)
    const rule: AutomationActor = {
      ...session,
      via: "automation",
      ruleUuid: randomUUID(),
      executionUuid: randomUUID(),
      keyUuid: null,
      scopes: ["tasks:write", "tasks:submit"]
    }
    const saved = await invoke("tasks.save", rule, { payload: { requestUuid: randomUUID(), data: taskDraft } })
    expect(saved.status).toBe(200)
    const submit = { requestUuid: randomUUID(), publicationUuid: (saved.body as { uuid: string }).uuid, expectedRevision: 1 }
    expect(codeOf(await invoke("tasks.submit", rule, { payload: submit }))).toBe("approval_required")
    expect(codeOf(await invoke("keys.list", rule))).toBe("session_required")
  })

  it("answers an input that fails the schema with the operation's own error, and an unknown operation with 400", async () => {
    const session = await sessionFor(`bad-${randomUUID()}@example.com`)
    expect(codeOf(await invoke("tasks.save", session, { payload: { requestUuid: "nope" } }))).toBe("invalid_task")
    expect(codeOf(await invoke("articles.save", session, { payload: { requestUuid: "nope" } }))).toBe("invalid_request")
    expect(codeOf(await invoke("no.such", session))).toBe("invalid_request")
    // Prototype names as fields never find Object's own members: a 400 envelope, never a 500.
    const prototypeKeys = await invoke("auth.email.start", anonymous, { payload: JSON.parse("{\"__proto__\":1,\"constructor\":2,\"toString\":3}") })
    expect([prototypeKeys.status, typeof codeOf(prototypeKeys)]).toEqual([400, "string"])
  })

  it("a database failure is 503 whether failed or died with, a defect 500 with a correlation id and no detail", async () => {
    const sqlError = new SqlError({ cause: new Error("connect ECONNREFUSED"), message: "Failed to acquire connection" })
    const broken = ManagedRuntime.make(
      Operations.layer(catalog.filter((entry) => ["events.types", "events.types_legacy", "events.catalog"].includes(entry.id)), [{
        group: "events",
        build: Effect.succeed({
          "events.types": () => Effect.die(new Error("boom at SELECT secret")),
          "events.types_legacy": () => Effect.fail(sqlError),
          "events.catalog": () => Effect.die(sqlError)
        })
      }])
    )
    const call = (id: string) => broken.runPromise(Effect.flatMap(Operations, (operations) => operations.invoke(id, anonymous, {})))
    const defect = await call("events.types")
    expect([defect.status, codeOf(defect)]).toEqual([500, "internal_error"])
    expect((defect.body as { error: { correlationId: string } }).error.correlationId).toMatch(/^[0-9a-f-]{36}$/)
    expect(JSON.stringify(defect.body)).not.toMatch(/boom|SELECT/)
    for (const id of ["events.types_legacy", "events.catalog"]) {
      const answer = await call(id)
      expect([answer.status, codeOf(answer)], id).toEqual([503, "unavailable"])
      expect(JSON.stringify(answer.body)).not.toContain("ECONNREFUSED")
    }
    await broken.dispose()
  })

  it("encodes an answer with its declared schema, which drops what the declaration does not name", async () => {
    const leaky = ManagedRuntime.make(
      Operations.layer(catalog.filter((entry) => entry.id === "health.live"), [{
        group: "health",
        build: Effect.succeed({ "health.live": () => Effect.succeed({ status: "ok", secret: "not for the wire" }) })
      }])
    )
    const answer = await leaky.runPromise(Effect.flatMap(Operations, (operations) => operations.invoke("health.live", anonymous, {})))
    expect(answer.body).toEqual({ status: "ok" })
    await leaky.dispose()
  })
})

describe("input every operation refuses, before and after its schema", () => {
  it("refuses input nested deeper than 64 levels with 400 before any schema walks it, for any operation", async () => {
    const session = await sessionFor(`deep-${randomUUID()}@example.com`)
    const nest = (levels: number): unknown => {
      let value: unknown = "leaf"
      for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { x: value }
      return value
    }
    for (const levels of [65, 2_200, 20_000]) {
      const save = await invoke("tasks.save", session, { payload: { requestUuid: randomUUID(), data: nest(levels) } })
      expect([save.status, codeOf(save)], `tasks.save at ${levels}`).toEqual([400, "invalid_task"])
      const start = await invoke("auth.email.start", anonymous, { payload: { email: nest(levels) } })
      expect([start.status, codeOf(start)], `auth.email.start at ${levels}`).toEqual([400, "invalid_email"])
      const prepare = await invoke("integrationCommands.prepare", keyFrom(session, []), { payload: { operationId: "tasks.save", arguments: { data: nest(levels) } } })
      expect(prepare.status, `integrationCommands.prepare at ${levels}`).toBe(400)
    }
    // At the limit the schema decides as usual (a wrong shape, not the depth).
    const atLimit = await invoke("tasks.save", session, { payload: { requestUuid: randomUUID(), data: nest(63) } })
    expect(atLimit.status).toBe(400)
    expect((atLimit.body as { error: { message: string } }).error.message).not.toContain("nested deeper")
  })

  it("refuses NUL and other control characters in any string with 400, and keeps tabs and newlines in text", async () => {
    for (const q of ["бот\u0000", "\u0000", "a\u0007b", "x\u001b[31m", "x\u007f", "x\u0085", "\ud800"]) {
      const answer = await invoke("listPublications", anonymous, { urlParams: { q } })
      expect([answer.status, codeOf(answer)], JSON.stringify(q)).toEqual([400, "invalid_request"])
      const byCategory = await invoke("listPublications", anonymous, { urlParams: { category: q } })
      expect(byCategory.status, JSON.stringify(q)).toBe(400)
    }
    const nul = await invoke("auth.email.start", anonymous, { payload: { email: "a\u0000b@example.com" } })
    expect([nul.status, codeOf(nul)]).toEqual([400, "invalid_email"])
    const session = await sessionFor(`control-${randomUUID()}@example.com`)
    const withTitle = (title: string) => ({ payload: { requestUuid: randomUUID(), data: { ...taskDraft, title } } })
    expect(codeOf(await invoke("tasks.save", session, withTitle("Bell\u0007 in title")))).toBe("invalid_task")
    expect(codeOf(await invoke("tasks.save", session, { payload: { requestUuid: randomUUID(), data: { ...taskDraft, ["ti\u0000tle"]: "x" } } }))).toBe("invalid_task")
    expect((await invoke("listPublications", anonymous, { path: { "x\u0000": "1" } })).status).toBe(400)
    const text = await invoke("tasks.save", session, {
      payload: { requestUuid: randomUUID(), data: { ...taskDraft, description: "Первая строка\n\tвторая строка с табуляцией\r\nи третья, всё сохраняется" } }
    })
    expect(text.status).toBe(200)
    // Nothing of the refused ones was saved: the one task is the one with newlines.
    expect((await run(runOperation("tasks.list", session, {}))).items).toHaveLength(1)
  })

  it("refuses email addresses with bidirectional, zero-width, format or non-character code points", async () => {
    for (const email of ["admin\u202e@example.com", "ad\u200bmin@example.com", "admin@exa\u200dmple.com", "\ufeffadmin@example.com", "admin\u2066@example.com", "admin\uffff@example.com", "admin\ufdd0@example.com", "admin\u00ad@example.com"]) {
      const answer = await invoke("auth.email.start", anonymous, { payload: { email } })
      expect([answer.status, codeOf(answer)], JSON.stringify(email)).toEqual([400, "invalid_email"])
    }
    expect((await invoke("auth.email.start", anonymous, { payload: { email: `юля.${randomUUID().slice(0, 8)}@пример.рф` } })).status).toBe(200)
  })

  it("quotes at most 300 characters of each schema issue, however long the value sent", async () => {
    const session = await sessionFor(`long-${randomUUID()}@example.com`)
    const answer = await invoke("tasks.save", session, { payload: { requestUuid: randomUUID(), data: { ...taskDraft, title: "я".repeat(65_537) } } })
    expect(codeOf(answer)).toBe("invalid_task")
    const message = (answer.body as { error: { message: string } }).error.message
    expect(message).toMatch(/^data\.title: /)
    expect(message.length).toBeLessThanOrEqual(301)
  })

  it("a value the database refuses (encoding, range: SQLSTATE class 22) is 400, never 503", async () => {
    const refused = (code: string) => new SqlError({ cause: Object.assign(new Error("invalid byte sequence for encoding \"UTF8\": 0x00"), { code }), message: "Failed to execute statement" })
    const picky = ManagedRuntime.make(
      Operations.layer(catalog.filter((entry) => ["events.types", "events.types_legacy", "events.catalog"].includes(entry.id)), [{
        group: "events",
        build: Effect.succeed({
          "events.types": () => Effect.fail(refused("22021")),
          "events.types_legacy": () => Effect.die(refused("22P05")),
          "events.catalog": () => Effect.fail(refused("08006"))
        })
      }])
    )
    const call = (id: string) => picky.runPromise(Effect.flatMap(Operations, (operations) => operations.invoke(id, anonymous, {})))
    for (const id of ["events.types", "events.types_legacy"]) {
      const answer = await call(id)
      expect([answer.status, codeOf(answer)], id).toEqual([400, "invalid_request"])
      expect(JSON.stringify(answer.body)).not.toMatch(/UTF8|0x00|SqlError/)
    }
    // A connection failure is still the database being unavailable.
    expect((await call("events.catalog")).status).toBe(503)
    await picky.dispose()
  })
})
