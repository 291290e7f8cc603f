import {
  ArticleData,
  PortfolioData,
  ProfileData,
  type PublicationKind,
  ResumeData,
  ServiceData,
  TaskData,
  TrainingData,
  VacancyData
} from "@birzha/domain"
import { type RunningHost, startService, untilReady } from "@birzha/http-host/internal"
import { makePgliteClient } from "@birzha/infrastructure"
import { Effect, Either, ParseResult, Schema } from "effect"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { patientHostEnv } from "../../../testing/net.js"
import { embeddedDataDir } from "../../../testing/pglite.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { type Finished, runCli } from "./testCli.js"

// The built command, as an operator runs it; `pnpm test` builds before running these.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")

let database: TestDatabase
let db: Pg.Client
let host: RunningHost

/** `birzha <args>` with `env` as its environment, run in this process (./testCli.ts). */
const birzha = (args: ReadonlyArray<string>, env: Record<string, string> = { DATABASE_URL: database.url }): Promise<Finished> =>
  runCli(args, env)

const kinds: ReadonlyArray<PublicationKind> = ["task", "service", "portfolio", "article", "vacancy", "resume", "training"]

/** Decodes with the kind's schema and encodes back: Right(encoded) when the data is valid. */
const roundTrip = <A, I>(schema: Schema.Schema<A, I>) => (data: unknown): Either.Either<I, ParseResult.ParseError> =>
  Either.flatMap(Schema.decodeUnknownEither(schema)(data), Schema.encodeEither(schema))

const roundTrips: Readonly<Record<PublicationKind, (data: unknown) => Either.Either<unknown, ParseResult.ParseError>>> = {
  task: roundTrip(TaskData),
  service: roundTrip(ServiceData),
  portfolio: roundTrip(PortfolioData),
  article: roundTrip(ArticleData),
  vacancy: roundTrip(VacancyData),
  resume: roundTrip(ResumeData),
  training: roundTrip(TrainingData)
}

interface StoredRow {
  readonly uuid: string
  readonly kind: PublicationKind
  readonly owner_profile_uuid: string
  readonly status: string
  readonly draft: unknown
  readonly approved: unknown
  readonly demo: boolean
}

const storedPublications = async () =>
  (await db.query<StoredRow>("SELECT uuid, kind, owner_profile_uuid, status, draft, approved, demo FROM publications ORDER BY uuid")).rows

const getJson = async (path: string) => {
  const response = await fetch(`${host.url}${path}`)
  expect(response.status).toBe(200)
  return response.json() as Promise<Record<string, unknown>>
}

interface Listed {
  readonly items: ReadonlyArray<{ readonly uuid: string; readonly approved: SearchedData }>
  readonly nextCursor?: string
}

interface SearchedData {
  readonly title: string
  readonly category?: string
  readonly description?: string
}

/** What `q` searches, normalised as the spec says (lower case, ё as е), computed here independently of the database. */
const searchable = (data: SearchedData) =>
  `${data.title} ${data.category ?? ""} ${data.description ?? ""}`.toLowerCase().replaceAll("ё", "е")

