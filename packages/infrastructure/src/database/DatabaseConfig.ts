import { Config, Either, Option, Redacted } from "effect"
import { invalidSetting, requireSetting } from "../ConfigProblem.js"

export interface DatabaseSettings {
  /** A Postgres server; absent means the embedded PGlite database in `dataDir`. */
  readonly url: Option.Option<Redacted.Redacted<string>>
  /** The embedded database and local files live here. */
  readonly dataDir: string
}

export const DatabaseConfig: Config.Config<DatabaseSettings> = Config.all({
  url: Config.string("DATABASE_URL").pipe(
    Config.withDefault(""),
    Config.mapOrFail((value) => {
      const url = value.trim()
      if (url === "") return Either.right(Option.none())
      return /^postgres(ql)?:\/\//.test(url) && URL.canParse(url)
        ? Either.right(Option.some(Redacted.make(url)))
        : Either.left(invalidSetting("DATABASE_URL", "expected a postgres:// or postgresql:// URL"))
    })
  ),
  dataDir: Config.string("BIRZHA_DATA_DIR").pipe(
    Config.withDefault("./.birzha"),
    requireSetting("BIRZHA_DATA_DIR", "expected a directory path", (value: string) => value.trim().length > 0)
  )
})
