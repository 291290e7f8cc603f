import type { Language } from "./i18n.js"

/**
 * What a page renders from: plain JSON, the same on the server and in the browser (the server
 * writes it into the page as a `<script type="application/json">` block; hydration reads it back).
 */
export interface Card {
  readonly uuid: string
  readonly kind: string
  readonly title: string
  readonly category: string
  readonly excerpt: string
  readonly closed: boolean
  readonly authorUuid: string
  readonly authorName?: string
  /** The preview picture: a ready file's uuid, with its alternative text. */
  readonly picture?: { readonly id: string; readonly alt: string }
  /** The headline figure: a task's budget, a service's or training's price, a vacancy's salary. */
  readonly price?: string
}

export interface Picture {
  readonly id: string
  readonly alt: string
  readonly caption: string
  /** A task's picture is kept in the task itself (a data URL); the other kinds' are uploaded files, read by id. */
  readonly src?: string
}

/** One block of a publication's content document (content.blocks), its pictures resolved from content.assets. */
export interface BlockView {
  readonly id: string
  readonly type: string
  readonly title?: string
  readonly text?: string
  readonly items?: ReadonlyArray<string>
  readonly language?: string
  readonly media: ReadonlyArray<Picture>
}

export interface PublicationView {
  readonly uuid: string
  readonly kind: string
  readonly title: string
  readonly category: string
  readonly description: string
  readonly closed: boolean
  readonly ownerUuid: string
  readonly createdAt?: string
  /** The pictures no content block shows (a task's, or assets outside the blocks). */
  readonly pictures: ReadonlyArray<Picture>
  /** An article's lead (content.article.lead). */
  readonly lead?: string
  /** The content document's blocks, in order (empty when it has none). */
  readonly blocks: ReadonlyArray<BlockView>
  /** The kind's own fields (task: budget, deadline; service: price, …), raw; the page labels them. */
  readonly details: Readonly<Record<string, unknown>>
}

export interface ProfileView {
  readonly uuid: string
  readonly name: string
  readonly type: string
  readonly avatarUrl?: string
  readonly about: string
  readonly categories: ReadonlyArray<string>
  readonly skills: ReadonlyArray<string>
  readonly contacts: string
}

/** The acting profile as its owner edits it (profiles.get_own): the whole data, with its revision. */
export interface OwnProfileEdit {
  readonly uuid: string
  readonly revision: number
  readonly name: string
  readonly type: string
  readonly isPublic: boolean
  readonly showContacts: boolean
  readonly avatarUrl?: string
  readonly about: string
  readonly categories: ReadonlyArray<string>
  readonly contacts: string
  readonly networks: ReadonlyArray<{ readonly kind: string; readonly url: string }>
  readonly skills: ReadonlyArray<{ readonly name: string; readonly years?: number }>
  readonly structuredContacts: ReadonlyArray<{ readonly kind: "email" | "phone" | "telegram" | "whatsapp" | "website" | "other"; readonly value: string }>
  /** The profile's customer alias, once it has been a deal's customer: its reputation at /customers/{alias}. */
  readonly customerAlias?: string
}

export interface ReviewItem {
  readonly uuid: string
  readonly sealed: boolean
  readonly rating?: number
  readonly body?: string
  readonly authorName?: string
  readonly authorUuid?: string
  /** The author's customer alias, when the author was the deal's customer: their reputation at /customers/{alias}. */
  readonly customerAlias?: string
  readonly reply?: string
  readonly publishedAt?: string
  /** The review's revision (a reply is replaced or removed at it). */
  readonly revision?: number
}

export interface Reviews {
  readonly count: number
  readonly average: number | null
  readonly items: ReadonlyArray<ReviewItem>
}

/**
 * Where an own publication stands beyond its moderation status, as My publications shows it:
 * whether an approved version is public (`live`), hidden by its owner, or (a task) closed. Absent
 * when the owner's read does not say (a task's view has no `hidden`: the page reads it publicly).
 */
export interface OwnLifecycle {
  readonly live?: boolean
  readonly hidden?: boolean
  readonly closed?: boolean
}

/** A task as its owner edits it (tasks.get): the whole draft, its revision and moderation status. */
export interface OwnTaskView extends OwnLifecycle {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  /** The moderator's reason of the latest decision (why it was returned or rejected); empty when none. */
  readonly reason: string
  readonly updatedAt: string
  readonly title: string
  readonly category: string
  readonly description: string
  readonly budget: string
  readonly deadline: string
  readonly files: ReadonlyArray<{ readonly id: string; readonly name: string; readonly url: string; readonly size: number; readonly mimeType: string }>
}

/** A vacancy as its owner edits it (jobs.get): the draft's fields the editor shows, its revision and status. */
export interface OwnVacancyView extends OwnLifecycle {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  /** The moderator's reason of the latest decision; empty when none. */
  readonly reason: string
  readonly updatedAt: string
  readonly title: string
  readonly category: string
  readonly description: string
  readonly company?: string
  readonly salaryFrom?: number
  readonly salaryTo?: number
  readonly currency: string
  readonly employment?: string
  readonly workplace?: string
  readonly location?: string
  readonly experience?: string
  /** The whole draft as read, for the editor only (a save sends it back with the form's fields over it). */
  readonly draft?: Readonly<Record<string, unknown>>
}

/** A service as its owner edits it (services.get): the draft's fields the editor shows, its revision and status. */
export interface OwnServiceView extends OwnLifecycle {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  /** The moderator's reason of the latest decision; empty when none. */
  readonly reason: string
  readonly updatedAt: string
  readonly title: string
  readonly category: string
  readonly description: string
  readonly price?: number
  readonly currency: string
  readonly priceUnit: string
  readonly deliveryDays?: number
  /** The whole draft as read, for the editor only (a save sends it back with the form's fields over it). */
  readonly draft?: Readonly<Record<string, unknown>>
}

/** The kinds edited by the one media editor (pages/MediaEditorPage), by the command prefix their editor's path takes. */
export const mediaEditorKinds = { portfolio: "portfolio", articles: "article", resumes: "resume", learning: "training" } as const
export type MediaEditorCommand = keyof typeof mediaEditorKinds
export type MediaEditorKind = typeof mediaEditorKinds[MediaEditorCommand]
/** The command prefix of a kind (`learning` for a training: its operations are `learning.save`, …). */
export const commandOf = (kind: MediaEditorKind): MediaEditorCommand =>
  (Object.keys(mediaEditorKinds) as ReadonlyArray<MediaEditorCommand>).find((command) => mediaEditorKinds[command] === kind)!
/**
 * The editor's first path segment by command prefix (`/portfolio/new`, as `/services` is the
 * service editor's): the prefix itself, but a training's editor is `/trainings`, since `/learning`
 * is the learner's area (My learning, the course player); `/learning/new` and
 * `/learning/{uuid}/edit` answer a 303 here (server/loaders.ts).
 */
