import { Schema } from "effect"
import { maxChars, meanings, minChars, RequestUuid, strict } from "../kernel/Common.js"

/**
 * The spec's shared field set of the relation operations ("Responses, offers, deals, job contacts,
 * threads, messages"): body, budget, cursor, deadline, expectedRevision, limit, publicationUuid,
 * reason, recipientProfileUuid, references, relationUuid, requestUuid, status, threadUuid; no other
 * properties. Every one of the 27 operations declares the whole set (as the spec does), with its
 * own required fields; a field the operation does not use is refused by the handler (400 naming
 * it, `unusedFields`), so nothing sent is silently ignored. Bounds (ours): body
 * 1-5000, reason 1-2000, budget at most 80 and deadline at most 120 characters (the task's bounds),
 * at most 20 references (spec).
 */
export const fieldNames = [
  "body",
  "budget",
  "cursor",
  "deadline",
  "expectedRevision",
  "limit",
  "publicationUuid",
  "reason",
  "recipientProfileUuid",
  "references",
  "relationUuid",
  "requestUuid",
  "status",
  "threadUuid"
] as const
export type FieldName = typeof fieldNames[number]

export const maxReferences = 20

const text = (min: number, max: number) => Schema.String.pipe(minChars(min), maxChars(max))

/** One item of `references`: both strings required (spec); the kind and uuid are checked by the handler (400 `invalid_reference`). */
export const Reference = Schema.Struct({
  kind: Schema.String.pipe(maxChars(40)),
  uuid: Schema.String.pipe(maxChars(64))
}).annotations({ identifier: "RelationReference", ...strict })
export type Reference = typeof Reference.Type


const shared = {
  body: text(1, 5000),
  budget: Schema.String.pipe(maxChars(80)),
  cursor: Schema.String.pipe(maxChars(512)),
  deadline: Schema.String.pipe(maxChars(120)),
  publicationUuid: Schema.UUID,
  reason: text(1, 2000),
  recipientProfileUuid: Schema.UUID,
  relationUuid: Schema.UUID,
  requestUuid: RequestUuid,
  status: Schema.String.pipe(maxChars(40)),
  threadUuid: Schema.UUID
}

/**
 * The shared fields' meanings, one sentence each, for every operation of the set that uses them
 * (on the property: OpenAPI and the MCP tools show them, parse errors keep the type's own words).
 */
const fieldMeanings: Readonly<Record<FieldName, string>> = {
  body: "The text: of the response, offer or message, or of the handed-over work (1 to 5000 characters).",
  budget: "The price proposed, in words (\"25 000 ₽\", \"by the hour\").",
  cursor: meanings.cursor,
  deadline: "The time proposed, in words (\"two weeks\").",
  expectedRevision: meanings.expectedRevision,
  limit: "How many items one page holds at most (0 or absent: 20; above 100: 100).",
  publicationUuid: "The publication concerned: the task, vacancy or resume answered, or the one a list or thread is about.",
  reason: "Why, in words, shown to the other side (1 to 2000 characters).",
  recipientProfileUuid: "The profile addressed (an offer's or a thread's other side).",
  references: "Records attached by kind and uuid (a file, a publication, a relation); at most 20.",
  relationUuid: "The response, offer, deal or job contact concerned (its uuid from the list).",
  requestUuid: "Chosen by the client for one command and reused for its retries; the first result is returned again",
  status: "For a list, only records in this status; for a status change, the new status (shortlisted, accepted or declined).",
  threadUuid: "The message thread concerned (from threads.list or threads.open)."
}

/** Body fields of the POST operations. */
const bodyFields = {
  ...shared,
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)),
  /** Spec: integer, minimum 0, no maximum. 0 means the default (20), above 100 is read as 100. */
  limit: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)),
  references: Schema.Array(Reference).pipe(Schema.maxItems(maxReferences))
}

/**
 * Query fields of the GET operations. `references` has no meaning in a query string: declared
 * (it is in the shared set) as text, and refused by every GET operation.
 */
const queryFields = {
  ...shared,
  expectedRevision: Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(0))
    .annotations({ jsonSchema: { type: "integer", minimum: 0 } }),
  limit: Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(0))
    .annotations({ jsonSchema: { type: "integer", minimum: 0 } }),
  references: Schema.String.pipe(maxChars(2048))
}

type Required<F extends Record<FieldName, Schema.Schema.All>, R extends FieldName> = {
  [K in FieldName]: K extends R ? F[K] : Schema.optional<F[K]>
}

/**
 * Each field of a set as a required and as an optional property, made once: the 27 operations
 * share them (only which are required differs), and they are built when the declaration loads.
 */
const signaturesOf = (fields: Record<FieldName, Schema.Schema.All>) =>
  Object.fromEntries(fieldNames.map((name) => [name, {
    required: Schema.propertySignature(fields[name]).annotations({ description: fieldMeanings[name] }),
    optional: Schema.optional(fields[name]).annotations({ description: fieldMeanings[name] })
  }])) as unknown as Record<FieldName, { readonly required: Schema.Struct.Field; readonly optional: Schema.Struct.Field }>

const build = <F extends Record<FieldName, Schema.Schema.All>, const R extends FieldName>(
  signatures: ReturnType<typeof signaturesOf>,
  required: ReadonlyArray<R>
) => {
  const all = required as ReadonlyArray<FieldName>
  const struct = Object.fromEntries(fieldNames.map((name) => [name, all.includes(name) ? signatures[name].required : signatures[name].optional]))
  return Schema.Struct(struct as unknown as Required<F, R>).annotations(strict)
}

const bodySignatures = signaturesOf(bodyFields)
const querySignatures = signaturesOf(queryFields)

/** The body of a POST operation: the whole shared set, `required` as the operation requires. */
export const commandFields = <const R extends FieldName>(required: ReadonlyArray<R>) => build<typeof bodyFields, R>(bodySignatures, required)

/** The query of a GET operation: the whole shared set, `required` as the operation requires. */
export const queryFieldsOf = <const R extends FieldName>(required: ReadonlyArray<R>) => build<typeof queryFields, R>(querySignatures, required)

/**
 * The fields of the shared set an operation uses, declared with it (`RelationsApi.ts`'s `command`
 * and `read`): the handler refuses any other field sent (`RelationsOperations.ts`), and the MCP
 * tools offer only these. The kernel's annotation (kernel/Operation.ts), so every transport reads it.
 */
export { UsedFields } from "../kernel/Operation.js"

/** `limit` as the lists read it: absent or 0 is 20, more than 100 is 100. */
export const pageSize = (limit: number | undefined): number =>
  limit === undefined || limit === 0 ? 20 : Math.min(limit, 100)
