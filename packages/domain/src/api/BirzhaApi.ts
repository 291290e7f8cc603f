import { HttpApi, type HttpApiGroup, OpenApi } from "@effect/platform"
import { JSONSchema } from "effect"
import { ErrorEnvelope, InternalError, InvalidRequest, PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType, wire } from "../kernel/ApiError.js"
import { AccountApi } from "../profiles/AccountApi.js"
import { AdminApi } from "../admin/AdminApi.js"
import { AuthApi } from "../auth/AuthApi.js"
import { AutomationsApi } from "../automations/AutomationsApi.js"
import { NotificationsApi } from "../notifications/NotificationsApi.js"
import { CommentsApi } from "../comments/CommentsApi.js"
import { EventsApi } from "../events/EventsApi.js"
import { FilesApi } from "../files/FilesApi.js"
import { HealthApi } from "../operations/HealthApi.js"
import { KeysApi } from "../keys/KeysApi.js"
import { OAuthApi } from "../oauth/OAuthApi.js"
import { LearningCoursesApi, LearningJobsApi, LearningLibraryApi, LearningRunsApi } from "../learning/courses/CoursesApi.js"
import { LearningEnrollmentsApi } from "../learning/enrollments/EnrollmentsApi.js"
import { LearningCorrectionsApi } from "../learning/corrections/CorrectionsApi.js"
import { LearningReviewsApi } from "../learning/reviews/ReviewsApi.js"
import { LearningGradingApi } from "../learning/grading/GradingApi.js"
import { LearningStepsApi } from "../learning/steps/StepsApi.js"
import { LearningCourseReviewsApi, LearningEmailInvitationsApi, LearningOwnershipApi, LearningStaffApi } from "../learning/staff/StaffApi.js"
import { LearningCommunityApi } from "../learning/community/CommunityApi.js"
import { LearningGroupsApi } from "../learning/staff/GroupsApi.js"
import { LearningTeachingApi } from "../learning/teaching/TeachingApi.js"
import { IntegrationCommandsApi } from "../commands/IntegrationCommandsApi.js"
import { catalogOf } from "../kernel/Operation.js"
import { kindList } from "../publications/Kinds.js"
import { ModerationApi, PublicApi } from "../publications/PublicationsApi.js"
import { DealsApi, JobContactsApi, OffersApi, ResponsesApi, ThreadsApi } from "../relations/RelationsApi.js"
import { ComplaintsApi, CustomersApi, FavoritesApi, MarketplaceModerationApi, ReviewsApi } from "../reviews/ReviewsApi.js"
import { WebhooksApi } from "../webhooks/WebhooksApi.js"

/** The interface version the spec names; the OpenAPI document carries it as `info.version`. */
export const apiVersion = "2026-10-15"

const frameworkSchemas = ["HttpApiDecodeError", "Issue", "PropertyKey"]
const isFrameworkRef = (schema: unknown) =>
  typeof schema === "object" && schema !== null && "$ref" in schema &&
  schema.$ref === "#/components/schemas/HttpApiDecodeError"

/**
 * Requests failing their schema answer with our `invalid_request` envelope (the host converts the
 * framework's decode error before encoding), so the document must not advertise the framework's shape.
 */
function withoutFrameworkDecodeError(document: Record<string, unknown>): Record<string, unknown> {
  // The transform receives the document this module's own catalog produced.
  const spec = document as unknown as OpenApi.OpenAPISpec
  for (const item of Object.values(spec.paths)) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses)) {
        const content = response.content?.["application/json"]
        const schema = content?.schema
        if (content !== undefined && schema !== undefined && "anyOf" in schema) {
          const at = schema.anyOf.findIndex(isFrameworkRef)
          if (at >= 0) schema.anyOf.splice(at, 1)
        }
      }
    }
  }
  for (const name of frameworkSchemas) delete spec.components.schemas[name]
  return document
}

/**
 * The complete list of scope names (spec: "not shown") at the document root as `x-scopes`, read
 * from the operations' own `x-scopes`, so it can never disagree with them. GET /api/v1/scopes
 * serves the same names with their operations and whether a key may hold them.
 */
function withScopeList(document: Record<string, unknown>): Record<string, unknown> {
  const names = new Set<string>()
  for (const item of Object.values(document.paths as Record<string, Record<string, { "x-scopes"?: ReadonlyArray<string> }>>)) {
    for (const op of Object.values(item)) for (const scope of op["x-scopes"] ?? []) names.add(scope)
  }
  return { ...document, "x-scopes": [...names].sort() }
}

/**
 * Each operation's `security` as it really is: session-only operations accept only the cookie,
 * key-only ones only the bearer key (the `Authentication` middleware declares both for all). Logout
 * uses the session cookie when there is one and answers 204 without it (spec: it "needs the cookie
 * security scheme"), so its requirement is the cookie or nothing. The browser sign-in steps are
 * session-only (never a key's) but public: no requirement.
 */
