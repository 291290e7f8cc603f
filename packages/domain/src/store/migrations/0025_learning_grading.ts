import { statements } from "./statements.js"

/**
 * Checkers and grading jobs of learning L3: the checker record gains its name, reference cases, lineage links, a
 * per-checker concurrency limit and the circuit breaker's streak of consecutive platform errors;
 * suspend, resume and automatic suspension are logged in `learning_checker_controls`; grading
 * calls are counted per checker, kind and day in `learning_grading_usage`; regrades re-execute a
 * checker version over selected submissions (`learning_regrades` with their items old → new).
 */
export const learningGrading = statements(
  `ALTER TABLE learning_checkers
    ADD COLUMN name text NOT NULL DEFAULT '',
    ADD COLUMN reference_cases jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN replaces_uuid uuid REFERENCES learning_checkers (uuid),
    ADD COLUMN superseded_by_uuid uuid REFERENCES learning_checkers (uuid),
    ADD COLUMN concurrency integer NOT NULL DEFAULT 8 CHECK (concurrency BETWEEN 1 AND 64),
    ADD COLUMN error_streak integer NOT NULL DEFAULT 0 CHECK (error_streak >= 0),
    ADD COLUMN preflight_job_uuid uuid`,
  // A lineage has one version that is not superseded; `replaces` supersedes the old one when the new one becomes ready.
  `CREATE INDEX learning_checkers_lineage ON learning_checkers (lineage_uuid, version DESC)`,
  `CREATE TABLE learning_checker_controls (
    uuid uuid PRIMARY KEY,
    checker_uuid uuid NOT NULL REFERENCES learning_checkers (uuid),
    action text NOT NULL CHECK (action IN ('suspend', 'resume', 'auto_suspend', 'preflight', 'preflight_passed', 'preflight_failed', 'superseded')),
    from_status text NOT NULL,
    to_status text NOT NULL,
    actor_profile_uuid uuid REFERENCES profiles (uuid),
    reason text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`,
  `CREATE INDEX learning_checker_controls_checker ON learning_checker_controls (checker_uuid, created_at DESC, uuid DESC)`,
  `ALTER TABLE learning_grading_jobs
    ADD COLUMN started_at timestamptz,
    ADD COLUMN regrade_uuid uuid`,
  // The grading worker's queue: per checker, due first.
  `CREATE INDEX learning_grading_jobs_checker_queue ON learning_grading_jobs (checker_uuid, next_try_at)
    WHERE status IN ('queued', 'running') AND kind IN ('grade', 'preflight', 'regrade')`,
  `CREATE TABLE learning_grading_usage (
    checker_uuid uuid NOT NULL REFERENCES learning_checkers (uuid),
    kind text NOT NULL,
    day date NOT NULL,
    calls integer NOT NULL DEFAULT 0,
    verdicts integer NOT NULL DEFAULT 0,
    platform_errors integer NOT NULL DEFAULT 0,
    latency_ms_total bigint NOT NULL DEFAULT 0,
    latency_ms_max integer NOT NULL DEFAULT 0,
    PRIMARY KEY (checker_uuid, kind, day)
  )`,
  `CREATE TABLE learning_regrades (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    checker_uuid uuid NOT NULL REFERENCES learning_checkers (uuid),
    selector jsonb NOT NULL,
    policy text NOT NULL CHECK (policy IN ('any', 'only_if_higher')),
    status text NOT NULL DEFAULT 'computing' CHECK (status IN ('computing', 'ready', 'applied', 'failed', 'expired')),
    created_by uuid REFERENCES profiles (uuid),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    expires_at timestamptz,
    applied_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX learning_regrades_course ON learning_regrades (course_uuid, created_at DESC)`,
  `CREATE TABLE learning_regrade_items (
    uuid uuid PRIMARY KEY,
    regrade_uuid uuid NOT NULL REFERENCES learning_regrades (uuid),
    submission_uuid uuid NOT NULL REFERENCES learning_submissions (uuid),
    job_uuid uuid REFERENCES learning_grading_jobs (uuid),
    base_revision integer NOT NULL,
    old_points numeric,
    old_verdict text,
    new_points numeric,
    new_verdict text,
    platform_error text,
    skipped text CHECK (skipped IN ('frozen', 'unchanged', 'failed')),
    outcome text CHECK (outcome IN ('applied', 'requeued', 'skipped')),
    applied_layer_uuid uuid,
    position integer NOT NULL,
    UNIQUE (regrade_uuid, submission_uuid)
  )`,
  `CREATE INDEX learning_regrade_items_regrade ON learning_regrade_items (regrade_uuid, position)`
)