export const mediaEditorPaths: Readonly<Record<MediaEditorCommand, string>> = {
  portfolio: "portfolio", articles: "articles", resumes: "resumes", learning: "trainings"
}
/** A media kind's editor path prefix (`/trainings` for a training). */
export const editorPathOf = (kind: MediaEditorKind): string => mediaEditorPaths[commandOf(kind)]

/** A publication of one of those kinds in its owner's list (<command>.list). */
export interface OwnMediaItem extends OwnLifecycle {
  readonly kind: MediaEditorKind
  readonly uuid: string
  readonly revision: number
  readonly status: string
  /** The moderator's reason of the latest decision; empty when none. */
  readonly reason: string
  readonly updatedAt: string
  readonly title: string
}

/**
 * A media publication as its owner edits it (<command>.get): the whole draft as read, so a save
 * sends back every field, the ones the form does not show included (a save replaces the draft).
 */
export interface OwnMediaView extends OwnMediaItem {
  readonly draft: Readonly<Record<string, unknown>>
}

export interface ModerationView {
  readonly uuid: string
  readonly kind: string
  readonly title: string
  readonly description: string
  readonly ownerName: string
  readonly revision: number
  readonly submittedAt: string
  /** A task's pictures as sent (data URLs with their captions). */
  readonly pictures: ReadonlyArray<{ readonly src: string; readonly caption: string }>
}

/** A response, offer or deal in the signed-in person's view (responses.list, deals.list). */
export interface RelationItem {
  readonly uuid: string
  readonly kind: string
  readonly status: string
  readonly revision: number
  readonly role: string
  readonly publication: { readonly uuid: string; readonly title: string } | null
  /** The other party; `customerAlias` when they are the relation's customer (their reputation at /customers/{alias}). */
  readonly counterpart: { readonly profileUuid: string; readonly name: string; readonly customerAlias?: string }
  readonly body: string
  readonly budget?: string
  readonly deadline?: string
  readonly threadUuid?: string
  readonly results?: { readonly version: number; readonly body: string; readonly files: ReadonlyArray<string> }
  readonly review?: { readonly canReview: boolean; readonly ownReviewUuid?: string; readonly windowEndsAt: string }
  readonly autoCompleteAt?: string
  readonly allowedActions: ReadonlyArray<string>
  readonly updatedAt: string
}

export interface ThreadItem {
  readonly uuid: string
  readonly with: string
  readonly unread: number
  readonly lastMessage?: string
  readonly lastMessageAt?: string
}

export interface MessageItem {
  readonly uuid: string
  readonly mine: boolean
  readonly body: string
  readonly createdAt: string
}

/** An integration key as its owner manages it (keys.list): never its secret, only a hint of it. */
export interface KeyView {
  readonly uuid: string
  readonly revision: number
  readonly name: string
  readonly kind: string
  readonly status: "not_issued" | "active" | "expired" | "revoked"
  readonly profileName: string
  readonly scopes: ReadonlyArray<string>
  readonly httpEnabled: boolean
  readonly mcpEnabled: boolean
  readonly secretHint?: string
  readonly expiresAt?: string
  readonly lastUsedAt?: string
}

/** A prepared command as its owner decides on it (integrationCommands.get and .pending). */
/** Who asks, on the consent page and in the connected agents (oauth.* texts). */
export interface OAuthClientItem {
  readonly clientId: string
  readonly name: string
  readonly kind: "registered" | "metadata_document"
  readonly clientUri?: string
}

/** oauthRequests.get as the consent page renders it (plain JSON). */
export interface ConsentView {
  readonly uuid: string
  readonly client: OAuthClientItem
  readonly redirectOrigin: string
  readonly scopes: ReadonlyArray<string>
  readonly resource: string
  readonly profile: { readonly uuid: string; readonly name: string; readonly type: string }
  readonly state: "pending" | "allowed" | "denied" | "expired"
  readonly expiresAt: string
}

/** agents.list's item as the connected agents page renders it (plain JSON). */
export interface AgentItem {
  readonly uuid: string
  readonly client: OAuthClientItem
  readonly profile: { readonly uuid: string; readonly name: string; readonly type: string }
  readonly scopes: ReadonlyArray<string>
  readonly connectedAt: string
  readonly lastUsedAt?: string
  readonly revokedAt?: string
}

export interface ApprovalView {
  readonly uuid: string
  readonly operationId: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly state: string
  readonly expiresAt: string
  readonly createdAt: string
  readonly decidedAt?: string
  readonly summary: string
  readonly also: ReadonlyArray<{ readonly operationId: string; readonly summary: string }>
  /** The asking key; `createdAt` from the account's keys (keys.list), absent when the key is no longer listed. */
  readonly key: { readonly uuid: string; readonly name: string; readonly createdAt?: string }
  readonly record?: { readonly uuid: string; readonly kind: string; readonly title?: string; readonly draft?: Readonly<Record<string, unknown>> }
}

/** One event of the caller's event log (events.list): the envelope as the API gives it. */
export interface EventLogItem {
  readonly uuid: string
  readonly type: string
  readonly occurredAt: string
  readonly aggregate: { readonly kind: string; readonly uuid: string; readonly revision: number }
  readonly envelope: string
}

/**
 * A condition of an automation rule as the API gives and takes it (Condition in
 * packages/domain/src/automations/Rule.ts): a group (all, any) or a leaf (field, op, value).
 */
export interface RuleCondition {
  readonly all?: ReadonlyArray<RuleCondition>
  readonly any?: ReadonlyArray<RuleCondition>
  readonly field?: string
  readonly op?: string
  readonly value?: string | number | boolean | ReadonlyArray<string | number>
}

/** One of a rule's three actions (RuleAction in packages/domain/src/automations/Rule.ts). */
export type RuleActionView =
  | { readonly type: "notification.create" }
  | { readonly type: "webhook.deliver"; readonly endpointUuid: string }
  | {
    readonly type: "command.execute"
    readonly operationId: string
    readonly arguments: { readonly data: Readonly<Record<string, unknown>>; readonly publicationUuid?: string; readonly expectedRevision?: number }
  }

/** An automation rule as its owner sees it (automations.list). */
export interface RuleView {
  readonly uuid: string
  readonly revision: number
  readonly name: string
  readonly trigger: { readonly eventType: string; readonly filter?: RuleCondition }
  readonly action: RuleActionView
  readonly limits: { readonly maxRunsPerDay: number }
  readonly enabled: boolean
  /** active, disabled, suspended (its key or profile lost the right), paused (after failures in a row), deleted. */
  readonly state: string
  readonly suspendedReason?: string
  /** Runs counted against today's limit (UTC day). */
  readonly runsToday: number
  readonly createdAt: string
  readonly updatedAt: string
  readonly deletedAt?: string
}

