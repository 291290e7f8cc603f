import { Schema } from "effect"
import { CredentialFields, DateTime, Email, maxChars, strict } from "../../kernel/Common.js"
import { command, ExpectedRevision, listing, page } from "../courses/Model.js"
import { atoms } from "../Permissions.js"

/**
 * Wire shapes of the people around a course: staff
 * assignments, email and ownership invitations, candidates and course reviews. Inputs refuse
 * properties they do not declare. No shape carries an invitation token or any hash.
 */

export const AssignableRole = Schema.Literal("instructor", "reviewer", "assistant", "analyst")
export const StaffRoleSchema = Schema.Literal("owner", "instructor", "reviewer", "assistant", "analyst")
export const AtomSchema = Schema.Literal(...atoms)
export const Atoms = Schema.Array(AtomSchema).pipe(Schema.maxItems(atoms.length))

export const StaffScope = Schema.Struct({
  runUuid: Schema.optional(Schema.UUID),
  groupUuid: Schema.optional(Schema.UUID)
}).annotations({ identifier: "LearningStaffScope", ...strict })

export const StaffStatus = Schema.Literal("invited", "active", "revoked", "rejected")

/** A staff assignment; learners listing the staff see names and roles only (no grants, denies or scope). */
export const StaffAssignment = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  courseTitle: Schema.String,
  profileUuid: Schema.UUID,
  profileName: Schema.String,
  role: StaffRoleSchema,
  status: StaffStatus,
  scope: Schema.optional(StaffScope),
  grants: Schema.optional(Schema.Array(Schema.String)),
  denies: Schema.optional(Schema.Array(Schema.String)),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningStaffAssignment" })
export type StaffAssignment = typeof StaffAssignment.Type

export const InvitationStatus = Schema.Literal("pending", "accepted", "rejected", "revoked", "expired")

/** An email invitation: the address is shown masked, never the token. */
export const EmailInvitation = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  courseTitle: Schema.String,
  emailHint: Schema.String,
  role: AssignableRole,
  scope: StaffScope,
  message: Schema.String,
  status: InvitationStatus,
  acceptedProfileUuid: Schema.optional(Schema.UUID),
  assignmentUuid: Schema.optional(Schema.UUID),
  expiresAt: DateTime,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningEmailInvitation" })
export type EmailInvitation = typeof EmailInvitation.Type

export const OwnershipStatus = Schema.Literal("pending", "accepted", "rejected", "cancelled", "expired")
export const PreviousOwnerRole = Schema.Literal("instructor", "none")

export const OwnershipInvitation = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  courseTitle: Schema.String,
  fromProfileUuid: Schema.UUID,
  toProfileUuid: Schema.UUID,
  toProfileName: Schema.String,
  previousOwnerRole: PreviousOwnerRole,
  message: Schema.String,
  status: OwnershipStatus,
  expiresAt: DateTime,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningOwnershipInvitation" })
export type OwnershipInvitation = typeof OwnershipInvitation.Type

export const CandidateSource = Schema.Literal("owner_profiles", "past_staff", "alumni", "deal_partners", "instructors")

export const Candidate = Schema.Struct({
  profileUuid: Schema.UUID,
  name: Schema.String,
  source: CandidateSource
}).annotations({ identifier: "LearningCandidate" })

export const CourseReviewStatus = Schema.Literal("visible", "removed", "hidden")

/** A course review; `enrollmentUuid` only in its author's view. */
export const CourseReview = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  enrollmentUuid: Schema.optional(Schema.UUID),
  authorName: Schema.optional(Schema.String),
  rating: Schema.Int,
  text: Schema.String,
  status: CourseReviewStatus,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningCourseReview" })
export type CourseReview = typeof CourseReview.Type

export const RatingSummary = Schema.Struct({
  count: Schema.Int,
  /** Mean rating, two decimals; absent without reviews. */
  average: Schema.optional(Schema.Number),
  /** Reviews per rating, index 0 = 1 star … index 4 = 5 stars. */
  histogram: Schema.Array(Schema.Int)
}).annotations({ identifier: "LearningRatingSummary" })

