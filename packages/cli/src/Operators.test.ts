import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { type Finished, runCli } from "./testCli.js"

let database: TestDatabase
let db: Pg.Client

const birzha = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Finished> =>
  runCli(args, { DATABASE_URL: database.url, ...env })

const operators = async () => (await db.query<{ email: string; source: string }>("SELECT email, source FROM operators ORDER BY email")).rows

beforeAll(async () => {
  database = await createTestDatabase("cli_operators", { migrated: true })
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await database?.drop()
})

describe("birzha operators", () => {
  it("grants, lists and revokes the operator role by address; BIRZHA_OPERATORS is applied at each start and a grant by hand outlives it", async () => {
    expect((await birzha(["migrate"], { BIRZHA_OPERATORS: " Boss@Example.com ,, " })).code).toBe(0)
    expect(await operators()).toEqual([{ email: "boss@example.com", source: "config" }])

    const granted = await birzha(["operators", "grant", "Helper@Example.com"])
    expect([granted.code, granted.stdout]).toEqual([0, expect.stringContaining("helper@example.com is an operator")])
    const listed = await birzha(["operators", "list"])
    expect(listed.stdout).toMatch(/^boss@example\.com {2}config {2}granted .+\nhelper@example\.com {2}cli {2}granted .+\n$/)

    // Unlisted at the next start: the configured grant goes, the one by hand stays.
    expect((await birzha(["migrate"])).code).toBe(0)
    expect(await operators()).toEqual([{ email: "helper@example.com", source: "cli" }])

    const revoked = await birzha(["operators", "revoke", "helper@example.com"], { BIRZHA_OPERATORS: "helper@example.com" })
    expect(revoked.code).toBe(0)
    expect(revoked.stderr).toContain("listed in BIRZHA_OPERATORS")
    expect(await operators()).toEqual([])
    const again = await birzha(["operators", "revoke", "helper@example.com"])
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("helper@example.com is not an operator")])
    const bad = await birzha(["operators", "grant", "not-an-address"])
    expect(bad.code).not.toBe(0)
    expect((await birzha(["migrate"], { BIRZHA_OPERATORS: "boss@example.com,nope" })).stderr).toContain("BIRZHA_OPERATORS")
  })
})
