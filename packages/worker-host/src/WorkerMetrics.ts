import { Metric, MetricBoundaries, MetricLabel } from "effect"

/**
 * What a worker process did, as Effect metrics: its Prometheus page (`MetricsServerLive` of
 * packages/infrastructure/src/Metrics.ts, `BIRZHA_METRICS_PORT`) shows them beside the queues the
 * database holds. Counted by the process that did the work, so a scraper sums them over every
 * `birzha worker` (and over `birzha serve` on the embedded database, which runs the workers).
 * Labels are bounded: job names, kinds and outcomes, never a uuid.
 */

const seconds = (bounds: ReadonlyArray<number>) => MetricBoundaries.fromIterable(bounds)

// The label arrays of each combination, made once: Effect finds a labelled series by the array's identity.
const labelSets = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
const labels = (...pairs: ReadonlyArray<readonly [string, string]>): ReadonlyArray<MetricLabel.MetricLabel> => {
  const key = pairs.map(([name, value]) => `${name}=${value}`).join(",")
  let found = labelSets.get(key)
  if (found === undefined) {
    found = pairs.map(([name, value]) => MetricLabel.make(name, value))
    labelSets.set(key, found)
  }
  return found
}

/** How late a time-driven job's run began after the moment it was due, by job. */
export const timeDrivenDelay = Metric.histogram(
  "birzha_time_driven_delay_seconds",
  seconds([0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300]),
  "How late a time-driven job's run began after the moment its work fell due, in seconds, by job."
)

export const recordTimeDrivenDelay = (job: string, delayMs: number) => timeDrivenDelay.unsafeUpdate(Math.max(0, delayMs) / 1000, labels(["job", job]))

/** Webhook attempts made, by what the answer meant: succeeded, retry (scheduled again) or failed (given up). */
export const webhookAttempts = Metric.counter("birzha_webhook_attempts_total", {
  description: "Webhook attempts made, by result: succeeded, retry (tried again later) or failed (given up).",
  incremental: true
})

/** The time from sending an attempt to its answer (or to giving up on one). */
export const webhookAttemptDuration = Metric.histogram(
  "birzha_webhook_attempt_duration_seconds",
  seconds([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15]),
  "Time from sending a webhook attempt to its answer or its timeout, in seconds."
)

const noLabels: ReadonlyArray<MetricLabel.MetricLabel> = []

export const recordWebhookAttempt = (result: string, durationMs: number) => {
  webhookAttempts.unsafeUpdate(1, labels(["result", result]))
  webhookAttemptDuration.unsafeUpdate(Math.max(0, durationMs) / 1000, noLabels)
}

/** Grading calls applied, by job kind and outcome (graded, queued again, failed, …; `error`: not applied). */
export const gradingCalls = Metric.counter("birzha_grading_calls_total", {
  description: "Grading calls applied, by job kind and outcome (queued: to be tried again; error: not applied).",
  incremental: true
})

/** A call's time: the checker's answers to all its cases, or the declarative rules' evaluation. */
export const gradingCallDuration = Metric.histogram(
  "birzha_grading_call_duration_seconds",
  seconds([0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]),
  "Time a grading call took (the checker's answers, or evaluating declarative rules), in seconds, by checker kind."
)

/** From a job's queueing to its end (graded, failed for good, preflighted): what a learner waits. */
export const gradingJobDuration = Metric.histogram(
  "birzha_grading_job_duration_seconds",
  seconds([0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]),
  "Time from a grading job's queueing to its end, in seconds, by job kind."
)

export const recordGradingCall = (checkerKind: string, durationMs: number) =>
  gradingCallDuration.unsafeUpdate(Math.max(0, durationMs) / 1000, labels(["checker_kind", checkerKind]))

/** Outcomes that end the job: the rest (`queued`, `suspended`: tried again; `superseded`; `error`) leave it open or moot. */
const endsJob = new Set(["graded", "failed", "preflighted"])

export const recordGradingOutcome = (kind: string, outcome: string, queuedAt: Date, now: number) => {
  gradingCalls.unsafeUpdate(1, labels(["kind", kind], ["outcome", outcome]))
  if (endsJob.has(outcome)) gradingJobDuration.unsafeUpdate(Math.max(0, now - queuedAt.getTime()) / 1000, labels(["kind", kind]))
}
