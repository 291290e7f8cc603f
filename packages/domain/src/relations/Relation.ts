import { Schema } from "effect"
import { DateTime } from "../kernel/Common.js"
import { ProfileType } from "../profiles/Profile.js"
import { PublicationKind } from "../publications/Publication.js"
import { relationKinds } from "./Transitions.js"

export const RelationKind = Schema.Literal(...relationKinds).annotations({ identifier: "RelationKind" })
export const RelationRole = Schema.Literal("customer", "contractor", "employer", "candidate").annotations({ identifier: "RelationRole" })

export const ReferenceView = Schema.Struct({
  kind: Schema.Literal("file", "publication", "relation"),
  uuid: Schema.UUID
}).annotations({ identifier: "Reference" })
export type ReferenceView = typeof ReferenceView.Type

/** The other party as a relation shows it: name, type and avatar, even when that profile is private. */
export const Counterpart = Schema.Struct({
  profileUuid: Schema.UUID,
  name: Schema.String,
  type: ProfileType,
  avatarUrl: Schema.optional(Schema.String),
  /** The counterpart's customer alias, when it is the relation's customer and has one: read its reputation with customers.get. */
  customerAlias: Schema.optional(Schema.String)
}).annotations({ identifier: "Counterpart" })

export const HistoryEntry = Schema.Struct({
  status: Schema.String,
  at: DateTime,
  byRole: Schema.Literal("customer", "contractor", "employer", "candidate", "system")
}).annotations({ identifier: "RelationHistoryEntry" })

/** The latest handed-over work of a deal (each `deals.results` is a new version). */
export const DealResults = Schema.Struct({
  version: Schema.Int,
  body: Schema.String,
  references: Schema.Array(ReferenceView),
  submittedAt: DateTime
}).annotations({ identifier: "DealResults" })

/** On a completed deal: the caller's review window and whether it may write its review now. */
export const DealReview = Schema.Struct({
  windowEndsAt: DateTime,
  ownReviewUuid: Schema.optional(Schema.UUID),
  /** The window is open, the caller has not reviewed yet, and the two profiles are of different accounts. */
  canReview: Schema.Boolean
}).annotations({ identifier: "DealReview" })

/**
 * A relation in the caller's view: response, offer, deal, job response or job
 * invitation, with the caller's role, the other party, the lineage, the history and the operation
 * ids the caller may call now (`allowedActions`, from the transition tables).
 */
export const RelationView = Schema.Struct({
  uuid: Schema.UUID,
  kind: RelationKind,
  status: Schema.String,
  revision: Schema.Int,
  role: RelationRole,
  publication: Schema.NullOr(Schema.Struct({ uuid: Schema.UUID, kind: PublicationKind, title: Schema.String })),
  counterpart: Counterpart,
  initiatorProfileUuid: Schema.UUID,
  recipientProfileUuid: Schema.UUID,
  body: Schema.String,
  budget: Schema.optional(Schema.String),
  deadline: Schema.optional(Schema.String),
  references: Schema.Array(ReferenceView),
  reason: Schema.optional(Schema.String),
  threadUuid: Schema.optional(Schema.UUID),
  originRelationUuid: Schema.optional(Schema.UUID),
  /** On an accepted response or offer: the deal it started. */
  dealUuid: Schema.optional(Schema.UUID),
  results: Schema.optional(DealResults),
  review: Schema.optional(DealReview),
  /** A deal with results waiting: when it completes by itself (14 days after the handover). */
  autoCompleteAt: Schema.optional(DateTime),
  completedAt: Schema.optional(DateTime),
  history: Schema.Array(HistoryEntry),
  allowedActions: Schema.Array(Schema.String),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "Relation" })
export type RelationView = typeof RelationView.Type

export const RelationPage = Schema.Struct({
  items: Schema.Array(RelationView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "RelationPage" })
export type RelationPage = typeof RelationPage.Type
