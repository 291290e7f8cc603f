import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ModerationDecision, ModerationItem, ModerationResult } from "../publications/Moderation.js"
import { ArticleData, PortfolioData, ResumeData, ServiceData, TrainingData, VacancyData } from "../publications/MediaData.js"
import {
  CatalogPublication,
  OwnTask,
  ownPublication,
  page,
  Publication,
  PublicationKind
} from "../publications/Publication.js"
import type { PublicationCommand } from "../publications/PublicationKinds.js"
import { TaskData } from "../publications/TaskData.js"
import { Profile, ProfileType } from "../profiles/Profile.js"
import {
  type ApiErrorClass,
  Forbidden,
  InvalidPublication,
  InvalidState,
  InvalidTask,
  NotFound,
  RequestConflict,
  RevisionConflict,
  wire
} from "./ApiError.js"
import { Authentication, OperatorAccess } from "./Authentication.js"
import { maxChars, PageLimit, RequestUuid, strict } from "./Common.js"
import { operation } from "./Operation.js"

/** `limit` of a list operation: 1 to 100 (spec), from the query string. */
export const Limit = PageLimit
const Cursor = Schema.String.pipe(maxChars(512))

// Query schemas carry no identifier: a named one would be emitted as a $ref and its parameters lost from OpenAPI.
export const ListParams = Schema.Struct({
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(Limit)
})

export const GetParams = Schema.Struct({
  publicationUuid: Schema.optional(Schema.UUID)
})

/** The input of submit, hide, restore and delete (and close of tasks): all three required. */
export const PublicationCommandInput = Schema.Struct({
  requestUuid: RequestUuid,
  publicationUuid: Schema.UUID,
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))
}).annotations({ identifier: "PublicationCommandInput", ...strict })

const saveFields = {
  requestUuid: RequestUuid,
  publicationUuid: Schema.optional(Schema.UUID),
  expectedRevision: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)))
}

/** The save input of a media kind (spec, articles): requestUuid, the whole draft, and for edits its uuid and revision. */
export const mediaSave = <A, I>(data: Schema.Schema<A, I>, identifier: string) =>
  Schema.Struct({ ...saveFields, data }).annotations({ identifier, ...strict })

/** Tasks also accept `submit: true`: save and submit in one command (the spec's "when submit is true"). */
export const TaskSave = Schema.Struct({ ...saveFields, data: TaskData, submit: Schema.optional(Schema.Boolean) })
  .annotations({ identifier: "TaskSave", ...strict })

/**
 * The seven owner commands of one publication kind, at `/api/v1/commands/<command>.<op>`, with the
 * spec's scopes and approval flags. `data` is the kind's draft schema, `own` its owner view.
 */