/** One execution of a rule (automations.executions), with every attempt. */
export interface RuleExecutionView {
  readonly uuid: string
  readonly ruleRevision: number
  readonly eventUuid: string
  readonly eventType: string
  readonly status: string
  readonly cancelReason?: string
  readonly attempts: ReadonlyArray<{
    readonly attemptedAt: string
    readonly durationMs: number
    readonly outcome: string
    readonly error?: { readonly status: number; readonly code: string; readonly message: string }
  }>
  readonly createdAt: string
  readonly finishedAt?: string
}

/** A favorite as its owner sees it now (favorites.list): what it points at, when the entity is still public. */
export interface FavoriteItem {
  readonly uuid: string
  readonly entityKind: "profile" | "publication"
  readonly entityUuid: string
  readonly createdAt: string
  readonly available: boolean
  readonly title?: string
  readonly publicationKind?: string
  readonly profileType?: string
}

/** A moderator's decision on a complaint, as its author reads it. */
export interface ComplaintDecisionView {
  readonly decision: string
  readonly action: string
  readonly reason: string
  readonly decidedAt: string
}

/** A complaint in its author's view (complaints.list). */
export interface ComplaintItem {
  readonly uuid: string
  readonly subjectKind: string
  readonly subjectUuid: string
  readonly body: string
  readonly status: string
  readonly revision: number
  readonly createdAt: string
  readonly decision?: ComplaintDecisionView
  /** The subject's title or name, when it is public now. */
  readonly subjectTitle?: string
}

/** A complaint as a moderator reviews it (moderation.complaints.queue): the subject as filed, and its other open complaints. */
export interface QueuedComplaint extends ComplaintItem {
  /** The subject's title or name as the author saw it; its text for a message or relation. */
  readonly subjectTitle: string
  readonly subjectText: string
  /** Whether the subject still exists. */
  readonly subjectGone: boolean
  readonly otherOpen: number
  /** For a relation: its reviews, one of which an uphold may remove. */
  readonly reviews: ReadonlyArray<{ readonly uuid: string; readonly status: string; readonly rating: number; readonly body: string }>
}

/** A review in the moderators' list (moderation.reviews.list). */
export interface ModeratedReviewItem {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  readonly rating?: number
  readonly body: string
  readonly authorName: string
  readonly subjectProfileUuid: string
  readonly subjectRole: string
  readonly openComplaints: number
  readonly moderationReason?: string
  readonly createdAt: string
}

/** One entry of the inbox (learning.notifications.list: the one inbox of every source). */
export interface NotificationItem {
  readonly uuid: string
  readonly kind: string
  readonly title: string
  readonly body: string
  readonly eventType?: string
  readonly read: boolean
  readonly createdAt: string
}

/** A comment of a publication in reading order: roots, each followed by its answers (`parentUuid`). */
export interface CommentItem {
  readonly uuid: string
  readonly authorName: string
  readonly authorProfileUuid?: string
  readonly body: string
  readonly createdAt: string
  readonly canDelete: boolean
  readonly isPublicationAuthor: boolean
  readonly deleted: boolean
  readonly parentUuid?: string
}

/** A course of the learning catalog (learning.courses.list). */
export interface CourseCardView {
  readonly uuid: string
  readonly title: string
  readonly summary: string
  readonly level?: string
  readonly format?: string
  readonly durationHours?: number
}

/** A node of a course's tree: a module or a step, with the learner's state when there is one. */
export interface OutlineItem {
  readonly nodeKey: string
  readonly parentKey?: string
  readonly kind: "module" | "step"
  readonly title: string
  readonly stepType?: string
  readonly status?: string
  readonly dueAt?: string
}

export interface RunView {
  readonly uuid: string
  readonly title: string
  readonly pacing: string
  readonly admission: string
  readonly status: string
  readonly startsAt: string
  readonly endsAt?: string
  readonly capacity?: number
}

/** A public view of a course (learning.courses.get) with its runs, teachers and reviews. */
export interface CourseView {
  readonly uuid: string
  readonly title: string
  readonly summary: string
  readonly metadata: Readonly<Record<string, unknown>>
  readonly versionNumber: number
  readonly outline: ReadonlyArray<OutlineItem>
  readonly runs: ReadonlyArray<RunView>
}

export interface CourseReviewItem {
  readonly uuid: string
  readonly authorName?: string
  readonly rating: number
  readonly text: string
  readonly createdAt: string
}

/** One score layer of a submission (learning.submissions.get): how the effective score came to be. */
export interface ScoreLayerView {
  readonly kind: string
  readonly points: number
  readonly maxPoints: number
  readonly verdict: string
  readonly feedback: string
  readonly passed: boolean
  readonly late: boolean
  readonly revoked: boolean
  readonly createdAt: string
}

export interface SubmissionView {
  readonly uuid: string
  readonly revision: number
  readonly attemptNo: number
  readonly status: string
  readonly late: boolean
  readonly submittedAt: string
  readonly reply: string
  readonly score?: { readonly points: number; readonly maxPoints: number; readonly verdict: string; readonly passed: boolean; readonly feedback: string }
  readonly layers: ReadonlyArray<ScoreLayerView>
}

/** The open step of the course player (learning.steps.get and its submissions). */
export interface StepData {
  readonly nodeKey: string
  readonly title: string
  readonly stepType?: string
  readonly status: string
  readonly body?: string
  readonly dueAt?: string
  readonly unlockAt?: string
  readonly attempts: { readonly allowed?: number; readonly used: number; readonly left?: number }
  readonly grading?: { readonly maxPoints: number; readonly passThreshold?: number; readonly checkedBy: string; readonly review: string }
  readonly draft?: { readonly reply: string; readonly revision: number; readonly updatedAt: string }
  readonly submissions: ReadonlyArray<SubmissionView>
  /** The appeals of the latest attempt (learning.appeals.list_for_submission), oldest first. */
  readonly appeals?: ReadonlyArray<LearnerAppealView>
}

/** A learner's appeal of a grade, as the player shows it. */
export interface LearnerAppealView {
  readonly uuid: string
  readonly status: string
  readonly reason: string
  readonly outcome?: string
  readonly resolvedPoints?: number
  readonly comment: string
}

export interface EnrollmentView {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  readonly courseUuid: string
  readonly runUuid: string
  readonly startedAt?: string
  readonly completedAt?: string
  readonly restoreUntil?: string
}

export interface ExtensionView {
  readonly uuid: string
  readonly nodeKey?: string
  readonly status: string
  readonly originalDueAt: string
  readonly requestedDueAt: string
  readonly grantedDueAt?: string
  readonly reason: string
  readonly comment: string
}

