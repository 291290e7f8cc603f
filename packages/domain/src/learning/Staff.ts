import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { appendAudit } from "./Audit.js"
import { OwnerRequired } from "./LearningErrors.js"
import { type Atom, ownerOnlyAtoms, type StaffRole } from "./Permissions.js"

/**
 * Staff assignments (LEARNING §2.1 #8, §3): the domain service that creates them. The staff
 * operations arrive with issue 4 of learning; until then course creation (the owner) and tests use
 * this. Every assignment writes its audit row in the same transaction.
 */
export interface NewAssignment {
  readonly courseUuid: string
  readonly profileUuid: string
  readonly role: StaffRole
  readonly runUuid?: string | undefined
  readonly groupUuid?: string | undefined
  readonly grants?: ReadonlyArray<Atom> | undefined
  readonly denies?: ReadonlyArray<Atom> | undefined
  /** Who assigns (null: the system); recorded in the audit log. */
  readonly byProfileUuid: string | null
  readonly requestUuid?: string | undefined
}

/** Creates an active assignment; a second owner answers `owner_required` (exactly one owner per course). */
export const assignStaff = (assignment: NewAssignment): Effect.Effect<string, SqlError | OwnerRequired, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (assignment.role === "owner") {
      const owners = yield* sql`SELECT 1 FROM learning_staff WHERE course_uuid = ${assignment.courseUuid} AND role = 'owner' AND status = 'active'`
      if (owners.length > 0) return yield* new OwnerRequired({ message: "The course already has its one owner" })
    }
    const uuid = crypto.randomUUID()
    const grants = (assignment.grants ?? []).filter((atom) => !ownerOnlyAtoms.includes(atom))
    const denies = (assignment.denies ?? []).filter((atom) => !ownerOnlyAtoms.includes(atom))
    yield* sql`INSERT INTO learning_staff (uuid, course_uuid, profile_uuid, role, run_uuid, group_uuid, grants, denies, status)
      VALUES (${uuid}, ${assignment.courseUuid}, ${assignment.profileUuid}, ${assignment.role}, ${assignment.runUuid ?? null},
        ${assignment.groupUuid ?? null}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(grants)}::jsonb)),
        ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(denies)}::jsonb)), 'active')`
    yield* appendAudit({
      courseUuid: assignment.courseUuid,
      actorProfileUuid: assignment.byProfileUuid,
      action: "staff.assign",
      subjectKind: "staff_assignment",
      subjectUuid: uuid,
      after: {
        profileUuid: assignment.profileUuid,
        role: assignment.role,
        ...(assignment.runUuid !== undefined ? { runUuid: assignment.runUuid } : {}),
        ...(assignment.groupUuid !== undefined ? { groupUuid: assignment.groupUuid } : {}),
        grants,
        denies
      },
      requestUuid: assignment.requestUuid
    })
    return uuid
  })
