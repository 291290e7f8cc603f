import { statements } from "./statements.js"

/**
 * Community threads: a question or
 * discussion per enrollment, opened by its learner or by staff, with immutable messages. A thread
 * keeps the run it was opened in (staff scope and run visibility follow it); `last_author_role`
 * tells the staff inbox which open threads still wait for staff. `group` visibility is allowed by
 * the table for when groups exist; the operations refuse it until then (docs/decisions.md).
 */
export const learningCommunity = statements(
  `CREATE TABLE learning_threads (
    uuid uuid PRIMARY KEY,
    course_uuid uuid NOT NULL REFERENCES learning_courses (uuid),
    run_uuid uuid NOT NULL REFERENCES learning_runs (uuid),
    enrollment_uuid uuid NOT NULL REFERENCES learning_enrollments (uuid),
    learner_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    author_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    author_role text NOT NULL CHECK (author_role IN ('learner', 'staff')),
    node_key text CHECK (node_key ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    visibility text NOT NULL CHECK (visibility IN ('private', 'group', 'run')),
    title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 160),
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'answered', 'resolved')),
    last_author_role text NOT NULL CHECK (last_author_role IN ('learner', 'staff')),
    message_count integer NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    last_message_at timestamptz NOT NULL DEFAULT now(),
    resolved_by uuid REFERENCES profiles (uuid),
    resolved_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX learning_threads_enrollment ON learning_threads (enrollment_uuid, created_at DESC, uuid)`,
  `CREATE INDEX learning_threads_run_visible ON learning_threads (run_uuid, created_at DESC, uuid) WHERE visibility = 'run'`,
  `CREATE INDEX learning_threads_inbox ON learning_threads (course_uuid, created_at DESC, uuid)`,
  `CREATE TABLE learning_thread_messages (
    uuid uuid PRIMARY KEY,
    thread_uuid uuid NOT NULL REFERENCES learning_threads (uuid),
    author_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    author_role text NOT NULL CHECK (author_role IN ('learner', 'staff')),
    body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 5000),
    file_uuids uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(file_uuids) <= 20),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`,
  `CREATE INDEX learning_thread_messages_thread ON learning_thread_messages (thread_uuid, created_at, uuid)`
)
