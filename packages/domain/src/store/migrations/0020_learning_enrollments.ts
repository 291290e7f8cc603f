import { statements } from "./statements.js"

/**
 * The enrollment side of learning L2: the enrollment
 * record grows its lifecycle columns (seat offers, pauses, withdrawal grace, restore, application,
 * FIFO queue position, the worker's wake-up hint); runs get their enrollment policies;
 * date overrides (the learner layer of the computed dates); per-step state of an enrollment
 * (`learning_step_states`, shared with the step/submission side); the reminders already sent.
 *
 * Dates stay computed: nothing here stores an effective date. `wake_at` is only when the worker
 * should look at the enrollment again (next unlock or reminder); it is recomputed from the layers.
 */
export const learningEnrollments = statements(
  `ALTER TABLE learning_runs
    ADD COLUMN seat_offer_hours integer NOT NULL DEFAULT 48 CHECK (seat_offer_hours BETWEEN 1 AND 720),
    ADD COLUMN withdraw_grace_hours integer NOT NULL DEFAULT 0 CHECK (withdraw_grace_hours BETWEEN 0 AND 720),
    ADD COLUMN restore_days integer NOT NULL DEFAULT 30 CHECK (restore_days BETWEEN 0 AND 365),
    ADD COLUMN reminder_hours integer[] NOT NULL DEFAULT '{24}',
    ADD COLUMN complete_on_criteria boolean NOT NULL DEFAULT false,
    ADD COLUMN application_form jsonb`,
  `CREATE SEQUENCE learning_enrollment_queue`,
  `ALTER TABLE learning_enrollments
    ADD COLUMN queue_position bigint NOT NULL DEFAULT nextval('learning_enrollment_queue'),
    ADD COLUMN previous_status text,
    ADD COLUMN offer_expires_at timestamptz,
    ADD COLUMN invited_by uuid REFERENCES profiles (uuid),
    ADD COLUMN invitation_message text,
    ADD COLUMN application jsonb,
    ADD COLUMN decisions jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN paused_at timestamptz,
    ADD COLUMN pause_until timestamptz,
    ADD COLUMN paused_days integer NOT NULL DEFAULT 0 CHECK (paused_days >= 0),
    ADD COLUMN pause_count integer NOT NULL DEFAULT 0 CHECK (pause_count >= 0),
    -- Finished pauses [{from, days}], oldest first: a date still ahead at \`from\` moves by \`days\`.
    ADD COLUMN pauses jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN withdraw_requested_at timestamptz,
    ADD COLUMN withdraw_effective_at timestamptz,
    ADD COLUMN withdrawn_at timestamptz,
    ADD COLUMN withdraw_reason text,
    ADD COLUMN activated_at timestamptz,
    ADD COLUMN criteria_met_at timestamptz,
    ADD COLUMN completed_at timestamptz,
    ADD COLUMN transferred_from uuid,
    ADD COLUMN wake_at timestamptz`,
  `CREATE INDEX learning_enrollments_queue ON learning_enrollments (run_uuid, queue_position) WHERE status = 'waitlisted'`,
  `CREATE INDEX learning_enrollments_offers ON learning_enrollments (offer_expires_at) WHERE status IN ('invited', 'offered')`,
  `CREATE INDEX learning_enrollments_pause_end ON learning_enrollments (pause_until) WHERE status = 'paused'`,
  `CREATE INDEX learning_enrollments_grace_end ON learning_enrollments (withdraw_effective_at) WHERE status = 'withdrawal_requested'`,
  `CREATE INDEX learning_enrollments_wake ON learning_enrollments (wake_at) WHERE status = 'active'`,
  `CREATE INDEX learning_enrollments_profile_list ON learning_enrollments (profile_uuid, created_at DESC, uuid DESC)`,
  `CREATE INDEX learning_enrollments_course_list ON learning_enrollments (course_uuid, created_at DESC, uuid DESC)`,
  // The learner and group layers of the effective dates. A row without node_key is run-wide.
  `CREATE TABLE learning_date_overrides (
    uuid uuid PRIMARY KEY,
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    enrollment_uuid uuid REFERENCES learning_enrollments (uuid),
    group_uuid uuid,
    node_key text,
    unlock_at timestamptz,
    due_at timestamptz,
    lock_at timestamptz,
    extra_attempts integer NOT NULL DEFAULT 0 CHECK (extra_attempts BETWEEN 0 AND 100),
    origin text NOT NULL CHECK (origin IN ('manual', 'extension', 'incident', 'group')),
    reason text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'cleared')),
    created_by uuid REFERENCES profiles (uuid),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    cleared_at timestamptz,
    CHECK ((enrollment_uuid IS NULL) <> (group_uuid IS NULL))
  )`,
  `CREATE INDEX learning_date_overrides_enrollment ON learning_date_overrides (enrollment_uuid, created_at) WHERE status = 'active'`,
  `CREATE INDEX learning_date_overrides_group ON learning_date_overrides (group_uuid, created_at) WHERE status = 'active'`,
  // One row per step an enrollment has reached; a step without a row is locked.
  `CREATE TABLE learning_step_states (
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    node_key text NOT NULL,
    status text NOT NULL CHECK (status IN ('locked', 'available', 'in_progress', 'completed', 'failed')),
    completed_at timestamptz,
    outcome text,
    media jsonb,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (enrollment_uuid, node_key)
  )`,
  // learning.deadline.approaching is sent once per (enrollment, step, effective due, lead time).
  `CREATE TABLE learning_deadline_reminders (
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    node_key text NOT NULL,
    due_at timestamptz NOT NULL,
    hours integer NOT NULL,
    sent_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (enrollment_uuid, node_key, due_at, hours)
  )`
)
