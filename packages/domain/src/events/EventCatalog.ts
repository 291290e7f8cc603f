import { Schema } from "effect"
import { type AnyKind, kindList, kinds } from "../publications/Kinds.js"
import { EventEnvelope } from "./EventEnvelope.js"
import { type EventType, EventType as EventTypeSchema, eventTypes } from "./EventType.js"

/** An operation that reads the record an event is about: its id, and the method and path the operation catalog declares. */
export interface ReadOperation {
  readonly operationId: string
  readonly method: "GET"
  readonly path: string
}

/**
 * The operation ids only: their method and path are the declarations' (`eventCatalogOf`), so a
 * moved path cannot leave the catalog behind and an id naming no GET operation stops the start.
 */
type ReadId = string

/** The owner's read of a publication of one kind (`tasks.get`...). */
const ownGet = (kind: AnyKind): ReadId => `${kind.command}.get`

/** What every event about one kind of record shares: who may see it and how the record is read. */
interface AggregateKind {
  readonly visibleTo: string
  /** The scopes with which a bearer key reads the record itself (any one of them, beyond `events:read`). */
  readonly scopes: ReadonlyArray<string>
  readonly read: ReadonlyArray<ReadId>
  readonly readNote: string
}

const learner = "the learner and the course's staff"

/** The kinds of records events are about; `aggregate.kind` of the envelope. */
const aggregates = {
  complaint: {
    visibleTo: "the profile that filed the complaint",
    scopes: ["complaints:read"],
    read: ["complaints.get"],
    readNote: "query complaintUuid = objectUuid"
  },
  deal: {
    visibleTo: "both parties of the deal",
    scopes: ["deals:read"],
    read: ["deals.get"],
    readNote: "query relationUuid = objectUuid"
  },
  favorite: {
    visibleTo: "the profile whose favorites changed",
    scopes: ["favorites:read"],
    read: ["favorites.list"],
    readNote: "objectUuid is the profile or publication added or removed"
  },
  file: {
    visibleTo: "the profile that uploaded the file",
    scopes: ["files:read"],
    read: ["files.status"],
    readNote: "path uuid = objectUuid"
  },
  job_contact: {
    visibleTo: "the job's owner and the applicant or invited resume owner",
    scopes: ["responses:read"],
    read: ["job_contacts.get"],
    readNote: "query relationUuid = objectUuid"
  },
  learning_appeal: {
    visibleTo: learner,
    scopes: ["learning:read"],
    read: ["learning.appeals.list_for_submission"],
    readNote: "context.submissionUuid names the submission"
  },
  learning_checker: {
    visibleTo: "the course's staff",
    scopes: ["learning:read"],
    read: ["learning.checkers.get"],
    readNote: "path checker = objectUuid, course = context.courseUuid"
  },
  learning_course: {
    visibleTo: "the course's staff and its enrolled learners",
    scopes: ["learning:read"],
    read: ["learning.courses.get"],
    readNote: "path course = objectUuid"
  },
  learning_enrollment: {
    visibleTo: learner,
    scopes: ["learning:read"],
    read: ["learning.enrollments.get"],
    readNote: "path enrollment = objectUuid"
  },
  learning_review: {
    visibleTo: "the reviewer and the course's staff",
    scopes: ["learning:read"],
    read: ["learning.reviews.assignment"],
    readNote: "path submission = context.submissionUuid"
  },
  learning_run: {
    visibleTo: "the run's staff and learners",
    scopes: ["learning:read"],
    read: ["learning.runs.list"],
    readNote: "path course = context.courseUuid; the run is objectUuid"
  },
  learning_submission: {
    visibleTo: learner,
    scopes: ["learning:read"],
    read: ["learning.submissions.get"],
    readNote: "path submission = objectUuid"
  },
  learning_thread: {
    visibleTo: "the thread's participants and the course's staff",
    scopes: ["learning:read"],
    read: ["learning.community.get"],
    readNote: "path thread = objectUuid"
  },
  message: {
    visibleTo: "the participants of the thread",
    scopes: ["threads:read"],
    read: ["threads.messages"],
    readNote: "query threadUuid = context.threadUuid; the message is objectUuid"
  },
  offer: {
    visibleTo: "the offer's sender and recipient",
    scopes: ["offers:read"],
    read: ["offers.get"],
    readNote: "query relationUuid = objectUuid"
  },
  profile: {
    visibleTo: "the profile itself",
    scopes: ["profiles:read"],
    read: ["profiles.get_own"],
    readNote: "the acting profile's own view"
  },
  publication: {
    visibleTo: "the publication's owner profile",
    scopes: kindList.map((kind) => kind.scopes.read),
    read: kindList.map(ownGet),
    readNote: "the get of the publication's kind (context.kind: task → tasks.get ...), query publicationUuid = objectUuid"
  },
  response: {
    visibleTo: "the responding profile and the task's owner",
    scopes: ["responses:read"],
    read: ["responses.get"],
    readNote: "query relationUuid = objectUuid"
  },
  review: {
    visibleTo: "the review's author and the reviewed profile",
    scopes: ["reviews:read"],
    read: ["reviews.list_own"],
    readNote: "the review is objectUuid"
  }
} satisfies Record<string, AggregateKind>