/** A dated step of the learner's calendar with where each date comes from. */
export interface CalendarEntry {
  readonly nodeKey: string
  readonly title: string
  readonly status: string
  readonly unlockAt?: string
  readonly dueAt?: string
  readonly sources: ReadonlyArray<{ readonly field: string; readonly source: string; readonly at?: string; readonly detail?: string }>
}

export interface LearningItem {
  readonly enrollmentUuid: string
  readonly courseUuid: string
  readonly courseTitle: string
  readonly status: string
  readonly completedSteps: number
  readonly totalSteps: number
  readonly percent: number
  readonly completedAt?: string
  readonly next?: { readonly nodeKey: string; readonly title: string; readonly dueAt?: string }
}


/** The caller's standing on a course they teach (learning.teaching.get): what the pages may offer. */
export interface TeachingHead {
  readonly courseUuid: string
  readonly courseTitle: string
  /** Highest first: owner, instructor, reviewer, assistant, analyst. */
  readonly roles: ReadonlyArray<string>
  /** The rights (atoms) the caller's assignments hold on the course, as the API returns them. */
  readonly rights: ReadonlyArray<string>
}

/** A course on the teaching dashboard with its to-do counts (a count is absent when the work is not the caller's). */
export interface TeachingCourseItem extends TeachingHead {
  readonly courseStatus: string
  readonly counts: Readonly<Record<string, number>>
  readonly todo: number
}

/** One review assignment of the queue (learning.reviews.assignment_list). */
export interface ReviewQueueItem {
  readonly uuid: string
  readonly submissionUuid: string
  readonly nodeKey: string
  readonly stepTitle: string
  readonly kind: string
  readonly status: string
  readonly learner: string
  readonly reviewerName?: string
  readonly reviewerProfileUuid?: string
  readonly dueAt?: string
  readonly overdue: boolean
  readonly issue?: string
}

/** A review assignment as the workspace shows it, with its history. */
export interface ReviewAssignmentView {
  readonly uuid: string
  readonly revision: number
  readonly kind: string
  readonly status: string
  readonly reviewerProfileUuid?: string
  readonly reviewerName?: string
  readonly dueAt?: string
  readonly issue?: { readonly kind: string; readonly note: string }
  readonly decision?: {
    readonly outcome: string
    readonly points: number
    readonly comment: string
    readonly final: boolean
    readonly rubric: ReadonlyArray<{ readonly criterion: string; readonly points: number; readonly comment?: string }>
  }
  readonly history: ReadonlyArray<{ readonly at: string; readonly action: string; readonly by?: string; readonly to?: string; readonly reason?: string }>
}

/** A learner's reply as a reviewer reads it: its text and the files it names. */
export interface ReplyView {
  readonly text: string
  readonly files: ReadonlyArray<{ readonly name: string; readonly url?: string }>
}

export interface ReviewWorkspaceView {
  readonly reply: ReplyView
  readonly attemptNo: number
  readonly submittedAt: string
  readonly checkerOutput?: { readonly verdict: string; readonly points: number; readonly feedback: string }
  readonly draft?: {
    readonly revision: number
    readonly comment: string
    readonly points?: number
    readonly savedAt: string
    readonly rubric: ReadonlyArray<{ readonly criterion: string; readonly points: number; readonly comment?: string }>
  }
  readonly earlierAttempts: ReadonlyArray<{ readonly uuid: string; readonly attemptNo: number; readonly submittedAt: string; readonly status: string; readonly reply: ReplyView; readonly points?: number }>
}

export interface TeachingAppealView {
  readonly uuid: string
  readonly revision: number
  readonly submissionUuid: string
  readonly status: string
  readonly stepTitle: string
  readonly learner: string
  readonly reason: string
  readonly requestedPoints?: number
  readonly initialPoints: number
  readonly resolvedPoints?: number
  readonly outcome?: string
  readonly comment: string
  readonly createdAt: string
  readonly options: ReadonlyArray<{ readonly key: string; readonly kind: string; readonly points: number; readonly explanation: string }>
}

export interface TeachingExtensionView {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  readonly learner: string
  readonly stepTitle?: string
  readonly originalDueAt: string
  readonly requestedDueAt: string
  readonly grantedDueAt?: string
  readonly reason: string
  readonly comment: string
  readonly autoApproved: boolean
}

export interface RosterItem {
  readonly uuid: string
  readonly revision: number
  readonly status: string
  readonly learner: string
  readonly runTitle: string
  readonly completedSteps?: number
  readonly totalSteps?: number
  readonly application?: ReadonlyArray<{ readonly question: string; readonly answer: string }>
  readonly waitlistPosition?: number
}

/** A count of the course's analytics, or suppressed (1 to `minCell` − 1 learners would be identifiable). */
export interface AnalyticsCell {
  readonly count?: number
  readonly suppressed: boolean
}

/** The course's analytics (learning.analytics.get) as the page charts them. */
export interface TeachingAnalyticsView {
  readonly minCell: number
  readonly funnel: ReadonlyArray<{ readonly stage: string; readonly cell: AnalyticsCell }>
  readonly steps: ReadonlyArray<{ readonly title: string; readonly started: AnalyticsCell; readonly completed: AnalyticsCell }>
  readonly scores: ReadonlyArray<{ readonly bucket: string; readonly learners: AnalyticsCell }>
  readonly graderLoad: ReadonlyArray<{ readonly name: string; readonly pending: number; readonly decided: number }>
}

/** An incident of a run with its affected learners and its latest compensation plan (learning.incidents.list). */
export interface TeachingIncidentView {
  readonly uuid: string
  readonly runTitle: string
  readonly kind: string
  readonly status: string
  readonly from: string
  readonly to: string
  readonly description: string
  readonly steps: ReadonlyArray<string>
  readonly affected: ReadonlyArray<{ readonly learner: string; readonly steps: ReadonlyArray<string> }>
  readonly plan?: {
    readonly uuid: string
    readonly status: string
    readonly expiresAt: string
    readonly items: ReadonlyArray<{ readonly kind: string; readonly learner: string; readonly step: string; readonly dueBefore?: string; readonly dueAfter?: string; readonly attempts?: number }>
    readonly blocking: ReadonlyArray<string>
  }
}

/** A regrade plan: its dry-run difference, learner by learner, before its commit. */
export interface RegradePlanView {
  readonly uuid: string
  readonly status: string
  readonly nodeKey: string
  readonly stepTitle: string
  readonly rule: { readonly kind: string; readonly value?: string }
  readonly policy: string
  readonly itemCount: number
  readonly progress: number
  readonly skipped: { readonly frozen: number; readonly unchanged: number; readonly stale: number }
  readonly items: ReadonlyArray<{ readonly n: number; readonly learner: string; readonly attemptNo?: number; readonly old?: number; readonly new?: number; readonly maxPoints: number; readonly skipped?: string; readonly applied: boolean }>
  readonly expiresAt: string
  readonly committedAt?: string
}