const kindGroup = <const C extends PublicationCommand, SA, SI, OA, OI, E extends { readonly message: string }, EI>(
  command: C,
  save: Schema.Schema<SA, SI>,
  own: Schema.Schema<OA, OI>,
  invalid: ApiErrorClass<E> & Schema.Schema<E, EI>
) => {
  const read = [`${command}:read`]
  const write = [`${command}:write`]
  const submit = [`${command}:submit`]
  const invalidInput = command === "tasks" ? { "*": InvalidTask } : {}
  // A task saved with `submit: true` is submitted: the caller needs what tasks.submit needs.
  const widenedBy = command === "tasks" ? { submit: "tasks.submit" } : {}
  return HttpApiGroup.make(command, { topLevel: true })
      .add(
        operation("GET", `${command}.list`, `/api/v1/commands/${command}.list`, {
          scopes: read,
          summary: `The acting profile's ${command}, most recently changed first`
        }).middleware(Authentication).setUrlParams(ListParams).addSuccess(page(own, `${command}Page`))
      )
      .add(
        operation("GET", `${command}.get`, `/api/v1/commands/${command}.get`, {
          scopes: read,
          summary: `One of the acting profile's ${command} (the most recently changed without publicationUuid)`
        }).middleware(Authentication).setUrlParams(GetParams).addSuccess(own).addError(wire(NotFound))
      )
      .add(
        operation("POST", `${command}.save`, `/api/v1/commands/${command}.save`, {
          scopes: write,
          invalidInput,
          widenedBy,
          summary: "Save the whole draft (create without publicationUuid); never publishes"
        })
          .middleware(Authentication)
          .setPayload(save)
          .addSuccess(own)
          .addError(wire(invalid))
          .addError(wire(NotFound))
          .addError(wire(RevisionConflict))
          .addError(wire(RequestConflict))
          .addError(wire(InvalidState))
      )
      .add(
        operation("POST", `${command}.submit`, `/api/v1/commands/${command}.submit`, {
          scopes: submit,
          approval: true,
          summary: "Send the draft to moderation"
        })
          .middleware(Authentication)
          .setPayload(PublicationCommandInput)
          .addSuccess(own)
          .addError(wire(invalid))
          .addError(wire(NotFound))
          .addError(wire(RevisionConflict))
          .addError(wire(RequestConflict))
          .addError(wire(InvalidState))
      )
      .add(
        operation("POST", `${command}.hide`, `/api/v1/commands/${command}.hide`, {
          scopes: write,
          approval: true,
          summary: "Take the publication out of public view"
        })
          .middleware(Authentication)
          .setPayload(PublicationCommandInput)
          .addSuccess(own)
          .addError(wire(NotFound))
          .addError(wire(RevisionConflict))
          .addError(wire(RequestConflict))
      )
      .add(
        operation("POST", `${command}.restore`, `/api/v1/commands/${command}.restore`, {
          scopes: write,
          approval: true,
          summary: "Show a hidden publication again"
        })
          .middleware(Authentication)
          .setPayload(PublicationCommandInput)
          .addSuccess(own)
          .addError(wire(NotFound))
          .addError(wire(RevisionConflict))
          .addError(wire(RequestConflict))
      )
      .add(
        operation("POST", `${command}.delete`, `/api/v1/commands/${command}.delete`, {
          scopes: write,
          approval: true,
          summary: "Delete the publication (it disappears from every read)"
        })
          .middleware(Authentication)
          .setPayload(PublicationCommandInput)
          .addSuccess(own)
          .addError(wire(NotFound))
          .addError(wire(RevisionConflict))
          .addError(wire(RequestConflict))
      )
      .annotate(OpenApi.Description, `Owner commands of ${command}`)
}

export const OwnService = ownPublication(ServiceData, "OwnService")
export const OwnPortfolio = ownPublication(PortfolioData, "OwnPortfolio")
export const OwnArticle = ownPublication(ArticleData, "OwnArticle")
export const OwnVacancy = ownPublication(VacancyData, "OwnVacancy")
export const OwnResume = ownPublication(ResumeData, "OwnResume")
export const OwnTraining = ownPublication(TrainingData, "OwnTraining")

export const TasksApi = kindGroup("tasks", TaskSave, OwnTask, InvalidTask).add(
  operation("POST", "tasks.close", "/api/v1/commands/tasks.close", {
    extension: true,
    scopes: ["tasks:write"],
    approval: true,
    summary: "Close a task: it stays readable, marked closed, and takes no new responses"
  })
    .middleware(Authentication)
    .setPayload(PublicationCommandInput)
    .addSuccess(OwnTask)
    .addError(wire(NotFound))
    .addError(wire(RevisionConflict))
    .addError(wire(RequestConflict))
)
export const PortfolioApi = kindGroup("portfolio", mediaSave(PortfolioData, "PortfolioSave"), OwnPortfolio, InvalidPublication)
export const ServicesApi = kindGroup("services", mediaSave(ServiceData, "ServiceSave"), OwnService, InvalidPublication)
export const ArticlesApi = kindGroup("articles", mediaSave(ArticleData, "ArticleSave"), OwnArticle, InvalidPublication)
export const JobsApi = kindGroup("jobs", mediaSave(VacancyData, "VacancySave"), OwnVacancy, InvalidPublication)
export const ResumesApi = kindGroup("resumes", mediaSave(ResumeData, "ResumeSave"), OwnResume, InvalidPublication)
export const LearningApi = kindGroup("learning", mediaSave(TrainingData, "TrainingSave"), OwnTraining, InvalidPublication)

/** `q`: at most 4096 characters (spec). */
const Query = Schema.String.pipe(maxChars(4096))

export const PublicationListParams = Schema.Struct({
  q: Schema.optional(Query),
  kind: Schema.optional(PublicationKind),
  category: Schema.optional(Schema.String.pipe(maxChars(80))),
  ownerUuid: Schema.optional(Schema.UUID),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(Limit)
})

