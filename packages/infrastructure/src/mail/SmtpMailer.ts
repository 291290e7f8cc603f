import { Mailer, MailNotAccepted } from "@birzha/domain/internal"
import { Duration, Effect, Layer, Redacted } from "effect"

export interface SmtpMailerSettings {
  /** `smtp://user:password@host:port` (STARTTLS when offered) or `smtps://…` (TLS from the start). */
  readonly url: Redacted.Redacted<string>
  /** The `From` header, e.g. `Birzha <no-reply@birzha.example>`. */
  readonly from: string
  /** Connecting and waiting for the greeting; default 10 s. */
  readonly connectionTimeout?: Duration.DurationInput
  /** Silence on an open connection; default 20 s. */
  readonly socketTimeout?: Duration.DurationInput
}

interface SmtpEndpoint {
  readonly host: string
  readonly port: number
  readonly secure: boolean
  readonly user: string
  readonly password: string
}

const endpointOf = (url: string): SmtpEndpoint => {
  const parsed = new URL(url)
  const secure = parsed.protocol === "smtps:"
  return {
    // `new URL` keeps the brackets of an IPv6 literal; sockets want the bare address.
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: parsed.port === "" ? (secure ? 465 : 587) : Number(parsed.port),
    secure,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password)
  }
}

const field = (error: unknown, name: string): string | undefined => {
  if (typeof error !== "object" || error === null || !(name in error)) return undefined
  const value: unknown = Reflect.get(error, name)
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined
}

/**
 * What went wrong, for the log and the caller: the server's answer or the network failure, with
 * the host and port but never the URL or its credentials (a server may echo the user name, and
 * an error may quote the connection options, so those strings are blanked out wherever they occur).
 */
const describeRefusal = (endpoint: SmtpEndpoint, url: string, error: unknown): string => {
  const code = field(error, "code")
  const command = field(error, "command")
  const reason = error instanceof Error ? error.message : String(error)
  const detail = [code, command === undefined ? undefined : `at ${command}`].filter((s) => s !== undefined).join(" ")
  let message = `SMTP server ${endpoint.host}:${endpoint.port} did not accept the message${detail === "" ? "" : ` (${detail})`}: ${reason}`
  const secrets = [url, endpoint.password, encodeURIComponent(endpoint.password)].filter((s) => s.length > 0)
  for (const secret of secrets) message = message.split(secret).join("***")
  return message
}

/**
 * A `Mailer` over SMTP with nodemailer. One connection per message: sign-in mail is rare, and a
 * fresh connection never trips over one the server closed while idle. `send` succeeds only when
 * the server answered 250 to DATA for the recipient; a refusal, a failed login, an unreachable
 * server or a timeout fails with `MailNotAccepted`.
 */
export const makeSmtpMailer = (settings: SmtpMailerSettings) =>
  Effect.gen(function*() {
    const url = Redacted.value(settings.url)
    const endpoint = endpointOf(url)
    const connectionTimeout = Duration.toMillis(settings.connectionTimeout ?? Duration.seconds(10))
    const socketTimeout = Duration.toMillis(settings.socketTimeout ?? Duration.seconds(20))
    // Loaded with the SMTP mailer, not with this module: a host without BIRZHA_SMTP_URL never loads nodemailer.
    const { default: nodemailer } = yield* Effect.promise(() => import("nodemailer"))
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport({
          host: endpoint.host,
          port: endpoint.port,
          secure: endpoint.secure,
          ...(endpoint.user === "" ? {} : { auth: { user: endpoint.user, pass: endpoint.password } }),
          connectionTimeout,
          greetingTimeout: connectionTimeout,
          dnsTimeout: connectionTimeout,
          socketTimeout,
          logger: false,
          debug: false
        })
      ),
      (transport) => Effect.sync(() => transport.close())
    )
    // Beyond the socket limits, one bound on the whole exchange, so a server that trickles
    // answers cannot hold a sign-in request for long.
    const overall = Duration.millis(connectionTimeout + 2 * socketTimeout)
    return Mailer.of({
      send: (message) =>
        Effect.tryPromise({
          try: () =>
            transport.sendMail({
              from: settings.from,
              to: message.to,
              subject: message.subject,
              text: message.text,
              html: message.html,
              // The body has nothing to resolve: no attachments, files or URLs are fetched.
              disableFileAccess: true,
              disableUrlAccess: true
            }),
          catch: (error) => new MailNotAccepted({ message: describeRefusal(endpoint, url, error) })
        }).pipe(
          Effect.flatMap((info) =>
            info.rejected.length > 0 || info.accepted.length === 0
              ? Effect.fail(
                new MailNotAccepted({
                  message: describeRefusal(endpoint, url, new Error(`recipient refused: ${info.response}`))
                })
              )
              : Effect.void
          ),
          Effect.timeoutFail({
            duration: overall,
            onTimeout: () =>
              new MailNotAccepted({
                message: `SMTP server ${endpoint.host}:${endpoint.port} did not accept the message within ${Duration.format(overall)}`
              })
          }),
          Effect.tapError((error) => Effect.logWarning("mail not accepted").pipe(Effect.annotateLogs({ reason: error.message })))
        )
    })
  })

/** `Mailer` over SMTP; the transport is closed when the layer is released. */
export const SmtpMailerLive = (settings: SmtpMailerSettings): Layer.Layer<Mailer> => Layer.scoped(Mailer, makeSmtpMailer(settings))
