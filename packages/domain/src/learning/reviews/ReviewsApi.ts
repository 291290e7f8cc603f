import { HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { AlreadyClaimed, ConflictOfInterest, GradeFrozen, NotEligible } from "../LearningErrors.js"
import {
  AssignmentListQuery,
  AutomaticOverride,
  AutomaticOverrideCreate,
  AutomaticOverrideList,
  AutomaticOverrideRevoke,
  OverrideCandidatePage,
  OverrideCandidatesQuery,
  Review,
  ReviewAssignment,
  ReviewAssignmentList,
  ReviewAssignmentPage,
  ReviewClaim,
  ReviewDecide,
  ReviewDraft,
  ReviewDraftSave,
  ReviewListQuery,
  ReviewPage,
  ReviewReassign,
  ReviewRelease,
  ReviewReportIssue,
  ReviewWorkspace
} from "./ReviewModel.js"
import { Submission } from "../steps/StepModel.js"
import { InvalidState, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { authenticated, recordErrors } from "../../kernel/Operation.js"

/**
 * Reviews and automatic overrides of learning L3 (4 and 6):
 * the review queue, claim, draft, decide (provisional or final), release, reassign, report an
 * issue and the reviewer's workspace; staff overrides of a checker's result as score layers.
 * Ids, paths, scopes and approval flags as the role matrix (`learning/RoleMatrix.test.ts`) expects them.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const SubmissionPath = Schema.Struct({ submission: Schema.UUID })
const OverridePath = Schema.Struct({ submission: Schema.UUID, override: Schema.UUID })

const changeErrors = Schema.Union(wire(InvalidState), wire(RevisionConflict), wire(RequestConflict))
const read = ["learning:read"]
const grade = ["learning:grade"]

export const LearningReviewsApi = HttpApiGroup.make("learning_reviews", { topLevel: true })
  .add(
    authenticated("GET", "learning.reviews.list", `${base}/courses/:course/reviews`, {
      scopes: read,
      summary: "Decided and released reviews: owners and instructors see all in their scope, reviewers their own"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(ReviewListQuery).addSuccess(ReviewPage)
  )
  .add(
    authenticated("GET", "learning.reviews.assignment_list", `${base}/courses/:course/review-assignments`, {
      scopes: read,
      summary: "The review queue (pooled, claimed, overdue, with an issue); learners see the peer reviews they may claim or hold"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(AssignmentListQuery).addSuccess(ReviewAssignmentPage)
  )
  .add(
    authenticated("GET", "learning.reviews.assignment", `${base}/submissions/:submission/review-assignment`, {
      scopes: read,
      summary: "The review assignments of a submission: staff in full, a peer holder theirs (pseudonyms), the learner their status"
    }, [recordErrors]).setPath(SubmissionPath).addSuccess(ReviewAssignmentList)
  )
  .add(
    authenticated("POST", "learning.reviews.claim", `${base}/submissions/:submission/claim`, {
      scopes: grade,
      summary: "Take a pooled review assignment until its due time (staff reviewers; another learner of the run for peer review)"
    }, [recordErrors, wire(AlreadyClaimed), wire(ConflictOfInterest), wire(NotEligible), changeErrors])
      .setPath(SubmissionPath)
      .setPayload(ReviewClaim)
      .addSuccess(ReviewAssignment)
  )
  .add(
    authenticated("POST", "learning.reviews.decide", `${base}/submissions/:submission/review`, {
      scopes: grade,
      approval: true,
      summary: "Decide a review: accept, revise or fail with points and rubric; provisional, or final (moderated grading: owners and instructors)"
    }, [recordErrors, wire(GradeFrozen), wire(ConflictOfInterest), changeErrors])
      .setPath(SubmissionPath)
      .setPayload(ReviewDecide)
      .addSuccess(Review)
  )
  .add(
    authenticated("PUT", "learning.reviews.draft", `${base}/submissions/:submission/review-draft`, {
      scopes: grade,
      summary: "Autosave the holder's review draft"
    }, [recordErrors, wire(ConflictOfInterest), changeErrors])
      .setPath(SubmissionPath)
      .setPayload(ReviewDraftSave)
      .addSuccess(ReviewDraft)
  )
  .add(
    authenticated("POST", "learning.reviews.reassign", `${base}/submissions/:submission/reassign`, {
      scopes: grade,
      summary: "Move a review assignment to another reviewer or back to the pool (the history keeps every holder)"
    }, [recordErrors, wire(ConflictOfInterest), changeErrors])
      .setPath(SubmissionPath)
      .setPayload(ReviewReassign)
      .addSuccess(ReviewAssignment)
  )
  .add(
    authenticated("POST", "learning.reviews.release", `${base}/submissions/:submission/release`, {
      scopes: grade,
      approval: true,
      summary: "Publish the final decided review to the learner: a review score layer; accepted, revision requested or graded"
    }, [recordErrors, wire(GradeFrozen), wire(ConflictOfInterest), changeErrors])
      .setPath(SubmissionPath)
      .setPayload(ReviewRelease)
      .addSuccess(Submission)
  )
  .add(
    authenticated("POST", "learning.reviews.report_issue", `${base}/submissions/:submission/report-issue`, {
      scopes: grade,
      summary: "Flag a problem that blocks the review: the due clock pauses and the course's owner and instructors are notified"
    }, [recordErrors, wire(ConflictOfInterest), changeErrors])
      .setPath(SubmissionPath)
      .setPayload(ReviewReportIssue)
      .addSuccess(ReviewAssignment)
  )
  .add(
    authenticated("GET", "learning.reviews.workspace", `${base}/submissions/:submission/review-workspace`, {
      scopes: read,
      summary: "The reply, pinned step, checker output and earlier attempts for the holder (peers see a pseudonym only)"
    }, [recordErrors, wire(ConflictOfInterest), wire(InvalidState)]).setPath(SubmissionPath).addSuccess(ReviewWorkspace)
  )
  .add(
    authenticated("GET", "learning.automatic_overrides.candidates", `${base}/courses/:course/automatic-override-candidates`, {
      scopes: read,
      summary: "Suspect automatic verdicts: check_failed, near-timeout, newer checker version (appeal clusters once appeals exist)"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(OverrideCandidatesQuery).addSuccess(OverrideCandidatePage)
  )
  .add(
    authenticated("POST", "learning.automatic_overrides.create", `${base}/submissions/:submission/automatic-overrides`, {
      scopes: grade,
      approval: true,
      summary: "Override the checker's result on one submission: a new override score layer, the original kept"
    }, [recordErrors, wire(GradeFrozen), wire(ConflictOfInterest), changeErrors])
      .setPath(SubmissionPath)
      .setPayload(AutomaticOverrideCreate)
      .addSuccess(AutomaticOverride)
  )
  .add(
    authenticated("GET", "learning.automatic_overrides.list", `${base}/submissions/:submission/automatic-overrides`, {
      scopes: read,
      summary: "A submission's override history (its learner: the active ones with their reason)"
    }, [recordErrors]).setPath(SubmissionPath).addSuccess(AutomaticOverrideList)
  )
  .add(
    authenticated("POST", "learning.automatic_overrides.revoke", `${base}/submissions/:submission/automatic-overrides/:override/revoke`, {
      scopes: grade,
      approval: true,
      summary: "Revoke an automatic override: its layer is revoked and the layer below shows again"
    }, [recordErrors, wire(GradeFrozen), wire(ConflictOfInterest), changeErrors])
      .setPath(OverridePath)
      .setPayload(AutomaticOverrideRevoke)
      .addSuccess(AutomaticOverride)
  )