export const ProfileListParams = Schema.Struct({
  q: Schema.optional(Query),
  type: Schema.optional(ProfileType),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(Limit)
})

export const Catalog = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  profiles: Schema.Array(Profile),
  publications: Schema.Array(CatalogPublication)
}).annotations({ identifier: "Catalog" })

const createVariant = <K extends PublicationKind, A, I>(kind: K, data: Schema.Schema<A, I>) =>
  Schema.Struct({ kind: Schema.Literal(kind), ...saveFields, data }).annotations(strict)

/** `POST /api/v1/publications`: the kind and requestUuid at top level next to the save data. */
export const PublicationCreate = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("task"), ...saveFields, data: TaskData, submit: Schema.optional(Schema.Boolean) }).annotations(strict),
  createVariant("service", ServiceData),
  createVariant("portfolio", PortfolioData),
  createVariant("article", ArticleData),
  createVariant("vacancy", VacancyData),
  createVariant("resume", ResumeData),
  createVariant("training", TrainingData)
).annotations({ identifier: "PublicationCreate" })

export const OwnAnyPublication = Schema.Union(OwnTask, OwnService, OwnPortfolio, OwnArticle, OwnVacancy, OwnResume, OwnTraining)
  .annotations({ identifier: "OwnAnyPublication" })

export const PublicApi = HttpApiGroup.make("publications", { topLevel: true })
  .add(
    operation("GET", "getCatalog", "/api/v1/catalog", { summary: "The public catalog bootstrap: public profiles and publications" })
      .addSuccess(Catalog)
  )
  .add(
    operation("GET", "listPublications", "/api/v1/publications", { summary: "Find publications (q: every term must match)" })
      .setUrlParams(PublicationListParams)
      .addSuccess(page(Publication, "PublicationPage"))
  )
  .add(
    operation("GET", "getPublication", "/api/v1/publications/:uuid", { summary: "A public publication (404 when absent or not public)" })
      .setPath(Schema.Struct({ uuid: Schema.UUID }))
      .addSuccess(Publication)
      .addError(wire(NotFound))
  )
  .add(
    operation("GET", "listProfiles", "/api/v1/profiles", { summary: "Find specialists (q: every term must match)" })
      .setUrlParams(ProfileListParams)
      .addSuccess(page(Profile, "ProfilePage"))
  )
  .add(
    operation("POST", "publications.create", "/api/v1/publications", {
      extension: true,
      scopes: ["tasks:write", "services:write", "portfolio:write", "articles:write", "jobs:write", "resumes:write", "learning:write"],
      // The same save as tasks.save: a task's bad data is invalid_task there too.
      invalidInput: { "kind=task": InvalidTask },
      // A task saved with `submit: true` is submitted: the caller needs what tasks.submit needs.
      widenedBy: { submit: "tasks.submit" },
      summary: "Save a publication of any kind (the kind's own save, addressed by kind); the scope needed is the kind's write scope"
    })
      .middleware(Authentication)
      .setPayload(PublicationCreate)
      .addSuccess(OwnAnyPublication)
      .addError(wire(InvalidTask))
      .addError(wire(InvalidPublication))
      .addError(wire(NotFound))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
      .addError(wire(InvalidState))
  )
  .annotate(OpenApi.Description, "Public reads: catalog, publications, profiles, search")

export const ModerationQueueParams = Schema.Struct({
  kind: Schema.optional(PublicationKind),
  cursor: Schema.optional(Cursor),
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
    operation("GET", "moderation.queue", "/api/v1/moderation/queue", {
      extension: true,
      scopes: ["moderation:read"],
      sessionOnly: true,
      summary: "Publications waiting for a moderator, oldest submission first (moderators only)"
    })
      .middleware(Authentication)
      .middleware(OperatorAccess)
      .setUrlParams(ModerationQueueParams)
      .addSuccess(page(ModerationItem, "ModerationQueuePage"))
      .addError(wire(Forbidden))
  )
  .add(
    operation("POST", "moderation.decide", "/api/v1/moderation/decisions", {
      extension: true,
      scopes: ["moderation:write"],
      sessionOnly: true,
      approval: true,
      summary: "Approve, return or reject a pending publication, with a reason (moderators only)"
    })
      .middleware(Authentication)
      .middleware(OperatorAccess)
      .setPayload(ModerationDecisionInput)
      .addSuccess(ModerationResult)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Moderation of publications: the queue and decisions")

