import { simpleParser } from "mailparser"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { eventually } from "../../../../testing/progress.js"
import { type RunningHost, startService, untilReady } from "../testing.js"

// Sign-in through real mail: the host sends over SMTP to a real server in this process, the test
// parses the received message like a mail client and signs in with what it contains.
const origin = "http://localhost:8080"
let database: TestDatabase
let host: RunningHost
let smtp: SMTPServer
const inbox: Array<Buffer> = []

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData: (stream, _session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        inbox.push(Buffer.concat(chunks))
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve))
  const port = (smtp.server.address() as { port: number }).port
  database = await createTestDatabase("mail", { migrated: true })
  host = await startService({
    env: { DATABASE_URL: database.url, BIRZHA_SMTP_URL: `smtp://127.0.0.1:${port}`, BIRZHA_MAIL_FROM: "Birzha <sign-in@birzha.test>" },
    publicOrigin: origin
  })
  await untilReady(host)
})
afterAll(async () => {
  await host?.close()
  await database?.drop()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

const post = (path: string, body: unknown) =>
  fetch(`${host.url}${path}`, { method: "POST", headers: { "content-type": "application/json", origin }, body: JSON.stringify(body) })

/** Asks for a sign-in email and reads the message the SMTP server received. */
const receive = async (email: string) => {
  const before = inbox.length
  const started = await post("/api/v1/auth/email/start", { email })
  expect(started.status).toBe(200)
  const { challengeUuid } = (await started.json()) as { challengeUuid: string }
  expect(inbox.length).toBe(before + 1)
  const message = await simpleParser(inbox.at(-1)!)
  return { challengeUuid, message }
}

describe("sign-in by real mail", () => {
  it("delivers a readable message in both languages and signs in with its code", async () => {
    const email = `smtp.code.${Date.now()}@example.com`
    const { challengeUuid, message } = await receive(email)
    expect(message.from?.value[0]).toMatchObject({ name: "Birzha", address: "sign-in@birzha.test" })
    expect(message.to && !Array.isArray(message.to) ? message.to.text : "").toBe(email)
    const text = message.text ?? ""
    expect(typeof message.html).toBe("string")
    expect(text).toMatch(/[А-Яа-я]/)
    expect(text).toMatch(/sign/i)
    const code = text.match(/\b(\d{6})\b/)![1]!
    expect(message.subject).toContain(code)
    const verified = await post("/api/v1/auth/email/verify", { challengeUuid, code })
    expect(verified.status).toBe(200)
    expect(((await verified.json()) as { user: { email: string } }).user.email).toBe(email)
  })

  it("signs in with the link of the message, whose token sits only in the fragment", async () => {
    const email = `smtp.link.${Date.now()}@example.com`
    const { challengeUuid, message } = await receive(email)
    const href = (message.html as string).match(/href="([^"]*\/auth\/link#[^"]*)"/)![1]!.replace(/&amp;/g, "&")
    const link = new URL(href)
    expect(link.origin).toBe(origin)
    expect(link.search).toBe("")
    const fragment = new URLSearchParams(link.hash.slice(1))
    expect(fragment.get("challenge")).toBe(challengeUuid)
    const token = fragment.get("token")!
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const signedIn = await post("/api/v1/auth/email/link", { challengeUuid, token })
    expect(signedIn.status).toBe(200)
    expect(signedIn.headers.get("set-cookie")).toContain("__Host-birzha_session=")
  })
})

describe("a slow mail provider", () => {
  it("holds no database connection: while more sign-in emails than the pool has connections wait on SMTP, readyz and sign-in still answer", async () => {
    // An SMTP server that takes every message and answers only when the test lets it.
    const waiting: Array<() => void> = []
    const slow = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData: (stream, _session, callback) => {
        stream.on("data", () => {})
        stream.on("end", () => waiting.push(() => callback()))
      }
    })
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve))
    const port = (slow.server.address() as { port: number }).port
    const busy = await startService({ env: { DATABASE_URL: database.url, BIRZHA_SMTP_URL: `smtp://127.0.0.1:${port}` }, publicOrigin: origin })
    try {
      await untilReady(busy)
      // The host's pool has 10 connections; 12 starts wait on the provider at once.
      const starts = Array.from({ length: 12 }, (_, i) =>
        fetch(`${busy.url}/api/v1/auth/email/start`, {
          method: "POST",
          headers: { "content-type": "application/json", origin },
          body: JSON.stringify({ email: `slow.${i}.${Date.now()}@example.com` })
        }))
      await eventually(() => waiting.length, (n) => n === 12, "twelve starts waiting on the provider")
      // Every connection would be taken if a start held one while its mail is out: readyz (2 s limit) would say 503.
      const ready = await fetch(`${busy.url}/api/readyz`)
      expect(ready.status).toBe(200)
      for (const release of waiting.splice(0)) release()
      const answers = await Promise.all(starts)
      expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200))
    } finally {
      for (const release of waiting.splice(0)) release()
      await busy.close()
      await new Promise<void>((resolve) => slow.close(() => resolve()))
    }
  })
})
