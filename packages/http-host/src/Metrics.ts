import { Metric, MetricBoundaries, MetricLabel } from "effect"
import type { AccessLog } from "./AccessLog.js"

/**
 * The host's requests as Effect metrics, recorded where each answer is logged; the Prometheus page
 * that shows them with the rest (`MetricsServerLive`, `BIRZHA_METRICS_PORT`) is
 * packages/infrastructure/src/Metrics.ts.
 */

/** Requests answered, by operation id (`unmatched` for a path no operation takes) and status. */
export const httpRequests = Metric.counter("birzha_http_requests_total", {
  description: "HTTP requests answered, by operation id and status code.",
  incremental: true
})

/** Time from the request's arrival to its answer, by operation id. */
export const httpRequestDuration = Metric.histogram(
  "birzha_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Time from a request's arrival to its answer, by operation id."
)

// The label arrays of each operation and status, made once: recording allocates nothing new.
const labelsOf = new Map<string, { readonly counter: ReadonlyArray<MetricLabel.MetricLabel>; readonly histogram: ReadonlyArray<MetricLabel.MetricLabel> }>()

/**
 * Records one answered request. Labels are operation ids of the catalog and status codes, never
 * anything the request names (uuids, addresses): the series stay bounded.
 */
export const recordRequest = (operationId: string | undefined, status: number, started: number) => {
  const operation = operationId ?? "unmatched"
  const key = `${operation} ${status}`
  let labels = labelsOf.get(key)
  if (labels === undefined) {
    const op = MetricLabel.make("operation", operation)
    labels = { counter: [op, MetricLabel.make("status", String(status))], histogram: [op] }
    labelsOf.set(key, labels)
  }
  httpRequests.unsafeUpdate(1, labels.counter)
  httpRequestDuration.unsafeUpdate((performance.now() - started) / 1000, labels.histogram)
}

/** The access log, with every answered request also counted (recorded whether or not the log is on). */
export const withRequestMetrics = (log: AccessLog): AccessLog => ({
  write: (method, url, status, started, operationId, requestId) => {
    recordRequest(operationId, status, started)
    log.write(method, url, status, started, operationId, requestId)
  }
})
