import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema, type Types } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound, type RequestConflict, type RevisionConflict, stateRefusal } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { type LimitReached, lockSubject } from "../auth/RateLimit.js"
import type { EventType } from "../events/EventType.js"
import { PublicationKind } from "../publications/Publication.js"
import { publiclyVisible } from "../publications/Visibility.js"
import { countCompletedDeal, ensureCustomerAlias } from "../reviews/CustomerAliasRepository.js"
import { reviewWindowMs } from "../reviews/Review.js"
import { decodeCursor, encodeCursor } from "../store/Cursor.js"
import { rowsDecoder } from "../store/Rows.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { requireRevision } from "../store/Revision.js"
import { lockThreadOf } from "../threads/ThreadRepository.js"
import { postMessage, reachableProfile, relationThread } from "../threads/Threads.js"
import { countLimit, countNewContact, limits } from "./Limits.js"
import { checkReferences } from "./References.js"
import { type RelationPage, type RelationView, RelationView as RelationViewSchema, type ReferenceView } from "./Relation.js"
import { InvalidReference } from "./RelationErrors.js"
import { pageSize, type Reference } from "./RelationFields.js"
import {
  appendHistory,
  hasOpenJobContact,
  hasOpenResponse,
  type HistoryRow,
  historyRows,
  insertRelation,
  insertResults,
  latestRelationUuid,
  lockDueDeals,
  lockOpenRelationsOf,
  lockOpenResponsesTo,
  lockRelation,
  type NewRelation,
  type RelationRow,
  relationPageRows,
  relationViewRow,
  type RelationViewRow,
  updateRelation
} from "./RelationRepository.js"
import {
  actorMatches,
  aggregateKindOf,
  allowedActions,
  closedByDeletion,
  createdEvent,
  type Family,
  familyKinds,
  initialStatus,
  type RelationKind,
  type Role,
  otherRole,
  rowsFor,
  statusesOf,
  statusInputs,
  systemTransitions,
  type TransitionOperation
} from "./Transitions.js"

type Sql = SqlClient.SqlClient

const noRelation = () => new NotFound({ message: "No such relation" })

/** The caller's side and role in a relation it is party to. */
export const partyOf = (row: Pick<RelationRow, "initiator_profile_uuid" | "initiator_role">, me: string) => {
  const side = row.initiator_profile_uuid === me ? "initiator" as const : "recipient" as const
  const role: Role = side === "initiator" ? row.initiator_role : otherRole(row.initiator_role)
  return { side, role }
}

const isParty = (row: RelationRow, me: string) => row.initiator_profile_uuid === me || row.recipient_profile_uuid === me

/**
 * A relation in `me`'s view, with `allowedActions` from the transition tables.
 * Built by assignment, not by spreading conditional objects: every list builds a page of views
 * (spreads cost the reviews' view builder 8 µs per record in its profile).
 */
