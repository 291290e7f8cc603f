import { EventEnvelope, type EventType, parseTypeList } from "@birzha/domain"
import { lastEventPosition, readSequencedEvents, type SequencedEvent } from "@birzha/domain/internal"
import { validateSettings } from "@birzha/infrastructure"
import { Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Either, Option, Schema } from "effect"
import { CommandDatabase } from "./HostLink.js"
import { CommandFailed, databaseProblem, reportingConfigErrors, reportingFailures } from "./Reporting.js"

const encodeEnvelope = Schema.encodeSync(EventEnvelope)

const line = (item: SequencedEvent, json: boolean): string => {
  const event = encodeEnvelope(item.event)
  if (json) return JSON.stringify({ position: item.position, ...event })
  const { aggregate } = event
  return `${item.position.padStart(8)}  ${event.occurredAt}  ${event.type}  ${aggregate.kind}/${aggregate.uuid} r${aggregate.revision}  ${JSON.stringify(event.data)}`
}

/**
 * `birzha events tail`: every profile's sequenced events as they are numbered, straight from the
 * database (an operator's view: no visibility rule), until Ctrl-C. Needs a sequencer running
 * (`birzha worker`, or `birzha serve` on the embedded database).
 */
const tail = (options: {
  readonly types: Option.Option<ReadonlyArray<EventType>>
  readonly from: Option.Option<number>
  readonly json: boolean
  readonly pollMs: number
}) =>
  Effect.gen(function*() {
    yield* validateSettings
    yield* Effect.gen(function*() {
      let after = Option.isSome(options.from) ? String(Math.max(0, options.from.value - 1)) : yield* lastEventPosition
      yield* Console.error(`Following events after position ${after} (Ctrl-C to stop)`)
      const types = Option.getOrUndefined(options.types)
      for (;;) {
        const page = yield* readSequencedEvents({ after, limit: 100, types })
        for (const item of page) {
          yield* Console.log(line(item, options.json))
          after = item.position
        }
        if (page.length < 100) yield* Effect.sleep(Duration.millis(options.pollMs))
      }
    }).pipe(
      Effect.provide(CommandDatabase),
      Effect.catchTag("SqlError", (error) =>
        new CommandFailed({ message: databaseProblem("could not read events", error) }))
    )
  })

const tailCommand = Command.make(
  "tail",
  {
    types: Options.text("types").pipe(
      Options.withDescription("Only these types, comma-separated, * as a wildcard (publication.*,profile.updated)."),
      Options.optional
    ),
    from: Options.integer("from").pipe(
      Options.withDescription("Start at this position (0 or 1: from the first event); default: only events numbered from now on."),
      Options.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription("One JSON object per line: the position and the envelope.")),
    poll: Options.integer("poll-ms").pipe(Options.withDescription("Pause between polls once caught up, in ms."), Options.withDefault(250))
  },
  ({ from, json, poll, types }) =>
    reportingConfigErrors(reportingFailures(Effect.gen(function*() {
      if (Option.isSome(from) && from.value < 0) return yield* new CommandFailed({ message: "--from must be 0 or more" })
      if (poll < 10 || poll > 60_000) return yield* new CommandFailed({ message: "--poll-ms must be between 10 and 60000" })
      const parsed = Option.isNone(types) ? Either.right(undefined) : parseTypeList(types.value)
      if (Either.isLeft(parsed)) return yield* new CommandFailed({ message: `--types: ${parsed.left}` })
      return yield* tail({ types: Option.fromNullable(parsed.right), from, json, pollMs: poll })
    })))
).pipe(Command.withDescription("Print events as the sequencer numbers them, until Ctrl-C (read from the database: every profile's events)."))

export const eventsCommand = Command.make("events").pipe(
  Command.withDescription("The event stream."),
  Command.withSubcommands([tailCommand])
)
