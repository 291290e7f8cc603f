/**
 * What the domain still owes its layout rules (`Layout.test.ts`, docs/layout.md). Each list may only
 * shrink: paying a debt strikes it here in the same change.
 */

/** Bulk seeders of an empty database (`birzha demo`), which write many tables at once by design. */
export const seeders: ReadonlyArray<string> = ["demo/DemoData.ts", "demo/DemoLearning.ts", "demo/DemoRelations.ts"]

/** Tables still written from more than one module: the table, and every module that writes it. */
export const legacyWriters: Readonly<Record<string, ReadonlyArray<string>>> = {
  automation_executions: ["automations/AutomationRepository.ts", "automations/AutomationWorker.ts"],
  automation_rule_days: ["automations/AutomationRepository.ts", "automations/AutomationWorker.ts"],
  automation_rules: ["automations/AutomationRepository.ts", "automations/AutomationWorker.ts"],
  learning_score_layers: ["learning/grading/Layers.ts", "learning/steps/Submissions.ts"],
  learning_step_states: ["learning/enrollments/Completion.ts", "learning/enrollments/Enrollments.ts", "learning/steps/Media.ts", "learning/steps/StepStates.ts"],
  learning_submissions: ["learning/corrections/Incidents.ts", "learning/grading/Layers.ts", "learning/steps/Submissions.ts"],
  notifications: ["automations/AutomationRepository.ts", "notifications/NotificationRepository.ts"],
  webhook_endpoints: ["webhooks/WebhookDeliveryRepository.ts", "webhooks/WebhookEndpointRepository.ts"],
}

/** Unchecked `sql<Row>` casts left, per module: rows still read without a Schema. */
export const legacyCasts: Readonly<Record<string, number>> = {
  "auth/AccountRepository.ts": 1,
  "auth/RateLimit.ts": 3,
  "auth/SessionRepository.ts": 1,
  "auth/SignInChallengeRepository.ts": 1,
  "automations/AutomationRepository.ts": 5,
  "automations/AutomationWorker.ts": 1,
  "comments/CommentRepository.ts": 1,
  "comments/Comments.ts": 1,
  "complaints/ComplaintRepository.ts": 3,
  "complaints/Subjects.ts": 4,
  "demo/DemoData.ts": 2,
  "demo/DemoLearning.ts": 1,
  "demo/DemoRelations.ts": 2,
  "events/ConsumerCursor.ts": 1,
  "favorites/FavoriteRepository.ts": 2,
  "files/FileRepository.ts": 2,
  "keys/KeyRepository.ts": 2,
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
  "profiles/ProfileRepository.ts": 6,
  "publications/PublicReads.ts": 2,
  "publications/PublicationRepository.ts": 1,
  "relations/References.ts": 3,
  "relations/RelationRepository.ts": 5,
  "relations/Relations.ts": 1,
  "reviews/CustomerAliasRepository.ts": 2,
  "reviews/ReviewRepository.ts": 5,
  "store/Idempotency.ts": 2,
  "store/Revision.ts": 2,
  "threads/ThreadRepository.ts": 2,
  "threads/Threads.ts": 2,
}