/** A webhook endpoint as its owner sees it (WebhookEndpoint in @birzha/domain, dates as ISO strings). */
export interface WebhookEndpointView {
  readonly uuid: string
  readonly revision: number
  readonly url: string
  readonly description: string
  readonly eventTypes: ReadonlyArray<string>
  readonly payloadMode: "reference" | "current"
  readonly state: "prepared" | "awaiting_test" | "active" | "paused" | "disabled"
  readonly approvalUrl?: string
  readonly approvedAt?: string
  readonly verifiedAt?: string
  readonly pausedAt?: string
  readonly disabledAt?: string
  readonly disabledReason?: "gone" | "failing"
  readonly failingSince?: string
  readonly secretRotatedAt?: string
  /** Until then the secret before the last rotation still signs too. */
  readonly previousSecretExpiresAt?: string
  readonly createdAt: string
  readonly updatedAt: string
}

/** One real HTTP attempt of a delivery (WebhookAttempt in @birzha/domain). */
export interface WebhookAttemptView {
  readonly uuid: string
  readonly attemptedAt: string
  readonly durationMs: number
  readonly url: string
  readonly statusCode?: number
  readonly responseExcerpt: string
  readonly error?: string
  readonly succeeded: boolean
}

/** One delivery of an endpoint (WebhookDelivery in @birzha/domain). */
export interface WebhookDeliveryView {
  readonly uuid: string
  readonly endpointUuid: string
  readonly kind: "event" | "test"
  readonly eventUuid: string
  readonly eventType: string
  readonly status: "pending" | "delivering" | "succeeded" | "failed" | "cancelled"
  readonly attemptCount: number
  readonly nextAttemptAt?: string
  readonly cancelReason?: string
  readonly createdAt: string
  readonly finishedAt?: string
  readonly attempts: ReadonlyArray<WebhookAttemptView>
}

/** An event type a webhook may receive, from the catalog: its record kind and a sample envelope (JSON text). */
export interface WebhookEventTypeView {
  readonly type: string
  readonly aggregateKind: string
  readonly sample: string
}

