import { statements } from "./statements.js"

/**
 * The people side of a course: who invited a
 * staff assignment and why it ended; email invitations (only keyed hashes of the address and of the
 * mailed token are stored, with a masked hint for the inviter's list); ownership invitations (one
 * pending per course, a partial unique index); course reviews (one per learner per course).
 * Invitations expire 14 days after they were sent: expiry is computed on read (`pending` past
 * `expires_at` reads as `expired` and refuses every transition); a write that needs the slot stores it.
 */
export const learningStaff = statements(
  `ALTER TABLE learning_staff ADD COLUMN invited_by uuid REFERENCES profiles (uuid)`,
  `ALTER TABLE learning_staff ADD COLUMN ended_reason text NOT NULL DEFAULT '' CHECK (char_length(ended_reason) <= 1000)`,
  `CREATE INDEX learning_staff_invited ON learning_staff (profile_uuid, created_at DESC, uuid) WHERE status = 'invited'`,
  `CREATE INDEX learning_staff_listing ON learning_staff (course_uuid, created_at, uuid)`,
  `CREATE TABLE learning_email_invitations (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    email_hash text NOT NULL,
    email_hint text NOT NULL,
    token_hash text NOT NULL UNIQUE,
    role text NOT NULL CHECK (role IN ('instructor', 'reviewer', 'assistant', 'analyst')),
    run_uuid uuid REFERENCES learning_runs (uuid),
    group_uuid uuid,
    message text NOT NULL DEFAULT '' CHECK (char_length(message) <= 2000),
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected', 'revoked', 'expired')),
    invited_by uuid NOT NULL REFERENCES profiles (uuid),
    accepted_profile_uuid uuid REFERENCES profiles (uuid),
    assignment_uuid uuid REFERENCES learning_staff (uuid),
    expires_at timestamptz NOT NULL,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX learning_email_invitations_course ON learning_email_invitations (course_uuid, created_at DESC, uuid)`,
  `CREATE INDEX learning_email_invitations_addressee ON learning_email_invitations (email_hash, created_at DESC, uuid)`,
  `CREATE TABLE learning_ownership_invitations (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    from_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    to_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    previous_owner_role text NOT NULL CHECK (previous_owner_role IN ('instructor', 'none')),
    message text NOT NULL DEFAULT '' CHECK (char_length(message) <= 2000),
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected', 'cancelled', 'expired')),
    expires_at timestamptz NOT NULL,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  // One pending ownership invitation per course.
  `CREATE UNIQUE INDEX learning_ownership_one_pending ON learning_ownership_invitations (course_uuid) WHERE status = 'pending'`,
  `CREATE INDEX learning_ownership_to ON learning_ownership_invitations (to_profile_uuid, created_at DESC, uuid)`,
  `CREATE INDEX learning_ownership_from ON learning_ownership_invitations (from_profile_uuid, created_at DESC, uuid)`,
  `CREATE TABLE learning_course_reviews (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    rating integer NOT NULL CHECK (rating BETWEEN 1 AND 5),
    text text NOT NULL DEFAULT '' CHECK (char_length(text) <= 5000),
    status text NOT NULL DEFAULT 'visible' CHECK (status IN ('visible', 'removed', 'hidden')),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- One course review per learner per course (a removed one is revived by the next save).
    UNIQUE (course_uuid, profile_uuid)
  )`,
  `CREATE INDEX learning_course_reviews_public ON learning_course_reviews (course_uuid, created_at DESC, uuid) WHERE status = 'visible'`
)
