/**
 * What the domain still owes its layout rules (`Layout.test.ts`, docs/layout.md). Each list may only
 * shrink: paying a debt strikes it here in the same change.
 */

/** Bulk seeders of an empty database (`birzha demo`), which write many tables at once by design. */
export const seeders: ReadonlyArray<string> = ["demo/DemoData.ts", "demo/DemoLearning.ts", "demo/DemoRelations.ts"]

/** Tables still written from more than one module: the table, and every module that writes it. */
export const legacyWriters: Readonly<Record<string, ReadonlyArray<string>>> = {
  files: ["files/FileRepository.ts", "learning/courses/Jobs.ts"],
  learning_checkers: ["learning/grading/CheckerDrafts.ts", "learning/grading/Checkers.ts", "learning/grading/Grading.ts"],
  learning_date_overrides: ["learning/corrections/Extensions.ts", "learning/enrollments/Overrides.ts", "learning/staff/GroupSchedule.ts"],
  learning_enrollments: ["learning/corrections/Extensions.ts", "learning/courses/Runs.ts", "learning/enrollments/Completion.ts", "learning/enrollments/EnrollmentRepository.ts", "learning/enrollments/Enrollments.ts", "learning/enrollments/Overrides.ts", "learning/enrollments/Transfers.ts"],
  learning_grading_jobs: ["learning/corrections/Incidents.ts", "learning/corrections/Regrades.ts", "learning/grading/CheckerCalls.ts", "learning/grading/Checkers.ts", "learning/grading/Grading.ts", "learning/steps/Submissions.ts"],
  learning_plans: ["learning/corrections/Incidents.ts", "learning/courses/Runs.ts", "learning/enrollments/Transfers.ts"],
  learning_review_assignments: ["learning/reviews/ReviewAssignments.ts", "learning/reviews/Reviews.ts"],
  learning_runs: ["learning/courses/RunRepository.ts", "learning/courses/Runs.ts"],
  learning_score_layers: ["learning/grading/Layers.ts", "learning/steps/Submissions.ts"],
  learning_staff: ["learning/staff/Groups.ts", "learning/staff/Ownership.ts", "learning/staff/Staff.ts"],
  learning_step_states: ["learning/enrollments/Completion.ts", "learning/enrollments/Enrollments.ts", "learning/steps/Media.ts", "learning/steps/StepStates.ts"],
  learning_submissions: ["learning/corrections/Incidents.ts", "learning/grading/Layers.ts", "learning/steps/Submissions.ts"],
}

/** Unchecked `sql<Row>` casts left, per module: rows still read without a Schema. */
export const legacyCasts: Readonly<Record<string, number>> = {
  "learning/Audit.ts": 1,
  "learning/Permissions.ts": 2,
  "learning/community/Community.ts": 10,
  "learning/community/CourseReviews.ts": 5,
  "learning/community/Notifier.ts": 4,
  "learning/corrections/Appeals.ts": 11,
  "learning/corrections/Extensions.ts": 11,
  "learning/corrections/Incidents.ts": 14,
  "learning/corrections/RegradePlans.ts": 12,
  "learning/corrections/Regrades.ts": 10,
  "learning/courses/CourseRepository.ts": 7,
  "learning/courses/Courses.ts": 10,
  "learning/courses/Jobs.ts": 16,
  "learning/courses/Library.ts": 3,
  "learning/courses/RunRepository.ts": 2,
  "learning/courses/Runs.ts": 11,
  "learning/enrollments/Completion.ts": 4,
  "learning/enrollments/Dates.ts": 3,
  "learning/enrollments/EnrollmentAccess.ts": 1,
  "learning/enrollments/EnrollmentRepository.ts": 1,
  "learning/enrollments/Enrollments.ts": 13,
  "learning/enrollments/Grades.ts": 1,
  "learning/enrollments/Overrides.ts": 3,
  "learning/enrollments/Transfers.ts": 8,
  "learning/grading/CheckerCalls.ts": 7,
  "learning/grading/CheckerDrafts.ts": 1,
  "learning/grading/Checkers.ts": 9,
  "learning/grading/Grading.ts": 5,
  "learning/grading/Layers.ts": 9,
  "learning/reviews/AutomaticOverrides.ts": 5,
  "learning/reviews/ReviewAssignments.ts": 5,
  "learning/reviews/Reviews.ts": 11,
  "learning/staff/EmailInvitations.ts": 3,
  "learning/staff/GroupSchedule.ts": 2,
  "learning/staff/Groups.ts": 12,
  "learning/staff/Ownership.ts": 2,
  "learning/staff/Staff.ts": 6,
  "learning/steps/Demo.ts": 3,
  "learning/steps/Portfolio.ts": 1,
  "learning/steps/StepStates.ts": 4,
  "learning/steps/Steps.ts": 3,
  "learning/steps/SubmissionViews.ts": 4,
  "learning/steps/Submissions.ts": 9,
  "learning/steps/Variants.ts": 1,
  "learning/teaching/Teaching.ts": 1,
}
