/**
 * What the domain still owes its layout rules (`Layout.test.ts`, docs/layout.md). Each list may only
 * shrink: paying a debt strikes it here in the same change.
 */

/** Bulk seeders of an empty database (`birzha demo`), which write many tables at once by design. */
export const seeders: ReadonlyArray<string> = ["demo/DemoData.ts", "demo/DemoLearning.ts", "demo/DemoRelations.ts"]

/** Tables still written from more than one module: the table, and every module that writes it. */
export const legacyWriters: Readonly<Record<string, ReadonlyArray<string>>> = {
  learning_score_layers: ["learning/grading/Layers.ts", "learning/steps/Submissions.ts"],
  learning_step_states: ["learning/enrollments/Completion.ts", "learning/enrollments/Enrollments.ts", "learning/steps/Media.ts", "learning/steps/StepStates.ts"],
  learning_submissions: ["learning/corrections/Incidents.ts", "learning/grading/Layers.ts", "learning/steps/Submissions.ts"],
}

/** Unchecked `sql<Row>` casts left, per module: rows still read without a Schema. */
export const legacyCasts: Readonly<Record<string, number>> = {
  "learning/corrections/RegradePlans.ts": 1,
  "learning/courses/Jobs.ts": 1,
  "learning/grading/Layers.ts": 6,
  "learning/steps/Demo.ts": 3,
  "learning/steps/Portfolio.ts": 1,
  "learning/steps/StepStates.ts": 4,
  "learning/steps/Steps.ts": 3,
  "learning/steps/SubmissionViews.ts": 4,
  "learning/steps/Submissions.ts": 7,
  "learning/steps/Variants.ts": 1,
}
