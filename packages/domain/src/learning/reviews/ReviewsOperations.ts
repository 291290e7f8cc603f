import { LearningReviewsApi } from "./ReviewsApi.js"
import { implement } from "../../operations/Implementation.js"
import { createOverride, listOverrides, overrideCandidates, revokeOverride } from "./AutomaticOverrides.js"
import {
  claimReview,
  decideReview,
  listAssignments,
  listReviews,
  reassignReview,
  releaseReview,
  reportReviewIssue,
  reviewWorkspace,
  saveReviewDraft,
  submissionAssignments
} from "./Reviews.js"

/** Reviews and automatic overrides (learning L3, 4 and 6) over their services. */
export const LearningReviewsOperations = implement(LearningReviewsApi)({
  "learning.reviews.list": ({ path, urlParams }, actor) => listReviews(actor, path.course, urlParams),
  "learning.reviews.assignment_list": ({ path, urlParams }, actor) => listAssignments(actor, path.course, urlParams),
  "learning.reviews.assignment": ({ path }, actor) => submissionAssignments(actor, path.submission),
  "learning.reviews.claim": ({ path, payload }, actor) => claimReview(actor, path.submission, payload),
  "learning.reviews.decide": ({ path, payload }, actor) => decideReview(actor, path.submission, payload),
  "learning.reviews.draft": ({ path, payload }, actor) => saveReviewDraft(actor, path.submission, payload),
  "learning.reviews.reassign": ({ path, payload }, actor) => reassignReview(actor, path.submission, payload),
  "learning.reviews.release": ({ path, payload }, actor) => releaseReview(actor, path.submission, payload),
  "learning.reviews.report_issue": ({ path, payload }, actor) => reportReviewIssue(actor, path.submission, payload),
  "learning.reviews.workspace": ({ path }, actor) => reviewWorkspace(actor, path.submission),
  "learning.automatic_overrides.candidates": ({ path, urlParams }, actor) => overrideCandidates(actor, path.course, urlParams),
  "learning.automatic_overrides.create": ({ path, payload }, actor) => createOverride(actor, path.submission, payload),
  "learning.automatic_overrides.list": ({ path }, actor) => listOverrides(actor, path.submission),
  "learning.automatic_overrides.revoke": ({ path, payload }, actor) => revokeOverride(actor, path.submission, path.override, payload)
})
