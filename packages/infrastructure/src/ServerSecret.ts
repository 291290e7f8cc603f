import { ServerSecret } from "@birzha/domain/internal"
import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { DatabaseConfig } from "./database/DatabaseConfig.js"
import { ServiceConfig } from "./Settings.js"


/**
 * `BIRZHA_SECRET` when set; otherwise a key generated once and kept (mode 0600) in
 * `BIRZHA_DATA_DIR/secret`, so hashes stay valid across restarts of a single-machine install.
 * Several hosts on one server must share `BIRZHA_SECRET`.
 */
export const ServerSecretLive = Layer.effect(
  ServerSecret,
  Effect.gen(function*() {
    const { secret } = yield* ServiceConfig
    if (Option.isSome(secret)) return secret.value
    const { dataDir } = yield* DatabaseConfig
    const file = join(dataDir, "secret")
    return yield* Effect.try({
      try: () => {
        mkdirSync(dataDir, { recursive: true })
        try {
          return readFileSync(file, "utf8").trim()
        } catch {
          const generated = randomBytes(32).toString("base64url")
          // `wx`: of two processes starting at once, one writes and the other reads what it wrote.
          try {
            writeFileSync(file, generated + "\n", { mode: 0o600, flag: "wx" })
            return generated
          } catch {
            return readFileSync(file, "utf8").trim()
          }
        }
      },
      catch: (cause) => new Error(`Could not read or create the server secret in ${file}: ${String(cause)}`)
    }).pipe(Effect.orDie, Effect.map(Redacted.make))
  })
)