export const relationView = (row: RelationViewRow, history: ReadonlyArray<HistoryRow>, me: string): RelationView => {
  const party = partyOf(row, me)
  const counterpart: Types.Mutable<RelationView["counterpart"]> = {
    profileUuid: row.counterpart_uuid,
    name: row.counterpart_name,
    type: row.counterpart_type
  }
  if (row.counterpart_avatar_url !== null) counterpart.avatarUrl = row.counterpart_avatar_url
  if (row.counterpart_alias !== null) counterpart.customerAlias = row.counterpart_alias
  const view: Types.Mutable<RelationView> = {
    uuid: row.uuid,
    kind: row.kind,
    status: row.status,
    revision: row.revision,
    role: party.role,
    publication: row.publication_uuid === null || row.publication_kind === null
      ? null
      : { uuid: row.publication_uuid, kind: row.publication_kind, title: row.publication_title ?? "" },
    counterpart,
    initiatorProfileUuid: row.initiator_profile_uuid,
    recipientProfileUuid: row.recipient_profile_uuid,
    body: row.body,
    references: row.refs,
    history: [],
    allowedActions: allowedActions(row.kind, row.status, party),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
  if (row.budget !== null) view.budget = row.budget
  if (row.deadline !== null) view.deadline = row.deadline
  if (row.reason !== null) view.reason = row.reason
  if (row.relation_thread_uuid !== null) view.threadUuid = row.relation_thread_uuid
  if (row.origin_relation_uuid !== null) view.originRelationUuid = row.origin_relation_uuid
  if (row.deal_uuid !== null) view.dealUuid = row.deal_uuid
  if (row.results_version !== null && row.results_submitted_at !== null) {
    view.results = {
      version: row.results_version,
      body: row.results_body ?? "",
      references: row.results_refs ?? [],
      submittedAt: row.results_submitted_at
    }
  }
  if (row.auto_complete_at !== null) view.autoCompleteAt = row.auto_complete_at
  if (row.completed_at !== null) view.completedAt = row.completed_at
  if (row.kind === "deal" && row.completed_at !== null) {
    const windowEndsAt = new Date(row.completed_at.getTime() + reviewWindowMs)
    const review: Types.Mutable<NonNullable<RelationView["review"]>> = {
      windowEndsAt,
      canReview: row.own_review_uuid === null && row.same_account !== true && Date.now() < windowEndsAt.getTime()
    }
    if (row.own_review_uuid !== null) review.ownReviewUuid = row.own_review_uuid
    view.review = review
  }
  const entries: Array<RelationView["history"][number]> = []
  for (const entry of history) {
    if (entry.relation_uuid === row.uuid) entries.push({ status: entry.status, at: entry.at, byRole: entry.by_role })
  }
  view.history = entries
  return view
}

const loadView = (me: string, kinds: ReadonlyArray<string>, uuid: string): Effect.Effect<RelationView, NotFound | SqlError, Sql> =>
  Effect.gen(function*() {
    const row = Option.getOrUndefined(yield* relationViewRow(me, kinds, uuid))
    if (row === undefined) return yield* noRelation()
    return relationView(row, yield* historyRows([uuid]), me)
  })

/** `<family>.get`: one relation of the family the caller is party to; the most recently changed without `relationUuid`. */
export const getRelation = (actor: Actor, family: Family, relationUuid: string | undefined) =>
  Effect.gen(function*() {
    const kinds = familyKinds[family]
    const uuid = relationUuid ?? Option.getOrUndefined(yield* latestRelationUuid(actor.profileUuid, kinds))
    if (uuid === undefined) return yield* noRelation()
    return yield* loadView(actor.profileUuid, kinds, uuid)
  })

/** `<family>.list`: sent and received, most recently changed first, optionally by status and publication. */
export const listRelations = (
  actor: Actor,
  family: Family,
  query: { readonly cursor?: string | undefined; readonly limit?: number | undefined; readonly status?: string | undefined; readonly publicationUuid?: string | undefined }
): Effect.Effect<RelationPage, InvalidRequest | SqlError, Sql> =>
  Effect.gen(function*() {
    const kinds = familyKinds[family]
    const statuses = new Set<string>(kinds.flatMap((kind) => statusesOf[kind]))
    if (query.status !== undefined && !statuses.has(query.status)) {
      return yield* new InvalidRequest({ message: `status: one of ${[...statuses].join(", ")}` })
    }
    const limit = pageSize(query.limit)
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    const rows = yield* relationPageRows(actor.profileUuid, { kinds, status: query.status, publicationUuid: query.publicationUuid, after, limit: limit + 1 })
    const page = rows.slice(0, limit)
    const history = yield* historyRows(page.map((row) => row.uuid))
    const items = page.map((row) => relationView(row, history, actor.profileUuid))
    const last = page[page.length - 1]
    return rows.length > limit && last !== undefined ? { items, nextCursor: encodeCursor({ key: last.position, uuid: last.uuid }) } : { items }
  })

/** Appends one event of a relation, addressed to both parties (none for the system). */
const emit = (
  type: EventType,
  relation: Pick<RelationRow, "uuid" | "kind" | "initiator_profile_uuid" | "recipient_profile_uuid" | "publication_uuid">,
  revision: number,
  status: string,
  actingProfileUuid: string | undefined,
  extra: { readonly data?: Readonly<Record<string, unknown>>; readonly context?: Readonly<Record<string, unknown>> } = {}
) =>
  appendEvent({
    type,
    aggregate: { kind: aggregateKindOf(relation.kind), uuid: relation.uuid, revision },
    data: { objectUuid: relation.uuid, status, ...extra.data },
    context: {
      ...(actingProfileUuid === undefined ? {} : { profileUuid: actingProfileUuid }),
      audience: [relation.initiator_profile_uuid, relation.recipient_profile_uuid],
      relationKind: relation.kind,
      publicationUuid: relation.publication_uuid,
      ...extra.context
    }
  })

export interface CreateInput {
  readonly requestUuid: string
  readonly body: string
  readonly publicationUuid?: string | undefined
  readonly recipientProfileUuid?: string | undefined
  readonly budget?: string | undefined
  readonly deadline?: string | undefined
  readonly references?: ReadonlyArray<Reference> | undefined
  readonly threadUuid?: string | undefined
}

type CreateFailure = NotFound | Forbidden | InvalidState | InvalidReference | InvalidRequest | RequestConflict | LimitReached | SqlError

/** The parties and lineage of a new relation, decided by the kind's rules. */
interface Plan {
  readonly kind: RelationKind
  readonly initiatorRole: Role
  readonly recipientProfileUuid: string
  readonly publicationUuid: string | null
  readonly threadUuid: string | null
}

/** The one creation path: plan (the kind's checks), references, then the row, its history and its event, once per `requestUuid`. */
const create = (
  actor: Actor,
  operationId: "responses.create" | "offers.create" | "job_responses.create" | "job_invitations.create",
  input: CreateInput,
  plan: Effect.Effect<Plan, CreateFailure, Sql>
): Effect.Effect<RelationView, CreateFailure, Sql> =>
  idempotent(
    { scope: actor.profileUuid, operationId, requestUuid: input.requestUuid, request: input, result: RelationViewSchema },
    Effect.gen(function*() {
      const decided = yield* plan
      const references = yield* checkReferences(actor.profileUuid, input.references)
      const relation: NewRelation = {
        kind: decided.kind,
        status: initialStatus[decided.kind],
        initiatorProfileUuid: actor.profileUuid,
        recipientProfileUuid: decided.recipientProfileUuid,
        initiatorRole: decided.initiatorRole,
        publicationUuid: decided.publicationUuid,
        originRelationUuid: null,
        threadUuid: decided.threadUuid,
        body: input.body,
        budget: input.budget ?? null,
        deadline: input.deadline ?? null,
        references
      }
      const uuid = yield* insertRelation(relation, decided.initiatorRole)
      yield* emit(createdEvent[decided.kind], {
        uuid,
        kind: decided.kind,
        initiator_profile_uuid: actor.profileUuid,
        recipient_profile_uuid: decided.recipientProfileUuid,
        publication_uuid: decided.publicationUuid
      }, 1, relation.status, actor.profileUuid)
      return yield* Effect.orDie(loadView(actor.profileUuid, [decided.kind], uuid))
    })
  )

const PublicationFacts = Schema.Struct({
  kind: PublicationKind,
  owner_profile_uuid: Schema.String,
  closed: Schema.Boolean,
  visible: Schema.Boolean,
  deleted: Schema.Boolean
})
type PublicationFacts = typeof PublicationFacts.Type
const decodeFacts = rowsDecoder(PublicationFacts)

const publicationFacts = (uuid: string): Effect.Effect<PublicationFacts | undefined, SqlError, Sql> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT p.kind, p.owner_profile_uuid, p.closed, (${sql.literal(publiclyVisible)}) AS visible,
        (p.deleted_at IS NOT NULL OR o.deleted_at IS NOT NULL) AS deleted
      FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid WHERE p.uuid = ${uuid}`,
      decodeFacts
    ).pipe(
      Effect.map((rows) => rows[0])
    ))

/** A publicly visible publication of another profile, of the kind an operation takes. */
const othersPublication = (me: string, uuid: string, kind: PublicationKind, use: string) =>
  Effect.gen(function*() {
    const publication = yield* publicationFacts(uuid)
    if (publication === undefined || !publication.visible) return yield* new NotFound({ message: "No such publication" })
    if (publication.kind !== kind) return yield* new InvalidReference({ message: `publicationUuid: ${use} takes a ${kind}, not a ${publication.kind}` })
    if (publication.owner_profile_uuid === me) return yield* new Forbidden({ message: `This is your own ${kind}` })
    return publication
  })

/** `responses.create`: a response to a visible, open task of another profile; one not withdrawn per task. */
export const createResponse = (actor: Actor, input: CreateInput) =>
  create(actor, "responses.create", input, Effect.gen(function*() {
    const me = actor.profileUuid
    const task = yield* othersPublication(me, input.publicationUuid!, "task", "responses.create")
    if (task.closed) {
      return yield* stateRefusal({
        resource: "task",
        uuid: input.publicationUuid!,
        state: "closed",
        allowed: ["open"],
        operation: "responses.create",
        message: "The task is closed and takes no new responses"
      })
    }
    yield* lockSubject(`response:${input.publicationUuid}:${me}`)
    if (yield* hasOpenResponse(input.publicationUuid!, me)) {
      return yield* new InvalidState({ message: "You already responded to this task; withdraw that response to respond again" })
    }
    yield* countLimit(limits.responses, me)
    return { kind: "response", initiatorRole: "contractor", recipientProfileUuid: task.owner_profile_uuid, publicationUuid: input.publicationUuid!, threadUuid: null }
  }))

/**
 * `offers.create`: the sender's role comes from the publication. None or the
 * sender's own task: customer. The recipient's service: customer. The sender's own service:
 * contractor (a custom offer). The recipient's task: 400, respond instead.
 */
export const createOffer = (actor: Actor, input: CreateInput) =>
  create(actor, "offers.create", input, Effect.gen(function*() {
    const me = actor.profileUuid
    const recipient = input.recipientProfileUuid!
    if (recipient === me) return yield* new Forbidden({ message: "An offer goes to another profile" })
    if (!(yield* reachableProfile(me, recipient))) return yield* new NotFound({ message: "No such profile" })
    let initiatorRole: Role = "customer"
    if (input.publicationUuid !== undefined) {
      const publication = yield* publicationFacts(input.publicationUuid)
      const own = publication?.owner_profile_uuid === me
      if (publication === undefined || (own ? publication.deleted : !publication.visible)) {
        return yield* new NotFound({ message: "No such publication" })
      }
      if (own && publication.kind === "service") initiatorRole = "contractor"
      else if (own && publication.kind === "task") initiatorRole = "customer"
      else if (publication.owner_profile_uuid === recipient && publication.kind === "service") initiatorRole = "customer"
      else if (publication.owner_profile_uuid === recipient && publication.kind === "task") {
        return yield* new InvalidReference({ message: "publicationUuid: this is the recipient's task; respond to it with responses.create" })
      } else {
        return yield* new InvalidReference({ message: "publicationUuid: an offer names your own task or service, or the recipient's service" })
      }
    }
    if (input.threadUuid !== undefined) {
      const thread = Option.getOrUndefined(yield* lockThreadOf(me, input.threadUuid))
      if (thread === undefined) return yield* new NotFound({ message: "No such thread" })
      if (thread.low_profile_uuid !== recipient && thread.high_profile_uuid !== recipient) {
        return yield* new InvalidReference({ message: "threadUuid: the thread is not with the offer's recipient" })
      }
    }
    yield* countNewContact(me, recipient)
    return { kind: "offer", initiatorRole, recipientProfileUuid: recipient, publicationUuid: input.publicationUuid ?? null, threadUuid: input.threadUuid ?? null }
  }))

/** `job_responses.create`: a response to a visible vacancy of another profile; one open per vacancy and candidate. */
export const createJobResponse = (actor: Actor, input: CreateInput) =>
  create(actor, "job_responses.create", input, Effect.gen(function*() {
    const me = actor.profileUuid
    const vacancy = yield* othersPublication(me, input.publicationUuid!, "vacancy", "job_responses.create")
    yield* lockSubject(`job_response:${input.publicationUuid}:${me}`)
    if (yield* hasOpenJobContact("job_response", input.publicationUuid!, me)) {
      return yield* new InvalidState({ message: "You already responded to this vacancy" })
    }
    yield* countLimit(limits.responses, me)
    return { kind: "job_response", initiatorRole: "candidate", recipientProfileUuid: vacancy.owner_profile_uuid, publicationUuid: input.publicationUuid!, threadUuid: null }
  }))

/** `job_invitations.create`: an invitation to the owner of a visible resume; one open per resume and employer. */
export const createJobInvitation = (actor: Actor, input: CreateInput) =>
  create(actor, "job_invitations.create", input, Effect.gen(function*() {
    const me = actor.profileUuid
    const resume = yield* othersPublication(me, input.publicationUuid!, "resume", "job_invitations.create")
    yield* lockSubject(`job_invitation:${input.publicationUuid}:${me}`)
    if (yield* hasOpenJobContact("job_invitation", input.publicationUuid!, me)) {
      return yield* new InvalidState({ message: "You already invited this resume's owner" })
    }
    yield* countNewContact(me, resume.owner_profile_uuid)
    return { kind: "job_invitation", initiatorRole: "employer", recipientProfileUuid: resume.owner_profile_uuid, publicationUuid: input.publicationUuid!, threadUuid: null }
  }))

export interface TransitionInput {
  readonly requestUuid: string
  readonly relationUuid: string
  readonly expectedRevision: number
  readonly status?: string | undefined
  readonly reason?: string | undefined
  readonly body?: string | undefined
  readonly references?: ReadonlyArray<Reference> | undefined
}

const familyOf = (operation: TransitionOperation): Family => operation.slice(0, operation.indexOf(".")) as Family

/** Input checks a transition operation needs beyond its schema (400 before anything is read). */
export const checkTransitionInput = (operation: TransitionOperation, input: TransitionInput): Effect.Effect<void, InvalidRequest> => {
  const inputs = statusInputs(operation)
  if (inputs.length > 0 && (input.status === undefined || !inputs.includes(input.status))) {
    return Effect.fail(new InvalidRequest({ message: `status: ${operation} needs status, one of ${inputs.join(", ")}` }))
  }
  if (operation === "deals.results" && input.body === undefined && (input.references ?? []).length === 0) {
    return Effect.fail(new InvalidRequest({ message: "body: deals.results hands over work; send body, references or both" }))
  }
  return Effect.void
}

/**
 * The one transition step, in one transaction, once per `requestUuid`: lock the
 * row; a non-party (or a relation of another family) is 404; the wrong role 403 `forbidden`; the
 * wrong state 409 `invalid_state`; a stale `expectedRevision` 409 `revision_conflict`; then the
 * update with `revision + 1`, the history entry, the events, the row's effect (a deal, a results
 * version) and `body` posted in the relation's thread.
 */
export const transition = (
  actor: Actor,
  operation: TransitionOperation,
  input: TransitionInput
): Effect.Effect<RelationView, NotFound | Forbidden | InvalidState | RevisionConflict | InvalidReference | InvalidRequest | RequestConflict | SqlError, Sql> =>
  Effect.gen(function*() {
    yield* checkTransitionInput(operation, input)
    const me = actor.profileUuid
    const kinds: ReadonlyArray<RelationKind> = familyKinds[familyOf(operation)]
    return yield* idempotent(
      { scope: me, operationId: operation, requestUuid: input.requestUuid, request: input, result: RelationViewSchema },
      Effect.gen(function*() {
        const references = yield* checkReferences(me, input.references)
        const row = Option.getOrUndefined(yield* lockRelation(input.relationUuid))
        if (row === undefined || !kinds.includes(row.kind) || !isParty(row, me)) return yield* noRelation()
        const party = partyOf(row, me)
        const step = rowsFor(row.kind, operation, input.status)[0]
        if (step === undefined) return yield* new InvalidState({ message: `${operation} does not apply to a ${row.kind}` })
        if (!actorMatches(step.by, party)) {
          return yield* new Forbidden({ message: `Only the ${step.by === "initiator" ? "sender" : step.by === "recipient" ? "recipient" : step.by} may call ${operation}` })
        }
        if (!(step.from as ReadonlyArray<string>).includes(row.status)) {
          return yield* stateRefusal({
            resource: row.kind,
            uuid: row.uuid,
            state: row.status,
            allowed: step.from,
            operation,
            message: `The ${row.kind} is ${row.status}; ${operation} needs ${step.from.join(" or ")}`
          })
        }
        yield* requireRevision(row.kind, row.revision, input.expectedRevision, row.uuid)
        const revision = yield* updateRelation(row.uuid, step.to, {
          reason: input.reason,
          autoComplete: step.effect === "submit_results" ? "in_14_days" : "clear",
          completed: step.effect === "complete"
        })
        yield* appendHistory(row.uuid, step.to, party.role)
        if (step.effect === "complete") yield* countCompletedDeal(row)
        yield* emit(step.event, row, revision, step.to, me)
        if (step.effect === "start_deal") yield* startDeal(row, party.role, me)
        if (step.effect === "submit_results") yield* insertResults(row.uuid, input.body ?? "", references)
        if (input.body !== undefined && step.effect !== "submit_results") {
          yield* postMessage(yield* relationThread(row, me), me, input.body, [])
        }
        return yield* Effect.orDie(loadView(me, kinds, row.uuid))
      })
    )
  })

/**
 * A deal from an accepted response or offer (one per origin: the origin is locked, and the unique
 * origin index stands behind it). It copies the agreed terms and the origin's thread. Accepting an
 * offer that references a pending response of the same two profiles accepts that response too.
 */
const startDeal = (origin: RelationRow, byRole: Role, actingProfileUuid: string) =>
  Effect.gen(function*() {
    const dealUuid = yield* insertRelation({
      kind: "deal",
      status: initialStatus.deal,
      initiatorProfileUuid: origin.initiator_profile_uuid,
      recipientProfileUuid: origin.recipient_profile_uuid,
      initiatorRole: origin.initiator_role,
      publicationUuid: origin.publication_uuid,
      originRelationUuid: origin.uuid,
      threadUuid: origin.thread_uuid,
      body: origin.body,
      budget: origin.budget,
      deadline: origin.deadline,
      references: origin.refs
    }, byRole)
    // The customer gets its stable alias: its reputation has a handle from the first deal.
    yield* ensureCustomerAlias(origin.initiator_role === "customer" ? origin.initiator_profile_uuid : origin.recipient_profile_uuid)
    yield* emit("deal.started", { ...origin, uuid: dealUuid, kind: "deal" }, 1, initialStatus.deal, actingProfileUuid, {
      data: { originRelationUuid: origin.uuid, originKind: origin.kind }
    })
    if (origin.kind !== "offer") return
    const pair = new Set([origin.initiator_profile_uuid, origin.recipient_profile_uuid])
    const accept = systemTransitions.referencedResponseAccepted
    for (const reference of origin.refs) {
      if (reference.kind !== "relation") continue
      const response = Option.getOrUndefined(yield* lockRelation(reference.uuid))
      if (
        response === undefined || response.kind !== accept.kind || !(accept.from as ReadonlyArray<string>).includes(response.status) ||
        !pair.has(response.initiator_profile_uuid) || !pair.has(response.recipient_profile_uuid)
      ) continue
      const revision = yield* updateRelation(response.uuid, accept.to, {})
      yield* appendHistory(response.uuid, accept.to, "system")
      yield* emit(accept.event, response, revision, accept.to, undefined, { context: { cause: "offer_accepted", offerUuid: origin.uuid } })
    }
  })

/**
 * Closes the open relations of profiles being deleted, in the deleting transaction:
 * pending ones withdrawn (the deleted party created them) or declined (it received them),
 * active deals terminated with reason `profile_deleted`; each with its event. Returns how many.
 */
export const closeRelationsOf = (profileUuids: ReadonlyArray<string>): Effect.Effect<number, SqlError, Sql> =>
  Effect.gen(function*() {
    const rows = yield* lockOpenRelationsOf(profileUuids)
    for (const row of rows) {
      const closed = closedByDeletion(row.kind, profileUuids.includes(row.initiator_profile_uuid))
      const revision = yield* updateRelation(row.uuid, closed.to, { reason: "profile_deleted", autoComplete: "clear" })
      yield* appendHistory(row.uuid, closed.to, "system")
      yield* emit(closed.event, row, revision, closed.to, undefined, { context: { cause: "profile_deleted" } })
    }
    return rows.length
  })

/**
 * Declines the pending and shortlisted responses to a task being closed or deleted, in that
 * command's transaction: reason `task_closed`, `response.status_changed` each.
 * Accepted ones (and their deals) stay. Returns how many.
 */
export const declineResponsesTo = (publicationUuid: string): Effect.Effect<number, SqlError, Sql> =>
  Effect.gen(function*() {
    const rows = yield* lockOpenResponsesTo(publicationUuid)
    const step = systemTransitions.taskClosed
    for (const row of rows) {
      const revision = yield* updateRelation(row.uuid, step.to, { reason: "task_closed" })
      yield* appendHistory(row.uuid, step.to, "system")
      yield* emit(step.event, row, revision, step.to, undefined, { context: { cause: "task_closed" } })
    }
    return rows.length
  })

/**
 * Completes deals whose handed-over work waited 14 days without an answer (Upwork's rule; the
 * worker job `deals`). Rows another worker holds are skipped; returns how many completed.
 */
export const completeDueDeals = (limit = 100): Effect.Effect<number, SqlError, Sql> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const rows = yield* lockDueDeals(limit)
      const step = systemTransitions.autoComplete
      for (const row of rows) {
        const revision = yield* updateRelation(row.uuid, step.to, { autoComplete: "clear", completed: true })
        yield* appendHistory(row.uuid, step.to, "system")
        yield* countCompletedDeal(row)
        yield* emit(step.event, row, revision, step.to, undefined, { context: { cause: "auto_complete" } })
      }
      return rows.length
    })))

export type { ReferenceView }
