import { statements } from "./statements.js"

/**
 * The learning area's ground: courses with their draft node tree and
 * immutable published versions, staff assignments (the permission model of `learning/Permissions.ts`), runs pinned to a
 * version, the minimal enrollment record the learner role and run transitions need (L2 extends
 * it), plans (plan-then-commit), the library, and the append-only audit log. One owner per course
 * is a partial unique index; the audit log refuses UPDATE and DELETE by a trigger.
 */
export const learning = statements(
  `CREATE TABLE learning_courses (
    uuid uuid PRIMARY KEY,
    owner_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 160),
    summary text NOT NULL DEFAULT '' CHECK (char_length(summary) <= 2000),
    kind text NOT NULL CHECK (kind IN ('single', 'bundle')),
    visibility text NOT NULL DEFAULT 'unlisted' CHECK (visibility IN ('listed', 'unlisted', 'private')),
    status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published', 'archived')),
    publication_uuid uuid UNIQUE REFERENCES publications (uuid),
    nodes jsonb NOT NULL DEFAULT '[]'::jsonb,
    members jsonb NOT NULL DEFAULT '[]'::jsonb,
    completion_policy jsonb NOT NULL DEFAULT '{}'::jsonb,
    freeze_after_days integer NOT NULL DEFAULT 30 CHECK (freeze_after_days BETWEEN 0 AND 3650),
    metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
    latest_version integer NOT NULL DEFAULT 0 CHECK (latest_version >= 0),
    published_at timestamptz,
    archived_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    search_text text GENERATED ALWAYS AS (birzha_search_words(title || ' ' || summary)) STORED
  )`,
  `CREATE INDEX learning_courses_catalog ON learning_courses (published_at DESC, uuid)
    WHERE status = 'published' AND visibility = 'listed' AND publication_uuid IS NOT NULL`,
  `CREATE INDEX learning_courses_search ON learning_courses USING gin (search_text gin_trgm_ops)
    WHERE status = 'published' AND visibility = 'listed' AND publication_uuid IS NOT NULL`,
  `CREATE TABLE learning_course_versions (
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    number integer NOT NULL CHECK (number >= 1),
    content_hash text NOT NULL,
    title text NOT NULL,
    summary text NOT NULL,
    nodes jsonb NOT NULL,
    -- What learners and the public see of the tree (no bodies, no grading), kept with the version
    -- so the course page never reads the whole tree.
    outline jsonb NOT NULL,
    members jsonb NOT NULL DEFAULT '[]'::jsonb,
    changelog text NOT NULL DEFAULT '',
    published_by uuid NOT NULL REFERENCES profiles (uuid),
    published_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (course_uuid, number)
  )`,
  `CREATE TABLE learning_runs (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    version_number integer NOT NULL,
    title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 160),
    pacing text NOT NULL CHECK (pacing IN ('cohort', 'self')),
    starts_at timestamptz NOT NULL,
    ends_at timestamptz,
    admission text NOT NULL CHECK (admission IN ('open', 'approval', 'invite')),
    capacity integer CHECK (capacity BETWEEN 1 AND 100000),
    waitlist boolean NOT NULL DEFAULT false,
    enrollment_opens_at timestamptz,
    enrollment_closes_at timestamptz,
    pause_policy jsonb NOT NULL DEFAULT '{"maxDays":0,"maxCount":0}'::jsonb,
    schedule jsonb NOT NULL DEFAULT '{}'::jsonb,
    status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'scheduled', 'running', 'finished', 'cancelled', 'archived')),
    finished_at timestamptz,
    cancelled_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (course_uuid, version_number) REFERENCES learning_course_versions (course_uuid, number)
  )`,
  `CREATE INDEX learning_runs_course ON learning_runs (course_uuid, created_at DESC, uuid)`,
  `CREATE INDEX learning_runs_due ON learning_runs (starts_at) WHERE status = 'scheduled'`,
  `CREATE TABLE learning_staff (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    role text NOT NULL CHECK (role IN ('owner', 'instructor', 'reviewer', 'assistant', 'analyst')),
    run_uuid uuid REFERENCES learning_runs (uuid),
    group_uuid uuid,
    grants text[] NOT NULL DEFAULT '{}',
    denies text[] NOT NULL DEFAULT '{}',
    status text NOT NULL CHECK (status IN ('invited', 'active', 'revoked', 'rejected')),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (role <> 'owner' OR (run_uuid IS NULL AND group_uuid IS NULL))
  )`,
  `CREATE UNIQUE INDEX learning_staff_one_owner ON learning_staff (course_uuid) WHERE role = 'owner' AND status = 'active'`,
  `CREATE INDEX learning_staff_profile ON learning_staff (profile_uuid, course_uuid) WHERE status = 'active'`,
  `CREATE INDEX learning_staff_course ON learning_staff (course_uuid) WHERE status = 'active'`,
  `CREATE TABLE learning_enrollments (
    uuid uuid PRIMARY KEY,
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    status text NOT NULL CHECK (status IN ('invited', 'requested', 'waitlisted', 'offered', 'active', 'paused', 'withdrawal_requested',
      'withdrawn', 'declined', 'expired', 'rejected', 'completed', 'cancelled')),
    started_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  // One non-terminal enrollment per profile per course.
  `CREATE UNIQUE INDEX learning_enrollments_open ON learning_enrollments (course_uuid, profile_uuid)
    WHERE status IN ('invited', 'requested', 'waitlisted', 'offered', 'active', 'paused', 'withdrawal_requested')`,
  `CREATE INDEX learning_enrollments_run ON learning_enrollments (run_uuid, status)`,
  `CREATE INDEX learning_enrollments_profile ON learning_enrollments (profile_uuid, course_uuid)`,
  `CREATE TABLE learning_plans (
    uuid uuid PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('schedule', 'transfer', 'compensation')),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    created_by uuid NOT NULL REFERENCES profiles (uuid),
    base_revisions jsonb NOT NULL,
    input jsonb NOT NULL,
    result jsonb NOT NULL,
    items jsonb NOT NULL,
    blocking jsonb NOT NULL,
    status text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'applied', 'stale', 'expired')),
    expires_at timestamptz NOT NULL,
    applied_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE learning_library_items (
    uuid uuid PRIMARY KEY,
    owner_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 160),
    nodes jsonb NOT NULL,
    source_course_uuid uuid REFERENCES learning_courses (uuid),
    source_node_key text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    search_text text GENERATED ALWAYS AS (birzha_search_words(title)) STORED
  )`,
  `CREATE INDEX learning_library_owner ON learning_library_items (owner_profile_uuid, created_at DESC, uuid)`,
  // Exports, imports and analytics exports: claimed with SKIP LOCKED; a running
  // job whose lease lapsed (a crashed worker) is claimed again; files are kept 7 days.
  `CREATE TABLE learning_jobs (
    uuid uuid PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('export_course', 'export_enrollment', 'import', 'analytics_export')),
    requester_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    course_uuid uuid REFERENCES learning_courses (uuid),
    enrollment_uuid uuid REFERENCES learning_enrollments (uuid),
    input jsonb NOT NULL,
    status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
    file_uuid uuid REFERENCES files (uuid),
    result_course_uuid uuid REFERENCES learning_courses (uuid),
    issues jsonb NOT NULL DEFAULT '[]'::jsonb,
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    expires_at timestamptz
  )`,
  `CREATE INDEX learning_jobs_due ON learning_jobs (created_at) WHERE status IN ('queued', 'running')`,
  `CREATE TABLE learning_audit_events (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    actor_profile_uuid uuid REFERENCES profiles (uuid),
    action text NOT NULL,
    subject_kind text NOT NULL,
    subject_uuid uuid NOT NULL,
    enrollment_uuid uuid,
    before jsonb,
    after jsonb,
    reason text NOT NULL DEFAULT '',
    request_uuid uuid,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`,
  `CREATE INDEX learning_audit_course ON learning_audit_events (course_uuid, created_at DESC, uuid DESC)`,
  // Only the demo data's reset may delete (it sets birzha.audit_purge for its transaction).
  `CREATE FUNCTION learning_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND current_setting('birzha.audit_purge', true) = 'on' THEN RETURN OLD; END IF;
      RAISE EXCEPTION 'learning_audit_events is append-only';
    END $$`,
  `CREATE TRIGGER learning_audit_append_only BEFORE UPDATE OR DELETE ON learning_audit_events
    FOR EACH ROW EXECUTE FUNCTION learning_audit_append_only()`
)
