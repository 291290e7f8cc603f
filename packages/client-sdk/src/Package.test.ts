import { type RunningHost, startService, untilReady } from "@birzha/http-host/internal"
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { taskDraft } from "../../../testing/drafts.js"
import { signIn } from "../../../testing/signIn.js"

// The published shape, not the workspace: pack the built package as `pnpm publish` would and
// install the tarball alone into an empty npm project (its dependencies from the registry), then
// compile with strict tsc and run code against a running service there.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const packageDir = join(root, "packages", "client-sdk")
const work = mkdtempSync(join(tmpdir(), "birzha-pack-"))
const moderatorEmail = `pack.moderator.${process.pid}@example.com`
let database: TestDatabase
let host: RunningHost
let db: Pg.Client
let origin: string
beforeAll(async () => {
  if (!existsSync(join(packageDir, "dist", "index.d.ts"))) {
    throw new Error("packages/client-sdk/dist has no declarations: run npx -y pnpm@10.34.9 run build:test first (pnpm test does)")
  }
  database = await createTestDatabase("client_pack")
  const port = await freePort()
  origin = `http://localhost:${port}`
  host = await startService({ env: { DATABASE_URL: database.url, BIRZHA_MODERATORS: moderatorEmail }, port, publicOrigin: origin, trustProxy: true })
  await untilReady(host)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await host?.close()
  await database?.drop()
  rmSync(work, { recursive: true, force: true })
})

// Asynchronous: the service runs in this process and must answer while the scripts run.
const run = async (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  (await promisify(execFile)(command, [...args], {
    cwd,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, npm_config_fund: "false", npm_config_audit: "false", ...env }
  })).stdout

/** What a third party writes: both facades, typed per kind, type-checked with strict tsc. */
const typedProgram = `import { Effect } from "effect"
import {
  Birzha, BirzhaError, createBirzhaClient, followEvents, NotFound, typedPublication, verifyWebhook,
  type BirzhaPromiseClient, type PublicationDataByKind
} from "@birzha/client"

const client: BirzhaPromiseClient = createBirzhaClient({ baseUrl: "http://127.0.0.1:1", apiKey: "bk_key" })
export const titles = async (): Promise<Array<string>> => {
  const page = await client.listPublications({ urlParams: { q: "лендинг", kind: "task", limit: 10 } })
  return page.items.map((item) => {
    const publication = typedPublication(item)
    if (publication.kind === "task") return publication.approved.title + publication.approved.budget
    // @ts-expect-error an article has no budget
    if (publication.kind === "article") return publication.approved.budget
    return publication.kind
  })
}
export const saved = (): Promise<{ readonly uuid: string; readonly revision: number }> =>
  client["tasks.save"]({ payload: { requestUuid: crypto.randomUUID(), data: { title: "t", category: "Сайты", description: "d", budget: "b", deadline: "d", files: [] } } })
export const task: PublicationDataByKind["task"]["title"] = "a title"
export const events = async () => {
  for await (const event of followEvents(client, { types: ["publication.*"] })) console.log(event.type, event.aggregate.uuid)
}
export const verified = (body: string, headers: Record<string, string>): Promise<unknown> => verifyWebhook("whsec_x", headers, body)
export const read = (uuid: string) =>
  Effect.gen(function*() {
    const birzha = yield* Birzha
    const publication = typedPublication(yield* birzha.getPublication({ path: { uuid } }))
    return publication.kind === "task" ? publication.approved.deadline : publication.kind
  }).pipe(
    Effect.catchTag("NotFound", (error: NotFound) => Effect.succeed(error.message)),
    Effect.provide(Birzha.layerFetch({ baseUrl: "http://127.0.0.1:1" }))
  )
client.getPublication({ path: { uuid: "u" } }).catch((error: unknown) => error instanceof BirzhaError ? error.code : "")
// @ts-expect-error an operation id the catalog does not have
client["events.nope"]
`