function withSecurityFromFlags(document: Record<string, unknown>): Record<string, unknown> {
  type Op = { operationId?: string; security?: Array<Record<string, Array<string>>>; "x-session-only"?: boolean; "x-key-only"?: boolean }
  for (const item of Object.values(document.paths as Record<string, Record<string, Op>>)) {
    for (const op of Object.values(item)) {
      if (op.operationId === "auth.logout") op.security = [{ session: [] }, {}]
      // A public session-only step (signing in) needs no security at all: only keys are refused.
      else if (op["x-session-only"] === true) op.security = (op.security ?? []).length === 0 ? [] : [{ session: [] }]
      else if (op["x-key-only"] === true) op.security = [{ bearer: [] }]
    }
  }
  return document
}

/**
 * The envelope every error answer shares, with the whole vocabulary of optional members, as the
 * component `ErrorEnvelope`: each error response names the members its own code carries, and this
 * one is where a client reads them all at once (docs/decisions.md, "Errors").
 */
function withErrorEnvelope(document: Record<string, unknown>): Record<string, unknown> {
  const spec = document as unknown as OpenApi.OpenAPISpec
  // As the framework writes its components: identified schemas (`Int`, this one) go to components by name.
  JSONSchema.fromAST(ErrorEnvelope.ast, {
    // The same record the framework fills; its own type names it by the OpenAPI flavour of the schema.
    definitions: spec.components.schemas as Record<string, JSONSchema.JsonSchema7>,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1",
    topLevelReferenceStrategy: "keep"
  })
  return document
}

/** The owner commands of every publication kind, in the table's order (`publications/Kinds.ts`). */
const addKindGroups = <Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<"birzha", Groups, E, R>) =>
  kindList.reduce(
    (all: HttpApi.HttpApi<"birzha", Groups | (typeof kindList)[number]["group"], E, R>, kind) => all.add(kind.group),
    api
  )

/**
 * The operation catalog: every operation of the service, declared once. HTTP routes, the OpenAPI
 * document, the SDK, MCP tools, approval and automations are all derived from this value.
 */
export class BirzhaApi extends HttpApi.make("birzha")
  .add(HealthApi)
  .add(AuthApi)
  .add(AccountApi)
  .add(PublicApi)
  .pipe(addKindGroups)
  .add(ModerationApi)
  .add(EventsApi)
  .add(FilesApi)
  .add(CommentsApi)
  .add(KeysApi)
  .add(OAuthApi)
  .add(IntegrationCommandsApi)
  .add(WebhooksApi)
  .add(ResponsesApi)
  .add(OffersApi)
  .add(DealsApi)
  .add(JobContactsApi)
  .add(ThreadsApi)
  .add(FavoritesApi)
  .add(ComplaintsApi)
  .add(CustomersApi)
  .add(ReviewsApi)
  .add(MarketplaceModerationApi)
  .add(AutomationsApi)
  .add(NotificationsApi)
  .add(LearningCoursesApi)
  .add(LearningRunsApi)
  .add(LearningLibraryApi)
  .add(LearningJobsApi)
  .add(LearningEnrollmentsApi)
  .add(LearningStepsApi)
  .add(LearningCorrectionsApi)
  .add(LearningReviewsApi)
  .add(LearningGradingApi)
  .add(LearningStaffApi)
  .add(LearningEmailInvitationsApi)
  .add(LearningOwnershipApi)
  .add(LearningCourseReviewsApi)
  .add(LearningCommunityApi)
  .add(LearningTeachingApi)
  .add(LearningGroupsApi)
  .add(AdminApi)
  .addError(wire(InvalidRequest))
  .addError(wire(PayloadTooLarge))
  .addError(wire(UnsupportedMediaType))
  .addError(wire(InternalError))
  .addError(wire(ServiceUnavailable))
  .annotate(OpenApi.Title, "Birzha API")
  .annotate(OpenApi.Version, apiVersion)
  .annotate(OpenApi.Transform, (document) => withErrorEnvelope(withSecurityFromFlags(withScopeList(withoutFrameworkDecodeError(document)))))
  .annotate(
    OpenApi.Description,
    "Marketplace and learning service. Every error answers with {\"error\":{\"code\",\"message\"}}, and the optional " +
      "members of `ErrorEnvelope` that explain it (which record, which state, which rule)."
  )
{}

// Marked pure: a bundle that does not read the catalog (the browser's client) leaves the work out.
export const catalog = /* @__PURE__ */ catalogOf(BirzhaApi)

/** The OpenAPI 3.1 document of the catalog (served at /api/v1/openapi.json, printed by `birzha openapi`). */
export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(BirzhaApi)
