import { Context, type Effect, Schema } from "effect"

/** One message: both a plain-text and an HTML body, as every mail client expects. */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

/** The provider refused the message or could not be reached: nothing was accepted for delivery. */
export class MailNotAccepted extends Schema.TaggedError<MailNotAccepted>()("MailNotAccepted", {
  message: Schema.String
}) {}

/**
 * Sends mail. `send` succeeds only once the provider accepted the message (SMTP: the server
 * answered 250 to DATA); it is not a delivery receipt. Implementations: SMTP via nodemailer when
 * `BIRZHA_SMTP_URL` is set, otherwise the development mailbox (logged and kept in the database).
 */
export class Mailer extends Context.Tag("@birzha/domain/Mailer")<Mailer, {
  readonly send: (message: MailMessage) => Effect.Effect<void, MailNotAccepted>
  /**
   * `true` for the development mailbox (messages kept in `development_mailbox`, not sent): the
   * admin area then shows them (admin.mail.list). Absent: a mailer that really sends.
   */
  readonly keepsMessages?: boolean
}>() {}
