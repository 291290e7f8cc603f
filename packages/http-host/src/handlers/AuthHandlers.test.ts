import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../../../testing/net.js"
import type { TestDatabase } from "../../../../testing/postgres.js"
import { type RunningHost, startService, untilReady } from "../testing.js"
import { startTestService, type TestService } from "../testService.js"

const origin = "http://localhost:8080"
let service: TestService
let database: TestDatabase
let host: RunningHost
let db: Pg.Client
let ipCounter = 0
/** Each test signs in from its own client address, so the per-address limit of one test does not touch another. */
const nextIp = () => `203.0.113.${++ipCounter}`
let emailCounter = 0
const nextEmail = (label = "user") => `${label}.${++emailCounter}.${Date.now()}@example.com`

beforeAll(async () => {
  service = await startTestService("auth", { publicOrigin: origin, trustProxy: true })
  ;({ database, host, db } = service)
})
afterAll(async () => {
  await service?.close()
})

interface Call {
  readonly origin?: string | null
  readonly cookie?: string
  readonly ip?: string
  readonly base?: string
}

const post = (path: string, body: unknown, call: Call = {}) =>
  fetch(`${call.base ?? host.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(call.origin === null ? {} : { origin: call.origin ?? origin }),
      ...(call.cookie === undefined ? {} : { cookie: call.cookie }),
      ...(call.ip === undefined ? {} : { "x-forwarded-for": call.ip })
    },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

const get = (path: string, call: Call = {}) =>
  fetch(`${call.base ?? host.url}${path}`, { headers: call.cookie === undefined ? {} : { cookie: call.cookie } })

const errorOf = async (response: Response) => ((await response.json()) as { error: { code: string; message: string } }).error

const mailTo = async (email: string) => {
  const { rows } = await db.query<{ text_body: string; html_body: string; subject: string }>(
    "SELECT text_body, html_body, subject FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC",
    [email.toLowerCase()]
  )
  return rows
}

const secretsOf = (text: string) => {
  const code = text.match(/\b(\d{6})\b/)?.[1]
  const link = text.match(/(http:\/\/localhost:8080\/auth\/link#challenge=([0-9a-f-]{36})&token=([A-Za-z0-9_-]{43}))/)
  if (code === undefined || link === null) throw new Error(`no code or link in:\n${text}`)
  return { code, link: link[1]!, challengeUuid: link[2]!, token: link[3]! }
}

/** start, then read the code and link from the development mailbox. */
const start = async (email: string, ip: string) => {
  const response = await post("/api/v1/auth/email/start", { email }, { ip })
  expect(response.status, await response.clone().text()).toBe(200)
  const body = (await response.json()) as { challengeUuid: string; expiresAt: string; resendAfterSeconds: number }
  const [mail] = await mailTo(email)
  const secrets = secretsOf(mail!.text_body)
  expect(secrets.challengeUuid).toBe(body.challengeUuid)
  return { ...body, ...secrets }
}

const cookieOf = (response: Response) => {
  const header = response.headers.get("set-cookie") ?? ""
  const value = header.match(/__Host-birzha_session=([^;]*)/)?.[1]
  return { header, value, cookie: `__Host-birzha_session=${value}` }
}

const signIn = async (email = nextEmail(), ip = nextIp()) => {
  const challenge = await start(email, ip)
  const response = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })
  expect(response.status).toBe(200)
  return { email, ip, cookie: cookieOf(response).cookie, session: (await response.json()) as AuthSessionBody }
}

interface AuthSessionBody {
  user: { uuid: string; email: string }
  profile: { uuid: string; name: string; type: string }
  expiresAt: string
}

/** Moves a challenge and the address's rate-limit history into the past, as if `seconds` had elapsed. */
const elapse = async (seconds: number, email: string) => {
  await db.query("UPDATE rate_limit_hits SET at = at - make_interval(secs => $1) WHERE subject = $2", [seconds, email])
  await db.query("UPDATE sign_in_challenges SET created_at = created_at - make_interval(secs => $1), expires_at = expires_at - make_interval(secs => $1) WHERE email = $2", [seconds, email])
}

const count = async (sql: string, params: ReadonlyArray<unknown>) => Number((await db.query<{ n: string }>(sql, [...params])).rows[0]!.n)

describe("start", () => {
  it("emails a code and a link for one challenge, valid 10 minutes, and creates no account", async () => {
    const email = nextEmail()
    const before = Date.now()
    const challenge = await start(email, nextIp())
    expect(challenge.resendAfterSeconds).toBe(60)
    const expires = new Date(challenge.expiresAt).getTime()
    expect(expires - before).toBeGreaterThan(9.9 * 60_000)
    expect(expires - before).toBeLessThan(10.1 * 60_000)
    // The answer has exactly these fields; the link token travels only in the email.
    const answer = await post("/api/v1/auth/email/start", { email: nextEmail() }, { ip: nextIp() })
    expect(Object.keys(await answer.json()).sort()).toEqual(["challengeUuid", "expiresAt", "resendAfterSeconds"])
    expect(await count("SELECT count(*) AS n FROM accounts WHERE email = $1", [email])).toBe(0)
    const { rows } = await db.query<{ code_hash: string; link_hash: string }>("SELECT code_hash, link_hash FROM sign_in_challenges WHERE uuid = $1", [challenge.challengeUuid])
    expect(rows[0]!.code_hash).not.toContain(challenge.code)
    expect(rows[0]!.link_hash).not.toContain(challenge.token)
  })

  it("accepts an address of 254 characters and refuses 255 with invalid_email", async () => {
    const local = "a".repeat(64)
    const domain = (n: number) => `${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(n)}.com`
    // local (64) + "@" + 63 + "." + 63 + "." + n + ".com" = 197 + n
    const at254 = `${local}@${domain(254 - 197)}`
    expect(at254.length).toBe(254)
    const ok = await post("/api/v1/auth/email/start", { email: at254 }, { ip: nextIp() })
    expect(ok.status).toBe(200)
    const at255 = `${local}@${domain(255 - 197)}`
    expect(at255.length).toBe(255)
    const refused = await post("/api/v1/auth/email/start", { email: at255 }, { ip: nextIp() })
    expect(refused.status).toBe(400)
    expect((await errorOf(refused)).code).toBe("invalid_email")
  })

  it("answers a malformed address with invalid_email and a malformed request with invalid_request", async () => {
    for (const email of ["no-at-sign", "two@@example.com", "space in@example.com", "x@nodot", ""]) {
      const response = await post("/api/v1/auth/email/start", { email }, { ip: nextIp() })
      expect(response.status).toBe(400)
      expect((await errorOf(response)).code).toBe("invalid_email")
    }
    for (const body of ["{not json", JSON.stringify({ email: "a@example.com", extra: true }), JSON.stringify([1])]) {
      const response = await post("/api/v1/auth/email/start", body, { ip: nextIp() })
      expect(response.status).toBe(400)
      expect((await errorOf(response)).code).toBe("invalid_request")
    }
  })
})

describe("the Origin rule", () => {
  const foreign = [null, "http://evil.example", "http://localhost:8080/", "https://localhost:8080", "http://localhost:8081"] as const

  it("refuses start with 403 forbidden_origin and sends, stores and counts nothing", async () => {
    const email = nextEmail()
    const ip = nextIp()
    for (const o of foreign) {
      const response = await post("/api/v1/auth/email/start", { email }, { origin: o, ip })
      expect(response.status).toBe(403)
      expect((await errorOf(response)).code).toBe("forbidden_origin")
    }
    expect(await mailTo(email)).toEqual([])
    expect(await count("SELECT count(*) AS n FROM sign_in_challenges WHERE email = $1", [email])).toBe(0)
    expect(await count("SELECT count(*) AS n FROM rate_limit_hits WHERE subject IN ($1, $2)", [email, ip])).toBe(0)
  })

  it("refuses verify and link with 403 and leaves the challenge usable", async () => {
    const email = nextEmail()
    const ip = nextIp()
    const challenge = await start(email, ip)
    for (const o of foreign) {
      const verify = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { origin: o, ip })
      expect(verify.status).toBe(403)
      expect((await errorOf(verify)).code).toBe("forbidden_origin")
      expect(verify.headers.get("set-cookie")).toBeNull()
      const link = await post("/api/v1/auth/email/link", { challengeUuid: challenge.challengeUuid, token: challenge.token }, { origin: o, ip })
      expect(link.status).toBe(403)
      expect((await errorOf(link)).code).toBe("forbidden_origin")
    }
    expect(await count("SELECT count(*) AS n FROM accounts WHERE email = $1", [email])).toBe(0)
    const ok = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })
    expect(ok.status).toBe(200)
  })

  it("refuses logout with 403 and keeps the session", async () => {
    const { cookie } = await signIn()
    for (const o of foreign) {
      const response = await post("/api/v1/auth/logout", "", { origin: o, cookie })
      expect(response.status).toBe(403)
      expect((await errorOf(response)).code).toBe("forbidden_origin")
    }
    expect((await get("/api/v1/auth/session", { cookie })).status).toBe(200)
  })
})

describe("the sign-in challenge", () => {
  it("verify with the right code signs in: account, private individual profile and session, and the link dies", async () => {
    const email = nextEmail("Mixed.Case")
    const ip = nextIp()
    const challenge = await start(email.toUpperCase(), ip)
    const response = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("no-store")
    const session = (await response.json()) as AuthSessionBody
    expect(Object.keys(session).sort()).toEqual(["expiresAt", "profile", "user"])
    expect(Object.keys(session.user).sort()).toEqual(["email", "uuid"])
    expect(Object.keys(session.profile).sort()).toEqual(["name", "type", "uuid"])
    expect(session.user.email).toBe(email.toLowerCase())
    expect(session.profile.type).toBe("Физлицо")
    const { rows } = await db.query<{ is_public: boolean }>("SELECT is_public FROM profiles WHERE uuid = $1", [session.profile.uuid])
    expect(rows[0]!.is_public).toBe(false)
    const { value } = cookieOf(response)
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(JSON.stringify(session)).not.toContain(value!)
    const link = await post("/api/v1/auth/email/link", { challengeUuid: challenge.challengeUuid, token: challenge.token }, { ip })
    expect(link.status).toBe(400)
    expect((await errorOf(link)).code).toBe("invalid_link")
    const again = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })
    expect((await errorOf(again)).code).toBe("invalid_code")
  })

  it("the link signs in and the code dies", async () => {
    const email = nextEmail()
    const ip = nextIp()
    const challenge = await start(email, ip)
    const response = await post("/api/v1/auth/email/link", { challengeUuid: challenge.challengeUuid, token: challenge.token }, { ip })
    expect(response.status).toBe(200)
    expect(((await response.json()) as AuthSessionBody).user.email).toBe(email)
    const verify = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })
    expect(verify.status).toBe(400)
    expect((await errorOf(verify)).code).toBe("invalid_code")
  })

  it("four wrong guesses leave the challenge active; the fifth exhausts it", async () => {
    const ip = nextIp()
    const first = await start(nextEmail(), ip)
    const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")
    for (let i = 0; i < 4; i++) {
      const response = await post("/api/v1/auth/email/verify", { challengeUuid: first.challengeUuid, code: wrong(first.code) }, { ip })
      expect((await errorOf(response)).code).toBe("invalid_code")
    }
    expect((await post("/api/v1/auth/email/verify", { challengeUuid: first.challengeUuid, code: first.code }, { ip })).status).toBe(200)

    const second = await start(nextEmail(), ip)
    for (let i = 0; i < 5; i++) {
      await post("/api/v1/auth/email/verify", { challengeUuid: second.challengeUuid, code: wrong(second.code) }, { ip })
    }
    const right = await post("/api/v1/auth/email/verify", { challengeUuid: second.challengeUuid, code: second.code }, { ip })
    expect(right.status).toBe(400)
    expect((await errorOf(right)).code).toBe("invalid_code")
    const link = await post("/api/v1/auth/email/link", { challengeUuid: second.challengeUuid, token: second.token }, { ip })
    expect((await errorOf(link)).code).toBe("invalid_link")
  })

  it("expires after 10 minutes for code and link alike", async () => {
    const email = nextEmail()
    const ip = nextIp()
    const challenge = await start(email, ip)
    await elapse(9 * 60, email)
    await db.query("UPDATE sign_in_challenges SET expires_at = now() - interval '1 second' WHERE uuid = $1", [challenge.challengeUuid])
    const verify = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })
    expect((await errorOf(verify)).code).toBe("invalid_code")
    const link = await post("/api/v1/auth/email/link", { challengeUuid: challenge.challengeUuid, token: challenge.token }, { ip })
    expect((await errorOf(link)).code).toBe("invalid_link")
  })

  it("a newer start supersedes the older link, while the older code still works", async () => {
    const email = nextEmail()
    const ip = nextIp()
    const older = await start(email, ip)
    await elapse(61, email)
    const newer = await start(email, ip)
    expect(newer.challengeUuid).not.toBe(older.challengeUuid)
    const link = await post("/api/v1/auth/email/link", { challengeUuid: older.challengeUuid, token: older.token }, { ip })
    expect((await errorOf(link)).code).toBe("invalid_link")
    const code = await post("/api/v1/auth/email/verify", { challengeUuid: older.challengeUuid, code: older.code }, { ip })
    expect(code.status).toBe(200)
  })

  it("a challenge without a link token works by code only", async () => {
    const email = nextEmail()
    const ip = nextIp()
    const challenge = await start(email, ip)
    await db.query("UPDATE sign_in_challenges SET link_hash = NULL WHERE uuid = $1", [challenge.challengeUuid])
    const link = await post("/api/v1/auth/email/link", { challengeUuid: challenge.challengeUuid, token: challenge.token }, { ip })
    expect((await errorOf(link)).code).toBe("invalid_link")
    expect((await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })).status).toBe(200)
  })

  it("answers malformed and missing codes and tokens with invalid_code and invalid_link", async () => {
    const ip = nextIp()
    const challenge = await start(nextEmail(), ip)
    for (const code of ["12345", "1234567", "abcdef", ""]) {
      const response = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code }, { ip })
      expect((await errorOf(response)).code).toBe("invalid_code")
    }
    for (const body of [{ challengeUuid: challenge.challengeUuid }, { challengeUuid: challenge.challengeUuid, token: "short" }, { challengeUuid: "nope", token: challenge.token }]) {
      const response = await post("/api/v1/auth/email/link", body, { ip })
      expect(response.status).toBe(400)
      expect((await errorOf(response)).code).toBe("invalid_link")
    }
    const unknown = await post("/api/v1/auth/email/verify", { challengeUuid: "00000000-0000-4000-8000-000000000000", code: "123456" }, { ip })
    expect((await errorOf(unknown)).code).toBe("invalid_code")
    expect((await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })).status).toBe(200)
  })

  it("never hands an imported profile with the same address to the new account", async () => {
    const email = nextEmail("imported")
    await db.query("INSERT INTO profiles (id, name, type, imported_email, is_public) VALUES ($1, 'Imported', 'ИП', $2, true)", [`imp${emailCounter}`, email])
    const { session } = await signIn(email)
    const { rows } = await db.query<{ account_uuid: string | null; name: string }>("SELECT account_uuid, name FROM profiles WHERE imported_email = $1", [email])
    expect(rows).toEqual([{ account_uuid: null, name: "Imported" }])
    expect(session.profile.name).not.toBe("Imported")
  })

  it("a link for an account deleted since answers 410 and creates no session; its code answers invalid_code", async () => {
    const first = await signIn()
    const ip = nextIp()
    await elapse(61, first.email)
    const forLink = await start(first.email, ip)
    await elapse(61, first.email)
    const forCode = await start(first.email, ip)
    const deleted = await post("/api/v1/commands/accounts.delete", { confirmEmail: first.email }, { cookie: first.cookie })
    expect(deleted.status).toBe(204)
    const link = await post("/api/v1/auth/email/link", { challengeUuid: forLink.challengeUuid, token: forLink.token }, { ip })
    // the older link was superseded by the newer start; use the newer one's link for the 410
    expect(link.status).toBe(400)
    const gone = await post("/api/v1/auth/email/link", { challengeUuid: forCode.challengeUuid, token: forCode.token }, { ip })
    expect(gone.status).toBe(410)
    expect(gone.headers.get("set-cookie")).toBeNull()
    const sessions = await count("SELECT count(*) AS n FROM sessions s JOIN accounts a ON a.uuid = s.account_uuid WHERE a.email = $1 AND s.revoked_at IS NULL", [first.email])
    expect(sessions).toBe(0)
    await elapse(61, first.email)
    const third = await start(first.email, ip)
    await db.query("UPDATE sign_in_challenges SET account_uuid = $1 WHERE uuid = $2", [first.session.user.uuid, third.challengeUuid])
    const code = await post("/api/v1/auth/email/verify", { challengeUuid: third.challengeUuid, code: third.code }, { ip })
    expect((await errorOf(code)).code).toBe("invalid_code")
  })
})

describe("limits", () => {
  it("a second start within 60 s answers 429 with the real remaining wait", async () => {
    const email = nextEmail()
    const ip = nextIp()
    await start(email, ip)
    const again = await post("/api/v1/auth/email/start", { email }, { ip })
    expect(again.status).toBe(429)
    expect((await errorOf(again)).code).toBe("rate_limited")
    const retryAfter = Number(again.headers.get("retry-after"))
    expect(Number.isInteger(retryAfter)).toBe(true)
    expect(retryAfter).toBeGreaterThanOrEqual(58)
    expect(retryAfter).toBeLessThanOrEqual(60)
    await elapse(45, email)
    const later = await post("/api/v1/auth/email/start", { email }, { ip })
    const wait = Number(later.headers.get("retry-after"))
    expect(wait).toBeGreaterThanOrEqual(13)
    expect(wait).toBeLessThanOrEqual(15)
    await elapse(16, email)
    expect((await post("/api/v1/auth/email/start", { email }, { ip })).status).toBe(200)
  })

  it("allows 5 emails per address per hour, then waits for the oldest to leave the hour", async () => {
    const email = nextEmail()
    const ip = nextIp()
    for (let i = 0; i < 5; i++) {
      await start(email, ip)
      await elapse(61, email)
    }
    const sixth = await post("/api/v1/auth/email/start", { email }, { ip })
    expect(sixth.status).toBe(429)
    // The oldest of the five was sent 5 × 61 s ago: it leaves the hour in 3600 - 305 s.
    const retryAfter = Number(sixth.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(3600 - 305 - 2)
    expect(retryAfter).toBeLessThanOrEqual(3600 - 305)
  })

  it("allows 20 emails per client address per hour", async () => {
    const ip = nextIp()
    for (let i = 0; i < 20; i++) {
      expect((await post("/api/v1/auth/email/start", { email: nextEmail("ip") }, { ip })).status).toBe(200)
    }
    const over = await post("/api/v1/auth/email/start", { email: nextEmail("ip") }, { ip })
    expect(over.status).toBe(429)
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(3590)
    expect((await post("/api/v1/auth/email/start", { email: nextEmail("ip") }, { ip: nextIp() })).status).toBe(200)
  })

  it("keeps its counts across a restart of the host", async () => {
    const email = nextEmail()
    const ip = nextIp()
    await start(email, ip)
    const restarted = await startService({ env: { DATABASE_URL: database.url }, publicOrigin: origin, trustProxy: true })
    try {
      await host.close()
      await untilReady(restarted)
      const again = await post("/api/v1/auth/email/start", { email }, { ip, base: restarted.url })
      expect(again.status).toBe(429)
      expect(Number(again.headers.get("retry-after"))).toBeGreaterThanOrEqual(55)
    } finally {
      host = restarted
    }
  })
})

describe("sessions", () => {
  it("sets the cookie Secure, HttpOnly, SameSite=Lax, Path=/, for 30 days, without a Domain", async () => {
    const ip = nextIp()
    const challenge = await start(nextEmail(), ip)
    const response = await post("/api/v1/auth/email/verify", { challengeUuid: challenge.challengeUuid, code: challenge.code }, { ip })
    const { header } = cookieOf(response)
    const attributes = header.split(";").map((part) => part.trim().toLowerCase())
    expect(attributes).toContain("secure")
    expect(attributes).toContain("httponly")
    expect(attributes).toContain("samesite=lax")
    expect(attributes).toContain("path=/")
    expect(attributes.some((a) => a.startsWith("domain"))).toBe(false)
    const maxAge = Number(attributes.find((a) => a.startsWith("max-age="))!.split("=")[1])
    expect(maxAge).toBeGreaterThan(30 * 86400 - 60)
    expect(maxAge).toBeLessThanOrEqual(30 * 86400)
  })

  it("answers the session with no-store, and 401 without a cookie or with an unknown one", async () => {
    const { cookie, session } = await signIn()
    const response = await get("/api/v1/auth/session", { cookie })
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("no-store")
    expect(await response.json()).toEqual(session)
    expect((await get("/api/v1/auth/session")).status).toBe(401)
    const unknown = await get("/api/v1/auth/session", { cookie: "__Host-birzha_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" })
    expect(unknown.status).toBe(401)
    expect((await errorOf(unknown)).code).toBe("unauthenticated")
  })

  it("refuses an expired session with 401", async () => {
    const { cookie, session } = await signIn()
    await db.query("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE account_uuid = $1", [session.user.uuid])
    expect((await get("/api/v1/auth/session", { cookie })).status).toBe(401)
  })

  it("logout revokes the session, clears the cookie, and is idempotent", async () => {
    const { cookie } = await signIn()
    const out = await post("/api/v1/auth/logout", "", { cookie })
    expect(out.status).toBe(204)
    expect(out.headers.get("set-cookie")).toMatch(/__Host-birzha_session=;.*Max-Age=0/i)
    expect((await get("/api/v1/auth/session", { cookie })).status).toBe(401)
    expect((await post("/api/v1/auth/logout", "", { cookie })).status).toBe(204)
    expect((await post("/api/v1/auth/logout", "")).status).toBe(204)
  })

  it("refuses the session of a deleted account or a deleted profile with 401", async () => {
    const a = await signIn()
    await db.query("UPDATE accounts SET deleted_at = now() WHERE uuid = $1", [a.session.user.uuid])
    expect((await get("/api/v1/auth/session", { cookie: a.cookie })).status).toBe(401)
    const b = await signIn()
    await db.query("UPDATE profiles SET deleted_at = now() WHERE uuid = $1", [b.session.profile.uuid])
    expect((await get("/api/v1/auth/session", { cookie: b.cookie })).status).toBe(401)
  })

  it("stores only keyed hashes of session tokens", async () => {
    const { cookie, session } = await signIn()
    const token = cookie.split("=")[1]!
    const { rows } = await db.query<{ token_hash: string }>("SELECT token_hash FROM sessions WHERE account_uuid = $1", [session.user.uuid])
    expect(rows.length).toBe(1)
    expect(rows[0]!.token_hash).not.toContain(token)
  })
})

describe("the mail provider", () => {
  it("refused or unreachable: start answers 503 and leaves no active challenge and no count", async () => {
    const port = await freePort()
    const noMail = await startService({
      env: { DATABASE_URL: database.url, BIRZHA_SMTP_URL: `smtp://127.0.0.1:${port}` },
      publicOrigin: origin,
      trustProxy: true
    })
    try {
      await untilReady(noMail)
      const email = nextEmail()
      const ip = nextIp()
      const response = await post("/api/v1/auth/email/start", { email }, { ip, base: noMail.url })
      expect(response.status).toBe(503)
      expect(JSON.stringify(await response.json())).not.toContain(String(port))
      expect(await count("SELECT count(*) AS n FROM sign_in_challenges WHERE email = $1", [email])).toBe(0)
      expect(await count("SELECT count(*) AS n FROM rate_limit_hits WHERE subject IN ($1, $2)", [email, ip])).toBe(0)
    } finally {
      await noMail.close()
    }
  })
})
