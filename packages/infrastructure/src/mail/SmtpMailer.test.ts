import { Mailer, MailNotAccepted } from "@birzha/domain/internal"
import { signInEmail } from "@birzha/domain/internal"
import { Effect, Exit, Redacted } from "effect"
import { simpleParser } from "mailparser"
import { type AddressInfo, createServer, type Server, type Socket } from "node:net"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"
import { afterEach, describe, expect, it } from "vitest"
import { type SmtpMailerSettings, SmtpMailerLive } from "./SmtpMailer.js"

interface Received {
  readonly from: string | undefined
  readonly to: ReadonlyArray<string>
  readonly raw: Buffer
}

const portOf = (address: string | AddressInfo | null): number => {
  if (address === null || typeof address === "string") return expect.fail(`not listening on a TCP port: ${String(address)}`)
  return address.port
}

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A real SMTP server on 127.0.0.1, plain text, keeping what it receives. */
const startSmtpServer = async (options: SMTPServerOptions = {}) => {
  const received: Array<Received> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks)
        })
        callback()
      })
    },
    ...options
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const port = portOf(server.server.address())
  return { port, received }
}

/** A TCP listener that accepts and never says a word: an SMTP server that hangs. */
const startSilentServer = async () => {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  closers.push(() =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  )
  return portOf(server.address())
}

/** A port nothing listens on: bound once to learn a free number, then closed. */
const closedPort = async () => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = portOf(server.address())
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const link = "http://localhost:8080/auth/link#challenge=7c9e6679-7425-40de-944b-e07fc1f90ae7&token=Zm9v_YmFy-YmF6"
const message = signInEmail({ to: "anna@example.com", code: "042917", link, expiresAt: new Date("2026-05-01T14:32:00Z"), minutes: 10 })

const send = (settings: SmtpMailerSettings) =>
  Effect.runPromiseExit(Effect.flatMap(Mailer, (mailer) => mailer.send(message)).pipe(Effect.provide(SmtpMailerLive(settings))))

const settingsFor = (url: string, extra: Partial<SmtpMailerSettings> = {}): SmtpMailerSettings => ({
  url: Redacted.make(url),
  from: "Birzha <no-reply@birzha.test>",
  ...extra
})

const refusal = (exit: Exit.Exit<void, MailNotAccepted>): MailNotAccepted => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return expect.fail(`expected MailNotAccepted, got ${String(exit)}`)
  expect(exit.cause.error).toBeInstanceOf(MailNotAccepted)
  return exit.cause.error
}

describe("SMTP mailer", () => {
  it("hands the message to the SMTP server with text, HTML, the code and the exact link", async () => {
    const smtp = await startSmtpServer()
    const exit = await send(settingsFor(`smtp://127.0.0.1:${smtp.port}`))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(smtp.received).toHaveLength(1)
    const [mail] = smtp.received
    expect(mail!.to).toEqual(["anna@example.com"])
    expect(mail!.from).toBe("no-reply@birzha.test")
    const parsed = await simpleParser(mail!.raw)
    expect(parsed.subject).toBe(message.subject)
    expect(parsed.subject).toContain("042917")
    expect(parsed.from?.text).toContain("no-reply@birzha.test")
    expect(parsed.text).toContain("042917")
    expect(parsed.text).toContain(link)
    expect(typeof parsed.html).toBe("string")
    const html = typeof parsed.html === "string" ? parsed.html : ""
    expect(html).toContain("042917")
    expect(html).toContain(`href="${link.replace(/&/g, "&amp;")}"`)
  })

  it("logs in with the user and password of the URL", async () => {
    const logins: Array<{ username: string | undefined; password: string | null | undefined }> = []
    const smtp = await startSmtpServer({
      allowInsecureAuth: true,
      onAuth: (auth, _session, callback) => {
        logins.push({ username: auth.username, password: auth.password })
        callback(null, { user: auth.username })
      }
    })
    const exit = await send(settingsFor(`smtp://mailer%40birzha.test:s%3Acret@127.0.0.1:${smtp.port}`))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(logins).toEqual([{ username: "mailer@birzha.test", password: "s:cret" }])
    expect(smtp.received).toHaveLength(1)
  })

  it("fails with MailNotAccepted when the server refuses the recipient, without the password", async () => {
    const smtp = await startSmtpServer({
      allowInsecureAuth: true,
      onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
      onRcptTo: (_address, _session, callback) =>
        callback(Object.assign(new Error("5.1.1 No such mailbox here"), { responseCode: 550 }))
    })
    const error = refusal(await send(settingsFor(`smtp://user:secretpw@127.0.0.1:${smtp.port}`)))
    expect(error.message).toContain("550")
    expect(error.message).toContain(`127.0.0.1:${smtp.port}`)
    expect(error.message).not.toContain("secretpw")
    expect(error.message).not.toContain("smtp://")
    expect(smtp.received).toHaveLength(0)
  })

  it("fails with MailNotAccepted when the server refuses the message at DATA", async () => {
    const smtp = await startSmtpServer({
      onData: (stream, _session, callback) => {
        stream.resume()
        stream.on("end", () => callback(Object.assign(new Error("5.7.1 Message rejected as spam"), { responseCode: 554 })))
      }
    })
    const error = refusal(await send(settingsFor(`smtp://127.0.0.1:${smtp.port}`)))
    expect(error.message).toContain("554")
    expect(error.message).toContain("spam")
  })

  it("fails with MailNotAccepted when the login is refused, without the password", async () => {
    const smtp = await startSmtpServer({
      allowInsecureAuth: true,
      onAuth: (_auth, _session, callback) => callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }))
    })
    const error = refusal(await send(settingsFor(`smtp://user:secretpw@127.0.0.1:${smtp.port}`)))
    expect(error.message).toContain("535")
    expect(error.message).not.toContain("secretpw")
  })

  it("fails fast with MailNotAccepted when nothing listens on the port, without the password", async () => {
    const port = await closedPort()
    const started = Date.now()
    const error = refusal(await send(settingsFor(`smtp://user:secretpw@127.0.0.1:${port}`)))
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(error.message).toContain(`127.0.0.1:${port}`)
    expect(error.message).toContain("ECONNREFUSED")
    expect(error.message).not.toContain("secretpw")
    expect(error.message).not.toContain("user:")
  })

  it("gives up with MailNotAccepted when the server never greets", async () => {
    const port = await startSilentServer()
    const started = Date.now()
    const error = refusal(await send(settingsFor(`smtp://user:secretpw@127.0.0.1:${port}`, { connectionTimeout: "300 millis", socketTimeout: "300 millis" })))
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(error.message).toMatch(/tim(e|ed) ?out/i)
    expect(error.message).not.toContain("secretpw")
  })
})
