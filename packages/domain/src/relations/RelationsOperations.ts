import type { HttpApiGroup } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import { InvalidRequest } from "../kernel/ApiError.js"
import { DealsApi, JobContactsApi, OffersApi, ResponsesApi, ThreadsApi } from "./RelationsApi.js"
import { type LimitReached, rateLimitedBy } from "../auth/RateLimit.js"
import { type AnyImplementation, type Call, type GroupImplementation, implement, implementWith } from "../operations/Implementation.js"
import { getThread, listThreads, makeThreadMessages, openThread, sendMessage } from "../threads/Threads.js"
import { type FieldName, pageSize, UsedFields } from "./RelationFields.js"
import {
  createJobInvitation,
  createJobResponse,
  createOffer,
  createResponse,
  getRelation,
  listRelations,
  transition
} from "./Relations.js"

type Group = HttpApiGroup.HttpApiGroup.AnyWithProps

/** The fields each operation of `groups` declares it uses (`RelationsApi.ts`); an operation declaring none stops the start. */
const usedFieldsOf = (groups: ReadonlyArray<Group>): Readonly<Record<string, ReadonlyArray<FieldName>>> =>
  Object.fromEntries(groups.flatMap((group) =>
    Object.values(group.endpoints).map((endpoint) => {
      const used = Context.getOption(endpoint.annotations, UsedFields)
      if (Option.isNone(used)) throw new Error(`${endpoint.name}: declares no used fields (RelationsApi.ts's command or read)`)
      return [endpoint.name, used.value as ReadonlyArray<FieldName>] as const
    })
  ))

/**
 * The fields each operation uses, of the spec's shared set every one of them declares
 *, as its declaration names them. Any other field sent is refused with 400
 * naming it: nothing is silently ignored.
 */
export const usedFields = usedFieldsOf([ResponsesApi, OffersApi, DealsApi, JobContactsApi, ThreadsApi] as unknown as ReadonlyArray<Group>)

/** 400 naming the first field the operation does not use. */
export const refuseUnused = (operationId: string, input: object): Effect.Effect<void, InvalidRequest> => {
  const used = usedFields[operationId] ?? []
  const unused = Object.keys(input).filter((field) => !(used as ReadonlyArray<string>).includes(field))
  return unused.length === 0
    ? Effect.void
    : Effect.fail(new InvalidRequest({
      message: `${unused.join(", ")}: not used by ${operationId} (it takes ${used.join(", ")}); leave ${unused.length > 1 ? "them" : "it"} out`,
      field: unused[0]!,
      rule: "not allowed"
    }))
}

/** A reached limit answers 429 with the real wait as `Retry-After` (as sign-in's limits do). */
const rateLimited = (call: Call) => (limit: LimitReached) => {
  call.facts.retryAfterSeconds = Math.max(1, Math.ceil(limit.retryAfterSeconds))
  return Effect.fail(rateLimitedBy(limit, call.facts.retryAfterSeconds))
}

/**
 * A group's implementations, each run after refusing the fields its declaration does not use (its
 * body for a command, its query for a read): written once here, not in every implementation.
 */
const refusingUnused = <R>(implementation: GroupImplementation<R>): GroupImplementation<R> => ({
  group: implementation.group,
  build: Effect.map(implementation.build, (implementations) =>
    Object.fromEntries(Object.entries(implementations).map(([id, run]): [string, AnyImplementation] => [
      id,
      (input, caller, call) => {
        const { payload, urlParams } = input as { readonly payload?: object; readonly urlParams?: object }
        return Effect.zipRight(refuseUnused(id, payload ?? urlParams ?? {}), run(input, caller, call))
      }
    ])))
})

export const ResponsesOperations = refusingUnused(implement(ResponsesApi)({
  "responses.create": ({ payload }, actor, call) =>
    createResponse(actor, payload).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "responses.list": ({ urlParams }, actor) => listRelations(actor, "responses", urlParams),
  "responses.get": ({ urlParams }, actor) => getRelation(actor, "responses", urlParams.relationUuid),
  "responses.withdraw": ({ payload }, actor) => transition(actor, "responses.withdraw", payload),
  "responses.status": ({ payload }, actor) => transition(actor, "responses.status", payload)
}))

export const OffersOperations = refusingUnused(implement(OffersApi)({
  "offers.create": ({ payload }, actor, call) =>
    createOffer(actor, payload).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "offers.list": ({ urlParams }, actor) => listRelations(actor, "offers", urlParams),
  "offers.get": ({ urlParams }, actor) => getRelation(actor, "offers", urlParams.relationUuid),
  "offers.accept": ({ payload }, actor) => transition(actor, "offers.accept", payload),
  "offers.decline": ({ payload }, actor) => transition(actor, "offers.decline", payload),
  "offers.withdraw": ({ payload }, actor) => transition(actor, "offers.withdraw", payload)
}))

export const DealsOperations = refusingUnused(implement(DealsApi)({
  "deals.list": ({ urlParams }, actor) => listRelations(actor, "deals", urlParams),
  "deals.get": ({ urlParams }, actor) => getRelation(actor, "deals", urlParams.relationUuid),
  "deals.results": ({ payload }, actor) => transition(actor, "deals.results", payload),
  "deals.complete": ({ payload }, actor) => transition(actor, "deals.complete", payload),
  "deals.terminate": ({ payload }, actor) => transition(actor, "deals.terminate", payload),
  "deals.request_changes": ({ payload }, actor) => transition(actor, "deals.request_changes", payload)
}))

export const JobContactsOperations = refusingUnused(implement(JobContactsApi)({
  "job_responses.create": ({ payload }, actor, call) =>
    createJobResponse(actor, payload).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "job_invitations.create": ({ payload }, actor, call) =>
    createJobInvitation(actor, payload).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "job_contacts.list": ({ urlParams }, actor) => listRelations(actor, "job_contacts", urlParams),
  "job_contacts.get": ({ urlParams }, actor) => getRelation(actor, "job_contacts", urlParams.relationUuid),
  "job_contacts.status": ({ payload }, actor) => transition(actor, "job_contacts.status", payload)
}))

export const ThreadsOperations = refusingUnused(implementWith(ThreadsApi, makeThreadMessages)((threadMessages) => ({
  "threads.open": ({ payload }, actor, call) =>
    openThread(actor, payload).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "threads.list": ({ urlParams }, actor) => listThreads(actor, { ...urlParams, limit: pageSize(urlParams.limit) }),
  "threads.get": ({ urlParams }, actor) => getThread(actor, urlParams.threadUuid),
  "threads.messages": ({ urlParams }, actor) => threadMessages(actor, { ...urlParams, limit: pageSize(urlParams.limit) }),
  "messages.send": ({ payload }, actor, call) =>
    sendMessage(actor, payload).pipe(Effect.catchTag("LimitReached", rateLimited(call)))
})))

/** The relation areas' implementations, registered with the others in `ServiceOperations`. */
export const RelationsOperations = [ResponsesOperations, OffersOperations, DealsOperations, JobContactsOperations, ThreadsOperations] as const