/** Every publication `q` finds, page after page, as a sorted list of uuids. */
const search = async (q: string): Promise<ReadonlyArray<string>> => {
  const found: Array<string> = []
  let cursor: string | undefined
  do {
    const page = (await getJson(
      `/api/v1/publications?limit=100&q=${encodeURIComponent(q)}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    )) as unknown as Listed
    found.push(...page.items.map((item) => item.uuid))
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return found.sort()
}

/**
 * The stored publications where every term starts a word (`raw`: before folding ё), as a sorted
 * list of uuids; words split at anything but a letter or digit (search by words).
 */
const holding = async (terms: ReadonlyArray<string>, raw = false) =>
  (await storedPublications()).filter((row) => {
    const data = row.approved as SearchedData
    const text = raw ? `${data.title} ${data.category ?? ""} ${data.description ?? ""}`.toLowerCase() : searchable(data)
    const words = text.split(/[^\p{L}\p{N}]+/u)
    return terms.every((term) => words.some((word) => word.startsWith(term)))
  }).map((row) => row.uuid).sort()

beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  database = await createTestDatabase("cli_demo", { migrated: true })
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})

afterAll(async () => {
  await host?.close()
  await db?.end()
  await database?.drop()
})

describe("birzha demo", () => {
  it("fills a fresh database with approved, schema-valid publications of every kind, profiles of every type and pictures", async () => {
    const run = await birzha(["demo"])
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/Demo data: 120 public profiles, 360 pictures, 300 approved publications \(task \d+, service \d+/)

    const rows = await storedPublications()
    expect(rows).toHaveLength(300)
    expect(new Set(rows.map((row) => row.kind))).toEqual(new Set(kinds))
    for (const row of rows) {
      expect(row.demo).toBe(true)
      expect(row.status).toBe("approved")
      expect(row.draft).toEqual(row.approved)
      const encoded = roundTrips[row.kind](row.approved)
      if (Either.isLeft(encoded)) throw new Error(`${row.kind} ${row.uuid}: ${ParseResult.TreeFormatter.formatErrorSync(encoded.left)}`)
      // Stored exactly as a save stores it: the encoded form, defaults written out.
      expect(encoded.right).toEqual(row.approved)
    }

    const profiles = (await db.query<{ type: string; n: number; shown: number }>(
      `SELECT p.type, count(*)::int AS n, count(*) FILTER (WHERE p.show_contacts)::int AS shown FROM profiles p
       JOIN accounts a ON a.uuid = p.account_uuid AND a.current_profile_uuid = p.uuid
       WHERE p.is_public AND a.email LIKE '%@demo.birzha.invalid' GROUP BY p.type ORDER BY p.type`
    )).rows
    expect(profiles.map((p) => [p.type, p.n])).toEqual([["ИП", 30], ["Компания", 30], ["Самозанятый", 30], ["Физлицо", 30]])
    const shown = profiles.reduce((sum, p) => sum + p.shown, 0)
    expect(shown).toBeGreaterThan(0)
    expect(shown).toBeLessThan(120)
    const profileData = await db.query<Record<string, unknown>>(
      `SELECT name, type, is_public AS "isPublic", show_contacts AS "showContacts", about, categories, contacts, networks, skills,
         structured_contacts AS "structuredContacts" FROM profiles`
    )
    for (const profile of profileData.rows) expect(Either.isRight(Schema.decodeUnknownEither(ProfileData)(profile))).toBe(true)

    // Every picture a publication shows is a ready image file of its owner, with its bytes stored.
    const assets = await db.query<{ id: string; owner: string; file_owner: string | null; status: string | null; stored: boolean }>(
      `SELECT a.id, p.owner_profile_uuid::text AS owner, f.profile_uuid::text AS file_owner, f.status,
         EXISTS (SELECT 1 FROM file_blobs b WHERE b.key = a.id) AS stored
       FROM publications p, jsonb_to_recordset(p.approved -> 'content' -> 'assets') AS a(id text)
       LEFT JOIN files f ON f.uuid::text = a.id AND f.purpose = 'publication_asset' AND f.mime_type = 'image/png'`
    )
    expect(assets.rows.length).toBeGreaterThan(200)
    for (const asset of assets.rows) expect(asset).toMatchObject({ file_owner: asset.owner, status: "ready", stored: true })
  })

  it("prints accounts to sign in as — customer, contractor, moderator — whose deal, messages and review are in progress", async () => {
    // Printed again when the demo data is already there.
    const run = await birzha(["demo"])
    expect(run.code).toBe(0)
    const printed = [...run.stdout.matchAll(/^ {2}(\S+@demo\.birzha\.invalid) {2}\((.+?)\) — (customer|contractor|moderator):/gm)]
      .map((m) => ({ email: m[1]!, name: m[2]!, role: m[3]! }))
    expect(printed.map((p) => p.role)).toEqual(["customer", "contractor", "moderator"])
    expect(run.stdout).toContain("/sign-in")
    expect(run.stdout).toContain("birzha mail list --to <address>")
    const profileOf = async (email: string) =>
      (await db.query<{ uuid: string; name: string }>(
        "SELECT p.uuid, p.name FROM accounts a JOIN profiles p ON p.uuid = a.current_profile_uuid WHERE a.email = $1 AND a.deleted_at IS NULL",
        [email]
      )).rows[0]
    const [customer, contractor, moderator] = await Promise.all(printed.map((p) => profileOf(p.email)))
    expect([customer?.name, contractor?.name, moderator?.name]).toEqual(printed.map((p) => p.name))
    // A deal in progress between the customer and the contractor, with messages in its thread.
    const deals = await db.query<{ status: string; messages: number }>(
      `SELECT d.status, (SELECT count(*)::int FROM threads t JOIN messages m ON m.thread_uuid = t.uuid WHERE t.relation_uuid = d.origin_relation_uuid) AS messages
       FROM relations d WHERE d.kind = 'deal' AND d.status IN ('active', 'results_submitted')
         AND ((d.initiator_profile_uuid = $1 AND d.recipient_profile_uuid = $2) OR (d.initiator_profile_uuid = $2 AND d.recipient_profile_uuid = $1))`,
      [customer!.uuid, contractor!.uuid]
    )
    expect(deals.rows.length).toBeGreaterThan(0)
    expect(deals.rows[0]!.messages).toBeGreaterThan(0)
    // A review in progress: the customer's, sealed (submitted) on their completed deal, within its window.
    const reviews = await db.query<{ status: string; open: boolean; deal: string }>(
      `SELECT r.status, r.window_ends_at > now() AS open, d.status AS deal FROM reviews r JOIN relations d ON d.uuid = r.relation_uuid
       WHERE r.author_profile_uuid = $1 AND r.subject_profile_uuid = $2`,
      [customer!.uuid, contractor!.uuid]
    )
    expect(reviews.rows).toEqual([{ status: "submitted", open: true, deal: "completed" }])
    // The moderator holds the role.
    expect((await db.query("SELECT 1 FROM moderators WHERE email = $1", [printed[2]!.email])).rowCount).toBe(1)
  })

  it("lists the demo marketplace through the catalog, finds it by search (ё as е) and serves its pictures", async () => {
    host = await startService({ env: { DATABASE_URL: database.url } })
    await untilReady(host)

    const catalog = await getJson("/api/v1/catalog")
    const publications = catalog["publications"] as ReadonlyArray<{ uuid: string; kind: string; demo?: boolean; status: string }>
    expect(catalog["schemaVersion"]).toBe(1)
    expect(publications).toHaveLength(300)
    expect(new Set(publications.map((p) => p.kind))).toEqual(new Set(kinds))
    expect(publications.every((p) => p.demo === true && p.status === "approved")).toBe(true)
    expect(catalog["profiles"]).toHaveLength(120)

    const coffee = await holding(["кофейни"])
    expect(coffee.length).toBeGreaterThan(0)
    expect(await search("КОФЕЙНИ")).toEqual(coffee)

    // Stored with ё ("отчёт"), found with е; every term must match.
    const withYo = await holding(["отчёт"], true)
    expect(withYo.length).toBeGreaterThan(0)
    const report = await search("отчет")
    expect(report).toEqual(await holding(["отчет"]))
    expect(withYo.every((uuid) => report.includes(uuid))).toBe(true)
    const both = await holding(["отчет", "кофейни"])
    expect(both.length).toBeLessThan(report.length)
    expect(await search(" Отчет  кофейни ")).toEqual(both)
    expect(await search("нетслованигде")).toEqual([])

    const [asset] = (await db.query<{ id: string }>(
      "SELECT approved -> 'content' -> 'preview' -> 'assetIds' ->> 0 AS id FROM publications WHERE kind = 'service' LIMIT 1"
    )).rows
    const picture = await fetch(`${host.url}/api/v1/files/${asset!.id}/content`)
    expect(picture.status).toBe(200)
    expect(picture.headers.get("content-type")).toBe("image/png")
    expect([...new Uint8Array(await picture.arrayBuffer()).subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  })

  it("leaves existing demo data alone, replaces it with --reset, and gives the same rows for the same seed", async () => {
    const before = (await storedPublications()).map((row) => row.uuid)
    const again = await birzha(["demo"])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("Demo data is already there (120 profiles, 300 publications): nothing changed")
    expect((await storedPublications()).map((row) => row.uuid)).toEqual(before)

    const replaced = await birzha(["demo", "--reset", "--publications", "7", "--seed", "2"])
    expect(replaced.stderr).toBe("")
    expect(replaced.code).toBe(0)
    expect(replaced.stdout).toContain("Removed the previous demo data: 120 profiles, 300 publications.")
    expect(replaced.stdout).toContain("7 approved publications (task 1, service 1, portfolio 1, article 1, vacancy 1, resume 1, training 1)")
    const seven = (await storedPublications()).map((row) => row.uuid)
    expect(seven).toHaveLength(7)
    expect(seven.some((uuid) => before.includes(uuid))).toBe(false)
    const counts = await db.query<{ accounts: number; profiles: number; files: number; blobs: number }>(
      `SELECT (SELECT count(*)::int FROM accounts) AS accounts, (SELECT count(*)::int FROM profiles) AS profiles,
         (SELECT count(*)::int FROM files) AS files, (SELECT count(*)::int FROM file_blobs) AS blobs`
    )
    expect(counts.rows[0]).toEqual({ accounts: 120, profiles: 120, files: 360, blobs: 360 })

    expect((await birzha(["demo", "--reset", "--publications", "7", "--seed", "2"])).code).toBe(0)
    expect((await storedPublications()).map((row) => row.uuid)).toEqual(seven)
  })

  it("refuses a publication count out of bounds, changing nothing", async () => {
    for (const bad of ["0", "1000001"]) {
      const run = await birzha(["demo", "--reset", "--publications", bad])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain("birzha: --publications must be between 1 and 1000000")
    }
    expect(await storedPublications()).toHaveLength(7)
    const one = await birzha(["demo", "--reset", "--publications", "1"])
    expect(one.code).toBe(0)
    expect(await storedPublications()).toHaveLength(1)
  })

  it("fills the embedded database by default, once, and the served host lists it", async () => {
    // Initialised (PGlite's initdb done) but empty; `birzha serve` on a new directory is Cli.test's.
    const data = await embeddedDataDir("demo", (dir) => Effect.runPromise(Effect.scoped(makePgliteClient(dir))))
    const env = { BIRZHA_DATA_DIR: data.home }
    try {
      const first = await birzha(["demo", "--publications", "30"], env)
      expect(first.stderr).toBe("")
      expect(first.stdout).toContain("Demo data: 120 public profiles, 360 pictures, 30 approved publications")
      expect((await birzha(["demo"], env)).stdout).toContain("Demo data is already there (120 profiles, 30 publications): nothing changed")

      const serve = spawn(process.execPath, [bin, "serve"], {
        cwd: tmpdir(),
        env: { PATH: process.env["PATH"] ?? "", ...patientHostEnv, ...env, BIRZHA_PORT: "0" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      try {
        const port = await new Promise<string>((resolve, reject) => {
          let output = ""
          const timer = setTimeout(() => reject(new Error(`serve did not listen:\n${output}`)), 120_000)
          serve.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
            output += chunk
            const match = /Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
            if (match) {
              clearTimeout(timer)
              resolve(match[1]!)
            }
          })
        })
        await eventually(async () => (await fetch(`http://127.0.0.1:${port}/api/readyz`)).status, (status) => status === 200, "serve answers readyz 200")
        const catalog = (await (await fetch(`http://127.0.0.1:${port}/api/v1/catalog`)).json()) as { publications: ReadonlyArray<{ kind: string }> }
        expect(catalog.publications).toHaveLength(30)
        expect(new Set(catalog.publications.map((p) => p.kind))).toEqual(new Set(kinds))
      } finally {
        serve.kill("SIGTERM")
        await new Promise((resolve) => serve.on("exit", resolve))
      }
    } finally {
      data.remove()
    }
  })
})
