import type { Mailer } from "@birzha/domain/internal"
import type { SqlClient } from "@effect/sql"
import { Config, type ConfigError, Effect, Layer, Option } from "effect"
import { requireSetting } from "../ConfigProblem.js"
import { ServiceConfig } from "../Settings.js"
import { DevelopmentMailer } from "./DevelopmentMailbox.js"
import { SmtpMailerLive } from "./SmtpMailer.js"

export interface MailSettings {
  /** The `From` of every message: `name@domain` or `Name <name@domain>`. */
  readonly from: string
}

// One address, optionally with a display name; no line breaks, so the value cannot add headers.
const fromAddress = /^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/

export const MailConfig: Config.Config<MailSettings> = Config.all({
  from: Config.string("BIRZHA_MAIL_FROM").pipe(
    Config.map((value) => value.trim()),
    requireSetting("BIRZHA_MAIL_FROM", "expected an email address, optionally as `Name <address>`", (value: string) => fromAddress.test(value)),
    Config.withDefault("Birzha <no-reply@localhost>")
  )
})

/**
 * The `Mailer` from the configuration: SMTP when `BIRZHA_SMTP_URL` is set, otherwise the
 * development mailbox (kept in the database, never logged). It needs `SqlClient` only for the
 * latter. `DevelopmentMailbox` (the reader behind `birzha mail list`) is a separate layer,
 * `DevelopmentMailboxLive`, usable in either mode: with SMTP it shows what was kept before.
 */
export const MailerLive: Layer.Layer<Mailer, ConfigError.ConfigError, SqlClient.SqlClient> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { smtpUrl } = yield* ServiceConfig
    const { from } = yield* MailConfig
    return Option.match(smtpUrl, {
      onNone: () => DevelopmentMailer,
      onSome: (url) => SmtpMailerLive({ url, from })
    })
  })
)
