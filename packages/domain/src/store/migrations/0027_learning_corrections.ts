import { statements } from "./statements.js"

/**
 * Grade and date corrections of learning L3: extension requests with the run's extension policy, incidents with their
 * computed affected learners, Pawtograder-like appeals (initial, resolved and closed points; one
 * open appeal per submission), and regrade plans whose items are rows with a durable commit
 * cursor, so a large commit runs in chunks and resumes without applying an item twice.
 */
export const learningCorrections = statements(
  // The run's extension policy: requests up to `maxDays` past the original due, at most `maxCount`
  // per enrollment, asked no later than `windowDays` after the due; up to `autoApproveDays` approve at once.
  `ALTER TABLE learning_runs ADD COLUMN extension_policy jsonb NOT NULL
    DEFAULT '{"autoApproveDays": 2, "maxDays": 14, "maxCount": 3, "windowDays": 7}'::jsonb`,
  `CREATE TABLE learning_extension_requests (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    node_key text,
    original_due_at timestamptz NOT NULL,
    requested_due_at timestamptz NOT NULL,
    granted_due_at timestamptz,
    basis text CHECK (basis IN ('original_due', 'approval')),
    reason text NOT NULL,
    comment text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'requested' CHECK (status IN ('requested', 'approved', 'denied', 'expired')),
    auto_approved boolean NOT NULL DEFAULT false,
    override_uuid uuid REFERENCES learning_date_overrides (uuid),
    decided_by uuid REFERENCES profiles (uuid),
    decided_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX learning_extension_requests_enrollment ON learning_extension_requests (enrollment_uuid, created_at)`,
  `CREATE INDEX learning_extension_requests_course ON learning_extension_requests (course_uuid, created_at DESC, uuid DESC)`,
  `CREATE TABLE learning_incidents (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    kind text NOT NULL CHECK (kind IN ('checker_outage', 'content_error', 'platform_outage', 'other')),
    window_from timestamptz NOT NULL,
    window_to timestamptz NOT NULL CHECK (window_to > window_from),
    node_keys jsonb NOT NULL DEFAULT '[]'::jsonb,
    checker_uuid uuid REFERENCES learning_checkers (uuid),
    description text NOT NULL,
    affected jsonb NOT NULL DEFAULT '[]'::jsonb,
    plan_uuid uuid REFERENCES learning_plans (uuid),
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_by uuid NOT NULL REFERENCES profiles (uuid),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz
  )`,
  `CREATE INDEX learning_incidents_run ON learning_incidents (run_uuid, created_at DESC, uuid DESC)`,
  `CREATE TABLE learning_appeals (
    uuid uuid PRIMARY KEY,
    submission_uuid uuid NOT NULL REFERENCES learning_submissions (uuid),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    node_key text NOT NULL,
    reason text NOT NULL,
    requested_points numeric,
    rubric_items jsonb NOT NULL DEFAULT '[]'::jsonb,
    initial_points numeric NOT NULL,
    resolved_points numeric,
    closed_points numeric,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'escalated', 'closed')),
    outcome text CHECK (outcome IN ('uphold', 'adjust', 'replace', 'regrade')),
    comment text NOT NULL DEFAULT '',
    escalation_reason text,
    resolved_by uuid REFERENCES profiles (uuid),
    closed_by uuid REFERENCES profiles (uuid),
    layer_uuids jsonb NOT NULL DEFAULT '[]'::jsonb,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    escalated_at timestamptz,
    closed_at timestamptz
  )`,
  // One open appeal per submission (open, resolved-not-closed or escalated).
  `CREATE UNIQUE INDEX learning_appeals_one_open ON learning_appeals (submission_uuid) WHERE status <> 'closed'`,
  `CREATE INDEX learning_appeals_course ON learning_appeals (course_uuid, created_at DESC, uuid DESC)`,
  `CREATE TABLE learning_regrade_plans (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    node_key text NOT NULL,
    rule jsonb NOT NULL,
    selector jsonb NOT NULL,
    policy text NOT NULL CHECK (policy IN ('any', 'only_if_higher')),
    status text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'committing', 'committed', 'expired')),
    item_count integer NOT NULL DEFAULT 0,
    -- The commit's durable cursor: items up to this position are done (applied or skipped).
    cursor integer NOT NULL DEFAULT 0,
    created_by uuid NOT NULL REFERENCES profiles (uuid),
    committed_by uuid REFERENCES profiles (uuid),
    commit_request_uuid uuid,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    committed_at timestamptz
  )`,
  `CREATE INDEX learning_regrade_plans_committing ON learning_regrade_plans (created_at) WHERE status = 'committing'`,
  `CREATE TABLE learning_regrade_plan_items (
    plan_uuid uuid NOT NULL REFERENCES learning_regrade_plans (uuid),
    n integer NOT NULL CHECK (n >= 1),
    uuid uuid NOT NULL UNIQUE,
    submission_uuid uuid NOT NULL REFERENCES learning_submissions (uuid),
    -- The submission's layers when planned (md5 of their uuids and revocations): the base a commit re-checks.
    base text NOT NULL,
    old_points numeric,
    new_points numeric,
    new_verdict text,
    new_passed boolean,
    max_points integer NOT NULL,
    skipped text CHECK (skipped IN ('frozen', 'unchanged', 'stale')),
    applied_layer_uuid uuid REFERENCES learning_score_layers (uuid),
    done_at timestamptz,
    PRIMARY KEY (plan_uuid, n)
  )`
)
