/**
 * An Effect program that runs Birzha's operations in its own process, on its own `pg` pool, with
 * no HTTP: it opens the account of a person it has authenticated itself, saves a task draft for
 * their profile, submits it to moderation and reads the events it caused. The background worker
 * runs beside it, since events are numbered by the worker's sequencer before anyone reads them.
 */
import { actorForVerifiedEmail, callOperation, DomainLive, Mailer } from "@birzha/domain/server"
import { DatabaseFromPool, migrateNow } from "@birzha/infrastructure"
import { WorkerHostLive } from "@birzha/worker-host"
import { ConfigProvider, Effect, Layer } from "effect"
import Pg from "pg"

/** The settings both the domain and the worker read; the worker reads them as `BIRZHA_*` configuration. */
export interface ExampleSettings {
  readonly publicOrigin: string
  readonly serverSecret: string
}

/** Mail the service sends (sign-in codes, notices); this program only logs it. */
const LoggedMail = Layer.succeed(Mailer, {
  send: (message) => Effect.logInfo(`mail to ${message.to}: ${message.subject}`)
})

/** Birzha on the program's pool: the catalog's registry, and the worker in the same process. */
export const BirzhaOnPool = (pool: Pg.Pool, settings: ExampleSettings) =>
  Layer.mergeAll(DomainLive(settings), WorkerHostLive).pipe(
    Layer.provide(LoggedMail),
    Layer.provideMerge(DatabaseFromPool(pool)),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({
      BIRZHA_SECRET: settings.serverSecret,
      BIRZHA_PUBLIC_ORIGIN: settings.publicOrigin
    })))
  )

/** The draft, the submitted task and the event types its changes caused, oldest first. */
export const saveSubmitAndReadEvents = (email: string) =>
  Effect.gen(function*() {
    // Pending migrations first (the worker waits for them too).
    yield* migrateNow
    const author = yield* actorForVerifiedEmail(email)
    const draft = yield* callOperation("tasks.save", author, {
      payload: {
        requestUuid: crypto.randomUUID(),
        data: {
          title: "Translate an assembly manual",
          category: "Сайты",
          description: "Twelve pages of a machine's assembly manual, German into Russian",
          budget: "up to 5 000 ₽",
          deadline: "a week",
          files: []
        }
      }
    })
    const submitted = yield* callOperation("tasks.submit", author, {
      payload: { requestUuid: crypto.randomUUID(), publicationUuid: draft.uuid, expectedRevision: draft.revision }
    })
    // The worker numbers committed events within milliseconds; read until both changes are there.
    const events = yield* callOperation("events.list", author, { urlParams: { aggregateUuid: draft.uuid } }).pipe(
      Effect.map((page) => page.items.map((event) => event.type)),
      Effect.delay("50 millis"),
      Effect.repeat({ until: (types) => types.length >= 2 }),
      Effect.timeout("20 seconds")
    )
    return { draft, submitted, events }
  })

/** Run as a script: `DATABASE_URL=postgres://… npm start`. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const pool = new Pg.Pool({ connectionString: process.env["DATABASE_URL"] })
  const settings = { publicOrigin: "http://localhost:3000", serverSecret: process.env["BIRZHA_SECRET"] ?? "example-secret-change-me-to-32-random-characters" }
  const result = await Effect.runPromise(
    saveSubmitAndReadEvents("author@example.com").pipe(Effect.provide(BirzhaOnPool(pool, settings)))
  )
  console.log(JSON.stringify({ task: result.submitted.uuid, status: result.submitted.status, events: result.events }))
  await pool.end()
}
