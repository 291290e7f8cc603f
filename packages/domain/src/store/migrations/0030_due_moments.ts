import { statements } from "./statements.js"

/**
 * Wake-ups for the worker's time-driven jobs (worker-host `WorkerLoop.ts`): a write that makes a
 * moment due earlier than before — a new row in a timed state, a status change into one, a moment
 * moved earlier — sends `NOTIFY birzha_due, '<job> <epoch ms>'` in its own transaction, so it
 * reaches the listening workers at commit and never for a rolled-back write. A moment moved
 * later sends nothing: the worker then wakes early, finds nothing and sleeps again. Identical
 * notifications of one transaction are folded by Postgres. The moments without an index of their
 * own (a running run's finish, an extension request's expiry, a resolved appeal's closing, an
 * export file's expiry) get the one their `next…Moment` read uses.
 */
export const dueMoments = statements(
  `CREATE FUNCTION birzha_notify_due(job text, at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('birzha_due', job || ' ' || floor(extract(epoch FROM at) * 1000)::bigint::text);
    END $$`,
  `CREATE INDEX learning_runs_finish ON learning_runs (ends_at) WHERE status = 'running'`,
  `CREATE INDEX learning_extension_requests_expiry ON learning_extension_requests (requested_due_at) WHERE status = 'requested'`,
  `CREATE INDEX learning_appeals_closing ON learning_appeals (resolved_at) WHERE status = 'resolved'`,
  `CREATE INDEX learning_jobs_file_expiry ON learning_jobs (expires_at) WHERE file_uuid IS NOT NULL AND kind <> 'import'`,
  // OLD is NULL on INSERT, so "OLD.status IS DISTINCT FROM NEW.status" also holds for a new row.
  `CREATE FUNCTION learning_runs_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'scheduled' AND NEW.starts_at IS NOT NULL
        AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.starts_at IS NULL OR NEW.starts_at < OLD.starts_at) THEN
        PERFORM birzha_notify_due('learning_runs', NEW.starts_at);
      END IF;
      IF NEW.status = 'running' AND NEW.ends_at IS NOT NULL
        AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.ends_at IS NULL OR NEW.ends_at < OLD.ends_at) THEN
        PERFORM birzha_notify_due('learning_runs', NEW.ends_at + interval '7 days');
      END IF;
      -- A run that starts makes its active enrollments' wake-ups due (advanceEnrollments wakes only those of running runs).
      -- The 7 days above are Runs.ts finishAfterDays.
      IF NEW.status = 'running' AND OLD.status IS DISTINCT FROM NEW.status THEN
        PERFORM birzha_notify_due('learning_enrollments', now());
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_runs_due AFTER INSERT OR UPDATE OF status, starts_at, ends_at ON learning_runs
    FOR EACH ROW EXECUTE FUNCTION learning_runs_due_notify()`,
  `CREATE FUNCTION learning_enrollments_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      at timestamptz;
      before timestamptz;
    BEGIN
      at := CASE
        WHEN NEW.status IN ('invited', 'offered') THEN NEW.offer_expires_at
        WHEN NEW.status = 'paused' THEN NEW.pause_until
        WHEN NEW.status = 'withdrawal_requested' THEN NEW.withdraw_effective_at
        WHEN NEW.status = 'active' THEN NEW.wake_at
      END;
      IF at IS NULL THEN
        RETURN NULL;
      END IF;
      IF OLD.status IS NOT DISTINCT FROM NEW.status THEN
        before := CASE
          WHEN OLD.status IN ('invited', 'offered') THEN OLD.offer_expires_at
          WHEN OLD.status = 'paused' THEN OLD.pause_until
          WHEN OLD.status = 'withdrawal_requested' THEN OLD.withdraw_effective_at
          WHEN OLD.status = 'active' THEN OLD.wake_at
        END;
        -- Moved later or unchanged (the clock writing the next wake-up): the worker's timer stands.
        IF before IS NOT NULL AND before <= at THEN
          RETURN NULL;
        END IF;
      END IF;
      PERFORM birzha_notify_due('learning_enrollments', at);
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_enrollments_due AFTER INSERT OR UPDATE OF status, offer_expires_at, pause_until, withdraw_effective_at, wake_at
    ON learning_enrollments FOR EACH ROW EXECUTE FUNCTION learning_enrollments_due_notify()`,
  `CREATE FUNCTION relations_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'results_submitted' AND NEW.auto_complete_at IS NOT NULL
        AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.auto_complete_at IS NULL OR NEW.auto_complete_at < OLD.auto_complete_at) THEN
        PERFORM birzha_notify_due('deals', NEW.auto_complete_at);
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER relations_due AFTER INSERT OR UPDATE OF status, auto_complete_at ON relations
    FOR EACH ROW EXECUTE FUNCTION relations_due_notify()`,
  `CREATE FUNCTION reviews_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'submitted' AND NEW.window_ends_at IS NOT NULL
        AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.window_ends_at IS NULL OR NEW.window_ends_at < OLD.window_ends_at) THEN
        PERFORM birzha_notify_due('reviews', NEW.window_ends_at);
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER reviews_due AFTER INSERT OR UPDATE OF status, window_ends_at ON reviews
    FOR EACH ROW EXECUTE FUNCTION reviews_due_notify()`,
  `CREATE FUNCTION learning_review_assignments_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'claimed' AND NEW.issue IS NULL AND NEW.due_at IS NOT NULL AND NEW.overdue_for IS DISTINCT FROM NEW.due_at
        AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.issue IS NOT NULL OR OLD.due_at IS NULL OR NEW.due_at < OLD.due_at) THEN
        PERFORM birzha_notify_due('learning_reviews', NEW.due_at);
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_review_assignments_due AFTER INSERT OR UPDATE OF status, issue, due_at ON learning_review_assignments
    FOR EACH ROW EXECUTE FUNCTION learning_review_assignments_due_notify()`,
  `CREATE FUNCTION learning_extension_requests_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'requested'
        AND (OLD.status IS DISTINCT FROM NEW.status OR NEW.requested_due_at < OLD.requested_due_at) THEN
        PERFORM birzha_notify_due('learning_corrections', NEW.requested_due_at);
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_extension_requests_due AFTER INSERT OR UPDATE OF status, requested_due_at ON learning_extension_requests
    FOR EACH ROW EXECUTE FUNCTION learning_extension_requests_due_notify()`,
  // The 7 days are Appeals.ts appealWindowDays.
  `CREATE FUNCTION learning_appeals_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'resolved' AND NEW.resolved_at IS NOT NULL
        AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.resolved_at IS NULL OR NEW.resolved_at < OLD.resolved_at) THEN
        PERFORM birzha_notify_due('learning_corrections', NEW.resolved_at + interval '7 days');
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_appeals_due AFTER INSERT OR UPDATE OF status, resolved_at ON learning_appeals
    FOR EACH ROW EXECUTE FUNCTION learning_appeals_due_notify()`,
  // An export's file goes at its expiresAt (retention, Jobs.ts cleanExpiredJobFiles).
  `CREATE FUNCTION learning_jobs_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.file_uuid IS NOT NULL AND NEW.kind <> 'import' AND NEW.expires_at IS NOT NULL
        AND (OLD.file_uuid IS NULL OR OLD.expires_at IS NULL OR NEW.expires_at < OLD.expires_at) THEN
        PERFORM birzha_notify_due('retention', NEW.expires_at);
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_jobs_due AFTER INSERT OR UPDATE OF file_uuid, expires_at ON learning_jobs
    FOR EACH ROW EXECUTE FUNCTION learning_jobs_due_notify()`
)
