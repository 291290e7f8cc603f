import { DatabaseConfig } from "@birzha/infrastructure"
import { ConfigProvider, Effect, Either, Option } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { embeddedDataDirOf, runningHostIn, sendToHost } from "./HostClient.js"

describe("the CLI's client of a running host (bin.ts forwards before loading the command)", () => {
  it("finds the embedded database's directory exactly where the service's configuration does", () => {
    const environments: ReadonlyArray<Record<string, string>> = [
      {},
      { BIRZHA_DATA_DIR: "/srv/birzha" },
      { BIRZHA_DATA_DIR: "   " },
      { DATABASE_URL: "postgres://postgres@127.0.0.1/x" },
      { DATABASE_URL: "  " },
      { DATABASE_URL: "", BIRZHA_DATA_DIR: "data" },
      { DATABASE_URL: "mysql://nope", BIRZHA_DATA_DIR: "data" }
    ]
    for (const env of environments) {
      const configured = Effect.runSync(Effect.either(Effect.withConfigProvider(DatabaseConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))
      const expected = Either.isRight(configured) && Option.isNone(configured.right.url) ? configured.right.dataDir : undefined
      // A refused configuration is the command's to report: no forwarding then.
      expect(embeddedDataDirOf(env), JSON.stringify(env)).toBe(Either.isLeft(configured) ? undefined : expected)
    }
  })

  it("runs the command here when the host named in admin.json is not there: no file, this process, a closed port", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "birzha-host-client-"))
    try {
      expect(runningHostIn(dataDir, () => true)).toBeUndefined()
      writeFileSync(join(dataDir, "admin.json"), JSON.stringify({ url: "http://127.0.0.1:1", token: "t", pid: process.pid }))
      expect(runningHostIn(dataDir, () => true)).toBeUndefined()
      // A port nobody listens on any more (a host killed without removing its file).
      const server = createServer()
      await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
      const { port } = server.address() as { port: number }
      await new Promise((closed) => server.close(closed))
      writeFileSync(join(dataDir, "admin.json"), JSON.stringify({ url: `http://127.0.0.1:${port}`, token: "t", pid: process.pid + 1 }))
      const host = runningHostIn(dataDir, () => true)
      expect(host?.url).toBe(`http://127.0.0.1:${port}`)
      expect(runningHostIn(dataDir, () => false)).toBeUndefined()
      const written: Array<string> = []
      expect(await sendToHost(host!, ["mail", "list"], (_, text) => written.push(text))).toBeUndefined()
      expect(written).toEqual([])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
