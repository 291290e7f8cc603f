import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { signIn } from "../../../testing/signIn.js"
import { type RunningHost, startService, untilReady } from "./testing.js"

const origin = "http://localhost:8080"
// Fixed, so sessions signed in before a restart still verify after it.
const secret = "configured-moderators-test-secret-0123456789"
let database: TestDatabase
let db: Pg.Client
const hosts: Array<RunningHost> = []

const start = async (moderators: string | undefined) => {
  const host = await startService({
    env: { DATABASE_URL: database.url, BIRZHA_SECRET: secret, ...(moderators === undefined ? {} : { BIRZHA_MODERATORS: moderators }) },
    publicOrigin: origin,
    trustProxy: true
  })
  hosts.push(host)
  await untilReady(host)
  return host
}

const queueStatus = async (host: RunningHost, cookie: string) =>
  (await fetch(`${host.url}/api/v1/moderation/queue`, { headers: { cookie, origin } })).status

const moderators = async () =>
  (await db.query<{ email: string; source: string }>("SELECT email, source FROM moderators ORDER BY email")).rows

beforeAll(async () => {
  database = await createTestDatabase("configured_moderators", { migrated: true })
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  for (const host of hosts) await host.close()
  await db?.end()
  await database?.drop()
})

describe("BIRZHA_MODERATORS", () => {
  it("makes its addresses moderators at start, and a later start without an address revokes that grant but keeps a CLI grant", async () => {
    // Blanks and empty entries are ignored; addresses compare lower-cased.
    const first = await start(" Boss@Example.com ,, kept@example.com ,")
    expect(await moderators()).toEqual([
      { email: "boss@example.com", source: "config" },
      { email: "kept@example.com", source: "config" }
    ])
    const boss = await signIn({ url: first.url, origin, db, email: "boss@example.com" })
    const stranger = await signIn({ url: first.url, origin, db })
    expect(await queueStatus(first, boss.cookie)).toBe(200)
    expect(await queueStatus(first, stranger.cookie)).toBe(403)

    // `birzha moderation grant` for an address the variable lists too, and for one it does not.
    for (const email of ["kept@example.com", "solo@example.com"]) {
      await db.query("INSERT INTO moderators (email, source) VALUES ($1, 'cli') ON CONFLICT (email) DO UPDATE SET source = 'cli'", [email])
    }
    await first.close()
    hosts.splice(hosts.indexOf(first), 1)

    const second = await start(undefined)
    expect(await moderators()).toEqual([
      { email: "kept@example.com", source: "cli" },
      { email: "solo@example.com", source: "cli" }
    ])
    expect(await queueStatus(second, boss.cookie)).toBe(403)
    const kept = await signIn({ url: second.url, origin, db, email: "kept@example.com" })
    expect(await queueStatus(second, kept.cookie)).toBe(200)
    await second.close()
    hosts.splice(hosts.indexOf(second), 1)

    // Listed again: granted again, and a CLI grant of a listed address stays a CLI grant.
    const third = await start("boss@example.com,kept@example.com")
    expect(await moderators()).toEqual([
      { email: "boss@example.com", source: "config" },
      { email: "kept@example.com", source: "cli" },
      { email: "solo@example.com", source: "cli" }
    ])
    expect(await queueStatus(third, boss.cookie)).toBe(200)
  })

  it("stops the start on an address that is not one, naming the variable, and changes nothing", async () => {
    const before = await moderators()
    for (const value of ["boss@example.com,not-an-address", `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`]) {
      const failed = await startService({ env: { DATABASE_URL: database.url, BIRZHA_SECRET: secret, BIRZHA_MODERATORS: value } }).then(
        (host) => {
          hosts.push(host)
          return "started"
        },
        (error: unknown) => String(error)
      )
      expect(failed).toContain("BIRZHA_MODERATORS")
      expect(failed).toContain("expected comma-separated email addresses")
    }
    expect(await moderators()).toEqual(before)
  })

  it("accepts an address of 254 characters, the Email bound", async () => {
    const longest = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`
    expect(longest).toHaveLength(254)
    await start(longest)
    expect((await moderators()).filter((row) => row.source === "config")).toEqual([{ email: longest, source: "config" }])
  })
})
