import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * `moderation_subject_decisions` (the append-only record of moderators' decisions on complaints
 * and reviews) and `moderation_audit` (every moderator read of a private subject): the one writer.
 */
export const recordDecision = (decision: {
  subjectKind: "complaint" | "review"
  subjectUuid: string
  subjectRevision: number
  moderatorAccountUuid: string | null
  moderator: string
  decision: string
  action: string | null
  reason: string
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO moderation_subject_decisions
        (subject_kind, subject_uuid, subject_revision, moderator_account_uuid, moderator, decision, action, reason)
      VALUES (${decision.subjectKind}, ${decision.subjectUuid}, ${decision.subjectRevision}, ${decision.moderatorAccountUuid},
        ${decision.moderator}, ${decision.decision}, ${decision.action}, ${decision.reason})`.pipe(Effect.asVoid))

export const auditRead = (read: {
  moderatorAccountUuid: string | null
  moderator: string
  subjectKind: string
  subjectUuid: string
  complaintUuid: string | null
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO moderation_audit (moderator_account_uuid, moderator, subject_kind, subject_uuid, complaint_uuid)
      VALUES (${read.moderatorAccountUuid}, ${read.moderator}, ${read.subjectKind}, ${read.subjectUuid}, ${read.complaintUuid})`.pipe(Effect.asVoid))