export type AggregateKindName = keyof typeof aggregates

/** One row of the table: the record kind, the values `data.status` takes, and what happened. */
interface TypeRow {
  readonly kind: AggregateKindName
  readonly statuses: ReadonlyArray<string>
  readonly summary: string
  /** Overrides the kind's read operation when the event concerns one facet of the record. */
  readonly read?: { readonly operations: ReadonlyArray<ReadId>; readonly note: string }
  /** Narrower than the kind's scopes (task.closed is only about tasks). */
  readonly scopes?: ReadonlyArray<string>
}

const enrollment = (statuses: ReadonlyArray<string>, summary: string): TypeRow => ({ kind: "learning_enrollment", statuses, summary })
const completion = { operations: ["learning.completion.get"], note: "path enrollment = objectUuid" }
const calendar = { operations: ["learning.calendar.get"], note: "path enrollment = objectUuid" }

/**
 * The one table the catalog is generated from: one row per event type. Emitters write `data.status`
 * from these values, so the catalog and the events agree.
 */
const table: { readonly [Type in EventType]: TypeRow } = {
  "complaint.created": { kind: "complaint", statuses: ["open"], summary: "A complaint was filed" },
  "complaint.moderated": { kind: "complaint", statuses: ["upheld", "dismissed"], summary: "A moderator decided on a complaint" },
  "deal.started": { kind: "deal", statuses: ["active"], summary: "An accepted offer or response started a deal" },
  "deal.status_changed": {
    kind: "deal",
    statuses: ["results_submitted", "active", "completed", "terminated"],
    summary: "A deal moved on: work handed over, sent back for changes (active), accepted (also automatically 14 days after a handover: context.cause auto_complete), or cooperation ended"
  },
  "favorite.changed": { kind: "favorite", statuses: ["added", "removed"], summary: "A profile or publication was added to or removed from favorites" },
  "file.ready": { kind: "file", statuses: ["ready"], summary: "An uploaded file passed its checks and can be attached" },
  "job_invitation.received": { kind: "job_contact", statuses: ["invited"], summary: "An employer invited a resume's owner to a job" },
  "job_invitation.status_changed": { kind: "job_contact", statuses: ["accepted", "declined"], summary: "The invited profile answered an invitation" },
  "job_invitation.withdrawn": { kind: "job_contact", statuses: ["withdrawn"], summary: "The employer withdrew an invitation" },
  "job_response.received": { kind: "job_contact", statuses: ["applied"], summary: "A profile responded to a job" },
  "job_response.status_changed": { kind: "job_contact", statuses: ["accepted", "declined"], summary: "The job's owner answered a response" },
  "job_response.withdrawn": { kind: "job_contact", statuses: ["withdrawn"], summary: "The applicant withdrew a response to a job" },
  "learning.appeal.opened": { kind: "learning_appeal", statuses: ["open"], summary: "A learner appealed a grade" },
  "learning.checker.failed": { kind: "learning_checker", statuses: ["failed"], summary: "A checker could not grade a submission" },
  "learning.community.created": { kind: "learning_thread", statuses: ["open"], summary: "A question or discussion thread was opened" },
  "learning.community.replied": { kind: "learning_thread", statuses: ["open", "answered"], summary: "Someone replied in a thread: a learner (open) or staff (answered)" },
  "learning.community.resolved": { kind: "learning_thread", statuses: ["resolved"], summary: "A thread was marked resolved" },
  "learning.course.completed": { ...enrollment(["completed"], "A learner completed a course"), read: completion },
  "learning.course.published": { kind: "learning_course", statuses: ["published"], summary: "A course version was published" },
  "learning.deadline.approaching": { ...enrollment(["approaching"], "A deadline of the learner is near"), read: calendar },
  "learning.deadline.changed": { ...enrollment(["changed"], "A deadline of the learner changed"), read: calendar },
  "learning.enrollment.activated": enrollment(["active"], "An enrollment became active"),
  "learning.enrollment.completed": enrollment(["completed"], "An enrollment was completed"),
  "learning.enrollment.invited": enrollment(["invited", "offered"], "A profile was invited to a course run, or offered a freed seat (offered)"),
  "learning.enrollment.pause": enrollment(["paused"], "An enrollment was paused"),
  "learning.enrollment.requested": enrollment(["requested", "waitlisted"], "A profile asked to enroll, or joined the waitlist (waitlisted)"),
  "learning.enrollment.restored": enrollment(["active", "paused"], "A withdrawn or removed enrollment was restored"),
  "learning.enrollment.resume": enrollment(["active"], "A paused enrollment was resumed"),
  "learning.enrollment.start": enrollment(["active"], "A learner started a course run"),
  "learning.enrollment.transferred": enrollment(["active", "paused"], "An enrollment was moved to another run"),
  "learning.enrollment.withdraw": enrollment(["withdrawal_requested", "withdrawn"], "A learner asked to withdraw (withdrawn at once when the run has no grace)"),
  "learning.enrollment.withdrawn": enrollment(["withdrawn", "declined", "expired", "rejected"], "An enrollment ended: withdrawn, a seat or invitation declined or expired, a request rejected"),
  "learning.module.completed": { ...enrollment(["completed"], "A learner completed a module"), read: completion },
  "learning.review.overdue": { kind: "learning_review", statuses: ["overdue"], summary: "A review assignment passed its due time" },
  "learning.review.requested": { kind: "learning_review", statuses: ["requested"], summary: "A submission was assigned for review" },
  "learning.revision.requested": { kind: "learning_submission", statuses: ["revision_requested"], summary: "A reviewer asked for a revision" },
  "learning.run.cancelled": { kind: "learning_run", statuses: ["cancelled"], summary: "A course run was cancelled" },
  "learning.step.available": {
    ...enrollment(["available"], "A step became available to the learner"),
    read: {
      operations: ["learning.steps.get"],
      note: "path enrollment = objectUuid, node = context.nodeKey"
    }
  },
  "learning.submission.accepted": { kind: "learning_submission", statuses: ["accepted"], summary: "A submission passed: accepted" },
  "learning.submission.graded": { kind: "learning_submission", statuses: ["graded"], summary: "A submission received its grade" },
  "message.received": { kind: "message", statuses: ["sent"], summary: "A message arrived in a thread" },
  "offer.received": { kind: "offer", statuses: ["pending"], summary: "An offer was made to the profile" },
  "offer.status_changed": { kind: "offer", statuses: ["accepted", "declined"], summary: "The recipient answered an offer" },
  "offer.withdrawn": { kind: "offer", statuses: ["withdrawn"], summary: "The sender withdrew an offer" },
  "profile.updated": { kind: "profile", statuses: ["updated"], summary: "A profile's data was replaced" },
  "publication.deleted": { kind: "publication", statuses: ["deleted"], summary: "The owner deleted a publication" },
  "publication.draft_saved": { kind: "publication", statuses: ["draft"], summary: "The owner saved a publication's draft" },
  "publication.hidden": { kind: "publication", statuses: ["hidden"], summary: "The owner hid a publication" },
  "publication.moderated": {
    kind: "publication",
    statuses: ["approved", "returned", "rejected"],
    summary: "A moderator approved, returned or rejected a publication"
  },
  "publication.restored": { kind: "publication", statuses: ["restored"], summary: "The owner made a hidden publication visible again" },
  "publication.submitted": { kind: "publication", statuses: ["pending"], summary: "The owner submitted a publication for moderation" },
  "response.received": { kind: "response", statuses: ["pending"], summary: "A profile responded to a task" },
  "response.status_changed": {
    kind: "response",
    statuses: ["shortlisted", "accepted", "declined"],
    summary: "The task's owner shortlisted, accepted or declined a response (declined also when the responder's counterpart was deleted)"
  },
  "response.withdrawn": { kind: "response", statuses: ["withdrawn"], summary: "The responder withdrew a response" },
  "review.moderated": { kind: "review", statuses: ["published", "removed"], summary: "A moderator decided on a review" },
  "review.submitted": { kind: "review", statuses: ["submitted"], summary: "A review of completed work was submitted" },
  [kinds.task.closedEvent]: {
    kind: "publication",
    scopes: [kinds.task.scopes.read],
    statuses: ["closed"],
    summary: "The owner closed a task to further responses",
    read: { operations: [ownGet(kinds.task)], note: "query publicationUuid = objectUuid" }
  }
}

