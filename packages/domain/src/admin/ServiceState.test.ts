import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../../testing/progress.js"
import { type Marketplace, openMarketplace } from "../../test/marketplace.js"
import { only } from "../../test/learning.js"
import { exactCountRows, readQueueState } from "./ServiceState.js"

/** The queue gauges' reads (ServiceState.ts) on real Postgres: exact on small tables, and no whole-table read on large ones. */

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("service_state")
})
afterAll(async () => {
  await m?.close()
})

/** `n` deliveries to `endpointUuid` in `status`. */
const deliveries = (endpointUuid: string, status: string, n: number) =>
  m.sql(`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version, status, next_attempt_at, finished_at)
    SELECT $1, 'event', gen_random_uuid(), 'profile.updated', 1, $2, CASE WHEN $2 = 'pending' THEN now() END, CASE WHEN $2 <> 'pending' THEN now() END
    FROM generate_series(1, $3::int)`, endpointUuid, status, n)

/** Rows of `table` read by sequential scans so far, as far as the sessions' statistics have been sent. */
const seqRowsRead = async (table: string) =>
  Number(only(await m.sql<{ n: string }>("SELECT seq_tup_read::text AS n FROM pg_stat_user_tables WHERE relname = $1", table)).n)

/** `readQueueState` on one connection, which then sends its statistics and scans `development_mailbox` once, as a marker. */
const readState = () =>
  m.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const state = yield* readQueueState
      yield* sql`SELECT count(*) FROM development_mailbox`
      yield* sql`SELECT pg_stat_force_next_flush()`
      return state
    }))))

/** Waits until the marker scan of `readState` shows in the statistics, so that its reads do too. */
const afterMarker = async (scansBefore: number) =>
  eventually(
    async () => Number(only(await m.sql<{ n: string }>("SELECT seq_scan::text AS n FROM pg_stat_user_tables WHERE relname = 'development_mailbox'")).n),
    (scans) => scans > scansBefore,
    "the reading session's statistics"
  )
const markerScans = async () => Number(only(await m.sql<{ n: string }>("SELECT seq_scan::text AS n FROM pg_stat_user_tables WHERE relname = 'development_mailbox'")).n)

describe("the queues' state read at each scrape", () => {
  it("counts each status exactly while a table is small, every status present", async () => {
    const { uuid } = await m.webhookEndpoint()
    const before = (await readState()).webhookDeliveries
    await deliveries(uuid, "succeeded", 3)
    await deliveries(uuid, "failed", 2)
    await deliveries(uuid, "pending", 1)
    const after = (await readState()).webhookDeliveries
    expect(after).toEqual({
      pending: before.pending + 1,
      succeeded: before.succeeded + 3,
      failed: before.failed + 2,
      cancelled: before.cancelled
    })
  })

  it(`reads no whole table above ${exactCountRows.toLocaleString("en")} rows: in-flight rows counted exactly, finished ones from Postgres's statistics`, async () => {
    const { uuid } = await m.webhookEndpoint()
    await deliveries(uuid, "succeeded", 118_000)
    await deliveries(uuid, "failed", 2_000)
    await deliveries(uuid, "pending", 3)
    await m.sql("ANALYZE webhook_deliveries")
    const scans = await markerScans()
    const rowsBefore = await seqRowsRead("webhook_deliveries")
    const state = (await readState()).webhookDeliveries
    await afterMarker(scans)
    // A count by status would read every row (120,000); a few rows may be other sessions' reads
    // of the smaller table earlier in this file, their statistics sent late.
    expect(await seqRowsRead("webhook_deliveries") - rowsBefore).toBeLessThan(1_000)
    const { pending, succeeded, failed, cancelled } = await m.sql<Record<string, string>>(`SELECT
      count(*) FILTER (WHERE status = 'pending')::text AS pending, count(*) FILTER (WHERE status = 'succeeded')::text AS succeeded,
      count(*) FILTER (WHERE status = 'failed')::text AS failed, count(*) FILTER (WHERE status = 'cancelled')::text AS cancelled
      FROM webhook_deliveries`).then(only)
    expect(state.pending).toBe(Number(pending))
    expect(Math.abs(state.succeeded - Number(succeeded))).toBeLessThan(Number(succeeded) * 0.05)
    expect(Math.abs(state.failed - Number(failed))).toBeLessThan(Number(failed) * 0.5)
    expect(state.cancelled).toBe(Number(cancelled))
  })
})
