import { randomBytes } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { admin } from "../../../../testing/postgresServer.js"
import { eventually } from "../../../../testing/progress.js"
import { PatientPool } from "./PatientPool.js"

// A role allowed one connection: the server refuses its second with 53300 `too_many_connections`,
// as it refuses anyone once every slot of `max_connections` is taken (superusers are exempt from
// a role's limit, so the test connects as this role).
const role = `birzha_one_slot_${randomBytes(4).toString("hex")}`
let database: TestDatabase
let roleUrl: string

beforeAll(async () => {
  database = await createTestDatabase("patient_pool")
  await admin((client) => client.query(`CREATE ROLE "${role}" LOGIN CONNECTION LIMIT 1`))
  const url = new URL(database.url)
  url.username = role
  roleUrl = url.toString()
})
afterAll(async () => {
  await database?.drop()
  await admin((client) => client.query(`DROP ROLE IF EXISTS "${role}"`))
})

/**
 * The role's one slot, taken by a client of its own until `release`, once the connections of the
 * test before have closed (a pool's `end` resolves before its connections are gone).
 */
const takeTheSlot = async () => {
  await admin(async (client) => {
    for (;;) {
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1", [role])
      if (rows[0]?.n === 0) return
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })
  const holder = new Pg.Client({ connectionString: roleUrl })
  await holder.connect()
  return { release: () => holder.end() }
}

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as { readonly code?: string })

describe("the service's connection pool on a full server", () => {
  it("waits for a slot the server refused and runs the statement once one frees, where node-postgres's pool fails at once", async () => {
    const slot = await takeTheSlot()
    const plain = new Pg.Pool({ connectionString: roleUrl, max: 2 })
    const patient = new PatientPool({ connectionString: roleUrl, max: 2, slotWaitMillis: 30_000 })
    try {
      expect((await failureOf(plain.query("SELECT 1")))?.code).toBe("53300")
      const answered = patient.query<{ one: number }>("SELECT 1 AS one")
      let settled = false
      void answered.finally(() => (settled = true))
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(settled).toBe(false)
      await slot.release()
      expect((await answered).rows).toEqual([{ one: 1 }])
    } finally {
      await plain.end()
      await patient.end()
    }
  })

  it("asks again until its wait is over, then fails with the server's refusal", async () => {
    const slot = await takeTheSlot()
    const patient = new PatientPool({ connectionString: roleUrl, max: 2, slotWaitMillis: 600 })
    try {
      const started = Date.now()
      expect((await failureOf(patient.connect()))?.code).toBe("53300")
      // Its last attempt is made once the 600 ms are over, never before.
      expect(Date.now() - started).toBeGreaterThanOrEqual(600)
    } finally {
      await slot.release()
      await patient.end()
    }
  })

  it("fails at once on any other refusal to connect", async () => {
    const url = new URL(roleUrl)
    url.pathname = `/${database.name}_absent`
    // Asked again, it would fail only after ten minutes: past this test's time.
    const patient = new PatientPool({ connectionString: url.toString(), max: 1, slotWaitMillis: 600_000 })
    try {
      // 3D000 invalid_catalog_name: asking again would not help.
      expect((await failureOf(patient.query("SELECT 1")))?.code).toBe("3D000")
    } finally {
      await patient.end()
    }
  })
})

describe("the service's connection pool's idle timeout", () => {
  /** The pool's connections on the server, by the application name only this pool uses. */
  const openOnServer = (applicationName: string) =>
    admin(async (client) =>
      (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [applicationName])).rows[0]!.n
    )

  it("closes each connection once it has been idle for the timeout, never sooner, and keeps the one in use", async () => {
    const applicationName = `birzha_idle_${randomBytes(4).toString("hex")}`
    const idleTimeoutMillis = 400
    const pool = new PatientPool({ connectionString: database.url, application_name: applicationName, max: 3, idleTimeoutMillis })
    const releasedAt = new Map<Pg.PoolClient, number>()
    const idleFor: Array<number> = []
    pool.on("remove", (client) => idleFor.push(Date.now() - releasedAt.get(client)!))
    try {
      const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()])
      expect(await openOnServer(applicationName)).toBe(3)
      const [held, ...given] = clients
      for (const client of given) {
        releasedAt.set(client, Date.now())
        client.release()
      }
      // A connection is counted once the server has seen it close.
      await eventually(() => idleFor.length, (closed) => closed === 2, "the two released connections close")
      // Which connection the pool closes first is its own choice; each closed one had been idle that long.
      expect(pool.totalCount).toBe(1)
      for (const idle of idleFor) expect(idle).toBeGreaterThanOrEqual(idleTimeoutMillis)
      await eventually(() => openOnServer(applicationName), (open) => open === 1, "one connection left on the server")
      expect((await held!.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }])

      releasedAt.set(held!, Date.now())
      held!.release()
      await eventually(() => idleFor.length, (closed) => closed === 3, "the last connection closes")
      expect(pool.totalCount).toBe(0)
      expect(idleFor[2]).toBeGreaterThanOrEqual(idleTimeoutMillis)
      // The pool still serves: a new connection is opened.
      expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }])
    } finally {
      await pool.end()
    }
  })

  it("keeps its `min` connections however long they are idle", async () => {
    const applicationName = `birzha_idle_min_${randomBytes(4).toString("hex")}`
    const pool = new PatientPool({ connectionString: database.url, application_name: applicationName, max: 3, min: 1, idleTimeoutMillis: 200 })
    try {
      const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()])
      for (const client of clients) client.release()
      await eventually(() => pool.totalCount, (open) => open === 1, "the pool is down to its min")
      // Four more idle timeouts: the last connection stays.
      await new Promise((resolve) => setTimeout(resolve, 800))
      expect(pool.totalCount).toBe(1)
      expect(await openOnServer(applicationName)).toBe(1)
    } finally {
      await pool.end()
    }
  })

  it("arms no timer for a statement on an idle connection: neither an idle timer per release nor a connection timer per checkout", async () => {
    const pool = new PatientPool({ connectionString: database.url, max: 2, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000 })
    const original = globalThis.setTimeout
    let armed = 0
    try {
      await pool.query("SELECT 1")
      globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
        armed++
        return original(...args)
      }) as typeof setTimeout
      for (let i = 0; i < 50; i++) await pool.query("SELECT 1")
      expect(armed).toBe(0)
    } finally {
      globalThis.setTimeout = original
      await pool.end()
    }
  })

  it("still gives up on a full pool after the connection timeout", async () => {
    const pool = new PatientPool({ connectionString: database.url, max: 1, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 300 })
    try {
      const held = await pool.connect()
      expect(String(await failureOf(pool.connect()))).toContain("timeout exceeded when trying to connect")
      held.release()
      expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }])
    } finally {
      await pool.end()
    }
  })
})
