import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Context, type Schema } from "effect"
import { InvalidReference } from "./RelationErrors.js"
import { commandFields, type FieldName, queryFieldsOf, UsedFields } from "./RelationFields.js"
import { RelationPage, RelationView } from "./Relation.js"
import { MessagePage, MessageView, ThreadOpened, ThreadPage, ThreadView } from "../threads/Thread.js"
import { Forbidden, InvalidState, NotFound, RateLimited, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"

/**
 * Responses, offers, deals, job contacts, threads and messages (spec section of that name,
 * docs/spec/interface.md): the spec's ids and paths, each operation declaring the spec's whole
 * shared field set with its own required fields. Scopes and approvals are the spec's where it
 * gives them (deals, job contacts), our proposals elsewhere. One group per
 * toolset: responses, offers, deals, job_contacts, threads.
 */

interface Declared {
  readonly scopes: ReadonlyArray<string>
  readonly approval: boolean
  readonly summary: string
  readonly extension?: boolean
}

const path = <const Id extends string>(id: Id) => `/api/v1/commands/${id}` as const

/** The shared field set as query parameters: nothing required, or the thread of threads.messages. */
const Query = queryFieldsOf([])
const MessagesQuery = queryFieldsOf(["threadUuid"])

/** A read: GET with the shared field set as query parameters; `uses` are the fields it reads (any other is refused). */
const read = <const Id extends string, const Errors extends ReadonlyArray<Schema.Schema.Any> = []>(
  id: Id,
  policy: Declared,
  uses: ReadonlyArray<FieldName>,
  errors?: Errors
) => authenticated("GET", id, path(id), policy, errors).annotateContext(Context.make(UsedFields, uses))

/** What any command may answer besides its own errors. */
const commandErrors = [
  wire(InvalidReference),
  wire(Forbidden),
  wire(NotFound),
  wire(InvalidState),
  wire(RevisionConflict),
  wire(RequestConflict)
] as const

/**
 * A command: POST with the shared field set as the body; idempotent by `requestUuid`. `uses` are
 * the fields it reads (any other is refused), `required` those of them it requires, `errors` its own
 * errors after the common ones.
 */
const command = <
  const Id extends string,
  const U extends FieldName,
  const R extends U,
  const Errors extends ReadonlyArray<Schema.Schema.Any> = []
>(
  id: Id,
  policy: Declared,
  uses: ReadonlyArray<U>,
  required: ReadonlyArray<R>,
  errors?: Errors
) =>
  authenticated("POST", id, path(id), policy, [...commandErrors, ...(errors ?? [])])
    .annotateContext(Context.make(UsedFields, uses))
    .setPayload(commandFields(required))

const transitionFields = ["requestUuid", "relationUuid", "expectedRevision"] as const
/** A get's own error: no such record for the caller. */
const oneRecord = [wire(NotFound)] as const
/** A command that writes to another profile (a response, an offer, an invitation, a message): rate-limited. */
const rateLimited = [wire(RateLimited)] as const

/** What every list and every get reads. */
const listFields = ["cursor", "limit", "status", "publicationUuid"] as const
const getFields = ["relationUuid"] as const

const responsesRead = { scopes: ["responses:read"], approval: false }
const responsesWrite = { scopes: ["responses:write"], approval: true }

export const ResponsesApi = HttpApiGroup.make("responses", { topLevel: true })
  .add(
    command(
      "responses.create",
      { ...responsesWrite, summary: "Respond to a publicly visible task of another profile" },
      ["requestUuid", "publicationUuid", "body", "budget", "deadline", "references"],
      ["requestUuid", "publicationUuid", "body"],
      rateLimited
    ).addSuccess(RelationView)
  )
  .add(
    read("responses.list", { ...responsesRead, summary: "Responses the acting profile sent or received, most recently changed first" }, listFields).setUrlParams(Query).addSuccess(RelationPage)
  )
  .add(
    read("responses.get", { ...responsesRead, summary: "One response (the most recently changed without relationUuid)" }, getFields, oneRecord).setUrlParams(Query).addSuccess(RelationView)
  )
  .add(
    command("responses.withdraw", { ...responsesWrite, summary: "The responder withdraws a pending or shortlisted response" }, [
      ...transitionFields,
      "reason"
    ], transitionFields).addSuccess(RelationView)
  )
  .add(
    command("responses.status", {
      ...responsesWrite,
      summary: "The task's owner shortlists, accepts (a deal starts: dealUuid) or declines a response"
    }, [...transitionFields, "status", "reason", "body"], [...transitionFields, "status"]).addSuccess(RelationView)
  )
  .annotate(OpenApi.Description, "Responses to tasks")

const offersRead = { scopes: ["offers:read"], approval: false }
const offersWrite = { scopes: ["offers:write"], approval: true }

export const OffersApi = HttpApiGroup.make("offers", { topLevel: true })
  .add(
    command("offers.create", {
      ...offersWrite,
      summary: "Offer terms to a profile: hire from a profile or own task, order a service, or a custom offer from one's own service"
    }, ["requestUuid", "recipientProfileUuid", "body", "publicationUuid", "budget", "deadline", "references", "threadUuid"], [
      "requestUuid",
      "recipientProfileUuid",
      "body"
    ], rateLimited).addSuccess(RelationView)
  )
  .add(
    read("offers.list", { ...offersRead, summary: "Offers the acting profile sent or received, most recently changed first" }, listFields).setUrlParams(Query).addSuccess(RelationPage)
  )
  .add(
    read("offers.get", { ...offersRead, summary: "One offer (the most recently changed without relationUuid)" }, getFields, oneRecord).setUrlParams(Query).addSuccess(RelationView)
  )
  .add(
    command("offers.accept", { ...offersWrite, summary: "The recipient accepts a pending offer: a deal starts (dealUuid)" }, [
      ...transitionFields,
      "body"
    ], transitionFields).addSuccess(RelationView)
  )
  .add(
    command("offers.decline", { ...offersWrite, summary: "The recipient declines a pending offer" }, [...transitionFields, "reason", "body"], transitionFields)
      .addSuccess(RelationView)
  )
  .add(
    command("offers.withdraw", { ...offersWrite, summary: "The sender withdraws a pending offer" }, [...transitionFields, "reason"], transitionFields)
      .addSuccess(RelationView)
  )
  .annotate(OpenApi.Description, "Offers: direct terms from one profile to another")

const dealsRead = { scopes: ["deals:read"], approval: false }
const dealsWrite = { scopes: ["deals:write"], approval: true }

export const DealsApi = HttpApiGroup.make("deals", { topLevel: true })
  .add(
    read("deals.list", { ...dealsRead, summary: "The acting profile's deals, most recently changed first" }, listFields).setUrlParams(Query).addSuccess(RelationPage)
  )
  .add(
    read("deals.get", { ...dealsRead, summary: "One deal (the most recently changed without relationUuid)" }, getFields, oneRecord).setUrlParams(Query).addSuccess(RelationView)
  )
  .add(
    command("deals.results", {
      ...dealsWrite,
      summary: "The contractor hands over work (body and/or references; each handover is a new version); unanswered for 14 days it completes"
    }, [...transitionFields, "body", "references"], transitionFields).addSuccess(RelationView)
  )
  .add(
    command("deals.complete", { ...dealsWrite, summary: "The customer accepts the work: the deal is completed" }, [...transitionFields, "body"], transitionFields)
      .addSuccess(RelationView)
  )
  .add(
    command("deals.terminate", { ...dealsWrite, summary: "Either party ends the cooperation, with a reason" }, [...transitionFields, "reason"], transitionFields)
      .addSuccess(RelationView)
  )
  .add(
    command("deals.request_changes", {
      ...dealsWrite,
      extension: true,
      summary: "The customer sends handed-over work back: the deal is active again"
    }, [...transitionFields, "reason", "body"], transitionFields).addSuccess(RelationView)
  )
  .annotate(OpenApi.Description, "Deals: made when a response or an offer is accepted")

export const JobContactsApi = HttpApiGroup.make("job_contacts", { topLevel: true })
  .add(
    command(
      "job_responses.create",
      { ...responsesWrite, summary: "Respond to a publicly visible vacancy of another profile" },
      ["requestUuid", "publicationUuid", "body", "budget", "references"],
      ["requestUuid", "publicationUuid", "body"],
      rateLimited
    ).addSuccess(RelationView)
  )
  .add(
    command("job_invitations.create", {
      ...responsesWrite,
      summary: "Invite the owner of a publicly visible resume (references may name the employer's own vacancy)"
    }, ["requestUuid", "publicationUuid", "body", "budget", "references"], ["requestUuid", "publicationUuid", "body"], rateLimited)
      .addSuccess(RelationView)
  )
  .add(
    read("job_contacts.list", { ...responsesRead, summary: "Job responses and invitations sent or received, most recently changed first" }, listFields).setUrlParams(Query).addSuccess(RelationPage)
  )
  .add(
    read("job_contacts.get", { ...responsesRead, summary: "One job contact (the most recently changed without relationUuid)" }, getFields, oneRecord).setUrlParams(Query).addSuccess(RelationView)
  )
  .add(
    command("job_contacts.status", {
      ...responsesWrite,
      summary: "Answer or withdraw a job contact: status accepted, declined or withdrawn (required)"
    }, [...transitionFields, "status", "reason", "body"], transitionFields).addSuccess(RelationView)
  )
  .annotate(OpenApi.Description, "Job contacts: responses to vacancies and invitations by resume")

const threadsRead = { scopes: ["threads:read"], approval: false }
const threadsWrite = { scopes: ["threads:write"], approval: true }

export const ThreadsApi = HttpApiGroup.make("threads", { topLevel: true })
  .add(
    command("threads.open", {
      ...threadsWrite,
      summary: "Find or start the thread of a relation, about a publication, or with a public profile, and post the first message"
    }, ["requestUuid", "body", "relationUuid", "publicationUuid", "recipientProfileUuid", "references"], ["requestUuid", "body"], rateLimited)
      .addSuccess(ThreadOpened)
  )
  .add(
    read("threads.list", { ...threadsRead, summary: "The acting profile's threads, by last message, with unread counts" }, [
      "cursor",
      "limit",
      "relationUuid",
      "publicationUuid"
    ]).setUrlParams(Query).addSuccess(ThreadPage)
  )
  .add(
    read("threads.get", { ...threadsRead, summary: "One thread (the most recently active without threadUuid)" }, ["threadUuid"], oneRecord).setUrlParams(Query).addSuccess(ThreadView)
  )
  .add(
    read("threads.messages", {
      ...threadsRead,
      summary: "A thread's messages, oldest first; moves the caller's read marker to the newest one returned"
    }, ["threadUuid", "cursor", "limit"], oneRecord).setUrlParams(MessagesQuery).addSuccess(MessagePage)
  )
  .add(
    command(
      "messages.send",
      { ...threadsWrite, summary: "Post a message in a thread the acting profile takes part in" },
      ["requestUuid", "threadUuid", "body", "references"],
      ["requestUuid", "threadUuid", "body"],
      rateLimited
    ).addSuccess(MessageView)
  )
  .annotate(OpenApi.Description, "Threads and messages between two profiles")