export const CourseReviewPage = Schema.Struct({
  items: Schema.Array(CourseReview),
  nextCursor: Schema.optional(Schema.String),
  summary: RatingSummary
}).annotations({ identifier: "LearningCourseReviewPage" })

export const OwnCourseReview = Schema.Struct({
  review: Schema.optional(CourseReview),
  eligible: Schema.Boolean,
  reason: Schema.optional(Schema.String)
}).annotations({ identifier: "LearningOwnCourseReview" })

export const StaffAssignmentPage = page(StaffAssignment, "LearningStaffAssignmentPage")
export const EmailInvitationPage = page(EmailInvitation, "LearningEmailInvitationPage")
export const OwnershipInvitationPage = page(OwnershipInvitation, "LearningOwnershipInvitationPage")
export const CandidatePage = page(Candidate, "LearningCandidatePage")

// ---- inputs ----

const q = Schema.optional(Schema.String.pipe(maxChars(200)))

export const StaffListQuery = Schema.Struct({ role: Schema.optional(StaffRoleSchema), runUuid: Schema.optional(Schema.UUID), ...listing })
export const CandidateQuery = Schema.Struct({ q, source: Schema.optional(CandidateSource), ...listing })
export const OwnershipCandidateQuery = Schema.Struct({ q, ...listing })
export const EmailListQuery = Schema.Struct({ status: Schema.optional(InvitationStatus), ...listing })
export const OwnershipListQuery = Schema.Struct({ direction: Schema.optional(Schema.Literal("in", "out")), ...listing })
export const CourseReviewQuery = Schema.Struct({
  rating: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 5))),
  ...listing
})

export const StaffAssign = Schema.Struct({
  ...command,
  profileUuid: Schema.UUID,
  role: AssignableRole,
  scope: StaffScope,
  grants: Schema.optional(Atoms),
  denies: Schema.optional(Atoms)
}).annotations({ identifier: "LearningStaffAssign", ...strict })

export const StaffRevoke = Schema.Struct({
  ...command,
  assignmentUuid: Schema.UUID,
  expectedRevision: ExpectedRevision,
  reason: Schema.String.pipe(maxChars(1000))
}).annotations({ identifier: "LearningStaffRevoke", ...strict })

export const StaffPermissions = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  grants: Atoms,
  denies: Atoms,
  scope: Schema.optional(StaffScope)
}).annotations({ identifier: "LearningStaffPermissions", ...strict })

export const StaffAccept = Schema.Struct({ ...command, expectedRevision: ExpectedRevision })
  .annotations({ identifier: "LearningStaffAccept", ...strict })

export const EmailInvite = Schema.Struct({
  ...command,
  email: Email,
  role: AssignableRole,
  scope: StaffScope,
  message: Schema.optional(Schema.String.pipe(maxChars(2000)))
}).annotations({ identifier: "LearningEmailInvite", ...strict })

export const EmailAccept = Schema.Struct({
  ...command,
  profileUuid: Schema.optional(Schema.UUID),
  /** The token of the mailed link, when accepting from it: it must match. Without it the verified address alone decides. */
  token: Schema.optional(Schema.String.pipe(maxChars(200)))
}).annotations({ identifier: "LearningEmailAccept", ...strict, [CredentialFields]: ["token"] })

/** A command with nothing but its requestUuid (reject, revoke, cancel, accept of an ownership invitation). */
export const InvitationCommand = Schema.Struct(command).annotations({ identifier: "LearningInvitationCommand", ...strict })

export const OwnershipInvite = Schema.Struct({
  ...command,
  profileUuid: Schema.UUID,
  previousOwnerRole: PreviousOwnerRole,
  message: Schema.optional(Schema.String.pipe(maxChars(2000)))
}).annotations({ identifier: "LearningOwnershipInvite", ...strict })

export const CourseReviewSave = Schema.Struct({
  ...command,
  expectedRevision: Schema.optional(ExpectedRevision),
  rating: Schema.Int.pipe(Schema.between(1, 5)),
  text: Schema.String.pipe(maxChars(5000))
}).annotations({ identifier: "LearningCourseReviewSave", ...strict })

export const CourseReviewRemove = Schema.Struct({ ...command, expectedRevision: ExpectedRevision })
  .annotations({ identifier: "LearningCourseReviewRemove", ...strict })
