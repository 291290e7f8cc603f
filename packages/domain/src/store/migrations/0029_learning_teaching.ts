import { statements } from "./statements.js"

/**
 * The teaching dashboards' counts: one small partial
 * index per kind of waiting record, keyed by course and run, whose predicate is the list
 * operation's own condition (Teaching.ts `countDefinitions`), so each count is an index-only scan
 * over the waiting records of the course (or of the caller's runs) instead of every record of it.
 * Claimed reviews use the reviewer's index (0026); checkers are few per course (0021's index).
 */
export const learningTeaching = statements(
  `CREATE INDEX learning_review_assignments_to_claim ON learning_review_assignments (course_uuid, run_uuid)
    WHERE kind = 'staff' AND status = 'pooled'`,
  `CREATE INDEX learning_appeals_open ON learning_appeals (course_uuid, run_uuid) WHERE status = 'open'`,
  `CREATE INDEX learning_threads_unanswered ON learning_threads (course_uuid, run_uuid) WHERE status = 'open' AND last_author_role = 'learner'`,
  `CREATE INDEX learning_extension_requests_pending ON learning_extension_requests (course_uuid, run_uuid) WHERE status = 'requested'`,
  `CREATE INDEX learning_incidents_open ON learning_incidents (course_uuid, run_uuid) WHERE status = 'open'`
)
