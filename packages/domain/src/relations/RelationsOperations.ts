import { Effect } from "effect"
import { InvalidRequest, RateLimited } from "../kernel/ApiError.js"
import { DealsApi, JobContactsApi, OffersApi, ResponsesApi, ThreadsApi } from "./RelationsApi.js"
import type { LimitReached } from "../auth/RateLimit.js"
import { type Call, implement, implementWith } from "../operations/Implementation.js"
import { getThread, listThreads, makeThreadMessages, openThread, sendMessage } from "../threads/Threads.js"
import { type FieldName, pageSize } from "./RelationFields.js"
import {
  createJobInvitation,
  createJobResponse,
  createOffer,
  createResponse,
  getRelation,
  listRelations,
  transition
} from "./Relations.js"

const list = ["cursor", "limit", "status", "publicationUuid"] as const
const get = ["relationUuid"] as const
const transitionBase = ["requestUuid", "relationUuid", "expectedRevision"] as const

/**
 * The fields each operation uses, of the spec's shared set every one of them declares
 * (MARKETPLACE §3). Any other field sent is refused with 400 naming it: nothing is silently ignored.
 */
export const usedFields: Readonly<Record<string, ReadonlyArray<FieldName>>> = {
  "responses.create": ["requestUuid", "publicationUuid", "body", "budget", "deadline", "references"],
  "responses.list": list,
  "responses.get": get,
  "responses.withdraw": [...transitionBase, "reason"],
  "responses.status": [...transitionBase, "status", "reason", "body"],
  "offers.create": ["requestUuid", "recipientProfileUuid", "body", "publicationUuid", "budget", "deadline", "references", "threadUuid"],
  "offers.list": list,
  "offers.get": get,
  "offers.accept": [...transitionBase, "body"],
  "offers.decline": [...transitionBase, "reason", "body"],
  "offers.withdraw": [...transitionBase, "reason"],
  "deals.list": list,
  "deals.get": get,
  "deals.results": [...transitionBase, "body", "references"],
  "deals.complete": [...transitionBase, "body"],
  "deals.terminate": [...transitionBase, "reason"],
  "deals.request_changes": [...transitionBase, "reason", "body"],
  "job_responses.create": ["requestUuid", "publicationUuid", "body", "budget", "references"],
  "job_invitations.create": ["requestUuid", "publicationUuid", "body", "budget", "references"],
  "job_contacts.list": list,
  "job_contacts.get": get,
  "job_contacts.status": [...transitionBase, "status", "reason", "body"],
  "threads.open": ["requestUuid", "body", "relationUuid", "publicationUuid", "recipientProfileUuid", "references"],
  "threads.list": ["cursor", "limit", "relationUuid", "publicationUuid"],
  "threads.get": ["threadUuid"],
  "threads.messages": ["threadUuid", "cursor", "limit"],
  "messages.send": ["requestUuid", "threadUuid", "body", "references"]
}

/** 400 naming the first field the operation does not use. */
export const refuseUnused = (operationId: string, input: object): Effect.Effect<void, InvalidRequest> => {
  const used = usedFields[operationId] ?? []
  const unused = Object.keys(input).filter((field) => !(used as ReadonlyArray<string>).includes(field))
  return unused.length === 0
    ? Effect.void
    : Effect.fail(new InvalidRequest({
      message: `${unused.join(", ")}: not used by ${operationId} (it takes ${used.join(", ")}); leave ${unused.length > 1 ? "them" : "it"} out`
    }))
}

/** A reached limit answers 429 with the real wait as `Retry-After` (as sign-in's limits do). */
const rateLimited = (call: Call) => (limit: LimitReached) => {
  call.facts.retryAfterSeconds = Math.max(1, Math.ceil(limit.retryAfterSeconds))
  return Effect.fail(new RateLimited({ message: limit.message }))
}

/** Runs an operation after refusing the fields it does not use. */
const using = <A, E, R>(operationId: string, input: object, run: Effect.Effect<A, E, R>) =>
  Effect.zipRight(refuseUnused(operationId, input), run)

