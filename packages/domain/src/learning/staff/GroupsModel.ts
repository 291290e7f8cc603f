import { Schema } from "effect"
import { DateTime, strict } from "../../kernel/Common.js"
import { StaffRoleSchema } from "./StaffModel.js"
import { command, ExpectedRevision, listing, page, text } from "../courses/Model.js"

/**
 * Wire shapes of learning groups: cohorts, teams and sections
 * of a run. Inputs refuse properties they do not declare.
 */

export const GroupKind = Schema.Literal("cohort", "team", "section")
/** Moodle's group modes: `separate` groups see only themselves, `visible` ones are listed to every learner of the run. */
export const GroupVisibility = Schema.Literal("separate", "visible")
export const GroupAssignment = Schema.Literal("manual", "random", "self")
export const GroupStatus = Schema.Literal("active", "archived")
export const GroupName = text(1, 120)
export const GroupCapacity = Schema.Int.pipe(Schema.between(1, 10_000))

export const GroupMember = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  profileUuid: Schema.UUID,
  name: Schema.String,
  addedAt: DateTime
}).annotations({ identifier: "LearningGroupMember" })

export const GroupStaffRef = Schema.Struct({
  assignmentUuid: Schema.UUID,
  profileUuid: Schema.UUID,
  profileName: Schema.String,
  role: StaffRoleSchema,
  status: Schema.Literal("invited", "active")
}).annotations({ identifier: "LearningGroupStaffRef" })

/**
 * A group. `members` comes with one group's answers to its staff (lists carry `memberCount` only);
 * a learner sees no members, and `joined` tells whether their enrollment is in it.
 */
export const Group = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  runUuid: Schema.UUID,
  name: Schema.String,
  kind: GroupKind,
  visibility: GroupVisibility,
  assignment: GroupAssignment,
  capacity: Schema.optional(Schema.Int),
  status: GroupStatus,
  memberCount: Schema.Int,
  members: Schema.optional(Schema.Array(GroupMember)),
  staff: Schema.optional(Schema.Array(GroupStaffRef)),
  joined: Schema.optional(Schema.Boolean),
  createdAt: DateTime,
  updatedAt: DateTime,
  archivedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningGroup" })
export type Group = typeof Group.Type
export const GroupPage = page(Group, "LearningGroupPage")

/** A group as an enrollment names it. */
export const EnrollmentGroup = Schema.Struct({ uuid: Schema.UUID, name: Schema.String, kind: GroupKind })
  .annotations({ identifier: "LearningEnrollmentGroup" })

// ---- inputs ----

export const GroupCreate = Schema.Struct({
  ...command,
  name: GroupName,
  kind: GroupKind,
  visibility: GroupVisibility,
  assignment: GroupAssignment,
  capacity: Schema.optional(GroupCapacity)
}).annotations({ identifier: "LearningGroupCreate", ...strict })

export const GroupListQuery = Schema.Struct({ runUuid: Schema.optional(Schema.UUID), kind: Schema.optional(GroupKind), ...listing })

const Enrollments = Schema.Array(Schema.UUID).pipe(Schema.maxItems(500))

export const GroupMembersChange = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  add: Enrollments,
  remove: Enrollments,
  autoFill: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningGroupMembersChange", ...strict })

export const GroupStaffChange = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  add: Schema.Array(Schema.UUID).pipe(Schema.maxItems(50)),
  remove: Schema.Array(Schema.UUID).pipe(Schema.maxItems(50))
}).annotations({ identifier: "LearningGroupStaffChange", ...strict })

export const GroupUpdate = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  name: Schema.optional(GroupName),
  /** null removes the capacity. */
  capacity: Schema.optional(Schema.NullOr(GroupCapacity)),
  visibility: Schema.optional(GroupVisibility),
  archived: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningGroupUpdate", ...strict })
export type GroupKindT = typeof GroupKind.Type
