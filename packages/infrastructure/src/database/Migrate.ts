import { Effect } from "effect"
import { ModeratorsConfig, OperatorsConfig } from "../Settings.js"
import { validateSettings } from "../ValidateSettings.js"
import { DatabaseLive, migrateAndSync } from "./Database.js"

/** `birzha migrate`: apply pending migrations and exit. */
export const migrate = Effect.gen(function*() {
  yield* validateSettings
  const applied = yield* migrateAndSync(yield* ModeratorsConfig, yield* OperatorsConfig).pipe(Effect.provide(DatabaseLive))
  yield* Effect.logInfo(applied.length === 0 ? "no migrations pending" : `applied ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
})
