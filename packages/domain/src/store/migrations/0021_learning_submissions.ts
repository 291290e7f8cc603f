import { statements } from "./statements.js"

/**
 * The step and submission side of learning: autosaved drafts, variants (the dataset is shown, the
 * clue never leaves the server), submissions pinned to version, nodeKey and variant with their
 * attempt, append-only score layers, grading jobs (sample runs and generations; grade jobs are
 * the grading worker's), demo attempts, and the minimal checker record external checkers and
 * generators need (migration 0025 adds the rest).
 *
 * Attempts are not a counter: a submission holds `attempt_counted`, cleared by a refund (cancel
 * before grading, platform failure), so the attempts used are always the count of counted rows.
 */
export const learningSubmissions = statements(
  `CREATE TABLE learning_checkers (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    lineage_uuid uuid NOT NULL,
    version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    kind text NOT NULL CHECK (kind IN ('declarative', 'http')),
    rules jsonb,
    url text,
    generator_url text,
    timeout_ms integer NOT NULL DEFAULT 10000 CHECK (timeout_ms BETWEEN 100 AND 30000),
    -- The signing secret sealed with the server secret (AES-256-GCM, the checker uuid as associated data).
    secret_sealed text,
    sample_cases jsonb NOT NULL DEFAULT '[]'::jsonb,
    status text NOT NULL DEFAULT 'draft'
      CHECK (status IN ('draft', 'preflighting', 'ready', 'preflight_failed', 'suspended', 'superseded')),
    created_by uuid REFERENCES profiles (uuid),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (lineage_uuid, version)
  )`,
  `CREATE INDEX learning_checkers_course ON learning_checkers (course_uuid, created_at DESC)`,
  `CREATE TABLE learning_drafts (
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    node_key text NOT NULL,
    reply jsonb NOT NULL,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (enrollment_uuid, node_key)
  )`,
  `CREATE TABLE learning_variants (
    uuid uuid PRIMARY KEY,
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    node_key text NOT NULL,
    n integer NOT NULL CHECK (n >= 1),
    source text NOT NULL CHECK (source IN ('pool', 'generated')),
    pool_index integer,
    seed text,
    dataset jsonb NOT NULL,
    clue jsonb,
    job_uuid uuid,
    status text NOT NULL DEFAULT 'issued' CHECK (status IN ('issued', 'retired')),
    created_at timestamptz NOT NULL DEFAULT now(),
    retired_at timestamptz,
    UNIQUE (enrollment_uuid, node_key, n)
  )`,
  `CREATE UNIQUE INDEX learning_variants_current ON learning_variants (enrollment_uuid, node_key) WHERE status = 'issued'`,
  `CREATE TABLE learning_submissions (
    uuid uuid PRIMARY KEY,
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    node_key text NOT NULL,
    version_number integer NOT NULL,
    variant_uuid uuid REFERENCES learning_variants (uuid),
    checker_uuid uuid REFERENCES learning_checkers (uuid),
    attempt_no integer NOT NULL CHECK (attempt_no >= 1),
    attempt_counted boolean NOT NULL DEFAULT true,
    reply jsonb NOT NULL,
    status text NOT NULL CHECK (status IN ('submitted', 'checking', 'check_failed', 'awaiting_review', 'graded', 'accepted',
      'revision_requested', 'cancelled')),
    demo_attempt_uuid uuid,
    submitted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    graded_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (course_uuid, version_number) REFERENCES learning_course_versions (course_uuid, number),
    UNIQUE (enrollment_uuid, node_key, attempt_no)
  )`,
  `CREATE INDEX learning_submissions_step ON learning_submissions (enrollment_uuid, node_key, submitted_at DESC, uuid DESC)`,
  `CREATE INDEX learning_submissions_queue ON learning_submissions (course_uuid, submitted_at) WHERE status IN ('submitted', 'checking', 'awaiting_review')`,
  // The first layer is never modified; later layers are appended; a layer is only ever revoked.
  `CREATE TABLE learning_score_layers (
    uuid uuid PRIMARY KEY,
    submission_uuid uuid NOT NULL REFERENCES learning_submissions (uuid),
    kind text NOT NULL CHECK (kind IN ('auto', 'review', 'appeal', 'override', 'regrade', 'plan', 'incident')),
    points numeric NOT NULL CHECK (points >= 0),
    max_points integer NOT NULL CHECK (max_points >= 0),
    verdict text NOT NULL,
    feedback text NOT NULL DEFAULT '',
    passed boolean NOT NULL,
    late boolean NOT NULL DEFAULT false,
    released boolean NOT NULL DEFAULT true,
    only_if_higher boolean NOT NULL DEFAULT false,
    source_uuid uuid,
    by_profile_uuid uuid REFERENCES profiles (uuid),
    reason text NOT NULL DEFAULT '',
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`,
  `CREATE INDEX learning_score_layers_submission ON learning_score_layers (submission_uuid, created_at)`,
  `CREATE FUNCTION learning_score_layers_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        IF current_setting('birzha.audit_purge', true) = 'on' THEN RETURN OLD; END IF;
        RAISE EXCEPTION 'learning_score_layers is append-only';
      END IF;
      IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL AND OLD.kind <> 'auto' AND OLD.kind <> 'review'
        AND (to_jsonb(NEW) - 'revoked_at') = (to_jsonb(OLD) - 'revoked_at') THEN
        RETURN NEW;
      END IF;
      RAISE EXCEPTION 'a score layer is only ever revoked (and never the first, auto or review, layer)';
    END $$`,
  `CREATE TRIGGER learning_score_layers_append_only BEFORE UPDATE OR DELETE ON learning_score_layers
    FOR EACH ROW EXECUTE FUNCTION learning_score_layers_append_only()`,
  `CREATE TABLE learning_grading_jobs (
    uuid uuid PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('grade', 'sample_run', 'preflight', 'regrade', 'generate')),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    enrollment_uuid uuid REFERENCES learning_enrollments (uuid),
    node_key text,
    submission_uuid uuid REFERENCES learning_submissions (uuid),
    checker_uuid uuid REFERENCES learning_checkers (uuid),
    requester_profile_uuid uuid REFERENCES profiles (uuid),
    input jsonb NOT NULL DEFAULT '{}'::jsonb,
    status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    tries integer NOT NULL DEFAULT 0,
    verdict text,
    -- What the learner may see of the result (a sample run's cases, a generation's dataset); never a clue.
    result jsonb,
    platform_error text,
    diagnostics jsonb,
    lease_until timestamptz,
    next_try_at timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
  )`,
  `CREATE INDEX learning_grading_jobs_due ON learning_grading_jobs (kind, next_try_at) WHERE status IN ('queued', 'running')`,
  `CREATE INDEX learning_grading_jobs_step ON learning_grading_jobs (enrollment_uuid, node_key, kind, created_at DESC)`,
  `CREATE INDEX learning_grading_jobs_submission ON learning_grading_jobs (submission_uuid) WHERE submission_uuid IS NOT NULL`,
  `CREATE TABLE learning_demo_attempts (
    uuid uuid PRIMARY KEY,
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    node_key text NOT NULL,
    version_number integer NOT NULL,
    pool_index integer,
    reply jsonb NOT NULL,
    verdict text NOT NULL,
    points numeric NOT NULL,
    max_points integer NOT NULL,
    status text NOT NULL DEFAULT 'recorded' CHECK (status IN ('recorded', 'applied')),
    applied_submission_uuid uuid REFERENCES learning_submissions (uuid),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    FOREIGN KEY (course_uuid, version_number) REFERENCES learning_course_versions (course_uuid, number)
  )`,
  `CREATE INDEX learning_demo_attempts_profile ON learning_demo_attempts (profile_uuid, course_uuid, created_at DESC)`
)
