import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { Forbidden, type InvalidRequest, InvalidState, NotFound, type RequestConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { lockSubject } from "../auth/RateLimit.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { type ComplaintInput, ComplaintView } from "./Complaint.js"
import {
  authorComplaint,
  authorComplaintPage,
  type ComplaintRow,
  countOpenComplaints,
  hasOpenComplaint,
  insertComplaint
} from "./ComplaintRepository.js"
import { subjectFacts } from "./Subjects.js"

/** At most this many open complaints per profile. */
export const maxOpenComplaints = 20

/** A complaint in its author's view: the decision and reason, never the moderator nor the snapshot. */
export const complaintView = (row: ComplaintRow): ComplaintView => ({
  uuid: row.uuid,
  subjectKind: row.subject_kind,
  subjectUuid: row.subject_uuid,
  body: row.body,
  status: row.status,
  ...(row.decision === null || row.decided_at === null ? {} : {
    decision: { decision: row.decision, action: row.action ?? "none", reason: row.reason ?? "", decidedAt: row.decided_at }
  }),
  revision: row.revision,
  createdAt: row.created_at
})

/**
 * `complaints.create`, once per `requestUuid`: the subject must be visible to the
 * author (404 otherwise) and not its own account's (403); one open complaint per author and subject
 * (409), at most 20 open (403). The snapshot of the subject is kept for moderators.
 * `complaint.created` goes to the author alone: the subject is never told.
 */
export const createComplaint = (
  actor: Actor,
  input: ComplaintInput
): Effect.Effect<ComplaintView, NotFound | Forbidden | InvalidState | RequestConflict | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { scope: actor.profileUuid, operationId: "complaints.create", requestUuid: input.requestUuid, request: input, result: ComplaintView },
    Effect.gen(function*() {
      const me = actor.profileUuid
      const subject = yield* subjectFacts(input.subjectKind, input.subjectUuid, { profileUuid: me, accountUuid: actor.accountUuid })
      if (!subject.exists || !subject.visible) return yield* new NotFound({ message: `No such ${input.subjectKind}` })
      if (subject.own) return yield* new Forbidden({ message: `You cannot complain about your own ${input.subjectKind}` })
      yield* lockSubject(`complaints:${me}`)
      if (yield* hasOpenComplaint(me, input.subjectKind, input.subjectUuid)) {
        return yield* new InvalidState({ message: `You already have an open complaint about this ${input.subjectKind}` })
      }
      if ((yield* countOpenComplaints(me)) >= maxOpenComplaints) {
        return yield* new Forbidden({ message: `At most ${maxOpenComplaints} open complaints; wait for the moderators' decisions` })
      }
      const row = yield* insertComplaint({
        authorProfileUuid: me,
        subjectKind: input.subjectKind,
        subjectUuid: input.subjectUuid,
        body: input.body,
        snapshot: subject.snapshot
      })
      yield* appendEvent({
        type: "complaint.created",
        aggregate: { kind: "complaint", uuid: row.uuid, revision: row.revision },
        data: { objectUuid: row.uuid, status: row.status, subjectKind: row.subject_kind },
        context: { profileUuid: me }
      })
      return complaintView(row)
    })
  )

/** `complaints.get`: the author's own complaint; anyone else's is 404. */
export const getComplaint = (actor: Actor, uuid: string): Effect.Effect<ComplaintView, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(authorComplaint(actor.profileUuid, uuid), (row) =>
    Option.isNone(row) ? Effect.fail(new NotFound({ message: "No such complaint" })) : Effect.succeed(complaintView(row.value)))

/** `complaints.list`: the author's complaints, newest first. */
export const listComplaints = (
  actor: Actor,
  query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
): Effect.Effect<{ readonly items: ReadonlyArray<ComplaintView>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    const rows = yield* authorComplaintPage(actor.profileUuid, after, limit + 1)
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), complaintView)
  })
