import type { Server } from "node:http"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { taskDraft } from "../../../testing/drafts.js"
import { freePort } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { signIn } from "../../../testing/signIn.js"
import { createApp } from "./main.js"

let database: TestDatabase
let pool: Pg.Pool
let db: Pg.Client
let server: Server
let close: () => Promise<void>
let origin: string
let base: string
beforeAll(async () => {
  database = await createTestDatabase("example_express", { migrated: true })
  pool = new Pg.Pool({ connectionString: database.url, max: 6 })
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  const port = await freePort()
  origin = `http://localhost:${port}`
  base = `http://127.0.0.1:${port}`
  const created = await createApp(pool, { publicOrigin: origin, serverSecret: "express-example-test-secret-at-least-32-characters" })
  close = created.close
  server = await new Promise<Server>((resolve) => {
    const listening = created.app.listen(port, "127.0.0.1", () => resolve(listening))
  })
})
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve))
  await close?.()
  await db?.end()
  await pool?.end()
  await database?.drop()
})

const untilReady = async () => {
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    const ready = await fetch(`${base}/birzha/api/readyz`)
    if (ready.status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("Birzha under /birzha did not become ready")
}

describe("examples/express-mount", () => {
  it("answers its own routes and Birzha's under /birzha, with Birzha's worker in the same process", async () => {
    const own = await fetch(`${base}/hello`)
    expect(await own.json()).toEqual({ hello: "from the application's own route" })
    await untilReady()

    const types = await fetch(`${base}/birzha/api/v1/event-types`)
    expect(types.status).toBe(200)
    expect(((await types.json()) as { types: Array<string> }).types).toContain("publication.submitted")
    // A path nothing serves, under the mount and outside it: Birzha's envelope, then Express's own 404.
    const missing = await fetch(`${base}/birzha/api/v1/nothing-here`)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: { code: "not_found" } })
    expect((await fetch(`${base}/api/v1/event-types`)).status).toBe(404)

    // A person signs in through the mounted API and saves a task with `submit: true`.
    const owner = await signIn({ url: `${base}/birzha`, origin, db })
    const headers = { "content-type": "application/json", cookie: owner.cookie, origin }
    const saved = await fetch(`${base}/birzha/api/v1/commands/tasks.save`, {
      method: "POST",
      headers,
      body: JSON.stringify({ requestUuid: crypto.randomUUID(), submit: true, data: taskDraft })
    })
    expect(saved.status).toBe(200)
    const task = (await saved.json()) as { uuid: string; status: string }
    expect(task.status).toBe("pending")

    // Events are numbered by the worker's sequencer: they are listed only because it runs here.
    let events: Array<string> = []
    for (const until = Date.now() + 30_000; events.length < 2 && Date.now() < until;) {
      const page = await fetch(`${base}/birzha/api/v1/events?aggregateUuid=${task.uuid}`, { headers })
      events = ((await page.json()) as { items: Array<{ type: string }> }).items.map((event) => event.type)
      if (events.length < 2) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(events).toEqual(["publication.draft_saved", "publication.submitted"])

    // The application's own route reads the same database through its own pool.
    expect(await (await fetch(`${base}/stats`)).json()).toEqual({ tasks: 1 })
  })
})
