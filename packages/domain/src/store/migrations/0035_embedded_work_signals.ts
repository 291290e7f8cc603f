import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { statements } from "./statements.js"

/**
 * The queue tables' wake-ups on the embedded database (PGlite) only. There every write happens
 * in the worker's own process, so the jobs that poll for new work (worker-host `WorkerHost.ts`)
 * sleep long and are woken through `NOTIFY birzha_due, '<job> <epoch ms>'` (0030's channel and
 * payload), sent at commit: new outbox events wake the sequencer at once; a delivery, execution,
 * grading job or learning job that becomes due, now or at a later moment (a retry, a lease that
 * runs out), names that moment. One notification per statement (transition tables: a statement
 * that touched no row sends nothing, so a poll's empty claim never wakes its own job).
 *
 * On a Postgres server nothing is created: there a NOTIFY in every business transaction would
 * serialize their commits (the server's single notification queue lock), and the jobs keep their
 * short polls. The one exception to "identical on both" (`Migrations.ts`): a data directory is
 * never moved to a server as it is.
 */
const embeddedOnly = statements(
  // The earliest moment among the rows (NULL: none), for the job named.
  `CREATE FUNCTION birzha_notify_work(job text, at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF at IS NOT NULL THEN
        PERFORM birzha_notify_due(job, at);
      END IF;
    END $$`,
  `CREATE FUNCTION outbox_events_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM birzha_notify_work('sequencer', (SELECT now() FROM new_rows LIMIT 1));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER outbox_events_work AFTER INSERT ON outbox_events
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_work_notify()`,
  // greatest() skips NULLs: a leased row is due again when its lease runs out.
  `CREATE FUNCTION webhook_deliveries_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM birzha_notify_work('webhooks',
        (SELECT min(greatest(next_attempt_at, lease_until)) FROM new_rows WHERE status = 'pending'));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER webhook_deliveries_work_insert AFTER INSERT ON webhook_deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_work_notify()`,
  `CREATE TRIGGER webhook_deliveries_work_update AFTER UPDATE ON webhook_deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_work_notify()`,
  // An endpoint that becomes active again makes its pending deliveries claimable.
  `CREATE FUNCTION webhook_endpoints_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM birzha_notify_work('webhooks', (SELECT now() FROM new_rows WHERE state IN ('active', 'awaiting_test') LIMIT 1));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER webhook_endpoints_work_update AFTER UPDATE ON webhook_endpoints
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_endpoints_work_notify()`,
  `CREATE FUNCTION automation_executions_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM birzha_notify_work('automations-runner',
        (SELECT min(greatest(next_attempt_at, lease_until)) FROM new_rows WHERE status IN ('pending', 'running')));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER automation_executions_work_insert AFTER INSERT ON automation_executions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION automation_executions_work_notify()`,
  `CREATE TRIGGER automation_executions_work_update AFTER UPDATE ON automation_executions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION automation_executions_work_notify()`,
  // Sample runs and variant generations are the checker-calls job's (GradingJobRepository.ts claimCheckerCallJobs), the rest grading's.
  `CREATE FUNCTION learning_grading_jobs_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM birzha_notify_work('learning_checker_calls',
        (SELECT min(CASE WHEN status = 'queued' THEN next_try_at WHEN status = 'running' THEN lease_until END)
          FROM new_rows WHERE kind IN ('sample_run', 'generate')));
      PERFORM birzha_notify_work('learning_grading',
        (SELECT min(CASE WHEN status = 'queued' THEN next_try_at WHEN status = 'running' THEN lease_until END)
          FROM new_rows WHERE kind NOT IN ('sample_run', 'generate')));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_grading_jobs_work_insert AFTER INSERT ON learning_grading_jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION learning_grading_jobs_work_notify()`,
  `CREATE TRIGGER learning_grading_jobs_work_update AFTER UPDATE ON learning_grading_jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION learning_grading_jobs_work_notify()`,
  // A checker that becomes ready (or preflighting) makes its queued jobs claimable.
  `CREATE FUNCTION learning_checkers_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM birzha_notify_work('learning_grading',
        (SELECT now() FROM new_rows WHERE status IN ('ready', 'superseded', 'preflighting') LIMIT 1));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_checkers_work_insert AFTER INSERT ON learning_checkers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION learning_checkers_work_notify()`,
  `CREATE TRIGGER learning_checkers_work_update AFTER UPDATE ON learning_checkers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION learning_checkers_work_notify()`,
  `CREATE FUNCTION learning_jobs_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM birzha_notify_work('learning_jobs',
        (SELECT min(CASE WHEN status = 'queued' THEN now() WHEN status = 'running' THEN lease_until END) FROM new_rows));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_jobs_work_insert AFTER INSERT ON learning_jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION learning_jobs_work_notify()`,
  `CREATE TRIGGER learning_jobs_work_update AFTER UPDATE ON learning_jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION learning_jobs_work_notify()`
)

const ServerVersion = Schema.Array(Schema.Struct({ version: Schema.String }))

export const embeddedWorkSignals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql`SELECT version() AS version`.pipe(Effect.flatMap(Schema.decodeUnknown(ServerVersion)), Effect.orDie)
  if (row !== undefined && row.version.includes("PGlite")) yield* embeddedOnly
})
