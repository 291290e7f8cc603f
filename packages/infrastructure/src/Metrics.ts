import { automationExecutionStatuses, deliveryStatuses, gradingJobStatuses, readQueueState } from "@birzha/domain/internal"
import type { SqlClient } from "@effect/sql"
import { Config, type ConfigError, Effect, Layer, Metric, MetricKeyType, MetricState, Option, Runtime } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks"
import { requireSetting } from "./ConfigProblem.js"
import { Database, type PoolUse } from "./database/Database.js"

/**
 * Prometheus metrics (`BIRZHA_METRICS_PORT`, off by default), served by every process on a
 * listener of its own: the Effect metrics the process recorded (the host's requests, a worker's
 * attempts, grading calls and time-driven runs, every process's statements), the database's
 * queues read at each scrape, the process's own figures and its connection pool.
 */

// ---------------------------------------------------------------------------------------------
// Prometheus text exposition format 0.0.4

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const number = (value: number | bigint) =>
  typeof value === "bigint"
    ? value.toString()
    : Number.isNaN(value)
    ? "NaN"
    : value === Number.POSITIVE_INFINITY
    ? "+Inf"
    : value === Number.NEGATIVE_INFINITY
    ? "-Inf"
    : String(value)

const labelText = (labels: ReadonlyArray<readonly [string, string]>) =>
  labels.length === 0 ? "" : `{${labels.map(([key, value]) => `${key}="${escapeLabel(value)}"`).join(",")}}`

interface Family {
  readonly help: string
  readonly type: "counter" | "gauge" | "histogram"
  readonly samples: Array<string>
}

/** A value read at a scrape (from the database, from the process): one sample per label set. */
export interface GaugeSample {
  readonly name: string
  readonly help: string
  readonly labels: ReadonlyArray<readonly [string, string]>
  readonly value: number
  /** A total that only grows (the process's CPU time); a gauge otherwise. */
  readonly type?: "counter"
}

/** The Prometheus text of Effect's metrics (counters, gauges, histograms) and the given gauges. */
export const renderMetrics = (gauges: ReadonlyArray<GaugeSample>): string => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: string) => {
    let found = families.get(name)
    if (found === undefined) {
      found = { help, type, samples: [] }
      families.set(name, found)
    }
    return found
  }
  // One series per name and labels: a process that holds two copies of Effect (a bundle beside the
  // sources, as in a test run) registers Effect's own metrics once per copy; the first one stands.
  const seen = new Set<string>()
  for (const pair of Metric.unsafeSnapshot()) {
    const { keyType, name } = pair.metricKey
    const help = Option.getOrElse(pair.metricKey.description, () => name)
    const labels = pair.metricKey.tags.map((tag) => [tag.key, tag.value] as const)
    const series = `${name}${labelText(labels)}`
    if (seen.has(series)) continue
    seen.add(series)
    const state = pair.metricState
    if (MetricKeyType.isCounterKey(keyType) && MetricState.isCounterState(state)) {
      // A counter that may go down (Effect's own `effect_fiber_active`) is a gauge to Prometheus.
      family(name, keyType.incremental ? "counter" : "gauge", help).samples.push(`${name}${labelText(labels)} ${number(state.count)}`)
    } else if (MetricKeyType.isGaugeKey(keyType) && MetricState.isGaugeState(state)) {
      family(name, "gauge", help).samples.push(`${name}${labelText(labels)} ${number(state.value)}`)
    } else if (MetricKeyType.isHistogramKey(keyType) && MetricState.isHistogramState(state)) {
      const samples = family(name, "histogram", help).samples
      let infinite = false
      for (const [bound, count] of state.buckets) {
        infinite ||= bound === Number.POSITIVE_INFINITY
        samples.push(`${name}_bucket${labelText([...labels, ["le", number(bound)]])} ${count}`)
      }
      if (!infinite) samples.push(`${name}_bucket${labelText([...labels, ["le", "+Inf"]])} ${state.count}`)
      samples.push(`${name}_sum${labelText(labels)} ${number(state.sum)}`)
      samples.push(`${name}_count${labelText(labels)} ${state.count}`)
    }
    // Frequencies and summaries: none recorded by the service.
  }
  for (const gauge of gauges) family(gauge.name, gauge.type ?? "gauge", gauge.help).samples.push(`${gauge.name}${labelText(gauge.labels)} ${number(gauge.value)}`)
  let text = ""
  for (const [name, { help, samples, type }] of families) {
    text += `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n${samples.join("\n")}\n`
  }
  return text
}

// ---------------------------------------------------------------------------------------------
// The database's queues, read at each scrape

