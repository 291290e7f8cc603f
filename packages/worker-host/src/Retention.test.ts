import type { Actor } from "@birzha/domain"
import { BlobStore, cleanAbandonedFiles, PostgresBlobStore, prepareFile, ServerSecret } from "@birzha/domain/internal"
import * as Store from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, Logger, LogLevel, ManagedRuntime, Option, Redacted, Scope } from "effect"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { cleanExpired, makeRetentionJob } from "./Retention.js"
import { WorkerJobs, WorkerLoop } from "./WorkerLoop.js"
import { testPgLayer } from "../../domain/test/pgLayer.js"

let database: TestDatabase
let db: Pg.Client
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | BlobStore | ServerSecret, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | BlobStore | ServerSecret>) => runtime.runPromise(effect)

let actor: Actor

beforeAll(async () => {
  database = await createTestDatabase("retention", { migrated: true })
  const sql = testPgLayer(database.url, 5)
  runtime = ManagedRuntime.make(Layer.mergeAll(
    PostgresBlobStore,
    Layer.succeed(ServerSecret, Redacted.make("retention tests: a server secret of 32+ characters"))
  ).pipe(Layer.provideMerge(sql)))
  await run(Store.runMigrations)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  const account = randomUUID()
  const profile = randomUUID()
  await db.query("INSERT INTO accounts (uuid, email) VALUES ($1, 'retention@example.com')", [account])
  await db.query("INSERT INTO profiles (uuid, id, account_uuid, name, type) VALUES ($1, 'retention', $2, 'Retention', 'Физлицо')", [profile, account])
  actor = {
    via: "session",
    sessionUuid: randomUUID(),
    accountUuid: account,
    email: "retention@example.com",
    profileUuid: profile,
    profileName: "Retention",
    profileType: "Физлицо",
    expiresAt: new Date(Date.now() + 3_600_000)
  }
})
afterAll(async () => {
  await db?.end()
  await runtime?.dispose()
  await database?.drop()
})

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000)

/** A file row as `files.prepare` leaves it, then aged; with bytes when uploaded or ready. */
const file = async (status: "pending" | "uploaded" | "ready", created: Date, uploadExpires: Date) => {
  const uuid = randomUUID()
  await db.query(
    `INSERT INTO files (uuid, profile_uuid, purpose, name, mime_type, size, status, upload_token_hash, upload_expires_at, created_at)
     VALUES ($1, $2, 'publication_file', 'a.txt', 'text/plain', 3, $3, 'x', $4, $5)`,
    [uuid, actor.profileUuid, status, uploadExpires, created]
  )
  if (status !== "pending") await db.query("INSERT INTO file_blobs (key, bytes) VALUES ($1, 'abc')", [uuid])
  return uuid
}

const exists = async (table: string, column: string, value: string) =>
  (await db.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [value])).rowCount === 1

