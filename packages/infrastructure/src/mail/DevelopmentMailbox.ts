import { Mailer, MailNotAccepted } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { rowsDecoder, Timestamp } from "@birzha/domain/internal"
import { Context, Effect, Layer, Schema } from "effect"

/** A message the service would have mailed, as kept in `development_mailbox`. */
export interface MailboxMessage {
  readonly uuid: string
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
  readonly createdAt: Date
}

export interface MailboxQuery {
  /** Only messages to this address (compared without regard to case). */
  readonly to?: string
  readonly limit: number
}

/** Reads the development mailbox: what `birzha mail list` prints. */
export class DevelopmentMailbox extends Context.Tag("@birzha/infrastructure/DevelopmentMailbox")<DevelopmentMailbox, {
  /** Newest first. */
  readonly list: (query: MailboxQuery) => Effect.Effect<ReadonlyArray<MailboxMessage>, SqlError>
}>() {}

const MailboxRow = Schema.Struct({
  uuid: Schema.String,
  to_address: Schema.String,
  subject: Schema.String,
  text_body: Schema.String,
  html_body: Schema.String,
  created_at: Timestamp
})
type MailboxRow = typeof MailboxRow.Type
const decodeRows = rowsDecoder(MailboxRow)

const messageOf = (row: MailboxRow): MailboxMessage => ({
  uuid: row.uuid,
  to: row.to_address,
  subject: row.subject,
  text: row.text_body,
  html: row.html_body,
  createdAt: new Date(row.created_at)
})

export const DevelopmentMailboxLive: Layer.Layer<DevelopmentMailbox, never, SqlClient.SqlClient> = Layer.effect(
  DevelopmentMailbox,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return DevelopmentMailbox.of({
      list: ({ limit, to }) => {
        const count = Math.max(1, Math.min(1000, Math.trunc(limit)))
        const rows = to === undefined
          ? sql`SELECT uuid, to_address, subject, text_body, html_body, created_at
              FROM development_mailbox ORDER BY created_at DESC LIMIT ${count}`
          : sql`SELECT uuid, to_address, subject, text_body, html_body, created_at
              FROM development_mailbox WHERE lower(to_address) = lower(${to.trim()})
              ORDER BY created_at DESC LIMIT ${count}`
        return Effect.map(Effect.flatMap(rows, decodeRows), (found) => found.map(messageOf))
      }
    })
  })
)

/**
 * The `Mailer` when no SMTP server is configured: each message is kept in
 * `development_mailbox`, so sign-in works locally and `birzha mail list` shows what was sent.
 * `send` succeeds once the row is stored; a database that does not answer fails it with
 * `MailNotAccepted`, as a refusing SMTP server would.
 */
export const DevelopmentMailer: Layer.Layer<Mailer, never, SqlClient.SqlClient> = Layer.effect(
  Mailer,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Mailer.of({
      keepsMessages: true,
      send: (message) =>
        sql`INSERT INTO development_mailbox (to_address, subject, text_body, html_body)
            VALUES (${message.to}, ${message.subject}, ${message.text}, ${message.html})`.pipe(
          Effect.mapError((error) => new MailNotAccepted({ message: `The development mailbox could not keep the message: ${error.message}` })),
          // Neither the address, the subject (a sign-in mail's names its code) nor the body goes
          // to the log: logs are shipped and kept where codes and links must not be. The developer
          // reads the message where it is kept.
          Effect.zipRight(Effect.logInfo("development mailbox: a message was kept; read it with `birzha mail list`"))
        )
    })
  })
)