export type PageData =
  | { readonly page: "adminHealth"; readonly health: AdminHealthView }
  | { readonly page: "adminAccounts"; readonly email: string; readonly items: ReadonlyArray<AdminAccountItem> }
  | { readonly page: "adminAccount"; readonly view: AdminAccountView }
  | { readonly page: "adminMail"; readonly to: string; readonly available: boolean; readonly items: ReadonlyArray<AdminMailItem> }
  | {
    readonly page: "adminRoles"
    readonly me: string
    readonly moderators: ReadonlyArray<AdminRoleHolder>
    readonly operators: ReadonlyArray<AdminRoleHolder>
    readonly audit: ReadonlyArray<AdminActionItem>
  }
  | { readonly page: "home"; readonly latest: ReadonlyArray<Card> }
  | {
    readonly page: "catalog"
    readonly q: string
    readonly kind: string
    readonly category: string
    readonly cursor: string
    readonly items: ReadonlyArray<Card>
    readonly nextCursor?: string
  }
  | {
    readonly page: "publication"
    readonly publication: PublicationView
    readonly author?: { readonly uuid: string; readonly name: string }
    /** Absent when they could not be read (the page shows without them). */
    readonly comments?: { readonly items: ReadonlyArray<CommentItem>; readonly cursor: string; readonly nextCursor?: string }
    /** Whether the signed-in visitor keeps it in favorites. */
    readonly favorite?: boolean
  }
  | {
    readonly page: "profile"
    readonly profile: ProfileView
    readonly publications: ReadonlyArray<Card>
    readonly reviews?: Reviews
    readonly favorite?: boolean
  }
  | {
    readonly page: "customer"
    /** customers.get's summary: the alias, rating, completed deals as the customer, and the alias's month (`YYYY-MM`). */
    readonly customer: { readonly alias: string; readonly reviewCount: number; readonly ratingAverage: number | null; readonly completedDeals: number; readonly since: string }
    readonly reviews: Reviews
    /**
     * Whether the signed-in visitor is the reviewed customer (who may answer the reviews here).
     * The reviewed profile itself is never in the page: the alias stands for it.
     */
    readonly own: boolean
    readonly cursor: string
    readonly nextCursor?: string
  }
  | { readonly page: "signIn"; readonly next: string }
  | {
    readonly page: "account"
    readonly email: string
    readonly profiles: ReadonlyArray<{ readonly uuid: string; readonly name: string; readonly type: string; readonly current: boolean }>
  }
  | { readonly page: "signInLink" }
  | {
    readonly page: "profileSettings"
    readonly profile: OwnProfileEdit
    readonly profiles: ReadonlyArray<{ readonly uuid: string; readonly name: string; readonly type: string; readonly current: boolean }>
  }
  | { readonly page: "taskEditor"; readonly task?: OwnTaskView; readonly categories: ReadonlyArray<string> }
  | { readonly page: "vacancyEditor"; readonly vacancy?: OwnVacancyView }
  | { readonly page: "serviceEditor"; readonly service?: OwnServiceView }
  | { readonly page: "mediaEditor"; readonly kind: MediaEditorKind; readonly publication?: OwnMediaView }
  | {
    readonly page: "myPublications"
    readonly tasks: ReadonlyArray<OwnTaskView>
    readonly vacancies: ReadonlyArray<OwnVacancyView>
    readonly services: ReadonlyArray<OwnServiceView>
    readonly media: ReadonlyArray<OwnMediaItem>
  }
  | { readonly page: "moderation"; readonly allowed: boolean; readonly items: ReadonlyArray<ModerationView> }
  | {
    readonly page: "responses"
    readonly items: ReadonlyArray<RelationItem>
    readonly offers: ReadonlyArray<RelationItem>
    readonly jobContacts: ReadonlyArray<RelationItem>
  }
  | { readonly page: "deals"; readonly items: ReadonlyArray<RelationItem>; readonly reviews: ReadonlyArray<{ readonly uuid: string; readonly sealed: boolean; readonly relationUuid: string }> }
  | { readonly page: "messages"; readonly threads: ReadonlyArray<ThreadItem> }
  | { readonly page: "thread"; readonly threadUuid: string; readonly with: string; readonly messages: ReadonlyArray<MessageItem> }
  | {
    readonly page: "integrations"
    readonly email: string
    /** Signed in within 10 minutes: a key's secret can be shown now (keys.create, keys.reissue). */
    readonly recentSignIn: boolean
    readonly keys: ReadonlyArray<KeyView>
    readonly profiles: ReadonlyArray<{ readonly uuid: string; readonly name: string; readonly type: string; readonly current: boolean }>
    /** The scopes a key may hold, with the operations each opens. */
    readonly scopes: ReadonlyArray<{ readonly name: string; readonly operations: ReadonlyArray<string> }>
    readonly limits: { readonly nameMaxLength: number; readonly lifetimeDaysMax: number; readonly lifetimeDaysDefault: number }
  }
  | { readonly page: "approvals"; readonly items: ReadonlyArray<ApprovalView> }
  /** An agent's authorization request (MCP authorization) for the signed-in person to allow or deny. */
  | { readonly page: "oauthConsent"; readonly request: ConsentView; readonly email: string }
  /** The account's agents connected by signing in, beside its keys. */
  | { readonly page: "agents"; readonly items: ReadonlyArray<AgentItem> }
  /** `email`: the signed-in account, the only one that can decide its commands (integrationCommands.decide). */
  | { readonly page: "approval"; readonly command: ApprovalView; readonly email: string }
  | {
    readonly page: "webhookApproval"
    readonly endpoint: {
      readonly uuid: string
      readonly revision: number
      readonly url: string
      readonly eventTypes: ReadonlyArray<string>
      readonly payloadMode: string
      readonly state: string
      readonly approved: boolean
    }
  }
  | {
    readonly page: "webhooks"
    readonly endpoints: ReadonlyArray<WebhookEndpointView>
    /** The event catalog (events.catalog): each type with its record kind and a sample envelope. */
    readonly catalog: ReadonlyArray<WebhookEventTypeView>
    /** Endpoints a profile may have (webhookLimits in @birzha/domain). */
    readonly limit: number
  }
  | {
    readonly page: "webhook"
    readonly endpoint: WebhookEndpointView
    /** Newest first (webhooks.deliveries), each with its real attempts. */
    readonly deliveries: ReadonlyArray<WebhookDeliveryView>
  }
  | { readonly page: "favorites"; readonly items: ReadonlyArray<FavoriteItem> }
  | {
    readonly page: "eventLog"
    /** Every event type of the catalog (events.types), for the filter; `type`: the one chosen, "" for all. */
    readonly types: ReadonlyArray<string>
    readonly type: string
    /** Where this read started ("" from the oldest kept), and where to resume after it. */
    readonly cursor: string
    readonly nextCursor: string
    readonly hasMore: boolean
    /** The cursor given is older than the log keeps (410 resync_required) or not one the log issued (400): start again from the oldest. */
    readonly cursorProblem: "" | "expired" | "invalid"
    /** Newest first. */
    readonly items: ReadonlyArray<EventLogItem>
  }
  /** The acting profile's automation rules (`/settings/rules`), oldest first. */
  | { readonly page: "rules"; readonly rules: ReadonlyArray<RuleView> }
  | {
    /** A rule's builder, dry run, backtest and history (`/settings/rules/{uuid}`); a new rule (`/settings/rules/new`) has no `rule`. */
    readonly page: "rule"
    readonly rule?: RuleView
    /** The rule at this address was deleted: only its history is shown. */
    readonly deleted: boolean
    /** Newest first; also for a deleted rule, whose history is kept. */
    readonly executions: ReadonlyArray<RuleExecutionView>
    /** Every event type of the catalog (events.types), for the trigger and a synthetic event. */
    readonly eventTypes: ReadonlyArray<string>
    /** The latest stored events the profile may read, newest first, for a dry run against one. */
    readonly events: ReadonlyArray<{ readonly uuid: string; readonly type: string; readonly occurredAt: string; readonly aggregateKind: string }>
    /** The profile's webhook endpoints, for the webhook.deliver action. */
    readonly webhooks: ReadonlyArray<{ readonly uuid: string; readonly url: string; readonly state: string }>
  }
  | { readonly page: "complaints"; readonly items: ReadonlyArray<ComplaintItem> }
  | { readonly page: "notifications"; readonly items: ReadonlyArray<NotificationItem>; readonly cursor: string; readonly nextCursor?: string }
  | { readonly page: "moderationComplaints"; readonly allowed: boolean; readonly status: string; readonly items: ReadonlyArray<QueuedComplaint> }
  | { readonly page: "moderationReviews"; readonly allowed: boolean; readonly status: string; readonly items: ReadonlyArray<ModeratedReviewItem> }
  | {
    readonly page: "courses"
    readonly q: string
    readonly level: string
    readonly cursor: string
    readonly items: ReadonlyArray<CourseCardView>
    readonly nextCursor?: string
  }
  | {
    readonly page: "course"
    readonly course: CourseView
    readonly author?: { readonly uuid: string; readonly name: string }
    readonly staff: ReadonlyArray<{ readonly name: string; readonly role: string }>
    readonly reviews: { readonly count: number; readonly average?: number; readonly items: ReadonlyArray<CourseReviewItem> }
    /** The visitor's enrollment in this course, when signed in and enrolled. */
    readonly enrollment?: { readonly uuid: string; readonly status: string }
  }
  | { readonly page: "myLearning"; readonly items: ReadonlyArray<LearningItem> }
  | {
    readonly page: "player"
    readonly enrollment: EnrollmentView
    readonly courseTitle: string
    readonly tree: ReadonlyArray<OutlineItem>
    readonly completion: { readonly percent: number; readonly requiredSteps: number; readonly completedRequiredSteps: number; readonly criteriaMet: boolean; readonly completedAt?: string }
    readonly step?: StepData
    readonly review: { readonly eligible: boolean; readonly rating?: number; readonly text?: string; readonly revision?: number }
  }
  | {
    readonly page: "learningCalendar"
    readonly enrollment: EnrollmentView
    readonly courseTitle: string
    readonly entries: ReadonlyArray<CalendarEntry>
    readonly extensions: ReadonlyArray<ExtensionView>
  }
  | { readonly page: "authoring"; readonly courses: ReadonlyArray<AuthoringCourseItem>; readonly trainings: ReadonlyArray<{ readonly uuid: string; readonly title: string }> }
  | {
    readonly page: "courseEditor"
    readonly course: AuthoringCourse
    readonly checkers: ReadonlyArray<CheckerView>
    readonly versions: ReadonlyArray<VersionView>
  }
  | {
    readonly page: "courseRuns"
    readonly course: AuthoringCourseHead
    readonly steps: ReadonlyArray<{ readonly nodeKey: string; readonly title: string }>
    readonly runs: ReadonlyArray<AuthoringRun>
  }
  | {
    readonly page: "courseStaff"
    readonly course: AuthoringCourseHead
    readonly staff: ReadonlyArray<StaffView>
    readonly invitations: ReadonlyArray<EmailInvitationView>
  }
  | { readonly page: "staffInvitation"; readonly invitation: EmailInvitationView }
  | { readonly page: "teaching"; readonly courses: ReadonlyArray<TeachingCourseItem> }
  | { readonly page: "teachingCourse"; readonly course: TeachingCourseItem }
  | { readonly page: "teachingReviews"; readonly course: TeachingHead; readonly status: string; readonly items: ReadonlyArray<ReviewQueueItem>; readonly nextCursor?: string }
  | {
    readonly page: "reviewWorkspace"
    readonly course: TeachingHead
    readonly submissionUuid: string
    readonly learner: string
    readonly step: { readonly nodeKey: string; readonly title: string; readonly body?: string; readonly maxPoints?: number; readonly passThreshold?: number }
    readonly submission: SubmissionView
    readonly assignments: ReadonlyArray<ReviewAssignmentView>
    /** Absent until the caller holds the review (or may read it as an owner or instructor). */
    readonly workspace?: ReviewWorkspaceView
    /** Who a review may be handed to: the course's active staff holding reviews. */
    readonly reviewers: ReadonlyArray<{ readonly profileUuid: string; readonly name: string }>
  }
  | { readonly page: "teachingAppeals"; readonly course: TeachingHead; readonly status: string; readonly items: ReadonlyArray<TeachingAppealView> }
  | { readonly page: "teachingExtensions"; readonly course: TeachingHead; readonly status: string; readonly items: ReadonlyArray<TeachingExtensionView> }
  | { readonly page: "teachingRoster"; readonly course: TeachingHead; readonly status: string; readonly items: ReadonlyArray<RosterItem> }
  | {
    readonly page: "teachingIncidents"
    readonly course: TeachingHead
    readonly runs: ReadonlyArray<{ readonly uuid: string; readonly title: string }>
    readonly steps: ReadonlyArray<{ readonly nodeKey: string; readonly title: string }>
    readonly items: ReadonlyArray<TeachingIncidentView>
  }
  | { readonly page: "teachingAnalytics"; readonly course: TeachingHead; readonly analytics: TeachingAnalyticsView }
  | {
    readonly page: "teachingRegrade"
    readonly course: TeachingHead
    readonly steps: ReadonlyArray<{ readonly nodeKey: string; readonly title: string }>
    readonly plan?: RegradePlanView
  }
  | {
    readonly page: "courseAdmin"
    readonly course: AuthoringCourseHead & { readonly revision: number; readonly kind: string; readonly owner: boolean }
    readonly nodes: ReadonlyArray<{ readonly nodeKey: string; readonly title: string; readonly kind: string }>
    readonly library: ReadonlyArray<LibraryItemView>
    /** The caller's published single courses, which a bundle may hold, and those this one holds now. */
    readonly bundleable: ReadonlyArray<{ readonly uuid: string; readonly title: string }>
    readonly members: ReadonlyArray<{ readonly courseUuid: string; readonly required: boolean }>
    readonly candidates: ReadonlyArray<{ readonly profileUuid: string; readonly name: string; readonly source: string }>
    readonly transfers: ReadonlyArray<OwnershipView>
  }
  | {
    readonly page: "authorLibrary"
    readonly items: ReadonlyArray<LibraryItemView>
    readonly offers: ReadonlyArray<OwnershipView>
  }
  | {
    readonly page: "teachingGroups"
    readonly course: TeachingHead
    readonly runs: ReadonlyArray<{ readonly uuid: string; readonly title: string }>
    readonly groups: ReadonlyArray<GroupView>
    readonly learners: ReadonlyArray<{ readonly enrollmentUuid: string; readonly runUuid: string; readonly learner: string }>
    readonly staff: ReadonlyArray<{ readonly assignmentUuid: string; readonly name: string; readonly role: string }>
  }
  | { readonly page: "teachingExports"; readonly course: TeachingHead; readonly runs: ReadonlyArray<{ readonly uuid: string; readonly title: string }> }
  | { readonly page: "learningJob"; readonly job: LearningJobView }
  | { readonly page: "error"; readonly status: 400 | 404 | 503; readonly field?: string }