const gauge = (name: string, help: string, value: number, labels: ReadonlyArray<readonly [string, string]> = []): GaugeSample => ({ name, help, labels, value })

/**
 * The queues' state from the database (`readQueueState`, the same reads the admin area's health
 * view shows): events waiting for a position and the age of the oldest, webhook deliveries by
 * status and how long the most overdue attempt has waited, automation executions by outcome (the
 * daily quota's refusals as `skipped_limit`), grading jobs by status; finished rows of a table above
 * 100,000 rows as Postgres estimates them (`exactCountRows`). A database that does not answer gives
 * `birzha_database_up 0` and nothing else.
 */
export const readQueueGauges: Effect.Effect<ReadonlyArray<GaugeSample>, never, SqlClient.SqlClient> = Effect.map(readQueueState, (state) => [
  gauge("birzha_database_up", "1 when the database answered this scrape's queries, 0 when it did not.", 1),
  gauge("birzha_outbox_depth", "Committed events waiting for the sequencer to number them.", state.outboxDepth),
  gauge("birzha_event_sequencing_lag_seconds", "Age of the oldest event waiting for a position (0 when none waits).", state.sequencingLagSeconds),
  // Every status, zero included, so a series exists before its first delivery or job.
  ...deliveryStatuses.map((status) =>
    gauge("birzha_webhook_deliveries", "Webhook deliveries kept in the database, by status (pending: still to be delivered or retried; finished ones estimated above 100,000 rows).", state.webhookDeliveries[status], [["status", status]])
  ),
  gauge(
    "birzha_webhook_delivery_lag_seconds",
    "How long the most overdue webhook attempt has been due (0 when none is overdue).",
    state.webhookDeliveryLagSeconds
  ),
  ...automationExecutionStatuses.map((status) =>
    gauge(
      "birzha_automation_executions",
      "Automation executions kept in the database, by status (skipped_limit: refused by the daily quota; finished ones estimated above 100,000 rows).",
      state.automationExecutions[status],
      [["status", status]]
    )
  ),
  ...gradingJobStatuses.map((status) =>
    gauge("birzha_grading_jobs", "Grading jobs kept in the database, by status (finished ones estimated above 100,000 rows).", state.gradingJobs[status], [["status", status]])
  )
]).pipe(
  Effect.catchAllCause(() =>
    Effect.succeed([gauge("birzha_database_up", "1 when the database answered this scrape's queries, 0 when it did not.", 0)])
  )
)

/** A server's connection pool (the embedded database has none): connections in use and idle, its limit, callers waiting. */
const readPoolSamples = (use: PoolUse): ReadonlyArray<GaugeSample> => [
  gauge("birzha_db_pool_connections", "The pool's open connections to the database, by state.", use.total - use.idle, [["state", "in_use"]]),
  gauge("birzha_db_pool_connections", "The pool's open connections to the database, by state.", use.idle, [["state", "idle"]]),
  gauge("birzha_db_pool_max_connections", "The most connections the pool opens.", use.max),
  gauge("birzha_db_pool_waiting_requests", "Statements and transactions waiting for a free connection.", use.waiting)
]

// ---------------------------------------------------------------------------------------------
// The process, under the names the Prometheus clients give their default metrics

const startTimeSeconds = Math.round(Date.now() / 1000 - process.uptime())
const loopResolutionMs = 20

/**
 * The process at a scrape: CPU time, resident memory, the V8 heap and memory outside it, and the
 * event loop's delay since the metrics listener opened. Not reset at each scrape: Node's histogram
 * records nothing for the first interval after a reset, so a stall that began just after a scrape
 * would be lost.
 */
const readProcessSamples = (loop: IntervalHistogram): ReadonlyArray<GaugeSample> => {
  const cpu = process.cpuUsage()
  const memory = process.memoryUsage()
  // Node records each interval of its timer whole: the delay is what exceeds the resolution.
  const seconds = (nanoseconds: number) => (loop.count === 0 ? 0 : Math.max(0, nanoseconds / 1e9 - loopResolutionMs / 1000))
  return [
    { ...gauge("process_cpu_user_seconds_total", "User CPU time spent, in seconds.", cpu.user / 1e6), type: "counter" as const },
    { ...gauge("process_cpu_system_seconds_total", "System CPU time spent, in seconds.", cpu.system / 1e6), type: "counter" as const },
    { ...gauge("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", (cpu.user + cpu.system) / 1e6), type: "counter" as const },
    gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", startTimeSeconds),
    gauge("process_resident_memory_bytes", "Resident memory size, in bytes.", memory.rss),
    gauge("nodejs_heap_size_total_bytes", "V8's heap size, in bytes.", memory.heapTotal),
    gauge("nodejs_heap_size_used_bytes", "V8's heap in use, in bytes.", memory.heapUsed),
    gauge("nodejs_external_memory_bytes", "Memory of objects outside V8's heap that it tracks (buffers among them), in bytes.", memory.external),
    gauge("nodejs_eventloop_lag_p50_seconds", "Median delay of the event loop since the metrics listener opened, in seconds.", seconds(loop.percentile(50))),
    gauge("nodejs_eventloop_lag_p99_seconds", "99th percentile of the event loop's delay since the metrics listener opened, in seconds.", seconds(loop.percentile(99))),
    gauge("nodejs_eventloop_lag_max_seconds", "Longest delay of the event loop since the metrics listener opened, in seconds.", seconds(loop.max))
  ]
}