describe("retention (the hourly cleanup of what the service keeps only for a while)", () => {
  it("removes idempotency keys older than 30 days and keeps younger ones", async () => {
    const old = randomUUID()
    const young = randomUUID()
    await db.query(
      `INSERT INTO idempotency_keys (scope, request_uuid, operation_id, request_hash, created_at)
       VALUES ('s', $1, 'x', 'h', $2), ('s', $3, 'x', 'h', $4)`,
      [old, daysAgo(30.1), young, daysAgo(29.9)]
    )
    await run(cleanExpired)
    expect(await exists("idempotency_keys", "request_uuid", old)).toBe(false)
    expect(await exists("idempotency_keys", "request_uuid", young)).toBe(true)
  })

  it("removes files that never became ready after 31 days, with their bytes; ready files, younger ones and live upload addresses stay", async () => {
    const abandonedPending = await file("pending", daysAgo(32), daysAgo(32))
    const abandonedUploaded = await file("uploaded", daysAgo(32), daysAgo(32))
    const oldReady = await file("ready", daysAgo(400), daysAgo(400))
    const youngExpired = await file("pending", daysAgo(30.5), daysAgo(30.5))
    const oldButRenewed = await file("pending", daysAgo(32), new Date(Date.now() + 600_000))
    const removed = await run(cleanExpired)
    expect(removed["files"]).toBeGreaterThanOrEqual(2)
    expect(await exists("files", "uuid", abandonedPending)).toBe(false)
    expect(await exists("files", "uuid", abandonedUploaded)).toBe(false)
    expect(await exists("file_blobs", "key", abandonedUploaded)).toBe(false)
    expect(await exists("files", "uuid", oldReady)).toBe(true)
    expect(await exists("file_blobs", "key", oldReady)).toBe(true)
    expect(await exists("files", "uuid", youngExpired)).toBe(true)
    expect(await exists("files", "uuid", oldButRenewed)).toBe(true)
  })

  it("a files.prepare retried after both its key and its file were cleaned runs as a new request", async () => {
    const input = { requestUuid: randomUUID(), name: "a.txt", mimeType: "text/plain" as const, size: 3, purpose: "publication_file" as const }
    const first = await run(prepareFile(actor, input, "http://localhost"))
    const again = await run(prepareFile(actor, input, "http://localhost"))
    expect(again.uuid).toBe(first.uuid)
    // 32 days later, its address long dead.
    await db.query("UPDATE files SET created_at = $2, upload_expires_at = $2 WHERE uuid = $1", [first.uuid, daysAgo(32)])
    await db.query("UPDATE idempotency_keys SET created_at = $2 WHERE request_uuid = $1", [input.requestUuid, daysAgo(32)])
    await run(cleanExpired)
    const later = await run(prepareFile(actor, input, "http://localhost"))
    expect(later.uuid).not.toBe(first.uuid)
    expect(later.status).toBe("pending")
    expect(Option.isSome(Option.fromNullable(later.upload))).toBe(true)
  })

  it("keeps an abandoned file while the files.prepare key naming it is still remembered (a key cleanup that failed or lagged)", async () => {
    const input = { requestUuid: randomUUID(), name: "a.txt", mimeType: "text/plain" as const, size: 3, purpose: "publication_file" as const }
    const first = await run(prepareFile(actor, input, "http://localhost"))
    await db.query("UPDATE files SET created_at = $2, upload_expires_at = $2 WHERE uuid = $1", [first.uuid, daysAgo(40)])
    await db.query("UPDATE idempotency_keys SET created_at = $2 WHERE request_uuid = $1", [input.requestUuid, daysAgo(40)])
    // Only the files rule runs: the key is still there, so the file must stay, and a retry finds it.
    await run(cleanAbandonedFiles)
    expect(await exists("files", "uuid", first.uuid)).toBe(true)
    const retried = await run(prepareFile(actor, input, "http://localhost"))
    expect(retried.uuid).toBe(first.uuid)
  })

  it("removes rate-limit hits older than a day and sign-in challenges expired more than a day ago", async () => {
    await db.query(
      "INSERT INTO rate_limit_hits (bucket, subject, at) VALUES ('email', 'old@example.com', $1), ('email', 'young@example.com', $2)",
      [daysAgo(1.1), daysAgo(0.9)]
    )
    const oldChallenge = randomUUID()
    const youngChallenge = randomUUID()
    await db.query(
      `INSERT INTO sign_in_challenges (uuid, email, code_hash, expires_at, created_at)
       VALUES ($1, 'old@example.com', 'h', $2, $2), ($3, 'young@example.com', 'h', $4, $4)`,
      [oldChallenge, daysAgo(1.1), youngChallenge, daysAgo(0.9)]
    )
    await run(cleanExpired)
    expect(await exists("rate_limit_hits", "subject", "old@example.com")).toBe(false)
    expect(await exists("rate_limit_hits", "subject", "young@example.com")).toBe(true)
    expect(await exists("sign_in_challenges", "uuid", oldChallenge)).toBe(false)
    expect(await exists("sign_in_challenges", "uuid", youngChallenge)).toBe(true)
  })

  it("removes MCP authorization codes, tokens and requests a day after they expired; the connection, its client and live tokens stay", async () => {
    const { rows: [key] } = await db.query<{ uuid: string }>(
      `INSERT INTO api_keys (account_uuid, profile_uuid, kind, name, scopes, http_enabled, mcp_enabled, lifetime_days)
       VALUES ($1, $2, 'agent', 'agent', '["publications:read"]'::jsonb, false, true, 90) RETURNING uuid`,
      [actor.accountUuid, actor.profileUuid]
    )
    await db.query("INSERT INTO oauth_clients (client_id, kind, name, redirect_uris) VALUES ('retention-client', 'registered', 'Agent', '[\"http://127.0.0.1/cb\"]')")
    await db.query("INSERT INTO oauth_agent_clients (key_uuid, client_id) VALUES ($1, 'retention-client')", [key!.uuid])
    const request = (expires: Date) =>
      db.query<{ uuid: string }>(
        `INSERT INTO oauth_requests (client_id, redirect_uri, scopes, resource, code_challenge, expires_at)
         VALUES ('retention-client', 'http://127.0.0.1/cb', '[]', 'http://localhost/mcp', 'c', $1) RETURNING uuid`,
        [expires]
      ).then((result) => result.rows[0]!.uuid)
    const code = (hash: string, requestUuid: string, expires: Date) =>
      db.query(
        `INSERT INTO oauth_codes (code_hash, request_uuid, client_id, account_uuid, profile_uuid, scopes, redirect_uri, resource, code_challenge, expires_at, key_uuid)
         VALUES ($1, $2, 'retention-client', $3, $4, '[]', 'http://127.0.0.1/cb', 'http://localhost/mcp', 'c', $5, $6)`,
        [hash, requestUuid, actor.accountUuid, actor.profileUuid, expires, key!.uuid]
      )
    const token = (hash: string, kind: "access" | "refresh", expires: Date) =>
      db.query(
        "INSERT INTO oauth_tokens (token_hash, kind, key_uuid, client_id, resource, expires_at) VALUES ($1, $2, $3, 'retention-client', 'http://localhost/mcp', $4)",
        [hash, kind, key!.uuid, expires]
      )
    // Old: expired 1.1 days ago. Young: expired 0.9 days ago (a used code, a refresh token reuse detection still reads).
    const oldRequest = await request(daysAgo(1.1))
    const youngRequest = await request(daysAgo(0.9))
    // An old request whose code expired recently: kept while its code is.
    const heldRequest = await request(daysAgo(1.1))
    const orphanRequest = await request(daysAgo(1.1))
    await code("old-code", oldRequest, daysAgo(1.1))
    await code("young-code", youngRequest, daysAgo(0.9))
    await code("held-code", heldRequest, daysAgo(0.9))
    await token("old-access", "access", daysAgo(1.1))
    await token("old-refresh", "refresh", daysAgo(1.1))
    await token("young-refresh", "refresh", daysAgo(0.9))
    await token("live-access", "access", new Date(Date.now() + 900_000))

    const removed = await run(cleanExpired)
    expect(removed).toMatchObject({ oauthCodes: 1, oauthTokens: 2, oauthRequests: 2 })
    expect(await exists("oauth_codes", "code_hash", "old-code")).toBe(false)
    expect(await exists("oauth_codes", "code_hash", "young-code")).toBe(true)
    expect(await exists("oauth_codes", "code_hash", "held-code")).toBe(true)
    expect(await exists("oauth_requests", "uuid", oldRequest)).toBe(false)
    expect(await exists("oauth_requests", "uuid", orphanRequest)).toBe(false)
    expect(await exists("oauth_requests", "uuid", youngRequest)).toBe(true)
    expect(await exists("oauth_requests", "uuid", heldRequest)).toBe(true)
    for (const gone of ["old-access", "old-refresh"]) expect(await exists("oauth_tokens", "token_hash", gone)).toBe(false)
    for (const kept of ["young-refresh", "live-access"]) expect(await exists("oauth_tokens", "token_hash", kept)).toBe(true)
    expect(await exists("oauth_clients", "client_id", "retention-client")).toBe(true)
    expect(await exists("api_keys", "uuid", key!.uuid)).toBe(true)
  })

  it("removes an export's file at its expiresAt, not at the next hourly pass (the real loop sleeps until that moment)", async () => {
    const fileUuid = await file("ready", daysAgo(7), daysAgo(7))
    const job = randomUUID()
    const expires = Date.now() + 1_500
    await db.query(
      `INSERT INTO learning_jobs (uuid, kind, requester_profile_uuid, input, status, file_uuid, finished_at, expires_at)
       VALUES ($1, 'analytics_export', $2, '{}'::jsonb, 'done', $3, now(), to_timestamp($4 / 1000.0))`,
      [job, actor.profileUuid, fileUuid, expires]
    )
    const scope = await run(Scope.make())
    try {
      await run(Layer.buildWithScope(
        WorkerLoop.pipe(Layer.provide(Layer.effect(WorkerJobs, Effect.map(makeRetentionJob(), (retention) => [retention]))), Layer.provide(Logger.minimumLogLevel(LogLevel.None))),
        scope
      ))
      let removedAt: number | undefined
      while (removedAt === undefined && Date.now() <= expires + 5_000) {
        if (!(await exists("files", "uuid", fileUuid))) removedAt = Date.now()
        else await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(removedAt, "the export's file was not removed within 5 s of its expiresAt").toBeDefined()
      expect(removedAt!).toBeGreaterThanOrEqual(expires)
      expect((await db.query("SELECT file_uuid FROM learning_jobs WHERE uuid = $1", [job])).rows).toEqual([{ file_uuid: null }])
    } finally {
      await run(Scope.close(scope, Exit.void))
    }
  })
})