export type PageName = PageData["page"]

/** Everything the page shell needs besides the page's own data. */
export interface AppState {
  readonly language: Language
  /** The path and query without `lang` (the language switch adds it). */
  readonly path: string
  readonly query: string
  readonly brand: { readonly name: string; readonly logoUrl: string }
  /** Who is signed in, when the request carried a usable session. */
  readonly session?: {
    readonly name: string
    readonly profileUuid?: string
    readonly moderator?: boolean
    /** Holds the operator role: the header links the admin area. */
    readonly operator?: boolean
    /** Unread notifications (the header's badge); 100 stands for "100 or more". */
    readonly unread?: number
  }
  readonly data: PageData
}

// ---- the author's pages (/authoring, /authoring/courses/{uuid}…, /learning/staff-invitations/{uuid}) ----

/** One of the author's courses (learning.courses.author_list). */
export interface AuthoringCourseItem {
  readonly uuid: string
  readonly title: string
  readonly status: string
  readonly latestVersion: number
  readonly errors: number
  readonly warnings: number
  readonly updatedAt: string
}

/** A step's grading as the course tree holds it (CourseNode.grading in @birzha/domain). */
export interface AuthoringGrading {
  readonly maxPoints: number
  readonly passThreshold?: number
  readonly attempts?: number
  readonly check?: Readonly<Record<string, unknown>>
  readonly checkerUuid?: string
  readonly review?: { readonly mode: string; readonly count?: number; readonly release?: string; readonly moderated?: boolean; readonly dueHours?: number }
  readonly latePolicy?: { readonly mode: string; readonly penaltyPercent?: number }
  readonly selection?: string
}

/** A node of the draft's tree, as saved (fields the editor does not show are kept as they were). */
export interface AuthoringNode {
  readonly nodeKey: string
  readonly parentKey?: string
  readonly kind: "module" | "step"
  readonly title: string
  readonly stepType?: string
  readonly body?: string
  readonly grading?: AuthoringGrading
  readonly unlockOffsetDays?: number
  readonly dueOffsetDays?: number
  readonly demo?: boolean
  readonly variants?: unknown
}

/** The draft as its author edits it (learning.courses.author_get). */
export interface AuthoringCourse {
  readonly uuid: string
  readonly revision: number
  readonly title: string
  readonly summary: string
  readonly visibility: string
  readonly status: string
  readonly latestVersion: number
  readonly nodes: ReadonlyArray<AuthoringNode>
  /** How many problems validation finds (learning.courses.validate lists them: a POST, so the browser reads them). */
  readonly validation: { readonly errors: number; readonly warnings: number }
  readonly diff: { readonly added: ReadonlyArray<string>; readonly removed: ReadonlyArray<string>; readonly changed: ReadonlyArray<string> }
}

