import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ConflictOfInterest, NotEligible, OwnerRequired } from "../LearningErrors.js"
import {
  CandidatePage,
  CandidateQuery,
  CourseReview,
  CourseReviewPage,
  CourseReviewQuery,
  CourseReviewRemove,
  CourseReviewSave,
  EmailAccept,
  EmailInvitation,
  EmailInvitationPage,
  EmailInvite,
  EmailListQuery,
  InvitationCommand,
  OwnCourseReview,
  OwnershipCandidateQuery,
  OwnershipInvitation,
  OwnershipInvitationPage,
  OwnershipInvite,
  OwnershipListQuery,
  StaffAccept,
  StaffAssign,
  StaffAssignment,
  StaffAssignmentPage,
  StaffListQuery,
  StaffPermissions,
  StaffRevoke
} from "./StaffModel.js"
import { PageQuery } from "../courses/Model.js"
import { Forbidden, InvalidState, NotFound, RateLimited, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { Authentication } from "../../kernel/Authentication.js"
import { operation } from "../../kernel/Operation.js"

/**
 * The people around a course (LEARNING §4 "L4", issue 19 points 1–3 and 6): staff assignments,
 * email invitations, ownership transfer and course reviews, under /api/v1/learning with the spec's
 * ids, paths, scopes and approval flags. Staff and ownership changes are the owner's alone.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const InvitationPath = Schema.Struct({ invitation: Schema.UUID })
const EnrollmentPath = Schema.Struct({ enrollment: Schema.UUID })

const recordErrors = Schema.Union(wire(NotFound), wire(Forbidden))
const changeErrors = Schema.Union(wire(RevisionConflict), wire(RequestConflict))

const read = ["learning:read"]
const staff = ["learning:staff"]
const study = ["learning:study"]

export const LearningStaffApi = HttpApiGroup.make("learning_staff", { topLevel: true })
  .add(
    operation("GET", "learning.staff.list", `${base}/courses/:course/staff`, {
      scopes: read,
      summary: "The course's staff: staff see invited and active assignments in full, learners the active ones' names and roles"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(StaffListQuery).addSuccess(StaffAssignmentPage).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.staff.assign", `${base}/courses/:course/staff`, {
      scopes: staff,
      approval: true,
      summary: "Invite a profile to a role and scope with grants and denies (owner); it becomes staff when it accepts"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(StaffAssign)
      .addSuccess(StaffAssignment)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(ConflictOfInterest))
      .addError(wire(OwnerRequired))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.staff.candidates", `${base}/courses/:course/staff/candidates`, {
      scopes: read,
      summary: "Suggestions to invite (owner): the owner's other profiles, past staff, alumni with completion, deal partners"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(CandidateQuery).addSuccess(CandidatePage).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.staff.revoke", `${base}/courses/:course/staff/revoke`, {
      scopes: staff,
      approval: true,
      summary: "Revoke an assignment (owner) or leave / decline it (its assignee); its review claims return to the pool"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(StaffRevoke)
      .addSuccess(StaffAssignment)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
      .addError(wire(OwnerRequired))
  )
  .add(
    operation("POST", "learning.staff.permissions", `${base}/courses/:course/staff/:assignment/permissions`, {
      scopes: staff,
      approval: true,
      summary: "Set an assignment's grants, denies and scope (owner); staff_manage and ownership are never granted"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ course: Schema.UUID, assignment: Schema.UUID }))
      .setPayload(StaffPermissions)
      .addSuccess(StaffAssignment)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
      .addError(wire(OwnerRequired))
      .addError(wire(ConflictOfInterest))
  )
  .add(
    operation("POST", "learning.staff.accept", `${base}/staff/:assignment/accept`, { scopes: staff, approval: true, summary: "The invitee accepts a staff role" })
      .middleware(Authentication)
      .setPath(Schema.Struct({ assignment: Schema.UUID }))
      .setPayload(StaffAccept)
      .addSuccess(StaffAssignment)
      .addError(wire(NotFound))
      .addError(changeErrors)
      .addError(wire(InvalidState))
      .addError(wire(ConflictOfInterest))
      .addError(wire(OwnerRequired))
  )
  .add(
    operation("GET", "learning.staff.invitations", `${base}/staff/invitations`, { scopes: read, summary: "The caller's pending staff invitations, newest first" })
      .middleware(Authentication)
      .setUrlParams(PageQuery)
      .addSuccess(StaffAssignmentPage)
  )
  .annotate(OpenApi.Description, "Learning: course staff, their roles, scopes and permissions")

export const LearningEmailInvitationsApi = HttpApiGroup.make("learning_email_invitations", { topLevel: true })
  .add(
    operation("GET", "learning.staff.email_invitations", `${base}/staff/email-invitations`, {
      scopes: read,
      summary: "Staff invitations sent to the caller's verified email address, newest first"
    }).middleware(Authentication).setUrlParams(PageQuery).addSuccess(EmailInvitationPage)
  )
  .add(
    operation("GET", "learning.staff.email_get", `${base}/staff/email-invitations/:invitation`, {
      scopes: read,
      summary: "One email invitation (its addressee or the course's owner); the address shows masked"
    }).middleware(Authentication).setPath(InvitationPath).addSuccess(EmailInvitation).addError(wire(NotFound))
  )
  .add(
    operation("POST", "learning.staff.email_accept", `${base}/staff/email-invitations/:invitation/accept`, {
      scopes: staff,
      approval: true,
      summary: "Accept for one of the caller's profiles: the signed-in email must be the invited one; usable once"
    })
      .middleware(Authentication)
      .setPath(InvitationPath)
      .setPayload(EmailAccept)
      .addSuccess(StaffAssignment)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(ConflictOfInterest))
      .addError(wire(OwnerRequired))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.staff.email_reject", `${base}/staff/email-invitations/:invitation/reject`, { scopes: staff, summary: "The addressee declines" })
      .middleware(Authentication)
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(EmailInvitation)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.staff.email_revoke", `${base}/staff/email-invitations/:invitation/revoke`, { scopes: staff, summary: "The course's owner withdraws a pending invitation" })
      .middleware(Authentication)
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(EmailInvitation)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.staff.email_invite", `${base}/courses/:course/staff/email-invitations`, {
      scopes: staff,
      approval: true,
      summary: "Invite by email (owner): a one-time link is mailed; only keyed hashes of address and token are kept; 14 days; 50 a day per course"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(EmailInvite)
      .addSuccess(EmailInvitation)
      .addError(recordErrors)
      .addError(wire(RateLimited))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.staff.email_list", `${base}/courses/:course/staff/email-invitations`, {
      scopes: read,
      summary: "Email invitations sent for the course (owner), newest first; expiry is computed on read"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(EmailListQuery).addSuccess(EmailInvitationPage).addError(recordErrors)
  )
  .annotate(OpenApi.Description, "Learning: staff invitations by email")

export const LearningOwnershipApi = HttpApiGroup.make("learning_ownership", { topLevel: true })
  .add(
    operation("GET", "learning.ownership.invitations", `${base}/ownership/invitations`, {
      scopes: read,
      summary: "Ownership invitations to (in) or from (out) the caller, newest first"
    }).middleware(Authentication).setUrlParams(OwnershipListQuery).addSuccess(OwnershipInvitationPage)
  )
  .add(
    operation("POST", "learning.ownership.accept", `${base}/ownership/:invitation/accept`, {
      scopes: staff,
      approval: true,
      summary: "Become the owner in one transaction; the old owner becomes an instructor or leaves"
    })
      .middleware(Authentication)
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(OwnershipInvitation)
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(ConflictOfInterest))
      .addError(wire(OwnerRequired))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.ownership.cancel", `${base}/ownership/:invitation/cancel`, { scopes: staff, summary: "The owner withdraws a pending ownership invitation" })
      .middleware(Authentication)
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(OwnershipInvitation)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.ownership.reject", `${base}/ownership/:invitation/reject`, { scopes: staff, summary: "The invitee declines ownership" })
      .middleware(Authentication)
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(OwnershipInvitation)
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.ownership.candidates", `${base}/courses/:course/ownership/candidates`, {
      scopes: read,
      summary: "Who may take ownership (owner): the owner's other profiles and the course's active instructors"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(OwnershipCandidateQuery).addSuccess(CandidatePage).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.ownership.invite", `${base}/courses/:course/ownership/invite`, {
      scopes: staff,
      approval: true,
      summary: "Invite a profile to take ownership (owner); one pending invitation per course; 14 days"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(OwnershipInvite)
      .addSuccess(OwnershipInvitation)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Learning: transferring a course's ownership")

export const LearningCourseReviewsApi = HttpApiGroup.make("learning_course_reviews", { topLevel: true })
  .add(
    operation("GET", "learning.course_reviews.list", `${base}/courses/:course/course-reviews`, {
      summary: "Public reviews of a course, newest first, with the rating summary of all of them"
    }).setPath(CoursePath).setUrlParams(CourseReviewQuery).addSuccess(CourseReviewPage).addError(recordErrors)
  )
  .add(
    operation("GET", "learning.course_reviews.own", `${base}/enrollments/:enrollment/course-review`, {
      scopes: read,
      summary: "The learner's review of the course and whether they may write one"
    }).middleware(Authentication).setPath(EnrollmentPath).addSuccess(OwnCourseReview).addError(wire(NotFound))
  )
  .add(
    operation("POST", "learning.course_reviews.save", `${base}/enrollments/:enrollment/course-review`, {
      scopes: study,
      approval: true,
      summary: "Create or replace the learner's review (one per learner per course): rating 1–5, text up to 5000 characters"
    })
      .middleware(Authentication)
      .setPath(EnrollmentPath)
      .setPayload(CourseReviewSave)
      .addSuccess(CourseReview)
      .addError(wire(NotFound))
      .addError(changeErrors)
      .addError(wire(InvalidState))
      .addError(wire(NotEligible))
  )
  .add(
    operation("POST", "learning.course_reviews.remove", `${base}/enrollments/:enrollment/course-review/remove`, {
      scopes: study,
      approval: true,
      summary: "The author removes their review"
    })
      .middleware(Authentication)
      .setPath(EnrollmentPath)
      .setPayload(CourseReviewRemove)
      .addSuccess(CourseReview)
      .addError(wire(NotFound))
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .annotate(OpenApi.Description, "Learning: course reviews by learners")
