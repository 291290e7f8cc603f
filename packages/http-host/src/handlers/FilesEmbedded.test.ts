import {
  accountForVerifiedEmail,
  completeFile,
  PostgresBlobStore,
  prepareFile,
  readFileContent,
  receiveUpload,
  ServerSecret,
  unusableFiles
} from "@birzha/domain/internal"
import { runMigrations } from "@birzha/domain/internal"
import { makePgliteClient } from "@birzha/infrastructure"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sessionActor } from "../../../../testing/actors.js"
import { sampleFiles } from "../../../../testing/files.js"
import { type EmbeddedDataDir, embeddedDataDir } from "../../../../testing/pglite.js"

/** PGlite's initdb, run once per test run for the template data directory. */
const initialise = (dir: string) => Effect.runPromise(Effect.scoped(makePgliteClient(dir)))
let data: EmbeddedDataDir
beforeAll(async () => {
  data = await embeddedDataDir("files", initialise)
})
afterAll(() => data?.remove())

describe("files on the embedded database", () => {
  it("stores, completes and reads back the bytes through PGlite, with the same SQL", async () => {
    const bytes = sampleFiles["image/webp"]
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* makePgliteClient(data.dir)
      const services = Layer.mergeAll(
        Layer.succeed(SqlClient.SqlClient, sql),
        Layer.succeed(ServerSecret, Redacted.make("k".repeat(32))),
        PostgresBlobStore.pipe(Layer.provide(Layer.succeed(SqlClient.SqlClient, sql)))
      )
      return yield* Effect.gen(function*() {
        yield* runMigrations
        const signedIn = yield* accountForVerifiedEmail("embedded@example.com")
        const actor = sessionActor(signedIn, "embedded")
        const prepared = yield* prepareFile(actor, {
          requestUuid: crypto.randomUUID(),
          name: "photo.webp",
          mimeType: "image/webp",
          size: bytes.length,
          purpose: "publication_asset"
        }, "http://localhost:8080")
        const token = new URL(prepared.upload!.url).searchParams.get("token")!
        yield* receiveUpload(prepared.uuid, token, bytes)
        const ready = yield* completeFile(actor, prepared.uuid, "http://localhost:8080")
        const content = yield* readFileContent(prepared.uuid, Option.some(actor))
        const unusable = yield* unusableFiles(actor.profileUuid, "publication_asset", [prepared.uuid, crypto.randomUUID()])
        const [event] = yield* sql<{ type: string }>`SELECT type FROM outbox_events WHERE aggregate_uuid = ${prepared.uuid}`
        return { ready, content, unusable, event }
      }).pipe(Effect.provide(services))
    })))
    expect(result.ready.status).toBe("ready")
    expect(Option.map(result.content, (content) => new Uint8Array(content.bytes))).toEqual(Option.some(bytes))
    expect(result.unusable).toHaveLength(1)
    expect(result.event).toEqual({ type: "file.ready" })
  })
})
