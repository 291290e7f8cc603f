import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { patientHostEnv } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { type Finished, runCli } from "./testCli.js"

// The built command, as an operator runs it; `pnpm test` builds before running these.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")

let database: TestDatabase
let db: Pg.Client
let ownerProfile: string

/** A command on the test's database, run in this process (./testCli.ts). */
const birzha = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Finished> =>
  runCli(args, { DATABASE_URL: database.url, ...env })

/** `birzha serve`, started as an operator starts it: the built command in a process of its own. */
const spawned = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Finished> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: tmpdir(),
      env: { PATH: process.env["PATH"] ?? "", ...patientHostEnv, DATABASE_URL: database.url, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

let counter = 0

/** A publication waiting for moderation, written straight to the table as a submitted draft would be. */
const pending = async (kind: string, title: string, submittedSecondsAgo: number, status = "pending") => {
  const { rows } = await db.query<{ uuid: string }>(
    `INSERT INTO publications (id, kind, owner_profile_uuid, draft, status, submitted_at, revision)
     VALUES ($1, $2, $3, $4, $5, now() - make_interval(secs => $6), 3) RETURNING uuid`,
    [`climod${++counter}`, kind, ownerProfile, JSON.stringify({ title, description: "Описание" }), status, submittedSecondsAgo]
  )
  return rows[0]!.uuid
}

const stateOf = async (uuid: string) =>
  (await db.query<{ status: string; revision: number; reason: string; approved: Record<string, unknown> | null }>(
    "SELECT status, revision, reason, approved FROM publications WHERE uuid = $1",
    [uuid]
  )).rows[0]!

const decisionsOf = async (uuid: string) =>
  (await db.query("SELECT decision, moderator, moderator_account_uuid, reason, publication_revision FROM moderation_decisions WHERE publication_uuid = $1", [uuid]))
    .rows

const moderatedEvents = async (uuid: string) =>
  Number((await db.query("SELECT count(*) FROM outbox_events WHERE aggregate_uuid = $1 AND type = 'publication.moderated'", [uuid])).rows[0].count)

beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  database = await createTestDatabase("cli_moderation", { migrated: true })
  const migrated = await birzha(["migrate"])
  expect(migrated.code).toBe(0)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  const account = await db.query<{ uuid: string }>("INSERT INTO accounts (email) VALUES ('owner@example.com') RETURNING uuid")
  const profile = await db.query<{ uuid: string }>(
    "INSERT INTO profiles (id, account_uuid, name, type) VALUES ('climodowner1', $1, 'Анна Автор', 'Физлицо') RETURNING uuid",
    [account.rows[0]!.uuid]
  )
  ownerProfile = profile.rows[0]!.uuid
})
afterAll(async () => {
  await db?.end()
  await database?.drop()
})

describe("birzha moderation grant, list and revoke", () => {
  it("grants the role to an address lower-cased, lists it with its source, and revokes it", async () => {
    expect((await birzha(["moderation", "list"])).stdout).toContain("There are no moderators.")
    const granted = await birzha(["moderation", "grant", "Mod.One@Example.com"])
    expect(granted.code).toBe(0)
    expect(granted.stdout).toContain("mod.one@example.com is a moderator")
    const listed = await birzha(["moderation", "list"])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/^mod\.one@example\.com {2}cli {2}granted \d{4}-\d\d-\d\dT/m)

    const revoked = await birzha(["moderation", "revoke", "MOD.ONE@example.com"])
    expect(revoked.code).toBe(0)
    expect(revoked.stdout).toContain("mod.one@example.com is no longer a moderator")
    expect((await birzha(["moderation", "list"])).stdout).not.toContain("mod.one@example.com")
    const again = await birzha(["moderation", "revoke", "mod.one@example.com"])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("birzha: mod.one@example.com is not a moderator")
  })

  it("refuses an address that is not one, as the API's Email bounds say (254 characters at most)", async () => {
    const bad = await birzha(["moderation", "grant", "not-an-address"])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('birzha: not an email address: "not-an-address"')
    const longest = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`
    expect(longest).toHaveLength(254)
    expect((await birzha(["moderation", "grant", longest])).code).toBe(0)
    const tooLong = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`
    expect((await birzha(["moderation", "grant", tooLong])).code).toBe(1)
    expect((await db.query("SELECT email FROM moderators WHERE email = $1", [tooLong])).rows).toEqual([])
    expect((await birzha(["moderation", "revoke", longest])).code).toBe(0)
  })

  it("warns that revoking an address of BIRZHA_MODERATORS lasts only until the next start", async () => {
    await db.query("INSERT INTO moderators (email, source) VALUES ('conf@example.com', 'config')")
    const revoked = await birzha(["moderation", "revoke", "conf@example.com"], { BIRZHA_MODERATORS: "conf@example.com" })
    expect(revoked.code).toBe(0)
    expect(revoked.stderr).toContain("listed in BIRZHA_MODERATORS")
  })
})

