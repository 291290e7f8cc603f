import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { page } from "./Publication.js"
import { type ApiErrorClass, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { field, maxChars, meanings, optionalField, PageLimit, RequestUuid, Revision, strict } from "../kernel/Common.js"
import { authenticated, type InputErrorClass } from "../kernel/Operation.js"

/** `limit` of a list operation: 1 to 100 (spec), from the query string. */
export const Limit = PageLimit
export const Cursor = Schema.String.pipe(maxChars(512))

// Query schemas carry no identifier: a named one would be emitted as a $ref and its parameters lost from OpenAPI.
export const ListParams = Schema.Struct({
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
})

export const GetParams = Schema.Struct({
  publicationUuid: optionalField(Schema.UUID, "The publication to read (one of the acting profile's own); absent: the most recently changed.")
})

/** The input of submit, hide, restore and delete (and close of tasks): all three required. */
export const PublicationCommandInput = Schema.Struct({
  requestUuid: RequestUuid,
  publicationUuid: field(Schema.UUID, "The acting profile's own publication (its uuid from the kind's list or get)."),
  expectedRevision: field(Revision, meanings.expectedRevision)
}).annotations({ identifier: "PublicationCommandInput", ...strict })

/** The fields of every save beside `data`: requestUuid, and for edits the publication and its revision. */
export const saveFields = {
  requestUuid: RequestUuid,
  publicationUuid: optionalField(Schema.UUID, "The draft to overwrite, for an edit; absent: a new draft is created."),
  expectedRevision: optionalField(Revision, meanings.expectedRevision)
}

/** The save input of a kind (spec, articles): requestUuid, the whole draft, for edits its uuid and revision, and the kind's own extra fields. */
export const saveInput = <A, I, const Extra extends Schema.Struct.Fields>(data: Schema.Schema<A, I>, extra: Extra, identifier: string) =>
  Schema.Struct({
    ...saveFields,
    data: field(data, "The whole draft: every field, as it should be saved."),
    ...extra
  }).annotations({ identifier, ...strict })

/** What a change of a publication at expectedRevision may answer. */
const changeErrors = [wire(NotFound), wire(RevisionConflict), wire(RequestConflict)] as const
/** What a save or a submit may answer after the kind's own invalid-data error. */
export const saveErrors = [...changeErrors, wire(InvalidState)] as const

/** The operations every publication kind has, in catalog order; a kind may add `close`. */
export const ownerOperations = ["list", "get", "save", "submit", "hide", "restore", "delete"] as const
export type OwnerOperation = (typeof ownerOperations)[number] | "close"

/** What the owner commands of one kind are declared from (a row of `publications/Kinds.ts`). */
export interface OwnerCommandsOf<C extends string, Save extends Schema.Schema.Any, OA, OI, E extends { readonly message: string }, EI> {
  readonly kind: string
  readonly command: C
  readonly scopes: { readonly read: string; readonly write: string; readonly submit: string }
  readonly save: Save
  readonly own: Schema.Schema<OA, OI>
  readonly invalid: ApiErrorClass<E> & Schema.Schema<E, EI>
  /** The error a schema violation of the save answers with, by field (`invalid_request` otherwise). */
  readonly invalidInput: Readonly<Record<string, InputErrorClass>>
  /** Save input flags that do what another operation does (`submit: true` submits). */
  readonly widenedBy: Readonly<Record<string, string>>
}

/**
 * The owner commands of one publication kind, at `/api/v1/commands/<command>.<op>`, with the
 * spec's scopes and approval flags: the operations named in `operations`, in that order.
 */
export const ownerCommandsGroup = <
  const C extends string,
  Save extends Schema.Schema.Any,
  OA,
  OI,
  E extends { readonly message: string },
  EI,
  const Ops extends ReadonlyArray<OwnerOperation>
>(kind: OwnerCommandsOf<C, Save, OA, OI, E, EI>, operations: Ops) => {
  const { command, invalid, own, scopes } = kind
  const id = <const Op extends OwnerOperation>(op: Op) => `${command}.${op}` as const
  const path = <const Op extends OwnerOperation>(op: Op) => `/api/v1/commands/${command}.${op}` as const
  /** hide, restore, delete and close: an approval operation over the publication's uuid and revision. */
  const ownerChange = <const Op extends OwnerOperation>(op: Op, summary: string, extension = false) =>
    authenticated("POST", id(op), path(op), { extension, scopes: [scopes.write], approval: true, summary }, changeErrors)
      .setPayload(PublicationCommandInput)
      .addSuccess(own)
  const endpoints = {
    list: authenticated("GET", id("list"), path("list"), {
      scopes: [scopes.read],
      summary: `The acting profile's ${command}, most recently changed first`
    }).setUrlParams(ListParams).addSuccess(page(own, `${command}Page`)),
    get: authenticated("GET", id("get"), path("get"), {
      scopes: [scopes.read],
      summary: `One of the acting profile's ${command} (the most recently changed without publicationUuid)`
    }, [wire(NotFound)]).setUrlParams(GetParams).addSuccess(own),
    save: authenticated("POST", id("save"), path("save"), {
      scopes: [scopes.write],
      invalidInput: kind.invalidInput,
      widenedBy: kind.widenedBy,
      summary: "Save the whole draft (create without publicationUuid); never publishes"
    }, [wire(invalid), ...saveErrors]).setPayload(kind.save).addSuccess(own),
    submit: authenticated("POST", id("submit"), path("submit"), {
      scopes: [scopes.submit],
      approval: true,
      summary: "Send the draft to moderation"
    }, [wire(invalid), ...saveErrors]).setPayload(PublicationCommandInput).addSuccess(own),
    hide: ownerChange("hide", "Take the publication out of public view"),
    restore: ownerChange("restore", "Show a hidden publication again"),
    delete: ownerChange("delete", "Delete the publication (it disappears from every read)"),
    close: ownerChange("close", `Close a ${kind.kind}: it stays readable, marked closed, and takes no new responses`, true)
  }
  type Endpoint = (typeof endpoints)[Ops[number]]
  return operations
    .reduce(
      (group: HttpApiGroup.HttpApiGroup<C, Endpoint, never, never, true>, name: Ops[number]) => group.add(endpoints[name]),
      HttpApiGroup.make(command, { topLevel: true })
    )
    .annotate(OpenApi.Description, `Owner commands of ${command}`)
}
