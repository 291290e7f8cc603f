import { demoEmailDomain, demoSignInAccounts, maxDemoPublications, PostgresBlobStore, publicationKinds, seedDemoData } from "@birzha/domain/internal"
import * as Store from "@birzha/domain/internal"
import { validateSettings } from "@birzha/infrastructure"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer } from "effect"
import { CommandDatabase } from "./HostLink.js"
import { CommandFailed, reportingConfigErrors, reportingFailures } from "./Reporting.js"

const errorLine = (error: { readonly message: string; readonly cause?: unknown }) =>
  `${error.message}${error.cause instanceof Error && error.cause.message !== error.message ? `: ${error.cause.message}` : ""}`

const roleWords = {
  customer: "customer: a deal in progress with its messages, and a review written, sealed until the contractor writes theirs",
  contractor: "contractor: the same deal and messages, and a review to write for the earlier deal",
  moderator: "moderator: the moderation queues at /moderation"
} as const

/**
 * The demo accounts to sign in as (DemoAccounts.ts in @birzha/domain) and how: the sign-in page
 * mails a code, which the development mailbox keeps while BIRZHA_SMTP_URL is not set.
 */
const printAccounts = Effect.gen(function*() {
  const accounts = yield* demoSignInAccounts(demoEmailDomain).pipe(Effect.provide(CommandDatabase))
  if (accounts.length === 0) return
  // Loaded here: the HTTP host's package is large, and every other command starts without it (bin.ts).
  const { HttpConfig } = yield* Effect.promise(() => import("@birzha/http-host"))
  const { publicOrigin } = yield* HttpConfig
  yield* Console.log(`\nSign in as one of these at ${publicOrigin}/sign-in (birzha serve running):`)
  for (const account of accounts) yield* Console.log(`  ${account.email}  (${account.profileName}) — ${roleWords[account.role]}`)
  yield* Console.log(
    "The sign-in page emails a code and a link; without BIRZHA_SMTP_URL they stay in the development mailbox:\n" +
      "  birzha mail list --to <address>"
  )
}).pipe(Effect.catchTag("SqlError", (error) => Console.error(`birzha: could not list the demo accounts: ${errorLine(error)}`)))

/**
 * `birzha demo`: migrates the configured database if needed, then fills it with the demo
 * marketplace. Demo data already there is left alone (exit 0) unless `--reset` replaces it.
 */
const fillDemo = (options: { readonly publications: number; readonly seed: number; readonly reset: boolean }) =>
  Effect.gen(function*() {
    if (!Number.isInteger(options.publications) || options.publications < 1 || options.publications > maxDemoPublications) {
      return yield* new CommandFailed({ message: `--publications must be between 1 and ${maxDemoPublications}` })
    }
    yield* validateSettings
    const started = Date.now()
    const progressEvery = 10_000
    const outcome = yield* Effect.gen(function*() {
      yield* Store.runMigrations
      return yield* seedDemoData({
        publications: options.publications,
        seed: options.seed,
        reset: options.reset,
        onProgress: (stored, total) =>
          total >= 2 * progressEvery && (stored % progressEvery === 0 || stored === total)
            ? Console.error(`  ${stored} of ${total} publications`)
            : Effect.void
      })
    }).pipe(
      Effect.provide(PostgresBlobStore.pipe(Layer.provideMerge(CommandDatabase))),
      Effect.catchTags({
        DemoDataPresent: (present) =>
          Console.log(
            `Demo data is already there (${present.profiles} profiles, ${present.publications} publications): nothing changed. ` +
              "Run birzha demo --reset to replace it."
          ).pipe(Effect.zipRight(printAccounts), Effect.as(undefined)),
        SqlError: (error) => new CommandFailed({ message: `the database refused the demo data: ${errorLine(error)}` }),
        MigrationError: (error) => new CommandFailed({ message: `could not migrate the database: ${errorLine(error)}` })
      })
    )
    if (outcome === undefined) return
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const total = Object.values(outcome.publications).reduce((a, b) => a + b, 0)
    if (outcome.removed.profiles + outcome.removed.publications > 0) {
      yield* Console.log(`Removed the previous demo data: ${outcome.removed.profiles} profiles, ${outcome.removed.publications} publications.`)
    }
    yield* Console.log(
      `Demo data: ${outcome.profiles} public profiles, ${outcome.pictures} pictures, ${total} approved publications ` +
        `(${publicationKinds.map((kind) => `${kind} ${outcome.publications[kind]}`).join(", ")}), ` +
        `${outcome.relations.relations} responses, offers, deals and job contacts, ${outcome.relations.threads} threads with ` +
        `${outcome.relations.messages} messages, ${outcome.learning.courses} published courses with ${outcome.learning.runs} runs in ${seconds} s.`
    )
    yield* printAccounts
  })

export const demoCommand = Command.make(
  "demo",
  {
    publications: Options.integer("publications").pipe(
      Options.withDescription(`How many approved publications (1 to ${maxDemoPublications}; every kind from 7 on).`),
      Options.withDefault(300)
    ),
    seed: Options.integer("seed").pipe(
      Options.withDescription("The seed: the same seed gives the same profiles, publications and pictures."),
      Options.withDefault(1)
    ),
    reset: Options.boolean("reset").pipe(Options.withDescription("Remove the demo data that is there first, then fill again."))
  },
  (options) => reportingConfigErrors(reportingFailures(fillDemo(options)))
).pipe(
  Command.withDescription(
    "Fill the database with a Russian-language demo marketplace: public profiles of every type and approved publications of every kind with pictures, marked demo. " +
      "On the embedded database while birzha serve runs, the host fills its own database."
  )
)
