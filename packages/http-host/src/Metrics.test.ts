import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { taskDraft } from "../../../testing/drafts.js"
import { freePort } from "../../../testing/net.js"
import { type Family, parsePrometheusText, sampleValue } from "../../../testing/prometheus.js"
import { signIn } from "../../../testing/signIn.js"
import { startTestService, type TestService } from "./testService.js"

let service: TestService
let metricsUrl: string

beforeAll(async () => {
  const metricsPort = await freePort()
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
  service = await startTestService("metrics", { trustProxy: true, metricsPort })
})
afterAll(() => service?.close())

const scrape = async (): Promise<Map<string, Family>> => {
  const response = await fetch(metricsUrl)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return parsePrometheusText(await response.text())
}

describe("the metrics endpoint", () => {
  it("parses as Prometheus text, and counts each request by operation and status with its latency", async () => {
    const before = await scrape()
    const live = { operation: "health.live", status: "200" }
    const counted = sampleValue(before, "birzha_http_requests_total", live) ?? 0
    const timed = sampleValue(before, "birzha_http_request_duration_seconds_count", { operation: "health.live" }) ?? 0
    for (let i = 0; i < 3; i++) expect((await fetch(`${service.host.url}/api/healthz`)).status).toBe(200)
    expect((await fetch(`${service.host.url}/api/v1/publications/not-a-uuid`)).status).toBe(400)
    expect((await fetch(`${service.host.url}/api/v1/no-such-thing`)).status).toBe(404)

    const after = await scrape()
    expect(after.get("birzha_http_requests_total")?.type).toBe("counter")
    expect(after.get("birzha_http_request_duration_seconds")?.type).toBe("histogram")
    expect(sampleValue(after, "birzha_http_requests_total", live)).toBe(counted + 3)
    expect(sampleValue(after, "birzha_http_request_duration_seconds_count", { operation: "health.live" })).toBe(timed + 3)
    expect(sampleValue(after, "birzha_http_request_duration_seconds_bucket", { operation: "health.live", le: "+Inf" })).toBe(timed + 3)
    expect(sampleValue(after, "birzha_http_requests_total", { operation: "getPublication", status: "400" })).toBeGreaterThanOrEqual(1)
    expect(sampleValue(after, "birzha_http_requests_total", { operation: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1)
    // Bounded labels: operation ids and status codes only, never what a request named.
    for (const sample of after.get("birzha_http_requests_total")!.samples) {
      expect(Object.keys(sample.labels).sort()).toEqual(["operation", "status"])
      expect(sample.labels["operation"]).toMatch(/^(?:[a-zA-Z]+(?:[._][a-zA-Z_]+)*|unmatched)$/)
    }
    expect(JSON.stringify([...after.values()])).not.toContain("not-a-uuid")
  })

  it("shows the outbox filling while no sequencer runs, and the queues' other gauges as the database counts them", async () => {
    const before = await scrape()
    expect(sampleValue(before, "birzha_database_up")).toBe(1)
    const depth = sampleValue(before, "birzha_outbox_depth")!
    expect(depth).toBeGreaterThanOrEqual(0)

    // A task saved and submitted writes events; this service runs no worker to number them.
    const user = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
    const saved = await service.call<{ uuid: string; revision: number }>("POST", "/api/v1/commands/tasks.save", user, { requestUuid: crypto.randomUUID(), data: taskDraft })
    expect(saved.status).toBe(200)
    const submitted = await service.call("POST", "/api/v1/commands/tasks.submit", user, {
      requestUuid: crypto.randomUUID(),
      publicationUuid: saved.body.uuid,
      expectedRevision: saved.body.revision
    })
    expect(submitted.status).toBe(200)

    const after = await scrape()
    const { rows } = await service.db.query<{ depth: string }>("SELECT count(*) AS depth FROM outbox_events WHERE position IS NULL")
    expect(Number(rows[0]!.depth)).toBeGreaterThan(depth)
    expect(sampleValue(after, "birzha_outbox_depth")).toBe(Number(rows[0]!.depth))
    expect(sampleValue(after, "birzha_event_sequencing_lag_seconds")).toBeGreaterThan(0)
    for (const status of ["pending", "succeeded", "failed", "cancelled"]) {
      expect(sampleValue(after, "birzha_webhook_deliveries", { status })).toBe(0)
    }
    for (const status of ["queued", "running", "succeeded", "failed", "cancelled"]) {
      expect(sampleValue(after, "birzha_grading_jobs", { status })).toBe(0)
    }
    for (const status of ["pending", "running", "succeeded", "failed", "cancelled", "skipped_limit", "skipped_chain"]) {
      expect(sampleValue(after, "birzha_automation_executions", { status })).toBe(0)
    }
    expect(sampleValue(after, "birzha_webhook_delivery_lag_seconds")).toBe(0)
  })

  it("reports how long the most overdue webhook attempt has waited, as the database holds it", async () => {
    const user = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
    const { rows: [profile] } = await service.db.query<{ uuid: string }>(
      "SELECT p.uuid FROM profiles p JOIN accounts a ON a.uuid = p.account_uuid WHERE a.email = $1 LIMIT 1",
      [user.email]
    )
    // This service runs no worker: a delivery due a minute ago stays overdue.
    const { rows: [endpoint] } = await service.db.query<{ uuid: string }>(
      `INSERT INTO webhook_endpoints (uuid, profile_uuid, url, event_types, payload_mode, secret_sealed, approved_at, verified_at)
       VALUES (gen_random_uuid(), $1, 'https://receiver.example/hook', '["publication.*"]', 'reference', 'sealed', now(), now()) RETURNING uuid`,
      [profile!.uuid]
    )
    await service.db.query(
      `INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version, next_attempt_at)
       VALUES ($1, 'event', gen_random_uuid(), 'publication.submitted', 1, now() - interval '60 seconds')`,
      [endpoint!.uuid]
    )
    const after = await scrape()
    expect(sampleValue(after, "birzha_webhook_delivery_lag_seconds")).toBeGreaterThanOrEqual(60)
    expect(sampleValue(after, "birzha_webhook_deliveries", { status: "pending" })).toBe(1)
  })

  it("reports the process: CPU time that only grows, memory, the heap and the event loop's delay", async () => {
    const before = await scrape()
    // Work for the CPU counter to see, holding this process's event loop (the service's) for 100 ms.
    let spin = 0
    for (const started = Date.now(); Date.now() - started < 100;) spin++
    expect(spin).toBeGreaterThan(0)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const after = await scrape()
    expect(after.get("process_cpu_seconds_total")?.type).toBe("counter")
    expect(sampleValue(after, "process_cpu_seconds_total")!).toBeGreaterThan(sampleValue(before, "process_cpu_seconds_total")!)
    expect(sampleValue(after, "process_resident_memory_bytes")!).toBeGreaterThan(10 * 1024 * 1024)
    expect(sampleValue(after, "nodejs_heap_size_used_bytes")!).toBeLessThanOrEqual(sampleValue(after, "nodejs_heap_size_total_bytes")!)
    expect(Math.abs(sampleValue(after, "process_start_time_seconds")! - (Date.now() / 1000 - process.uptime()))).toBeLessThan(5)
    for (const name of ["nodejs_eventloop_lag_p50_seconds", "nodejs_eventloop_lag_p99_seconds", "nodejs_eventloop_lag_max_seconds"]) {
      expect(after.get(name)?.type).toBe("gauge")
      expect(sampleValue(after, name)!).toBeGreaterThanOrEqual(0)
    }
    expect(sampleValue(after, "nodejs_eventloop_lag_max_seconds")!).toBeGreaterThanOrEqual(0.05)
    expect(sampleValue(after, "nodejs_eventloop_lag_max_seconds")!).toBeGreaterThanOrEqual(sampleValue(after, "nodejs_eventloop_lag_p99_seconds")!)
  })

  it("reports the database pool's connections and times every statement the host runs", async () => {
    const before = await scrape()
    const statements = sampleValue(before, "birzha_db_statement_duration_seconds_count")!
    expect(statements).toBeGreaterThan(0)
    // A signed-in read (the session lookup goes to the pool directly) and a write (a transaction).
    const user = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
    expect((await service.call("GET", "/api/v1/auth/session", user)).status).toBe(200)
    const saved = await service.call("POST", "/api/v1/commands/tasks.save", user, { requestUuid: crypto.randomUUID(), data: taskDraft })
    expect(saved.status).toBe(200)
    const after = await scrape()
    expect(after.get("birzha_db_statement_duration_seconds")?.type).toBe("histogram")
    // The sign-in, the read and the save ran several statements each (the scrapes' own reads come on top).
    expect(sampleValue(after, "birzha_db_statement_duration_seconds_count")!).toBeGreaterThanOrEqual(statements + 6)
    expect(sampleValue(after, "birzha_db_pool_max_connections")).toBe(10)
    const inUse = sampleValue(after, "birzha_db_pool_connections", { state: "in_use" })!
    const idle = sampleValue(after, "birzha_db_pool_connections", { state: "idle" })!
    expect(inUse).toBeGreaterThanOrEqual(0)
    expect(idle).toBeGreaterThanOrEqual(0)
    // The scrape's reads opened at least one connection, and none is ever past the limit.
    expect(inUse + idle).toBeGreaterThanOrEqual(1)
    expect(inUse + idle).toBeLessThanOrEqual(10)
    expect(sampleValue(after, "birzha_db_pool_waiting_requests")).toBe(0)
  })

  it("serves nothing but GET /metrics on its port", async () => {
    const other = await fetch(metricsUrl.replace("/metrics", "/api/healthz"))
    expect(other.status).toBe(404)
    expect((await fetch(`${service.host.url}/metrics`)).status).toBe(404)
  })
})

describe("the exposition-format reader the test relies on (testing/prometheus.ts)", () => {
  it("refuses what a scraper would refuse or misread", () => {
    const valid = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 2\n"
    expect(sampleValue(parsePrometheusText(valid), "a_total", { x: "1" })).toBe(2)
    for (const broken of [
      "a_total 2", // no final line feed
      "# TYPE a counter\na{x=1} 2\n", // unquoted label value
      "# TYPE a counter\na 2\n# TYPE a counter\n", // typed twice
      "a 1\n# TYPE a counter\n", // TYPE after samples
      "# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n", // the same series twice
      "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n", // interleaved families
      "# TYPE a gauge\na one\n", // not a number
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", // not cumulative
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n", // +Inf differs from _count
      "# TYPE a gauge\na{x=\"a\\q\"} 1\n" // unknown escape
    ]) {
      expect(() => parsePrometheusText(broken), broken).toThrow()
    }
  })
})