describe("birzha moderation queue", () => {
  it("prints the pending publications oldest first with uuid, kind, revision, owner and title, filtered by --kind", async () => {
    const task = await pending("task", "Сделать сайт", 120)
    const service = await pending("service", "Вёрстка лендинга", 60)
    const draft = await pending("task", "Черновик", 30, "draft")
    const queue = await birzha(["moderation", "queue"])
    expect(queue.code).toBe(0)
    const lines = queue.stdout.trim().split("\n")
    expect(lines[0]).toBe("UUID  KIND  REVISION  SUBMITTED  OWNER  TITLE")
    const taskLine = lines.findIndex((line) => line.startsWith(task))
    const serviceLine = lines.findIndex((line) => line.startsWith(service))
    expect(taskLine).toBeGreaterThan(0)
    expect(serviceLine).toBeGreaterThan(taskLine)
    expect(lines[taskLine]).toMatch(new RegExp(`^${task} {2}task {2}3 {2}\\d{4}-\\d\\d-\\d\\dT[^ ]+Z {2}Анна Автор \\(climodowner1\\) {2}Сделать сайт$`))
    expect(queue.stdout).not.toContain(draft)

    const services = await birzha(["moderation", "queue", "--kind", "service"])
    expect(services.code).toBe(0)
    expect(services.stdout).toContain(service)
    expect(services.stdout).not.toContain(task)
    expect((await birzha(["moderation", "queue", "--kind", "article"])).stdout).toContain("No publications are waiting for moderation.")

    const bogus = await birzha(["moderation", "queue", "--kind", "tasks"])
    expect(bogus.code).toBe(1)
    expect(bogus.stdout + bogus.stderr).toContain("Expected one of the following cases")
    await db.query("UPDATE publications SET status = 'draft' WHERE uuid = ANY($1)", [[task, service]])
  })
})

