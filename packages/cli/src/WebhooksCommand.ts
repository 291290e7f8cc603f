import { DeliveryStatus, WebhookDelivery } from "@birzha/domain"
import { operatorDeliveries } from "@birzha/domain/internal"
import { validateSettings } from "@birzha/infrastructure"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import { CommandDatabase } from "./HostLink.js"
import { CommandFailed, databaseProblem, reportingConfigErrors, reportingFailures } from "./Reporting.js"

const encodeDelivery = Schema.encodeSync(WebhookDelivery)
const isStatus = Schema.is(DeliveryStatus)
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

const describe = (delivery: typeof WebhookDelivery.Encoded): string => {
  const head = [
    delivery.createdAt,
    delivery.status.padEnd(10),
    delivery.kind.padEnd(5),
    delivery.eventType,
    `webhook-id ${delivery.eventUuid}`,
    `attempts ${delivery.attemptCount}`,
    ...(delivery.nextAttemptAt === undefined ? [] : [`next ${delivery.nextAttemptAt}`]),
    ...(delivery.cancelReason === undefined ? [] : [`(${delivery.cancelReason})`])
  ].join("  ")
  const attempts = delivery.attempts.map((attempt) =>
    `    ${attempt.attemptedAt}  ${attempt.statusCode === undefined ? "---" : String(attempt.statusCode)}  ${
      String(attempt.durationMs).padStart(6)
    } ms  ${attempt.error !== undefined ? attempt.error : oneLine(attempt.responseExcerpt, 100)}`
  )
  return [head, ...attempts].join("\n")
}

/** `birzha webhooks deliveries <endpoint>`: an endpoint's deliveries and their attempts, newest first, from the database. */
const deliveries = (options: { readonly endpoint: string; readonly limit: number; readonly status: Option.Option<string>; readonly json: boolean }) =>
  Effect.gen(function*() {
    if (!uuidPattern.test(options.endpoint)) return yield* new CommandFailed({ message: "the endpoint must be a webhook endpoint uuid" })
    if (options.limit < 1 || options.limit > 100) return yield* new CommandFailed({ message: "--limit must be between 1 and 100" })
    const status = Option.getOrUndefined(options.status)
    if (status !== undefined && !isStatus(status)) {
      return yield* new CommandFailed({ message: "--status must be pending, delivering, succeeded, failed or cancelled" })
    }
    yield* validateSettings
    const found = yield* operatorDeliveries(options.endpoint.toLowerCase(), { limit: options.limit, status }).pipe(
      Effect.provide(CommandDatabase),
      Effect.catchTags({
        SqlError: (error) =>
          new CommandFailed({ message: databaseProblem("could not read deliveries", error) }),
        InvalidRequest: (error) => new CommandFailed({ message: error.message })
      })
    )
    if (Option.isNone(found)) return yield* new CommandFailed({ message: `no webhook endpoint ${options.endpoint}` })
    const { endpoint, items } = found.value
    if (options.json) {
      for (const item of items) yield* Console.log(JSON.stringify(encodeDelivery(item)))
      return
    }
    yield* Console.log(`${endpoint.url}  ${endpoint.deleted ? "deleted" : endpoint.state}`)
    if (items.length === 0) return yield* Console.log("No deliveries kept (history is kept 7 days).")
    for (const item of items) yield* Console.log(describe(encodeDelivery(item)))
  })

const deliveriesCommand = Command.make(
  "deliveries",
  {
    endpoint: Args.text({ name: "endpoint" }).pipe(Args.withDescription("The webhook endpoint's uuid.")),
    limit: Options.integer("limit").pipe(Options.withDescription("How many deliveries, newest first (1 to 100)."), Options.withDefault(20)),
    status: Options.text("status").pipe(
      Options.withDescription("Only deliveries in this status: pending, delivering, succeeded, failed or cancelled."),
      Options.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription("One JSON delivery (with its attempts) per line."))
  },
  (options) => reportingConfigErrors(reportingFailures(deliveries(options)))
).pipe(Command.withDescription("Print a webhook endpoint's deliveries and their attempts, newest first (read from the database)."))

export const webhooksCommand = Command.make("webhooks").pipe(
  Command.withDescription("Webhook endpoints and their delivery history."),
  Command.withSubcommands([deliveriesCommand])
)