/** What the runs and staff pages show of their course. */
export interface AuthoringCourseHead {
  readonly uuid: string
  readonly title: string
  readonly status: string
  readonly latestVersion: number
}

/** A course's checker (learning.checkers.list) with its latest preflight's results. */
export interface CheckerView {
  readonly uuid: string
  readonly revision: number
  readonly name: string
  readonly kind: string
  readonly status: string
  readonly version: number
  readonly rules?: unknown
  /** An external checker's grading service. */
  readonly url?: string
  readonly referenceCases: ReadonlyArray<{ readonly name?: string; readonly reply: string; readonly expected: string }>
  readonly preflight?: PreflightView
}

export interface PreflightView {
  readonly jobUuid: string
  readonly status: string
  readonly passed?: boolean
  readonly cases: ReadonlyArray<{ readonly index: number; readonly name?: string; readonly expected: string; readonly verdict?: string; readonly platformError?: string; readonly passed: boolean }>
}

/** One problem of the draft (learning.courses.validate), at its step when it has one. */
export interface IssueView {
  readonly severity: "error" | "warning"
  readonly code: string
  readonly message: string
  readonly nodeKey?: string
}

export interface VersionView {
  readonly number: number
  readonly changelog: string
  readonly publishedAt: string
}

/** A run of the course (learning.runs.list). */
export interface AuthoringRun {
  readonly uuid: string
  readonly revision: number
  readonly title: string
  readonly versionNumber: number
  readonly status: string
  readonly pacing: string
  readonly admission: string
  readonly startsAt: string
  readonly endsAt?: string
  readonly capacity?: number
}

/** A staff assignment of the course (learning.staff.list). */
export interface StaffView {
  readonly uuid: string
  readonly revision: number
  readonly profileName: string
  readonly role: string
  readonly status: string
  readonly grants: ReadonlyArray<string>
  readonly denies: ReadonlyArray<string>
}

/** An email invitation to a course's staff (learning.staff.email_list, .email_get): the address masked. */
export interface EmailInvitationView {
  readonly uuid: string
  readonly courseUuid: string
  readonly courseTitle: string
  readonly emailHint: string
  readonly role: string
  readonly message: string
  readonly status: string
  readonly expiresAt: string
}

// ---- the admin area (/admin, /admin/accounts, /admin/accounts/{uuid}, /admin/roles), operators only ----

/** admin.health as the health page shows it (AdminHealth in @birzha/domain). */
export interface AdminHealthView {
  readonly readiness: { readonly database: boolean; readonly migrations: boolean }
  readonly events: { readonly outboxDepth: number; readonly sequencingLagSeconds: number }
  readonly webhookDeliveries: { readonly pending: number; readonly succeeded: number; readonly failed: number; readonly cancelled: number }
  readonly gradingJobs: { readonly queued: number; readonly running: number; readonly succeeded: number; readonly failed: number; readonly cancelled: number }
  readonly failingEndpoints: ReadonlyArray<{
    readonly uuid: string
    readonly host: string
    readonly state: string
    readonly failingSince?: string
    readonly disabledReason?: string
    readonly pendingDeliveries: number
  }>
  readonly suspendedCheckers: ReadonlyArray<{
    readonly uuid: string
    readonly name: string
    readonly courseTitle: string
    readonly suspendedAt: string
    readonly automatic: boolean
  }>
}

export interface AdminAccountItem {
  readonly uuid: string
  readonly email: string
  readonly createdAt: string
  readonly deletedAt?: string
}

/** admin.accounts.get: one account with its roles, profiles, sessions and keys (never a secret). */
export interface AdminAccountView {
  readonly account: AdminAccountItem
  readonly roles: ReadonlyArray<"moderator" | "operator">
  readonly profiles: ReadonlyArray<{ readonly uuid: string; readonly name: string; readonly type: string }>
  readonly sessions: ReadonlyArray<{ readonly uuid: string; readonly profileName: string; readonly createdAt: string; readonly expiresAt: string }>
  readonly keys: ReadonlyArray<{
    readonly uuid: string
    readonly name: string
    readonly kind: string
    readonly profileName: string
    readonly scopes: ReadonlyArray<string>
    readonly httpEnabled: boolean
    readonly mcpEnabled: boolean
    readonly state: "live" | "unissued" | "expired" | "revoked"
    readonly lastUsedAt?: string
    readonly expiresAt?: string
  }>
  /** The signed-in operator's own account: it is deleted from the account page, not here. */
  readonly self: boolean
}

export interface AdminRoleHolder {
  readonly email: string
  readonly source: "cli" | "config"
  readonly grantedAt: string
}

export interface AdminActionItem {
  readonly uuid: string
  readonly operator: string
  readonly operation: string
  readonly target: string
  readonly detail: Readonly<Record<string, string | boolean>>
  readonly createdAt: string
}
// ---- course administration (/authoring/courses/{uuid}/admin, /authoring/library, /teaching/{course}/groups|exports, /learning/jobs/{uuid}) ----

/** A saved part of a course in the author's library (learning.library.list). */
export interface LibraryItemView {
  readonly uuid: string
  readonly title: string
  readonly modules: number
  readonly steps: number
  readonly createdAt: string
}

/** An invitation to take a course's ownership (learning.ownership.invitations). */
export interface OwnershipView {
  readonly uuid: string
  readonly courseUuid: string
  readonly courseTitle: string
  readonly toProfileName: string
  readonly previousOwnerRole: string
  readonly message: string
  readonly status: string
  readonly expiresAt: string
}

/** A group of a run with its members and staff as the teaching pages show them. */
export interface GroupView {
  readonly uuid: string
  readonly revision: number
  readonly runUuid: string
  readonly name: string
  readonly kind: string
  readonly visibility: string
  readonly assignment: string
  readonly capacity?: number
  readonly status: string
  readonly memberCount: number
  readonly members: ReadonlyArray<{ readonly enrollmentUuid: string; readonly learner: string }>
  readonly staff: ReadonlyArray<{ readonly assignmentUuid: string; readonly name: string; readonly role: string }>
}

/** An export, import or analytics export of the caller (learning.exports.get). */
export interface LearningJobView {
  readonly uuid: string
  readonly kind: string
  readonly status: string
  readonly courseUuid?: string
  readonly enrollmentUuid?: string
  readonly fileUuid?: string
  readonly resultCourseUuid?: string
  readonly issues: ReadonlyArray<{ readonly code: string; readonly message: string }>
  readonly createdAt: string
  readonly finishedAt?: string
  readonly expiresAt?: string
}

/** A message of the development mailbox (admin.mail.list). */
export interface AdminMailItem {
  readonly uuid: string
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly createdAt: string
}