// ---- the catalog's wire shape -------------------------------------------------------------

export const EventField = Schema.Struct({
  name: Schema.String,
  type: Schema.String,
  format: Schema.optional(Schema.String),
  values: Schema.optional(Schema.Array(Schema.String)),
  description: Schema.String
}).annotations({ identifier: "EventField" })

export const EventCatalogEntry = Schema.Struct({
  type: EventTypeSchema,
  schemaVersion: Schema.Int,
  summary: Schema.String,
  aggregateKind: Schema.String,
  /** `data` of the reference payload mode. */
  fields: Schema.Array(EventField),
  permissions: Schema.Struct({
    /** Bearer scopes: `events:read` for the event, then those that read the record it names (any one of them). */
    scopes: Schema.Array(Schema.String),
    visibleTo: Schema.String
  }),
  read: Schema.Struct({
    operations: Schema.Array(Schema.Struct({ operationId: Schema.String, method: Schema.String, path: Schema.String })),
    note: Schema.String
  }),
  sample: EventEnvelope
}).annotations({ identifier: "EventCatalogEntry" })

export const EventCatalog = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  types: Schema.Array(EventCatalogEntry)
}).annotations({ identifier: "EventCatalog" })

export type EventCatalog = typeof EventCatalog.Type

/** Every event of this version has schemaVersion 1. */
export const currentSchemaVersion = 1

