import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { InvalidRequest, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../kernel/ApiError.js"
import { hideProfileRow } from "../profiles/ProfileRepository.js"
import type { Moderator } from "../publications/Moderation.js"
import { unpublishPublication } from "../publications/PublicationRepository.js"
import { lockReview, relationReviews } from "../reviews/ReviewRepository.js"
import { moveReview } from "../reviews/Reviews.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { requireRevision } from "../store/Revision.js"
import { hideMessageRow } from "../threads/ThreadRepository.js"
import {
  type ComplaintAction,
  type ComplaintDecisionInput,
  ComplaintDecisionResult,
  type ComplaintQueueItem,
  type ComplaintStatus,
  type ComplaintSubjectKind
} from "./Complaint.js"
import { type ComplaintRow, decideComplaint, lockComplaint, lockOpenOnSubject, openOnSubjects, queuePage } from "./ComplaintRepository.js"
import { complaintView } from "./Complaints.js"
import { auditRead, recordDecision } from "./ModerationRepository.js"
import { subjectFacts } from "./Subjects.js"

/** The action an uphold may take on each subject kind; `none` fits every kind. */
export const actionsFor: Readonly<Record<ComplaintSubjectKind, ReadonlyArray<ComplaintAction>>> = {
  publication: ["unpublish", "none"],
  message: ["hide_message", "none"],
  profile: ["hide_profile", "none"],
  relation: ["remove_review", "none"]
}

/** Whether a subject as it is now is private (a moderator's read of it is audited). */
const isPrivate = (kind: ComplaintSubjectKind, now: Readonly<Record<string, unknown>>) =>
  kind === "message" || kind === "relation" || (kind === "profile" && now["isPublic"] !== true) ||
  (kind === "publication" && now["approved"] === null)

/**
 * The complaints queue (oldest first, open by default): each with the author's snapshot, the
 * subject now, the other open complaints on the same subject and, for a relation, its reviews.
 * Every read of a private subject is written to `moderation_audit`.
 */
export const complaintQueue = (
  moderator: Moderator,
  query: { status?: ComplaintStatus | undefined; subjectKind?: ComplaintSubjectKind | undefined; cursor?: string | undefined; limit?: number | undefined }
): Effect.Effect<{ readonly items: ReadonlyArray<ComplaintQueueItem>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    const rows = yield* queuePage({ status: query.status ?? "open", subjectKind: query.subjectKind, after, limit: limit + 1 })
    const page = rows.slice(0, limit)
    const open = yield* openOnSubjects([...new Set(page.map((row) => row.subject_uuid))])
    const extras = new Map<string, { now?: Readonly<Record<string, unknown>>; reviews?: ComplaintQueueItem["reviews"] }>()
    for (const row of page) {
      const facts = yield* subjectFacts(row.subject_kind, row.subject_uuid, undefined)
      const reviews = row.subject_kind === "relation"
        ? (yield* relationReviews(row.subject_uuid)).map((review) => ({
          uuid: review.uuid,
          status: review.status,
          rating: review.rating,
          body: review.body,
          authorProfileUuid: review.author_profile_uuid
        }))
        : undefined
      if (facts.exists && isPrivate(row.subject_kind, facts.snapshot)) {
        yield* auditRead({
          moderatorAccountUuid: moderator.accountUuid,
          moderator: moderator.name,
          subjectKind: row.subject_kind,
          subjectUuid: row.subject_uuid,
          complaintUuid: row.uuid
        })
      }
      extras.set(row.uuid, { ...(facts.exists ? { now: facts.snapshot } : {}), ...(reviews === undefined ? {} : { reviews }) })
    }
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row): ComplaintQueueItem => {
      const extra = extras.get(row.uuid) ?? {}
      return {
        ...complaintView(row),
        authorProfileUuid: row.author_profile_uuid,
        subjectSnapshot: row.subject_snapshot,
        ...(extra.now === undefined ? {} : { subjectNow: extra.now }),
        otherOpenComplaints: open
          .filter((other) => other.subject_uuid === row.subject_uuid && other.subject_kind === row.subject_kind && other.uuid !== row.uuid)
          .map((other) => ({ uuid: other.uuid, body: other.body, createdAt: other.created_at })),
        ...(extra.reviews === undefined ? {} : { reviews: extra.reviews })
      }
    })
  })

