import { Mailer, type MailMessage, MailNotAccepted } from "@birzha/domain/internal"
import { runMigrations } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { DevelopmentMailbox, DevelopmentMailboxLive, DevelopmentMailer } from "./DevelopmentMailbox.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

type Services = SqlClient.SqlClient | Mailer | DevelopmentMailbox

let database: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)

beforeAll(async () => {
  database = await createTestDatabase("mailbox")
  runtime = ManagedRuntime.make(
    Layer.mergeAll(DevelopmentMailer, DevelopmentMailboxLive).pipe(
      Layer.provideMerge(testPgLayer(database.url, 5))
    )
  )
  await run(runMigrations)
})

afterAll(async () => {
  await runtime?.dispose()
  await database?.drop()
})

const mail = (to: string, subject: string): MailMessage => ({
  to,
  subject,
  text: `text of ${subject}`,
  html: `<p>html of ${subject}</p>`
})
const send = (message: MailMessage) => Effect.flatMap(Mailer, (mailer) => mailer.send(message))
const list = (query: { readonly to?: string; readonly limit: number }) => Effect.flatMap(DevelopmentMailbox, (mailbox) => mailbox.list(query))

describe("development mailbox", () => {
  it("keeps a sent message with its text and HTML bodies", async () => {
    const before = new Date(Date.now() - 60_000)
    await run(send(mail("kept@example.com", "kept")))
    const [message] = await run(list({ to: "kept@example.com", limit: 10 }))
    expect(message).toMatchObject({ to: "kept@example.com", subject: "kept", text: "text of kept", html: "<p>html of kept</p>" })
    expect(message!.uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(message!.createdAt).toBeInstanceOf(Date)
    expect(message!.createdAt.getTime()).toBeGreaterThan(before.getTime())
  })

  it("lists the newest first, up to the limit", async () => {
    for (const n of [1, 2, 3]) await run(send(mail("order@example.com", `order ${n}`)))
    expect((await run(list({ to: "order@example.com", limit: 10 }))).map((m) => m.subject)).toEqual(["order 3", "order 2", "order 1"])
    expect((await run(list({ to: "order@example.com", limit: 2 }))).map((m) => m.subject)).toEqual(["order 3", "order 2"])
  })

  it("filters by recipient, regardless of case", async () => {
    await run(send(mail("first@example.com", "to first")))
    await run(send(mail("second@example.com", "to second")))
    expect((await run(list({ to: "FIRST@example.com", limit: 10 }))).map((m) => m.subject)).toEqual(["to first"])
    const all = await run(list({ limit: 100 }))
    expect(all.map((m) => m.to)).toEqual(expect.arrayContaining(["first@example.com", "second@example.com", "order@example.com"]))
    expect(all[0]!.subject).toBe("to second")
  })

  it("refuses the message with MailNotAccepted when the database does not keep it", async () => {
    const broken = ManagedRuntime.make(
      Layer.mergeAll(DevelopmentMailer).pipe(Layer.provideMerge(testPgLayer(database.url, 1)))
    )
    try {
      await broken.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE development_mailbox RENAME TO development_mailbox_gone`))
      const exit = await broken.runPromiseExit(send(mail("lost@example.com", "lost")))
      const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toBeInstanceOf(MailNotAccepted)
      expect(error?.message).toContain("development mailbox")
    } finally {
      await broken.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE development_mailbox_gone RENAME TO development_mailbox`))
      await broken.dispose()
    }
  })
})
