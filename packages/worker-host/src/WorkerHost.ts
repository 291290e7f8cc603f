import { OperationsLive, PostgresBlobStore, PublicOrigin, Readiness, SignInConfig } from "@birzha/domain/internal"
import { WebhookSettings } from "@birzha/domain/internal"
import {
  Database,
  DatabaseLive,
  MailerLive,
  MetricsFromSettings,
  MigrationsAtStart,
  StartupMemoryLive,
  ServerSecretLive,
  ServiceConfig,
  TracingLive,
  validateSettings
} from "@birzha/infrastructure"
import { Config, Duration, Effect, Layer, Predicate, Schedule, Stream } from "effect"
import { makeAutomationsJobs } from "./automations/AutomationsJob.js"
import { makeSequencerJob } from "./events/Sequencer.js"
import { makeLearningCheckerCallsJob } from "./learning/CheckerCallsJob.js"
import { makeLearningGradingJob } from "./learning/GradingJob.js"
import { makeLearningCorrectionsJob, makeLearningEnrollmentsJob, makeLearningJobsJob, makeLearningNotifierJob, makeLearningReviewsJob, makeLearningRunsJob } from "./learning/LearningJobs.js"
import { makeDealsJob, makeReviewsJob } from "./marketplace/MarketplaceJobs.js"
import { makeRetentionJob } from "./Retention.js"
import { makeWebhookJob } from "./webhooks/WebhookDispatcher.js"
import { type DueSignal, DueSignals, parseDueSignal, WorkerJobs, WorkerLoop } from "./WorkerLoop.js"

/** The jobs the sequencer wakes when it numbered events: the rules, webhook endpoints and the learning notifier. */
export const sequencerWakes: ReadonlyArray<string> = ["automations-fanout", "webhooks", "learning_notifier"]

/**
 * How long a polling job sleeps on the embedded database when nothing wakes it: a minute, as the
 * time-driven jobs. There every write is this process's, and migration 0035 notifies the queue
 * tables' new work (`DueSignalsLive`): the sleep is only the fallback for what no row announces (a
 * checker's breaker cooling down, quiet hours ending, work left by a previous start), so an idle
 * host runs its jobs' statements once a minute (bench/README.md, `idle`).
 */
export const embeddedFallback = Duration.minutes(1)

/**
 * How often, on a server, a job the sequencer (or the fan-out) wakes looks for work no wake
 * announces: a retry falling due, a replay or test delivery the host wrote, a lease of a stopped
 * worker, events another worker numbered. Polled every 10–20 ms, the webhook and automation jobs
 * kept an idle worker at about a quarter of a core and its database at a seventh (five statements
 * a poll for the webhooks alone; bench/README.md, `idle`); new events still reach them at once.
 */
export const wokenJobsFallback = Duration.millis(100)

/**
 * The jobs of a worker process. On a server the sequencer polls every 20 ms (a NOTIFY in every
 * business transaction would serialize their commits) and wakes the jobs that follow events; on
 * the embedded database the polling jobs sleep `embeddedFallback` and are woken by the writes
 * themselves.
 */
export const WorkerJobsLive = Layer.scoped(
  WorkerJobs,
  Effect.gen(function*() {
    const database = yield* Database
    const migrated = Effect.map(database.readiness, (report) => report.migrations)
    const { webhookAllowHttpLoopback } = yield* ServiceConfig
    const embedded = database.mode === "embedded"
    const polling = (server: Duration.DurationInput) => embedded ? embeddedFallback : server
    return [
      // Newly numbered events go to the rules, to webhook endpoints and to the learning notifier at once, not at their next tick.
      {
        ...(yield* makeSequencerJob({ every: polling(Duration.millis(20)), ready: migrated })),
        wakes: sequencerWakes
      },
      // Webhook delivery (its in-flight attempts live in this layer's scope), and the hourly retention cleanup.
      yield* makeWebhookJob({
        allowHttpLoopback: webhookAllowHttpLoopback,
        every: polling(wokenJobsFallback),
        ready: migrated
      }),
      yield* makeRetentionJob({ ready: migrated }),
      // The time-driven jobs below sleep until their next due moment (a minute at most), woken by
      // DueSignalsLive when a write makes an earlier one.
      // Deals whose handed-over work waited 14 days complete by themselves.
      yield* makeDealsJob({ ready: migrated }),
      // Sealed reviews whose 14-day window closed are revealed.
      yield* makeReviewsJob({ ready: migrated }),
      // Learning runs start at startsAt and finish 7 days after endsAt.
      yield* makeLearningRunsJob({ ready: migrated }),
      // Seat offers expire, pauses and withdrawal graces end, steps unlock, deadlines are near.
      yield* makeLearningEnrollmentsJob({ ready: migrated }),
      // Learning exports, imports and analytics exports.
      yield* makeLearningJobsJob({ ready: migrated, ...(embedded ? { every: embeddedFallback } : {}) }),
      // Overdue review claims (learning.review.overdue).
      yield* makeLearningReviewsJob({ ready: migrated }),
      // Learning corrections: regrade plan chunks, appeal closing, extension expiry.
      yield* makeLearningCorrectionsJob({ ready: migrated, ...(embedded ? { every: embeddedFallback } : {}) }),
      // Learning sample runs and variant generations: signed calls to the steps' external checkers.
      yield* makeLearningCheckerCallsJob({ allowHttpLoopback: webhookAllowHttpLoopback, ready: migrated, every: polling(Duration.seconds(1)) }),
      // Learning events into the recipients' inboxes (rights and preferences at delivery).
      yield* makeLearningNotifierJob({ ready: migrated, ...(embedded ? { every: embeddedFallback } : {}) }),
      // Learning grading: grade, regrade and preflight jobs, per-checker concurrency and the circuit breaker.
      yield* makeLearningGradingJob({ allowHttpLoopback: webhookAllowHttpLoopback, ready: migrated, every: polling(Duration.millis(250)) }),
      // Automation rules: events fanned out into executions, executions run through the registry.
      ...(yield* makeAutomationsJobs({ every: polling(wokenJobsFallback), ready: migrated }))
    ]
  })
)

