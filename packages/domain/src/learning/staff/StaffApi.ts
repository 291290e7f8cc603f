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
import { InvalidState, NotFound, RateLimited, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { anyone, authenticated, recordErrors } from "../../kernel/Operation.js"

/**
 * The people around a course: staff assignments,
 * email invitations, ownership transfer and course reviews, under /api/v1/learning with the spec's
 * ids, paths, scopes and approval flags. Staff and ownership changes are the owner's alone.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const InvitationPath = Schema.Struct({ invitation: Schema.UUID })
const EnrollmentPath = Schema.Struct({ enrollment: Schema.UUID })

const changeErrors = Schema.Union(wire(RevisionConflict), wire(RequestConflict))

const read = ["learning:read"]
const staff = ["learning:staff"]
const study = ["learning:study"]

export const LearningStaffApi = HttpApiGroup.make("learning_staff", { topLevel: true })
  .add(
    authenticated("GET", "learning.staff.list", `${base}/courses/:course/staff`, {
      scopes: read,
      summary: "The course's staff: staff see invited and active assignments in full, learners the active ones' names and roles"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(StaffListQuery).addSuccess(StaffAssignmentPage)
  )
  .add(
    authenticated("POST", "learning.staff.assign", `${base}/courses/:course/staff`, {
      scopes: staff,
      approval: true,
      summary: "Invite a profile to a role and scope with grants and denies (owner); it becomes staff when it accepts"
    }, [recordErrors, wire(InvalidState), wire(ConflictOfInterest), wire(OwnerRequired), wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(StaffAssign)
      .addSuccess(StaffAssignment)
  )
  .add(
    authenticated("GET", "learning.staff.candidates", `${base}/courses/:course/staff/candidates`, {
      scopes: read,
      summary: "Suggestions to invite (owner): the owner's other profiles, past staff, alumni with completion, deal partners"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(CandidateQuery).addSuccess(CandidatePage)
  )
  .add(
    authenticated("POST", "learning.staff.revoke", `${base}/courses/:course/staff/revoke`, {
      scopes: staff,
      approval: true,
      summary: "Revoke an assignment (owner) or leave / decline it (its assignee); its review claims return to the pool"
    }, [recordErrors, changeErrors, wire(InvalidState), wire(OwnerRequired)])
      .setPath(CoursePath)
      .setPayload(StaffRevoke)
      .addSuccess(StaffAssignment)
  )
  .add(
    authenticated("POST", "learning.staff.permissions", `${base}/courses/:course/staff/:assignment/permissions`, {
      scopes: staff,
      approval: true,
      summary: "Set an assignment's grants, denies and scope (owner); staff_manage and ownership are never granted"
    }, [recordErrors, changeErrors, wire(InvalidState), wire(OwnerRequired), wire(ConflictOfInterest)])
      .setPath(Schema.Struct({ course: Schema.UUID, assignment: Schema.UUID }))
      .setPayload(StaffPermissions)
      .addSuccess(StaffAssignment)
  )
  .add(
    authenticated("POST", "learning.staff.accept", `${base}/staff/:assignment/accept`, { scopes: staff, approval: true, summary: "The invitee accepts a staff role" }, [wire(NotFound), changeErrors, wire(InvalidState), wire(ConflictOfInterest), wire(OwnerRequired)])
      .setPath(Schema.Struct({ assignment: Schema.UUID }))
      .setPayload(StaffAccept)
      .addSuccess(StaffAssignment)
  )
  .add(
    authenticated("GET", "learning.staff.invitations", `${base}/staff/invitations`, { scopes: read, summary: "The caller's pending staff invitations, newest first" })
      .setUrlParams(PageQuery)
      .addSuccess(StaffAssignmentPage)
  )
  .annotate(OpenApi.Description, "Learning: course staff, their roles, scopes and permissions")

export const LearningEmailInvitationsApi = HttpApiGroup.make("learning_email_invitations", { topLevel: true })
  .add(
    authenticated("GET", "learning.staff.email_invitations", `${base}/staff/email-invitations`, {
      scopes: read,
      summary: "Staff invitations sent to the caller's verified email address, newest first"
    }).setUrlParams(PageQuery).addSuccess(EmailInvitationPage)
  )
  .add(
    authenticated("GET", "learning.staff.email_get", `${base}/staff/email-invitations/:invitation`, {
      scopes: read,
      summary: "One email invitation (its addressee or the course's owner); the address shows masked"
    }, [wire(NotFound)]).setPath(InvitationPath).addSuccess(EmailInvitation)
  )
  .add(
    authenticated("POST", "learning.staff.email_accept", `${base}/staff/email-invitations/:invitation/accept`, {
      scopes: staff,
      approval: true,
      summary: "Accept for one of the caller's profiles: the signed-in email must be the invited one; usable once"
    }, [recordErrors, wire(InvalidState), wire(ConflictOfInterest), wire(OwnerRequired), wire(RequestConflict)])
      .setPath(InvitationPath)
      .setPayload(EmailAccept)
      .addSuccess(StaffAssignment)
  )
  .add(
    authenticated("POST", "learning.staff.email_reject", `${base}/staff/email-invitations/:invitation/reject`, { scopes: staff, summary: "The addressee declines" }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(EmailInvitation)
  )
  .add(
    authenticated("POST", "learning.staff.email_revoke", `${base}/staff/email-invitations/:invitation/revoke`, { scopes: staff, summary: "The course's owner withdraws a pending invitation" }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(EmailInvitation)
  )
  .add(
    authenticated("POST", "learning.staff.email_invite", `${base}/courses/:course/staff/email-invitations`, {
      scopes: staff,
      approval: true,
      summary: "Invite by email (owner): a one-time link is mailed; only keyed hashes of address and token are kept; 14 days; 50 a day per course"
    }, [recordErrors, wire(RateLimited), wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(EmailInvite)
      .addSuccess(EmailInvitation)
  )
  .add(
    authenticated("GET", "learning.staff.email_list", `${base}/courses/:course/staff/email-invitations`, {
      scopes: read,
      summary: "Email invitations sent for the course (owner), newest first; expiry is computed on read"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(EmailListQuery).addSuccess(EmailInvitationPage)
  )
  .annotate(OpenApi.Description, "Learning: staff invitations by email")

export const LearningOwnershipApi = HttpApiGroup.make("learning_ownership", { topLevel: true })
  .add(
    authenticated("GET", "learning.ownership.invitations", `${base}/ownership/invitations`, {
      scopes: read,
      summary: "Ownership invitations to (in) or from (out) the caller, newest first"
    }).setUrlParams(OwnershipListQuery).addSuccess(OwnershipInvitationPage)
  )
  .add(
    authenticated("POST", "learning.ownership.accept", `${base}/ownership/:invitation/accept`, {
      scopes: staff,
      approval: true,
      summary: "Become the owner in one transaction; the old owner becomes an instructor or leaves"
    }, [wire(NotFound), wire(InvalidState), wire(ConflictOfInterest), wire(OwnerRequired), wire(RequestConflict)])
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(OwnershipInvitation)
  )
  .add(
    authenticated("POST", "learning.ownership.cancel", `${base}/ownership/:invitation/cancel`, { scopes: staff, summary: "The owner withdraws a pending ownership invitation" }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(OwnershipInvitation)
  )
  .add(
    authenticated("POST", "learning.ownership.reject", `${base}/ownership/:invitation/reject`, { scopes: staff, summary: "The invitee declines ownership" }, [wire(NotFound), wire(InvalidState), wire(RequestConflict)])
      .setPath(InvitationPath)
      .setPayload(InvitationCommand)
      .addSuccess(OwnershipInvitation)
  )
  .add(
    authenticated("GET", "learning.ownership.candidates", `${base}/courses/:course/ownership/candidates`, {
      scopes: read,
      summary: "Who may take ownership (owner): the owner's other profiles and the course's active instructors"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(OwnershipCandidateQuery).addSuccess(CandidatePage)
  )
  .add(
    authenticated("POST", "learning.ownership.invite", `${base}/courses/:course/ownership/invite`, {
      scopes: staff,
      approval: true,
      summary: "Invite a profile to take ownership (owner); one pending invitation per course; 14 days"
    }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(OwnershipInvite)
      .addSuccess(OwnershipInvitation)
  )
  .annotate(OpenApi.Description, "Learning: transferring a course's ownership")

export const LearningCourseReviewsApi = HttpApiGroup.make("learning_course_reviews", { topLevel: true })
  .add(
    anyone("GET", "learning.course_reviews.list", `${base}/courses/:course/course-reviews`, {
      summary: "Public reviews of a course, newest first, with the rating summary of all of them"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(CourseReviewQuery).addSuccess(CourseReviewPage)
  )
  .add(
    authenticated("GET", "learning.course_reviews.own", `${base}/enrollments/:enrollment/course-review`, {
      scopes: read,
      summary: "The learner's review of the course and whether they may write one"
    }, [wire(NotFound)]).setPath(EnrollmentPath).addSuccess(OwnCourseReview)
  )
  .add(
    authenticated("POST", "learning.course_reviews.save", `${base}/enrollments/:enrollment/course-review`, {
      scopes: study,
      approval: true,
      summary: "Create or replace the learner's review (one per learner per course): rating 1–5, text up to 5000 characters"
    }, [wire(NotFound), changeErrors, wire(InvalidState), wire(NotEligible)])
      .setPath(EnrollmentPath)
      .setPayload(CourseReviewSave)
      .addSuccess(CourseReview)
  )
  .add(
    authenticated("POST", "learning.course_reviews.remove", `${base}/enrollments/:enrollment/course-review/remove`, {
      scopes: study,
      approval: true,
      summary: "The author removes their review"
    }, [wire(NotFound), changeErrors, wire(InvalidState)])
      .setPath(EnrollmentPath)
      .setPayload(CourseReviewRemove)
      .addSuccess(CourseReview)
  )
  .annotate(OpenApi.Description, "Learning: course reviews by learners")
