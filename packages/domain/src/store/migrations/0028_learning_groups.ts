import { statements } from "./statements.js"

/**
 * Learning groups: cohorts, teams and sections of a
 * run with manual, random or self assignment and an optional capacity; their members are
 * enrollments of the run. Group-scoped staff assignments, email invitations and group date
 * overrides already had a `group_uuid` column; it now references the group. `member_count` is kept
 * in the row the capacity check locks, so concurrent adds never exceed the capacity.
 */
export const learningGroups = statements(
  `CREATE TABLE learning_groups (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
    kind text NOT NULL CHECK (kind IN ('cohort', 'team', 'section')),
    visibility text NOT NULL CHECK (visibility IN ('separate', 'visible')),
    assignment text NOT NULL CHECK (assignment IN ('manual', 'random', 'self')),
    capacity integer CHECK (capacity BETWEEN 1 AND 10000),
    member_count integer NOT NULL DEFAULT 0 CHECK (member_count >= 0 AND (capacity IS NULL OR member_count <= capacity)),
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_by uuid NOT NULL REFERENCES profiles (uuid),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    archived_at timestamptz
  )`,
  `CREATE INDEX learning_groups_course ON learning_groups (course_uuid, created_at, uuid)`,
  `CREATE INDEX learning_groups_run ON learning_groups (run_uuid, kind) WHERE status = 'active'`,
  `CREATE TABLE learning_group_members (
    group_uuid uuid NOT NULL REFERENCES learning_groups (uuid),
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    added_by uuid REFERENCES profiles (uuid),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (group_uuid, enrollment_uuid)
  )`,
  `CREATE INDEX learning_group_members_enrollment ON learning_group_members (enrollment_uuid)`,
  `ALTER TABLE learning_staff ADD CONSTRAINT learning_staff_group FOREIGN KEY (group_uuid) REFERENCES learning_groups (uuid)`,
  `CREATE INDEX learning_staff_group_scope ON learning_staff (group_uuid) WHERE group_uuid IS NOT NULL`,
  `ALTER TABLE learning_email_invitations ADD CONSTRAINT learning_email_invitations_group FOREIGN KEY (group_uuid) REFERENCES learning_groups (uuid)`,
  `ALTER TABLE learning_date_overrides ADD CONSTRAINT learning_date_overrides_group_ref FOREIGN KEY (group_uuid) REFERENCES learning_groups (uuid)`
)
