import { Schema } from "effect"
import { AnyJson, DateTime } from "../kernel/Common.js"
import { TaskData } from "./TaskData.js"

/** The spec's publication kinds. */
export const PublicationKind = Schema.Literal("task", "service", "portfolio", "article", "vacancy", "resume", "training")
  .annotations({ identifier: "PublicationKind" })
export type PublicationKind = typeof PublicationKind.Type

/** The owner-view states (spec: draft, pending, approved, returned, rejected). */
export const PublicationStatus = Schema.Literal("draft", "pending", "approved", "returned", "rejected")
  .annotations({ identifier: "PublicationStatus" })
export type PublicationStatus = typeof PublicationStatus.Type

/** The approved data of any kind, as saved (task data or a media draft). */
export const PublicationData = Schema.Record({ key: Schema.String, value: AnyJson })
  .annotations({ identifier: "PublicationData", description: "The publication's data as its owner saved it and a moderator approved it" })

/**
 * A public read (spec Publication, no additional properties): only approved data; `draft` is a
 * compatibility alias of `approved`; never a real draft, history, import source or moderation data.
 */
export const Publication = Schema.Struct({
  uuid: Schema.UUID,
  id: Schema.String,
  ownerId: Schema.String,
  ownerUuid: Schema.UUID,
  kind: PublicationKind,
  approved: PublicationData,
  draft: PublicationData,
  status: Schema.Literal("approved"),
  hidden: Schema.Literal(false),
  history: Schema.Tuple(),
  reason: Schema.Literal(""),
  closed: Schema.optional(Schema.Boolean),
  createdAt: Schema.optional(DateTime),
  updatedAt: Schema.optional(DateTime)
}).annotations({ identifier: "Publication" })
export type Publication = typeof Publication.Type

/** An entry of the catalog bootstrap (spec CatalogPublication): a Publication without `draft`, with `demo`. */
export const CatalogPublication = Schema.Struct({
  ...Publication.omit("draft").fields,
  demo: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "CatalogPublication" })
export type CatalogPublication = typeof CatalogPublication.Type

/**
 * The moderator's reason of the latest decision, as its owner reads it: why it was returned or
 * rejected (a note on an approval); empty when none was given or since it was submitted again.
 */
export const ModerationReason = Schema.String.annotations({
  description: "The moderator's reason of the latest decision (why it was returned or rejected); empty when none was given or since the publication was submitted again"
})

/**
 * The owner's view of a task: the spec's OwnTask fields, and `reason` (ours, as every other
 * kind's owner view has it), so its owner learns why a task was returned or rejected.
 */
export const OwnTask = Schema.Struct({
  uuid: Schema.UUID,
  id: Schema.String,
  revision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  status: PublicationStatus,
  draft: TaskData,
  reason: ModerationReason,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "OwnTask" })
export type OwnTask = typeof OwnTask.Type

/**
 * The owner's view of a media publication (ours; the spec shows only OwnTask): the draft, what is
 * public now, and the moderation state with the moderator's reason.
 */
export const ownPublication = <A, I>(data: Schema.Schema<A, I>, identifier: string) =>
  Schema.Struct({
    uuid: Schema.UUID,
    id: Schema.String,
    kind: PublicationKind,
    revision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
    status: PublicationStatus,
    draft: data,
    approved: Schema.NullOr(data),
    hidden: Schema.Boolean,
    closed: Schema.Boolean,
    reason: Schema.String,
    createdAt: DateTime,
    updatedAt: DateTime
  }).annotations({ identifier })

/** A page of a list operation; `nextCursor` is absent on the last page. */
export const page = <A, I>(item: Schema.Schema<A, I>, identifier: string) =>
  Schema.Struct({
    items: Schema.Array(item),
    nextCursor: Schema.optional(Schema.String)
  }).annotations({ identifier })