describe("birzha moderation approve, return and reject", () => {
  it("approves a pending publication at its current revision as moderator cli, and refuses it once decided", async () => {
    const uuid = await pending("task", "Одобрить меня", 10)
    const approved = await birzha(["moderation", "approve", uuid])
    expect(approved.code).toBe(0)
    expect(approved.stdout).toContain(`Publication ${uuid} is approved (revision 4)`)
    const state = await stateOf(uuid)
    expect(state).toMatchObject({ status: "approved", revision: 4, reason: "" })
    expect(state.approved).toEqual({ title: "Одобрить меня", description: "Описание" })
    expect(await decisionsOf(uuid)).toEqual([{ decision: "approve", moderator: "cli", moderator_account_uuid: null, reason: "", publication_revision: 4 }])
    expect(await moderatedEvents(uuid)).toBe(1)

    const twice = await birzha(["moderation", "approve", uuid])
    expect(twice.code).toBe(1)
    expect(twice.stderr).toContain(`birzha: publication ${uuid} is approved, not pending`)
    expect((await stateOf(uuid)).revision).toBe(4)
    expect(await moderatedEvents(uuid)).toBe(1)
  })

  it("approves with an optional note kept with the decision", async () => {
    const uuid = await pending("service", "С заметкой", 10)
    expect((await birzha(["moderation", "approve", uuid, "--reason", "Всё хорошо"])).code).toBe(0)
    expect(await decisionsOf(uuid)).toMatchObject([{ decision: "approve", reason: "Всё хорошо" }])
  })

  it("returns with a reason, and refuses to return without one or with a blank one", async () => {
    const uuid = await pending("task", "Вернуть меня", 10)
    const missing = await birzha(["moderation", "return", uuid])
    expect(missing.code).toBe(1)
    expect(missing.stdout + missing.stderr).toContain("--reason")
    const blank = await birzha(["moderation", "return", uuid, "--reason", "   "])
    expect(blank.code).toBe(1)
    expect(blank.stderr).toContain("needs a reason")
    expect(await stateOf(uuid)).toMatchObject({ status: "pending", revision: 3 })

    const returned = await birzha(["moderation", "return", uuid, "--reason", "Уточните бюджет"])
    expect(returned.code).toBe(0)
    expect(returned.stdout).toContain(`Publication ${uuid} is returned (revision 4), reason: Уточните бюджет.`)
    expect(await stateOf(uuid)).toMatchObject({ status: "returned", revision: 4, reason: "Уточните бюджет", approved: null })
    expect(await decisionsOf(uuid)).toMatchObject([{ decision: "return", moderator: "cli", moderator_account_uuid: null }])
  })

  it("rejects with a reason of 2000 characters and refuses one of 2001", async () => {
    const uuid = await pending("task", "Отклонить меня", 10)
    const tooLong = await birzha(["moderation", "reject", uuid, "--reason", "п".repeat(2001)])
    expect(tooLong.code).toBe(1)
    expect(tooLong.stderr).toContain("--reason has at most 2000 characters, this one has 2001")
    expect((await stateOf(uuid)).status).toBe("pending")

    const rejected = await birzha(["moderation", "reject", uuid, "--reason", "п".repeat(2000)])
    expect(rejected.code).toBe(0)
    expect(await stateOf(uuid)).toMatchObject({ status: "rejected", revision: 4, reason: "п".repeat(2000) })
    expect(await decisionsOf(uuid)).toMatchObject([{ decision: "reject", moderator: "cli" }])
    const returnedAfter = await birzha(["moderation", "return", uuid, "--reason", "ещё раз"])
    expect(returnedAfter.code).toBe(1)
    expect(returnedAfter.stderr).toContain("is rejected, not pending")
  })

  it("says so for a publication that does not exist, is deleted, or is not named by a uuid", async () => {
    const absent = await birzha(["moderation", "approve", "3b241101-e2bb-4255-8caf-4136c566a962"])
    expect(absent.code).toBe(1)
    expect(absent.stderr).toContain("birzha: no publication 3b241101-e2bb-4255-8caf-4136c566a962")

    const deleted = await pending("task", "Удалённая", 10)
    await db.query("UPDATE publications SET deleted_at = now() WHERE uuid = $1", [deleted])
    const gone = await birzha(["moderation", "approve", deleted])
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain(`birzha: no publication ${deleted}`)

    const malformed = await birzha(["moderation", "reject", "abc", "--reason", "x"])
    expect(malformed.code).toBe(1)
    expect(malformed.stderr).toContain('birzha: not a publication uuid: "abc"')
  })
})

describe("BIRZHA_MODERATORS at start", () => {
  const configured = async () =>
    (await db.query<{ email: string }>("SELECT email FROM moderators WHERE source = 'config' ORDER BY email")).rows.map((row) => row.email)

  it("is applied by birzha migrate and by birzha worker after the migrations", async () => {
    const migrated = await birzha(["migrate"], { BIRZHA_MODERATORS: "First@Example.com, second@example.com" })
    expect(migrated.code).toBe(0)
    expect(await configured()).toEqual(["first@example.com", "second@example.com"])

    const child = spawn(process.execPath, [bin, "worker"], {
      cwd: tmpdir(),
      env: { PATH: process.env["PATH"] ?? "", DATABASE_URL: database.url, BIRZHA_MODERATORS: "second@example.com" },
      stdio: "ignore"
    })
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    try {
      // However long the process takes to start (eventually's liveness bound).
      expect(await eventually(configured, (moderators) => moderators.length === 1, "the started service applies BIRZHA_MODERATORS")).toEqual(["second@example.com"])
    } finally {
      child.kill("SIGTERM")
    }
    expect(await exited).toBe(0)
  })

  it("stops birzha serve on a bad address with one line naming the variable", async () => {
    const before = await configured()
    const run = await spawned(["serve"], { BIRZHA_PORT: "0", BIRZHA_MODERATORS: "ok@example.com, not-an-address" })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('birzha: invalid configuration\nBIRZHA_MODERATORS: expected comma-separated email addresses, got "not-an-address"')
    expect(await configured()).toEqual(before)
  })
})

