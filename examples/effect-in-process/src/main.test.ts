import { Effect } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { BirzhaOnPool, saveSubmitAndReadEvents } from "./main.js"

let database: TestDatabase
let pool: Pg.Pool
beforeAll(async () => {
  database = await createTestDatabase("example_in_process", { migrated: true })
  pool = new Pg.Pool({ connectionString: database.url, max: 4 })
})
afterAll(async () => {
  await pool?.end()
  await database?.drop()
})

describe("examples/effect-in-process", () => {
  it("saves a task draft, submits it and reads the events it caused, in process on the program's own pool", async () => {
    const settings = { publicOrigin: "http://localhost:3000", serverSecret: "example-test-secret-of-at-least-32-characters" }
    const result = await Effect.runPromise(
      saveSubmitAndReadEvents("in.process.author@example.com").pipe(Effect.provide(BirzhaOnPool(pool, settings)))
    )
    expect(result.draft.status).toBe("draft")
    expect(result.submitted).toMatchObject({ uuid: result.draft.uuid, status: "pending" })
    expect(result.events).toEqual(["publication.draft_saved", "publication.submitted"])
    // The pool is the program's: still open after the layer was released.
    expect((await pool.query("SELECT count(*)::int AS n FROM publications")).rows[0]).toEqual({ n: 1 })
  })
})
