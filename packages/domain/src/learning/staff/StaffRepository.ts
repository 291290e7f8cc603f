import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import type { StaffRole } from "../Permissions.js"
import { StaffRoleSchema, StaffStatus } from "./StaffModel.js"

/**
 * `learning_staff`: the one module that writes it. The rules (who may assign, which transition is
 * allowed, the audit rows) stay in `Staff.ts`, `Ownership.ts` and `Groups.ts`; they call these.
 */

/** An assignment as the staff operations read it, with its course's title and its profile's name. */
export const AssignmentRow = Schema.Struct({
  uuid: Schema.String,
  revision: Schema.Number,
  course_uuid: Schema.String,
  course_title: Schema.String,
  profile_uuid: Schema.String,
  profile_name: Schema.String,
  role: StaffRoleSchema,
  status: StaffStatus,
  run_uuid: Schema.NullOr(Schema.String),
  group_uuid: Schema.NullOr(Schema.String),
  grants: Schema.Array(Schema.String),
  denies: Schema.Array(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp,
  /** The keyset position of a listing (`created_at` as text, no precision lost). */
  position: Schema.String
})
export type AssignmentRow = typeof AssignmentRow.Type

/** `SELECT … FROM learning_staff s JOIN …`: the caller adds its WHERE and ORDER. */
export const assignmentSelect = `SELECT ${
  selectList(AssignmentRow, "s", { course_title: "c.title", profile_name: "p.name", position: "s.created_at::text" })
}
  FROM learning_staff s JOIN learning_courses c ON c.uuid = s.course_uuid JOIN profiles p ON p.uuid = s.profile_uuid`

export const decodeAssignments = rowsDecoder(AssignmentRow)

/** The assignment, or undefined. */
export const findAssignment = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(Effect.flatMap(sql`${sql.literal(assignmentSelect)} WHERE s.uuid = ${uuid}`, decodeAssignments), (rows) => rows[0]))

/** Text arrays go in as one JSON parameter (the same on node-postgres and PGlite). */
const textArray = (sql: SqlClient.SqlClient, values: ReadonlyArray<string>) =>
  sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`

export const insertAssignment = (row: {
  readonly uuid: string
  readonly courseUuid: string
  readonly profileUuid: string
  readonly role: StaffRole
  readonly runUuid: string | null
  readonly groupUuid: string | null
  readonly grants: ReadonlyArray<string>
  readonly denies: ReadonlyArray<string>
  readonly status: "invited" | "active"
  readonly invitedBy: string | null
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_staff (uuid, course_uuid, profile_uuid, role, run_uuid, group_uuid, grants, denies, status, invited_by)
      VALUES (${row.uuid}, ${row.courseUuid}, ${row.profileUuid}, ${row.role}, ${row.runUuid},
        ${row.groupUuid}, ${textArray(sql, row.grants)},
        ${textArray(sql, row.denies)}, ${row.status}, ${row.invitedBy})`)

/** A move along the assignment's state machine (`Staff.ts` decides it), with the reason it ended. */
export const setAssignmentStatus = (uuid: string, to: string, reason: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_staff SET status = ${to}, ended_reason = ${reason}, revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid}`)

/** learning.staff.permissions: grants, denies and the scope together. */
export const setAssignmentPermissions = (
  uuid: string,
  change: { readonly grants: ReadonlyArray<string>; readonly denies: ReadonlyArray<string>; readonly runUuid: string | null; readonly groupUuid: string | null }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_staff SET grants = ${textArray(sql, change.grants)},
        denies = ${textArray(sql, change.denies)},
        run_uuid = ${change.runUuid}, group_uuid = ${change.groupUuid}, revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid}`)

/** learning.groups.staff: the assignment's scope becomes the group (or, detached, the group's run). */
export const setAssignmentScope = (uuid: string, runUuid: string, groupUuid: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_staff SET run_uuid = ${runUuid}, group_uuid = ${groupUuid}, revision = revision + 1, updated_at = now()
        WHERE uuid = ${uuid}`)

/** Ownership transfer: the course's active owner becomes an instructor with no grants or denies of their own. */
export const demoteOwner = (courseUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_staff SET role = 'instructor', grants = '{}', denies = '{}', revision = revision + 1, updated_at = now()
        WHERE course_uuid = ${courseUuid} AND role = 'owner' AND status = 'active'`)

/** Ownership transfer: the course's active owner leaves. */
export const revokeOwner = (courseUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_staff SET status = 'revoked', ended_reason = 'ownership transferred', revision = revision + 1, updated_at = now()
        WHERE course_uuid = ${courseUuid} AND role = 'owner' AND status = 'active'`)

/** Ownership transfer: the new owner's other assignments on the course end (an invitation is declined, an active one revoked). */
export const endAssignmentsOfNewOwner = (courseUuid: string, profileUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_staff SET status = CASE WHEN status = 'invited' THEN 'rejected' ELSE 'revoked' END,
        ended_reason = 'became the owner', revision = revision + 1, updated_at = now()
      WHERE course_uuid = ${courseUuid} AND profile_uuid = ${profileUuid} AND status IN ('invited', 'active')`)
