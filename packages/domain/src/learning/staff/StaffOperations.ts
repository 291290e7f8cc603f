import { LearningCourseReviewsApi, LearningEmailInvitationsApi, LearningOwnershipApi, LearningStaffApi } from "./StaffApi.js"
import { implement } from "../../operations/Implementation.js"
import { LearningCommunityOperations } from "../community/Community.js"
import { LearningGroupsOperations } from "./Groups.js"
import { listCourseReviews, ownCourseReview, removeCourseReview, saveCourseReview } from "../community/CourseReviews.js"
import {
  acceptEmailInvitation,
  getEmailInvitation,
  inviteByEmail,
  listCourseEmailInvitations,
  listMyEmailInvitations,
  rejectEmailInvitation,
  revokeEmailInvitation
} from "./EmailInvitations.js"
import { acceptOwnership, cancelOwnership, inviteOwner, listOwnershipInvitations, ownershipCandidates, rejectOwnership } from "./Ownership.js"
import { acceptStaff, inviteStaff, listStaff, listStaffInvitations, revokeStaff, setStaffPermissions, staffCandidates } from "./Staff.js"
import { LearningTeachingOperations } from "../teaching/Teaching.js"

/** The learning L4 people operations over their services. */
export const LearningStaffOperations = implement(LearningStaffApi)({
  "learning.staff.list": ({ path, urlParams }, actor) => listStaff(actor, path.course, urlParams),
  "learning.staff.assign": ({ path, payload }, actor) => inviteStaff(actor, path.course, payload),
  "learning.staff.candidates": ({ path, urlParams }, actor) => staffCandidates(actor, path.course, urlParams),
  "learning.staff.revoke": ({ path, payload }, actor) => revokeStaff(actor, path.course, payload),
  "learning.staff.permissions": ({ path, payload }, actor) => setStaffPermissions(actor, path.course, path.assignment, payload),
  "learning.staff.accept": ({ path, payload }, actor) => acceptStaff(actor, path.assignment, payload),
  "learning.staff.invitations": ({ urlParams }, actor) => listStaffInvitations(actor, urlParams)
})

export const LearningEmailInvitationsOperations = implement(LearningEmailInvitationsApi)({
  "learning.staff.email_invitations": ({ urlParams }, actor) => listMyEmailInvitations(actor, urlParams),
  "learning.staff.email_get": ({ path }, actor) => getEmailInvitation(actor, path.invitation),
  "learning.staff.email_accept": ({ path, payload }, actor) => acceptEmailInvitation(actor, path.invitation, payload),
  "learning.staff.email_reject": ({ path, payload }, actor) => rejectEmailInvitation(actor, path.invitation, payload),
  "learning.staff.email_revoke": ({ path, payload }, actor) => revokeEmailInvitation(actor, path.invitation, payload),
  "learning.staff.email_invite": ({ path, payload }, actor, call) => inviteByEmail(actor, path.course, payload, call),
  "learning.staff.email_list": ({ path, urlParams }, actor) => listCourseEmailInvitations(actor, path.course, urlParams)
})

export const LearningOwnershipOperations = implement(LearningOwnershipApi)({
  "learning.ownership.invitations": ({ urlParams }, actor) => listOwnershipInvitations(actor, urlParams),
  "learning.ownership.accept": ({ path, payload }, actor) => acceptOwnership(actor, path.invitation, payload),
  "learning.ownership.cancel": ({ path, payload }, actor) => cancelOwnership(actor, path.invitation, payload),
  "learning.ownership.reject": ({ path, payload }, actor) => rejectOwnership(actor, path.invitation, payload),
  "learning.ownership.candidates": ({ path, urlParams }, actor) => ownershipCandidates(actor, path.course, urlParams),
  "learning.ownership.invite": ({ path, payload }, actor) => inviteOwner(actor, path.course, payload)
})

export const LearningCourseReviewsOperations = implement(LearningCourseReviewsApi)({
  "learning.course_reviews.list": ({ path, urlParams }, actor) => listCourseReviews(actor, path.course, urlParams),
  "learning.course_reviews.own": ({ path }, actor) => ownCourseReview(actor, path.enrollment),
  "learning.course_reviews.save": ({ path, payload }, actor) => saveCourseReview(actor, path.enrollment, payload),
  "learning.course_reviews.remove": ({ path, payload }, actor) => removeCourseReview(actor, path.enrollment, payload)
})

export const LearningPeopleOperations = [
  LearningStaffOperations,
  LearningEmailInvitationsOperations,
  LearningOwnershipOperations,
  LearningCourseReviewsOperations,
  LearningCommunityOperations,
  LearningTeachingOperations,
  LearningGroupsOperations
] as const