/** Carries out an uphold's action on the subject, with the subject's own event. */
const applyAction = (row: ComplaintRow, action: ComplaintAction, input: ComplaintDecisionInput, moderator: Moderator) =>
  Effect.gen(function*() {
    switch (action) {
      case "none":
        return
      case "unpublish": {
        const revision = Option.getOrUndefined(yield* unpublishPublication(row.subject_uuid, input.reason))
        if (revision === undefined) return yield* new InvalidState({ message: "The publication no longer exists" })
        yield* appendEvent({
          type: "publication.moderated",
          aggregate: { kind: "publication", uuid: row.subject_uuid, revision },
          data: { objectUuid: row.subject_uuid, status: "returned" },
          context: { moderation: "unpublish", complaintUuid: row.uuid }
        })
        return
      }
      case "hide_message":
        if (!(yield* hideMessageRow(row.subject_uuid))) return yield* new InvalidState({ message: "The message no longer exists" })
        return
      case "hide_profile": {
        const revision = Option.getOrUndefined(yield* hideProfileRow(row.subject_uuid))
        if (revision === undefined) return yield* new InvalidState({ message: "The profile no longer exists" })
        yield* appendEvent({
          type: "profile.updated",
          aggregate: { kind: "profile", uuid: row.subject_uuid, revision },
          data: { objectUuid: row.subject_uuid, status: "updated" },
          context: { audience: [row.subject_uuid], moderation: "hide_profile" }
        })
        return
      }
      case "remove_review": {
        const review = Option.getOrUndefined(yield* lockReview(input.reviewUuid!))
        if (review === undefined || review.relation_uuid !== row.subject_uuid) {
          return yield* new InvalidRequest({ message: "reviewUuid: not a review of the complaint's relation" })
        }
        if (review.status !== "published") {
          return yield* new InvalidState({ message: `The review is ${review.status}; only a published review is removed` })
        }
        const revision = yield* moveReview(review, "removed", { reason: input.reason, context: { moderation: "remove", complaintUuid: row.uuid } })
        yield* recordDecision({
          subjectKind: "review",
          subjectUuid: review.uuid,
          subjectRevision: revision,
          moderatorAccountUuid: moderator.accountUuid,
          moderator: moderator.name,
          decision: "remove",
          action: null,
          reason: input.reason
        })
        return
      }
    }
  })

/**
 * `moderation.complaints.decide`, once per `requestUuid`: an open complaint at
 * `expectedRevision` is upheld (with an action fitting its subject) or dismissed. An uphold decides
 * every open complaint on the same subject. `complaint.moderated` goes to each author, with no
 * `profileUuid` (the moderator is never named).
 */
export const decideComplaintModeration = (
  moderator: Moderator,
  input: ComplaintDecisionInput
): Effect.Effect<ComplaintDecisionResult, NotFound | InvalidState | InvalidRequest | RevisionConflict | RequestConflict | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const action: ComplaintAction = input.action ?? "none"
    if (input.decision === "dismiss" && action !== "none") {
      return yield* new InvalidRequest({ message: "action: a dismissal takes no action (leave it out or send none)" })
    }
    if (action === "remove_review" && input.reviewUuid === undefined) {
      return yield* new InvalidRequest({ message: "reviewUuid: remove_review needs the review of the relation to remove" })
    }
    if (action !== "remove_review" && input.reviewUuid !== undefined) {
      return yield* new InvalidRequest({ message: "reviewUuid: only remove_review takes a review" })
    }
    return yield* idempotent(
      {
        scope: moderator.accountUuid ?? "cli",
        operationId: "moderation.complaints.decide",
        requestUuid: input.requestUuid,
        request: input,
        result: ComplaintDecisionResult
      },
      Effect.gen(function*() {
        const row = Option.getOrUndefined(yield* lockComplaint(input.complaintUuid))
        if (row === undefined) return yield* new NotFound({ message: "No such complaint" })
        yield* requireRevision("complaint", row.revision, input.expectedRevision)
        if (row.status !== "open") return yield* new InvalidState({ message: `The complaint is already ${row.status}` })
        if (!actionsFor[row.subject_kind].includes(action)) {
          return yield* new InvalidRequest({
            message: `action: a complaint about a ${row.subject_kind} takes ${actionsFor[row.subject_kind].join(" or ")}`
          })
        }
        const status = input.decision === "uphold" ? "upheld" : "dismissed"
        const others = input.decision === "uphold" ? yield* lockOpenOnSubject(row.subject_kind, row.subject_uuid, row.uuid) : []
        if (input.decision === "uphold") yield* applyAction(row, action, input, moderator)
        let decided: ComplaintRow = row
        for (const complaint of [row, ...others]) {
          const updated = yield* decideComplaint(complaint.uuid, { status, decision: input.decision, action, reason: input.reason })
          if (complaint.uuid === row.uuid) decided = updated
          yield* recordDecision({
            subjectKind: "complaint",
            subjectUuid: complaint.uuid,
            subjectRevision: updated.revision,
            moderatorAccountUuid: moderator.accountUuid,
            moderator: moderator.name,
            decision: input.decision,
            action,
            reason: input.reason
          })
          yield* appendEvent({
            type: "complaint.moderated",
            aggregate: { kind: "complaint", uuid: complaint.uuid, revision: updated.revision },
            data: { objectUuid: complaint.uuid, status, action },
            context: { audience: [complaint.author_profile_uuid], moderation: input.decision }
          })
        }
        return { complaint: complaintView(decided), alsoDecided: others.map((other) => other.uuid) }
      })
    )
  })