const sampleUuid = (n: number, tag: string) => `${tag}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

/** How one event type's record is read: the row's own operations, or its kind's. */
const readOf = (type: EventType): { readonly operations: ReadonlyArray<ReadId>; readonly note: string } => {
  const row = table[type]
  const kind: AggregateKind = aggregates[row.kind]
  return row.read ?? { operations: kind.read, note: kind.readNote }
}

const entryOf = (resolve: (id: ReadId) => ReadOperation) => (type: EventType, index: number): typeof EventCatalogEntry.Type => {
  const row = table[type]
  const kind: AggregateKind = aggregates[row.kind]
  const objectUuid = sampleUuid(index + 1, "0b1ec700")
  const read = readOf(type)
  return {
    type,
    schemaVersion: currentSchemaVersion,
    summary: row.summary,
    aggregateKind: row.kind,
    fields: [
      { name: "objectUuid", type: "string", format: "uuid", description: `The ${row.kind.replace(/_/g, " ")} the event is about` },
      { name: "status", type: "string", values: row.statuses, description: "Its status right after the change" }
    ],
    permissions: { scopes: ["events:read", ...(row.scopes ?? kind.scopes)], visibleTo: kind.visibleTo },
    read: { operations: read.operations.map(resolve), note: read.note },
    sample: {
      uuid: sampleUuid(index + 1, "e0e0e0e0"),
      type,
      schemaVersion: currentSchemaVersion,
      occurredAt: new Date("2026-10-15T12:00:00.000Z"),
      aggregate: { kind: row.kind, uuid: objectUuid, revision: 3 },
      data: { objectUuid, status: row.statuses[0]! },
      context: { profileUuid: sampleUuid(1, "9f0f11e0") }
    }
  }
}

/** An operation of the catalog as `eventCatalogOf` needs it (`kernel/Operation.ts`'s `CatalogEntry` is one). */
export interface DeclaredOperation {
  readonly id: string
  readonly method: string
  readonly path: string
}

/**
 * `GET /api/v1/event-catalog`, in the spec's order of types, with each read operation's method
 * and path taken from `operations` (the API's catalog; this module cannot import it, the API
 * declares the events group). Throws naming every read id that is no GET operation of it: the
 * events group's implementation builds this at the registry's start, so such an id stops the start.
 */
export const eventCatalogOf = (operations: ReadonlyArray<DeclaredOperation>): EventCatalog => {
  const byId = new Map(operations.map((operation) => [operation.id, operation]))
  const ids = [...new Set(eventTypes.flatMap((type) => readOf(type).operations))]
  const wrong = ids.filter((id) => byId.get(id)?.method !== "GET")
  if (wrong.length > 0) throw new Error(`event catalog: ${wrong.join(", ")}: no GET operation of that id in the catalog`)
  const resolve = (id: ReadId): ReadOperation => ({ operationId: id, method: "GET", path: byId.get(id)!.path })
  return { schemaVersion: 1, types: eventTypes.map(entryOf(resolve)) }
}

/** What the workers tell of an event without its wire catalog: its summary and the first operation that reads its record. */
export const eventDescription = (type: string): { readonly summary: string; readonly readOperationId: string | undefined } | undefined =>
  Object.hasOwn(table, type)
    ? { summary: table[type as EventType].summary, readOperationId: readOf(type as EventType).operations[0] }
    : undefined

/** The record kind each event type is about (emitters and the visibility rule agree on these names). */
export const aggregateKindOf = (type: EventType): AggregateKindName => table[type].kind
