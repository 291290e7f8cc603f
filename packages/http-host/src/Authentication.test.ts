import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn } from "../../../testing/signIn.js"
import { type RunningHost } from "./testing.js"
import { startTestService, type TestService } from "./testService.js"

const origin = "http://localhost:8080"
let service: TestService
let host: RunningHost
let db: Pg.Client

beforeAll(async () => {
  service = await startTestService("authentication", { publicOrigin: origin, trustProxy: true })
  ;({ host, db } = service)
})
afterAll(async () => {
  await service?.close()
})

const session = (cookie: string) => fetch(`${host.url}/api/v1/auth/session`, { headers: { cookie } }).then((response) => response.status)

/**
 * Enough sequential lookups that the session statement runs prepared: the pool hands out its most
 * recently idle connection, and a statement is prepared at its second run on a connection.
 */
const warm = async (cookie: string) => {
  for (let i = 0; i < 5; i++) expect(await session(cookie)).toBe(200)
}

describe("the session lookup of every authenticated request", () => {
  it("refuses a session on the request right after it is revoked", async () => {
    const user = await signIn({ url: host.url, origin, db })
    await warm(user.cookie)
    await db.query("UPDATE sessions SET revoked_at = now() WHERE account_uuid = $1", [user.accountUuid])
    expect(await session(user.cookie)).toBe(401)
  })

  it("refuses a session on the request right after it expires, and accepts it up to then", async () => {
    const user = await signIn({ url: host.url, origin, db })
    await warm(user.cookie)
    // Still valid one minute before the end; past it the next request is refused.
    await db.query("UPDATE sessions SET expires_at = now() + interval '1 minute' WHERE account_uuid = $1", [user.accountUuid])
    expect(await session(user.cookie)).toBe(200)
    await db.query("UPDATE sessions SET expires_at = now() - interval '1 millisecond' WHERE account_uuid = $1", [user.accountUuid])
    expect(await session(user.cookie)).toBe(401)
  })

  it("refuses the session of a deleted account on the next request", async () => {
    const user = await signIn({ url: host.url, origin, db })
    await warm(user.cookie)
    await db.query("UPDATE accounts SET deleted_at = now() WHERE uuid = $1", [user.accountUuid])
    expect(await session(user.cookie)).toBe(401)
  })

  it("answers 401 for an unknown token and for none, without touching a valid one", async () => {
    const user = await signIn({ url: host.url, origin, db })
    expect(await session("__Host-birzha_session=unknown-token")).toBe(401)
    expect(await session("")).toBe(401)
    expect(await session(user.cookie)).toBe(200)
  })
})
