import { Schema } from "effect"
import { CourseStatus, listing, page } from "../courses/Model.js"
import { AtomSchema, StaffRoleSchema, StaffScope } from "../staff/StaffModel.js"

/**
 * Wire shapes of the teaching dashboards: per
 * course, the caller's staff assignments and the to-do counts of the work they may act on.
 * A count is present only when one of the caller's assignments holds the permission the work
 * needs (absent: not theirs to do; 0: nothing waiting), and counts only records in the scope of
 * those assignments (a run-scoped reviewer: submissions of their runs).
 */

/** One active assignment of the caller on the course. */
export const TeachingAssignment = Schema.Struct({
  uuid: Schema.UUID,
  role: StaffRoleSchema,
  /** Empty: the whole course. */
  scope: StaffScope
}).annotations({ identifier: "LearningTeachingAssignment" })

export const TeachingCounts = Schema.Struct({
  /** Review assignments waiting in the pool, unclaimed (needs `review`). */
  reviewsToClaim: Schema.optional(Schema.Int),
  /** Review assignments the caller has claimed and not finished (needs `review`). */
  reviewsClaimed: Schema.optional(Schema.Int),
  /** Appeals open or escalated, awaiting a decision (needs `appeals_resolve`). */
  appealsOpen: Schema.optional(Schema.Int),
  /** Threads open with the learner's word last: the inbox's `unanswered` (needs `community_staff`). */
  threadsUnanswered: Schema.optional(Schema.Int),
  /** Extension requests pending a decision (needs `dates_grant`). */
  extensionsPending: Schema.optional(Schema.Int),
  /** Incidents not resolved (needs `runs_manage`). */
  incidentsOpen: Schema.optional(Schema.Int),
  /** Checkers suspended (needs `checkers_manage`). */
  checkersSuspended: Schema.optional(Schema.Int),
  /** Checkers whose recent gradings fail (needs `checkers_manage`). */
  checkersFailing: Schema.optional(Schema.Int)
}).annotations({ identifier: "LearningTeachingCounts" })
export type TeachingCounts = typeof TeachingCounts.Type

export const TeachingCourse = Schema.Struct({
  courseUuid: Schema.UUID,
  courseTitle: Schema.String,
  courseStatus: CourseStatus,
  /** The caller's roles on the course, highest first. */
  roles: Schema.Array(StaffRoleSchema),
  assignments: Schema.Array(TeachingAssignment),
  /**
   * The rights the caller's assignments hold somewhere on the course (role defaults, plus grants,
   * minus denies), in the order of `Permissions.ts`' atoms: what a client may offer; each operation
   * still checks its own scope (a run-scoped right is listed, and refused outside its run).
   */
  rights: Schema.Array(AtomSchema),
  counts: TeachingCounts,
  /** The sum of the counts present. */
  todo: Schema.Int
}).annotations({ identifier: "LearningTeachingCourse" })
export type TeachingCourse = typeof TeachingCourse.Type

export const TeachingCoursePage = page(TeachingCourse, "LearningTeachingCoursePage")

export const TeachingListQuery = Schema.Struct({ role: Schema.optional(StaffRoleSchema), ...listing })
