import { statements } from "./statements.js"

/**
 * Reviews and automatic overrides of learning L3.
 *
 * A review assignment is one review of one submission by one reviewer: staff, peer or self. Its
 * life is `pooled → claimed → decided → released`, `claimed → pooled` (reassign), any open state →
 * `cancelled` (Reviews.ts holds the table). The reviewer's draft, the decision (provisional or
 * final: moderated grading), a reported issue (which pauses the due clock) and the history of
 * holders live on the row; `pseudonym` is what peers see of the learner. `overdue_for` records the
 * due time `learning.review.overdue` was last emitted for (once per due).
 *
 * An automatic override is a staff override of the checker's result on one submission: its score
 * is an `override` layer (`layer_uuid`), the original kept; revoking revokes the layer.
 */
export const learningReviews = statements(
  `CREATE TABLE learning_review_assignments (
    uuid uuid PRIMARY KEY,
    submission_uuid uuid NOT NULL REFERENCES learning_submissions (uuid),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    node_key text NOT NULL,
    learner_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    pseudonym text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('staff', 'peer', 'self')),
    status text NOT NULL CHECK (status IN ('pooled', 'claimed', 'decided', 'released', 'cancelled')),
    reviewer_profile_uuid uuid REFERENCES profiles (uuid),
    claimed_at timestamptz,
    due_at timestamptz,
    overdue_for timestamptz,
    draft jsonb,
    draft_revision integer NOT NULL DEFAULT 0 CHECK (draft_revision >= 0),
    draft_saved_at timestamptz,
    decision jsonb,
    issue jsonb,
    sla_paused_at timestamptz,
    history jsonb NOT NULL DEFAULT '[]'::jsonb,
    layer_uuid uuid REFERENCES learning_score_layers (uuid),
    released_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((status IN ('pooled', 'cancelled')) OR reviewer_profile_uuid IS NOT NULL),
    CHECK (status <> 'pooled' OR reviewer_profile_uuid IS NULL)
  )`,
  `CREATE INDEX learning_review_assignments_submission ON learning_review_assignments (submission_uuid, created_at)`,
  `CREATE INDEX learning_review_assignments_queue ON learning_review_assignments (course_uuid, status, created_at, uuid)`,
  `CREATE INDEX learning_review_assignments_reviewer ON learning_review_assignments (reviewer_profile_uuid, status)
    WHERE reviewer_profile_uuid IS NOT NULL`,
  `CREATE INDEX learning_review_assignments_due ON learning_review_assignments (due_at)
    WHERE status = 'claimed' AND issue IS NULL`,
  `CREATE TABLE learning_automatic_overrides (
    uuid uuid PRIMARY KEY,
    submission_uuid uuid NOT NULL REFERENCES learning_submissions (uuid),
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    layer_uuid uuid NOT NULL REFERENCES learning_score_layers (uuid),
    points numeric NOT NULL CHECK (points >= 0),
    verdict text NOT NULL,
    reason text NOT NULL,
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
    created_by uuid NOT NULL REFERENCES profiles (uuid),
    revoked_by uuid REFERENCES profiles (uuid),
    revoke_reason text,
    revoked_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX learning_automatic_overrides_submission ON learning_automatic_overrides (submission_uuid, created_at)`
)
