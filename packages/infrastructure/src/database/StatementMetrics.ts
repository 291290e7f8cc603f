import { Metric, MetricBoundaries } from "effect"

/**
 * How long the database took to answer each statement, from sending it to its result (the
 * Prometheus page of `Metrics.ts` shows it as `birzha_db_statement_duration_seconds`). Recorded by
 * the clients this package makes: `PreparingClient` on a server, `makePgliteClient` embedded. No
 * label: a statement's text is not a bounded value; `pg_stat_statements` names the slow ones.
 */
export const statementDuration = Metric.histogram(
  "birzha_db_statement_duration_seconds",
  MetricBoundaries.fromIterable([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]),
  "Time from sending a statement to the database to its result, in seconds."
)

const noLabels: ReadonlyArray<never> = []

/** Records one statement that began at `started` (`performance.now()`). */
export const recordStatement = (started: number): void => {
  statementDuration.unsafeUpdate((performance.now() - started) / 1000, noLabels)
}