// ---------------------------------------------------------------------------------------------
// The listener

const listen = (server: Server, port: number, host: string) =>
  Effect.async<void, Error>((resume) => {
    const onError = (error: Error) => resume(Effect.fail(error))
    server.once("error", onError)
    server.listen(port, host, () => {
      server.off("error", onError)
      resume(Effect.void)
    })
  })

/** Where the metrics listener answers (tests read its port). */
export interface MetricsAddress {
  /** `http://<host>:<port>/metrics`, the port the system chose when 0 was asked. */
  readonly url: string
}

/**
 * `GET /metrics` on `host:port` (`BIRZHA_METRICS_PORT`, the bind address of `BIRZHA_HOST`):
 * Prometheus text, version 0.0.4. Anything else is 404; nothing else is served there, so the port
 * can be left to operators (a firewall, a private network) apart from the service's.
 */
export const MetricsServerLive = (settings: { readonly host: string; readonly port: number }, onListening?: (address: MetricsAddress) => void) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
    const poolUse = Option.flatMapNullable(yield* Effect.serviceOption(Database), (database) => database.poolUse)
    // Sampled every 20 ms while the listener is open (a timer of libuv's, no JavaScript per sample).
    const loop = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const histogram = monitorEventLoopDelay({ resolution: loopResolutionMs })
        histogram.enable()
        return histogram
      }),
      (histogram) => Effect.sync(() => histogram.disable())
    )
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? "/").split("?")[0]
      if ((req.method !== "GET" && req.method !== "HEAD") || path !== "/metrics") {
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found: metrics are at GET /metrics\n")
        return
      }
      Runtime.runPromise(
        runtime,
        Effect.map(readQueueGauges, (queues) =>
          renderMetrics([...queues, ...(Option.isSome(poolUse) ? readPoolSamples(poolUse.value()) : []), ...readProcessSamples(loop)])
        ).pipe(Effect.tapErrorCause((cause) => Effect.logError("metrics scrape failed", cause)))
      ).then((body) => {
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" })
        res.end(req.method === "HEAD" ? undefined : body)
      }, () => {
        if (res.headersSent) return res.destroy()
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics unavailable\n")
      })
    })
    yield* listen(server, settings.port, settings.host)
    yield* Effect.addFinalizer(() => Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    }))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : settings.port
    const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host
    const url = `http://${host}:${port}/metrics`
    onListening?.({ url })
    yield* Effect.logInfo(`Metrics on ${url}`)
  }))

/** `BIRZHA_METRICS_PORT`: the port of the metrics listener (a TCP port, 0 for any free one); absent: none. */
export const MetricsPortConfig: Config.Config<Option.Option<number>> =
  // Checked outside `Config.option`: inside it the variable's name would be doubled in the message.
  Config.option(Config.integer("BIRZHA_METRICS_PORT")).pipe(
    requireSetting(
      "BIRZHA_METRICS_PORT",
      "expected a TCP port, an integer from 0 to 65535",
      (port: Option.Option<number>) => Option.isNone(port) || (port.value >= 0 && port.value <= 65535)
    )
  )

/**
 * The metrics listener from the settings (`BIRZHA_METRICS_PORT` on the address of `BIRZHA_HOST`),
 * or nothing when the port is not set: how `birzha worker` serves its metrics (`birzha serve`
 * reads the same variables with its HTTP settings).
 */
export const MetricsFromSettings: Layer.Layer<never, ConfigError.ConfigError | Error, SqlClient.SqlClient> = Layer.unwrapEffect(
  Effect.map(
    Config.all({ port: MetricsPortConfig, host: Config.string("BIRZHA_HOST").pipe(Config.withDefault("127.0.0.1")) }),
    ({ host, port }) => Option.isNone(port) ? Layer.empty : MetricsServerLive({ host, port: port.value })
  )
)
