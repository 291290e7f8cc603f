import { Schema } from "effect"

/** The event types of the spec, in its order. The one list every surface (API, catalog, rules) reads. */
export const eventTypes = [
  "complaint.created",
  "complaint.moderated",
  "deal.started",
  "deal.status_changed",
  "favorite.changed",
  "file.ready",
  "job_invitation.received",
  "job_invitation.status_changed",
  "job_invitation.withdrawn",
  "job_response.received",
  "job_response.status_changed",
  "job_response.withdrawn",
  "learning.appeal.opened",
  "learning.checker.failed",
  "learning.community.created",
  "learning.community.replied",
  "learning.community.resolved",
  "learning.course.completed",
  "learning.course.published",
  "learning.deadline.approaching",
  "learning.deadline.changed",
  "learning.enrollment.activated",
  "learning.enrollment.completed",
  "learning.enrollment.invited",
  "learning.enrollment.pause",
  "learning.enrollment.requested",
  "learning.enrollment.restored",
  "learning.enrollment.resume",
  "learning.enrollment.start",
  "learning.enrollment.transferred",
  "learning.enrollment.withdraw",
  "learning.enrollment.withdrawn",
  "learning.module.completed",
  "learning.review.overdue",
  "learning.review.requested",
  "learning.revision.requested",
  "learning.run.cancelled",
  "learning.step.available",
  "learning.submission.accepted",
  "learning.submission.graded",
  "message.received",
  "offer.received",
  "offer.status_changed",
  "offer.withdrawn",
  "profile.updated",
  "publication.deleted",
  "publication.draft_saved",
  "publication.hidden",
  "publication.moderated",
  "publication.restored",
  "publication.submitted",
  "response.received",
  "response.status_changed",
  "response.withdrawn",
  "review.moderated",
  "review.submitted",
  "task.closed",
] as const

export type EventType = (typeof eventTypes)[number]

const known: ReadonlySet<string> = new Set(eventTypes)

/**
 * One of the 57 types. A set lookup rather than `Schema.Literal(...57)`: a literal union checks
 * members one by one, which made encoding the event-type list the host's hottest code (bench/).
 * The JSON Schema (and so OpenAPI) still shows the enum.
 */
export const EventType: Schema.Schema<EventType, string> = Schema.String.pipe(
  Schema.filter((value): value is EventType => known.has(value), {
    message: () => "expected one of the service's event types"
  })
).annotations({
  identifier: "EventType",
  description: "An event type of the service",
  jsonSchema: { type: "string", enum: [...eventTypes] }
})
