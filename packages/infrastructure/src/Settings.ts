import { Email } from "@birzha/domain"
import { Config, Either, Option, Redacted, Schema } from "effect"
import { invalidSetting, requireSetting } from "./ConfigProblem.js"

/** `1/true/yes/on` or `0/false/no/off`; anything else is a configuration error naming the variable. */
export const booleanFlag = (name: string): Config.Config<boolean> =>
  // Checked after the default: a failure inside `Config.string(name)` would carry the name twice.
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.mapOrFail((value) => {
      const v = value.trim().toLowerCase()
      if (["1", "true", "yes", "on"].includes(v)) return Either.right(true)
      if (["", "0", "false", "no", "off"].includes(v)) return Either.right(false)
      return Either.left(invalidSetting(name, `expected 1 or 0, got ${JSON.stringify(value)}`))
    })
  )

const isEmail = Schema.is(Email)

/**
 * A list of addresses from one variable: comma-separated (blanks around commas and empty entries
 * are ignored), each an `Email` as the API accepts it, lower-cased as accounts compare them.
 */
const addressList = (name: string): Config.Config<ReadonlyArray<string>> =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.mapOrFail((value) => {
      const list = [...new Set(value.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0))]
      const bad = list.find((s) => !isEmail(s))
      return bad === undefined
        ? Either.right(list)
        : Either.left(invalidSetting(name, `expected comma-separated email addresses, got ${JSON.stringify(bad)}`))
    })
  )

/** `BIRZHA_MODERATORS`: the addresses granted the moderator role at start. */
export const ModeratorsConfig: Config.Config<ReadonlyArray<string>> = addressList("BIRZHA_MODERATORS")

/** `BIRZHA_OPERATORS`: the addresses granted the operator role (the admin area) at start. */
export const OperatorsConfig: Config.Config<ReadonlyArray<string>> = addressList("BIRZHA_OPERATORS")

/** Settings every host shares, beside the database and HTTP ones. */
export interface ServiceSettings {
  /** Key for keyed hashes and encryption; when absent one is generated and kept in the data dir. */
  readonly secret: Option.Option<Redacted.Redacted<string>>
  /** SMTP for mail; when absent the development mailbox keeps messages in the database. */
  readonly smtpUrl: Option.Option<Redacted.Redacted<string>>
  readonly webhookAllowHttpLoopback: boolean
  readonly moderators: ReadonlyArray<string>
  readonly operators: ReadonlyArray<string>
}

export const ServiceConfig: Config.Config<ServiceSettings> = Config.all({
  secret: Config.option(
    Config.redacted("BIRZHA_SECRET").pipe(
      requireSetting("BIRZHA_SECRET", "expected at least 32 characters of random text", (value: Redacted.Redacted<string>) => Redacted.value(value).length >= 32)
    )
  ),
  smtpUrl: Config.option(
    Config.redacted("BIRZHA_SMTP_URL").pipe(
      requireSetting(
        "BIRZHA_SMTP_URL",
        "expected an smtp:// or smtps:// URL",
        (value: Redacted.Redacted<string>) => /^smtps?:\/\/[^\s]+$/.test(Redacted.value(value)) && URL.canParse(Redacted.value(value))
      )
    )
  ),
  webhookAllowHttpLoopback: booleanFlag("BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK"),
  moderators: ModeratorsConfig,
  operators: OperatorsConfig
})
