import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { kinds } from "./Kinds.js"
import { ModerationDecision, ModerationItem, ModerationResult } from "./Moderation.js"
import { CatalogPublication, page, Publication, PublicationKind } from "./Publication.js"
import { Profile, ProfileType } from "../profiles/Profile.js"
import {
  Forbidden,
  InvalidPublication,
  InvalidState,
  InvalidTask,
  NotFound,
  RequestConflict,
  RevisionConflict,
  wire
} from "../kernel/ApiError.js"
import { field, maxChars, meanings, optionalField, RequestUuid, strict } from "../kernel/Common.js"
import { anyone, authenticated, authenticatedOrOperator } from "../kernel/Operation.js"
import { Cursor, Limit, saveErrors } from "./OwnerCommandsApi.js"

/** `q`: at most 4096 characters (spec). */
const Query = Schema.String.pipe(maxChars(4096))
const searchMeaning = "Words to search for in titles and texts."

export const PublicationListParams = Schema.Struct({
  q: optionalField(Query, searchMeaning),
  kind: optionalField(PublicationKind, "Only publications of this kind."),
  category: optionalField(Schema.String.pipe(maxChars(80)), "Only publications in this category (getCatalog lists them)."),
  ownerUuid: optionalField(Schema.UUID, "Only publications of this profile."),
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
})

export const ProfileListParams = Schema.Struct({
  q: optionalField(Query, searchMeaning),
  type: optionalField(ProfileType, "Only profiles of this type."),
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
})

export const Catalog = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  profiles: Schema.Array(Profile),
  publications: Schema.Array(CatalogPublication)
}).annotations({ identifier: "Catalog" })

/** `POST /api/v1/publications`: the kind and requestUuid at top level next to the kind's save input. */
export const PublicationCreate = Schema.Union(
  ...PublicationKind.literals.map((kind) =>
    Schema.Struct({ kind: Schema.Literal(kind), ...kinds[kind].save.fields }).annotations(strict)
  )
).annotations({ identifier: "PublicationCreate" })

export const OwnAnyPublication = Schema.Union(...PublicationKind.literals.map((kind) => kinds[kind].own))
  .annotations({ identifier: "OwnAnyPublication" })

/**
 * A save through `publications.create` answers what the kind's own save would: a task's bad data is
 * `invalid_task` here too, and `submit: true` needs what `tasks.submit` needs. (`widenedBy` is by
 * field name: a second kind with a `submit` flag would need it per kind.)
 */
const createInvalidInput = Object.fromEntries(
  PublicationKind.literals.filter((kind) => kinds[kind].invalidCoversInput).map((kind) => [`kind=${kind}`, kinds[kind].invalid])
)
const createWidenedBy: Readonly<Record<string, string>> = Object.assign({}, ...PublicationKind.literals.map((kind) => kinds[kind].widenedBy))

export const PublicApi = HttpApiGroup.make("publications", { topLevel: true })
  .add(
    anyone("GET", "getCatalog", "/api/v1/catalog", { summary: "The public catalog bootstrap: public profiles and publications" }).addSuccess(Catalog)
  )
  .add(
    anyone("GET", "listPublications", "/api/v1/publications", { summary: "Find publications (q: every term must start a word; case-insensitive, ё as е)" })
      .setUrlParams(PublicationListParams)
      .addSuccess(page(Publication, "PublicationPage"))
  )
  .add(
    anyone("GET", "getPublication", "/api/v1/publications/:uuid", { summary: "A public publication (404 when absent or not public)" }, [wire(NotFound)])
      .setPath(Schema.Struct({ uuid: field(Schema.UUID, "The publication's uuid (from listPublications).") }))
      .addSuccess(Publication)
  )
  .add(
    anyone("GET", "listProfiles", "/api/v1/profiles", { summary: "Find specialists (q: every term must start a word; case-insensitive, ё as е)" })
      .setUrlParams(ProfileListParams)
      .addSuccess(page(Profile, "ProfilePage"))
  )
  .add(
    authenticated("POST", "publications.create", "/api/v1/publications", {
      extension: true,
      scopes: PublicationKind.literals.map((kind) => kinds[kind].scopes.write),
      invalidInput: createInvalidInput,
      widenedBy: createWidenedBy,
      summary: "Save a publication of any kind (the kind's own save, addressed by kind); the scope needed is the kind's write scope"
    }, [wire(InvalidTask), wire(InvalidPublication), ...saveErrors]).setPayload(PublicationCreate).addSuccess(OwnAnyPublication)
  )
  .annotate(OpenApi.Description, "Public reads: catalog, publications, profiles, search")

export const ModerationQueueParams = Schema.Struct({
  kind: Schema.optional(PublicationKind),
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
})

export const ModerationDecisionInput = Schema.Struct({
  requestUuid: RequestUuid,
  publicationUuid: Schema.UUID,
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  decision: ModerationDecision,
  reason: Schema.optional(Schema.String.pipe(maxChars(2000)))
}).pipe(
  Schema.filter((input) =>
    input.decision === "approve" || (input.reason ?? "").trim().length > 0
      ? true
      : { path: ["reason"], message: "a returned or rejected publication needs a reason its owner can act on" }
  )
).annotations({ identifier: "ModerationDecisionInput", ...strict })

export const ModerationApi = HttpApiGroup.make("moderation", { topLevel: true })
  .add(
    authenticatedOrOperator("GET", "moderation.queue", "/api/v1/moderation/queue", {
      extension: true,
      scopes: ["moderation:read"],
      sessionOnly: true,
      summary: "Publications waiting for a moderator, oldest submission first (moderators only)"
    }, [wire(Forbidden)])
      .setUrlParams(ModerationQueueParams)
      .addSuccess(page(ModerationItem, "ModerationQueuePage"))
  )
  .add(
    authenticatedOrOperator("POST", "moderation.decide", "/api/v1/moderation/decisions", {
      extension: true,
      scopes: ["moderation:write"],
      sessionOnly: true,
      approval: true,
      summary: "Approve, return or reject a pending publication, with a reason (moderators only)"
    }, [wire(Forbidden), wire(NotFound), wire(InvalidState), wire(RevisionConflict), wire(RequestConflict)])
      .setPayload(ModerationDecisionInput)
      .addSuccess(ModerationResult)
  )
  .annotate(OpenApi.Description, "Moderation of publications: the queue and decisions")