describe("birzha moderation complaints, complaint and review", () => {
  it("upholds a complaint with remove_review and restores the review, through the same operations as HTTP", async () => {
    const other = await db.query<{ uuid: string }>("INSERT INTO accounts (email) VALUES ('customer-cli@example.com') RETURNING uuid")
    const customer = (await db.query<{ uuid: string }>(
      "INSERT INTO profiles (id, account_uuid, name, type) VALUES ('climodcustomer', $1, 'Клиент', 'Физлицо') RETURNING uuid",
      [other.rows[0]!.uuid]
    )).rows[0]!.uuid
    const origin = (await db.query<{ uuid: string }>(
      `INSERT INTO relations (kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body)
       VALUES ('offer', 'accepted', $1, $2, 'customer', 'Условия') RETURNING uuid`,
      [customer, ownerProfile]
    )).rows[0]!.uuid
    const deal = (await db.query<{ uuid: string }>(
      `INSERT INTO relations (kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body, origin_relation_uuid, completed_at)
       VALUES ('deal', 'completed', $1, $2, 'customer', 'Условия', $3, now()) RETURNING uuid`,
      [customer, ownerProfile, origin]
    )).rows[0]!.uuid
    const review = (await db.query<{ uuid: string }>(
      `INSERT INTO reviews (relation_uuid, author_profile_uuid, subject_profile_uuid, subject_role, rating, body, status, window_ends_at, published_at)
       VALUES ($1, $2, $3, 'specialist', 1, 'Грубость', 'published', now() + interval '14 days', now()) RETURNING uuid`,
      [deal, customer, ownerProfile]
    )).rows[0]!.uuid
    const complaint = (await db.query<{ uuid: string }>(
      `INSERT INTO complaints (author_profile_uuid, subject_kind, subject_uuid, body, subject_snapshot, status)
       VALUES ($1, 'relation', $2, 'Отзыв оскорбителен', '{}', 'open') RETURNING uuid`,
      [ownerProfile, deal]
    )).rows[0]!.uuid

    const queue = await birzha(["moderation", "complaints"])
    expect(queue.code, queue.stderr).toBe(0)
    expect(queue.stdout).toContain(`${complaint}  1  `)
    expect(queue.stdout).toContain(`review ${review}  published  rating 1`)
    const json = await birzha(["moderation", "complaints", "--json", "--subject", "relation"])
    expect(JSON.parse(json.stdout.trim().split("\n")[0]!)).toMatchObject({ uuid: complaint, subjectKind: "relation" })

    const wrong = await birzha(["moderation", "complaint", "uphold", complaint, "--reason", "Грубость", "--action", "unpublish"])
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain("action: a complaint about a relation takes remove_review or none")
    const noReason = await birzha(["moderation", "complaint", "dismiss", complaint, "--reason", ""])
    expect(noReason.code).toBe(1)
    expect((await db.query("SELECT status FROM complaints WHERE uuid = $1", [complaint])).rows[0].status).toBe("open")

    const upheld = await birzha(["moderation", "complaint", "uphold", complaint, "--reason", "Оскорбления запрещены", "--action", "remove_review", "--review", review])
    expect(upheld.code, upheld.stderr).toBe(0)
    expect(upheld.stdout).toContain(`Complaint ${complaint} is upheld (action remove_review, revision 2)`)
    expect((await db.query("SELECT status, moderation_reason FROM reviews WHERE uuid = $1", [review])).rows[0]).toEqual({
      status: "removed",
      moderation_reason: "Оскорбления запрещены"
    })
    const events = await db.query("SELECT type, data ->> 'status' AS status, context ->> 'profileUuid' AS profile FROM outbox_events WHERE aggregate_uuid IN ($1, $2) ORDER BY append_order", [complaint, review])
    expect(events.rows).toEqual([
      { type: "review.moderated", status: "removed", profile: null },
      { type: "complaint.moderated", status: "upheld", profile: null }
    ])
    expect((await db.query("SELECT decision, moderator FROM moderation_subject_decisions WHERE subject_uuid = $1", [complaint])).rows).toEqual([
      { decision: "uphold", moderator: "cli" }
    ])

    const restored = await birzha(["moderation", "review", "restore", review, "--reason", "Пересмотрено"])
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toContain(`Review ${review} is published`)
    const again = await birzha(["moderation", "review", "restore", review, "--reason", "Ещё раз"])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("The review is published; restore needs a removed review")
    const [stats] = (await db.query("SELECT review_count FROM review_stats WHERE profile_uuid = $1 AND subject_role = 'specialist'", [ownerProfile])).rows
    expect(stats.review_count).toBe(1)
  })
})