/** The channel migration 0030's triggers notify when a write makes a moment due earlier. */
export const dueChannel = "birzha_due"

/**
 * The jobs that sleep `embeddedFallback` on the embedded database, woken by migration 0035's
 * notifications (and the sequencer's wakes).
 */
export const embeddedPollingJobs: ReadonlyArray<string> = [
  "sequencer",
  "webhooks",
  "automations-fanout",
  "automations-runner",
  "learning_grading",
  "learning_checker_calls",
  "learning_jobs",
  "learning_notifier",
  "learning_corrections"
]

/**
 * The due moments written by every process (a server's dedicated LISTEN connection) or by this
 * one (embedded), for the time-driven jobs' sleeps (`WorkerLoop.ts`). On the embedded database
 * the polling jobs' first runs usually come before the migrations (`MigrationsAtStart` runs beside
 * the worker): once migrated, they are signalled to look at once, for the work a previous start
 * left, rather than after their minute's fallback.
 */
export const DueSignalsLive = Layer.effect(
  DueSignals,
  Effect.map(Database, (database) => {
    const written = database.listen(dueChannel).pipe(Stream.map(parseDueSignal), Stream.filter(Predicate.isNotUndefined))
    if (database.mode !== "embedded") return written
    const migrated = Effect.repeat(Effect.map(database.readiness, (report) => report.migrations), {
      until: (done) => done,
      schedule: Schedule.spaced(Duration.millis(200))
    })
    const afterMigrations = Stream.fromEffect(migrated).pipe(
      Stream.flatMap(() => Stream.fromIterable(embeddedPollingJobs.map((job): DueSignal => ({ job, at: Date.now() }))))
    )
    return Stream.merge(written, afterMigrations)
  })
)

/**
 * The operation registry for automation rules' `command.execute` (run with an automation actor, no
 * HTTP request). Addresses in answers use `BIRZHA_PUBLIC_ORIGIN` as the HTTP host does.
 */
const WorkerOperations = Layer.unwrapEffect(
  Effect.gen(function*() {
    const publicOrigin = yield* Config.string("BIRZHA_PUBLIC_ORIGIN").pipe(Config.withDefault("http://localhost:8080"), Effect.orDie)
    const { webhookAllowHttpLoopback } = yield* ServiceConfig
    const database = yield* Database
    return OperationsLive.pipe(
      Layer.provide(Layer.mergeAll(
        Layer.succeed(PublicOrigin, publicOrigin),
        Layer.succeed(SignInConfig, { publicOrigin }),
        Layer.succeed(WebhookSettings, { publicOrigin, allowHttpLoopback: webhookAllowHttpLoopback }),
        Layer.succeed(Readiness, { check: database.readiness })
      ))
    )
  })
)

/** The background workers; `birzha serve` runs these in-process on the embedded database. */
export const WorkerHostLive = WorkerLoop.pipe(
  Layer.provide(Layer.merge(WorkerJobsLive, DueSignalsLive)),
  Layer.provide(WorkerOperations),
  // Webhook delivery opens sealed signing secrets and mails owners of disabled endpoints; retention
  // removes the bytes of abandoned files. The same layer values as `birzha serve` provides, so they
  // are built once when both are present.
  Layer.provide(Layer.mergeAll(ServerSecretLive, MailerLive, PostgresBlobStore))
)

/**
 * `birzha worker`: the workers alone, until SIGTERM, with their Prometheus page when
 * `BIRZHA_METRICS_PORT` is set (the attempts, grading calls and time-driven runs this process made).
 */
export const work = Effect.gen(function*() {
  yield* validateSettings
  return yield* Layer.launch(
    Layer.mergeAll(WorkerHostLive, MigrationsAtStart, MetricsFromSettings).pipe(
      Layer.provide(DatabaseLive),
      Layer.provide(TracingLive),
      // This process is the workers' own: what starting left behind is freed before they start (StartupMemory.ts).
      Layer.provide(StartupMemoryLive)
    )
  )
})