/** Run against the service: the Promise facade saves and submits a task, pages through events and verifies a webhook. */
const promiseScript = `import { createHmac } from "node:crypto"
import { BirzhaError, createBirzhaClient, followEvents, verifyWebhook } from "@birzha/client"
const { BASE_URL, COOKIE, ORIGIN, DRAFT } = process.env
const owner = createBirzhaClient({ baseUrl: BASE_URL, headers: { cookie: COOKIE, origin: ORIGIN } })
const saved = await owner["tasks.save"]({ payload: { requestUuid: crypto.randomUUID(), submit: true, data: JSON.parse(DRAFT) } })
const events = []
for await (const event of followEvents(owner, { limit: 1 })) events.push(event.type)
const publicClient = createBirzhaClient({ baseUrl: BASE_URL })
const missing = await publicClient.getPublication({ path: { uuid: crypto.randomUUID() } }).catch((error) => error)
const secret = "whsec_" + Buffer.alloc(32, 7).toString("base64")
const body = JSON.stringify({ type: "publication.moderated" })
const id = "msg_1", timestamp = String(Math.floor(Date.now() / 1000))
const signature = "v1," + createHmac("sha256", Buffer.alloc(32, 7)).update(id + "." + timestamp + "." + body).digest("base64")
const verified = await verifyWebhook(secret, { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature }, body)
console.log(JSON.stringify({ uuid: saved.uuid, revision: saved.revision, status: saved.status, events: Array.isArray(events), missing: missing instanceof BirzhaError ? missing.code : String(missing), verified }))
`

/** Then the Effect facade reads the approved publication and finds it by its words. */
const effectScript = `import { Effect } from "effect"
import { Birzha, typedPublication } from "@birzha/client"
const { BASE_URL, UUID } = process.env
const result = await Effect.runPromise(Effect.gen(function*() {
  const birzha = yield* Birzha
  const publication = typedPublication(yield* birzha.getPublication({ path: { uuid: UUID } }))
  const page = yield* birzha.listPublications({ urlParams: { kind: "task" } })
  return { kind: publication.kind, title: publication.approved.title, listed: page.items.some((item) => item.uuid === UUID) }
}).pipe(Effect.provide(Birzha.layerFetch({ baseUrl: BASE_URL }))))
console.log(JSON.stringify(result))
`

describe("the @birzha/client package", () => {
  it("installs from its tarball alone, depends only on effect and @effect/platform, type-checks strictly and runs against a service", async () => {
    const tarballs = join(work, "tarballs")
    await run("npx", ["-y", "pnpm@10.34.9", "pack", "--pack-destination", tarballs], packageDir)
    const files = readdirSync(tarballs).map((file) => join(tarballs, file))
    expect(files).toHaveLength(1)
    const manifest = JSON.parse(await run("tar", ["-xzOf", files[0]!, "package/package.json"], work)) as {
      dependencies: Record<string, string>
    }
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["@effect/platform", "effect"])
    expect(JSON.stringify(manifest)).not.toContain("workspace:")

    const project = join(work, "project")
    mkdirSync(project)
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    await run("npm", ["install", "--no-package-lock", files[0]!], project)
    expect(existsSync(join(project, "node_modules", "@birzha", "domain"))).toBe(false)

    writeFileSync(join(project, "main.ts"), typedProgram)
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, exactOptionalPropertyTypes: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], noEmit: true, skipLibCheck: false, types: [] },
        files: ["main.ts"]
      })
    )
    await run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], project)

    const owner = await signIn({ url: host.url, origin: origin, db: db })
    writeFileSync(join(project, "promise.mjs"), promiseScript)
    const first = JSON.parse(await run(process.execPath, ["promise.mjs"], project, {
      BASE_URL: host.url,
      COOKIE: owner.cookie,
      ORIGIN: origin,
      DRAFT: JSON.stringify(taskDraft)
    })) as { uuid: string; revision: number; status: string; events: boolean; missing: string; verified: unknown }
    expect(first).toMatchObject({ status: "pending", events: true, missing: "not_found", verified: { type: "publication.moderated" } })

    const moderator = await signIn({ url: host.url, origin: origin, db: db, email: moderatorEmail })
    const decided = await fetch(`${host.url}/api/v1/moderation/decisions`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: moderator.cookie, origin: origin },
      body: JSON.stringify({ requestUuid: crypto.randomUUID(), publicationUuid: first.uuid, expectedRevision: first.revision, decision: "approve" })
    })
    expect(decided.status).toBe(200)

    writeFileSync(join(project, "effect.mjs"), effectScript)
    const second = JSON.parse(await run(process.execPath, ["effect.mjs"], project, { BASE_URL: host.url, UUID: first.uuid }))
    expect(second).toEqual({ kind: "task", title: taskDraft.title, listed: true })
  }, 300_000)
})