export const ResponsesOperations = implement(ResponsesApi)({
  "responses.create": ({ payload }, actor, call) =>
    using("responses.create", payload, createResponse(actor, payload)).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "responses.list": ({ urlParams }, actor) => using("responses.list", urlParams, listRelations(actor, "responses", urlParams)),
  "responses.get": ({ urlParams }, actor) => using("responses.get", urlParams, getRelation(actor, "responses", urlParams.relationUuid)),
  "responses.withdraw": ({ payload }, actor) => using("responses.withdraw", payload, transition(actor, "responses.withdraw", payload)),
  "responses.status": ({ payload }, actor) => using("responses.status", payload, transition(actor, "responses.status", payload))
})

export const OffersOperations = implement(OffersApi)({
  "offers.create": ({ payload }, actor, call) =>
    using("offers.create", payload, createOffer(actor, payload)).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "offers.list": ({ urlParams }, actor) => using("offers.list", urlParams, listRelations(actor, "offers", urlParams)),
  "offers.get": ({ urlParams }, actor) => using("offers.get", urlParams, getRelation(actor, "offers", urlParams.relationUuid)),
  "offers.accept": ({ payload }, actor) => using("offers.accept", payload, transition(actor, "offers.accept", payload)),
  "offers.decline": ({ payload }, actor) => using("offers.decline", payload, transition(actor, "offers.decline", payload)),
  "offers.withdraw": ({ payload }, actor) => using("offers.withdraw", payload, transition(actor, "offers.withdraw", payload))
})

export const DealsOperations = implement(DealsApi)({
  "deals.list": ({ urlParams }, actor) => using("deals.list", urlParams, listRelations(actor, "deals", urlParams)),
  "deals.get": ({ urlParams }, actor) => using("deals.get", urlParams, getRelation(actor, "deals", urlParams.relationUuid)),
  "deals.results": ({ payload }, actor) => using("deals.results", payload, transition(actor, "deals.results", payload)),
  "deals.complete": ({ payload }, actor) => using("deals.complete", payload, transition(actor, "deals.complete", payload)),
  "deals.terminate": ({ payload }, actor) => using("deals.terminate", payload, transition(actor, "deals.terminate", payload)),
  "deals.request_changes": ({ payload }, actor) =>
    using("deals.request_changes", payload, transition(actor, "deals.request_changes", payload))
})

export const JobContactsOperations = implement(JobContactsApi)({
  "job_responses.create": ({ payload }, actor, call) =>
    using("job_responses.create", payload, createJobResponse(actor, payload)).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "job_invitations.create": ({ payload }, actor, call) =>
    using("job_invitations.create", payload, createJobInvitation(actor, payload)).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "job_contacts.list": ({ urlParams }, actor) => using("job_contacts.list", urlParams, listRelations(actor, "job_contacts", urlParams)),
  "job_contacts.get": ({ urlParams }, actor) => using("job_contacts.get", urlParams, getRelation(actor, "job_contacts", urlParams.relationUuid)),
  "job_contacts.status": ({ payload }, actor) => using("job_contacts.status", payload, transition(actor, "job_contacts.status", payload))
})

export const ThreadsOperations = implementWith(ThreadsApi, makeThreadMessages)((threadMessages) => ({
  "threads.open": ({ payload }, actor, call) =>
    using("threads.open", payload, openThread(actor, payload)).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "threads.list": ({ urlParams }, actor) =>
    using("threads.list", urlParams, listThreads(actor, { ...urlParams, limit: pageSize(urlParams.limit) })),
  "threads.get": ({ urlParams }, actor) => using("threads.get", urlParams, getThread(actor, urlParams.threadUuid)),
  "threads.messages": ({ urlParams }, actor) =>
    using("threads.messages", urlParams, threadMessages(actor, { ...urlParams, limit: pageSize(urlParams.limit) })),
  "messages.send": ({ payload }, actor, call) =>
    using("messages.send", payload, sendMessage(actor, payload)).pipe(Effect.catchTag("LimitReached", rateLimited(call)))
}))

/** The relation areas' implementations, registered with the others in `ServiceOperations`. */
export const RelationsOperations = [ResponsesOperations, OffersOperations, DealsOperations, JobContactsOperations, ThreadsOperations] as const
