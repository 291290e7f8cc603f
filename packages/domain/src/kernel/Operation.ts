import { HttpApi, HttpApiEndpoint, HttpApiSchema, OpenApi } from "@effect/platform"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import { Context, FiberRef, Option, Schema, type SchemaAST } from "effect"
import { Forbidden, NotFound, wire } from "./ApiError.js"
import { Authentication, OperatorAccess } from "./Authentication.js"

/**
 * Who may call an operation and how. `scopes` are the bearer-key scopes the spec lists as
 * `x-scopes`; `approval` marks operations a bearer client may run only through the approval flow.
 * `specId` is the id the spec gives; `null` for the spec's few unnamed routes, which get an id
 * of ours so every operation is addressable by id (see docs/decisions.md).
 */
export interface OperationPolicy {
  /** Derived, never declared: `authenticated` exactly when the endpoint carries the `Authentication` middleware. */
  readonly access: "public" | "authenticated"
  readonly scopes: ReadonlyArray<string>
  readonly approval: boolean
  readonly specId: string | null
  /** Not in the spec at all: an operation of ours (profiles.create, moderation...), marked `x-extension` in OpenAPI. */
  readonly extension: boolean
  /** Browser sign-in requests: `Origin` must equal `BIRZHA_PUBLIC_ORIGIN` (403 `forbidden_origin` otherwise), checked before anything else. */
  readonly sameOrigin: boolean
  /**
   * The error a schema violation answers with, by the top-level payload field it concerns
   * (`"*"`: any field; `"kind=<value>"`: any field of a body whose top-level `kind` is that value,
   * for an operation taking several kinds); `invalid_request` otherwise. The spec names such codes:
   * `invalid_email`, `invalid_code`, `invalid_link`, `invalid_task`.
   */
  readonly invalidInput: Readonly<Record<string, InputErrorClass>>
  /**
   * Only a browser session may call it (a bearer key answers 403 `session_required`): managing
   * keys, moderation, switching the session's profile. Its scopes are never grantable to keys (`x-session-only`).
   */
  readonly sessionOnly: boolean
  /** Only a bearer key may call it (a session answers 403 `key_required`): the approval flow's prepare and commit (`x-key-only`). */
  readonly keyOnly: boolean
  /** Derived, never declared: the operator (CLI, `SystemCaller`) may run it, when it carries `OperatorAccess`. */
  readonly operator: boolean
  /**
   * The answer is for this caller alone and must not be kept by any cache (`Cache-Control: no-store`):
   * every authenticated operation and every browser sign-in step; declared `false` nowhere today.
   */
  readonly noStore: boolean
  /**
   * Input flags that make the call do what another operation does (tasks.save with `submit: true`
   * submits): when the body's field is `true`, the caller must also be allowed that operation, with
   * its scopes and approval. An input flag never widens what a caller may do.
   */
  readonly widenedBy: Readonly<Record<string, string>>
}

/**
 * An error class of the domain that a schema violation can be reported as: its fields hold the
 * failing `field` and its `rule` (`inputDetails`; a test checks every class named in an
 * `invalidInput`).
 */
export interface InputErrorClass {
  new(props: { readonly message: string; readonly field?: string; readonly rule?: string }): unknown
  readonly fields: Schema.Struct.Fields
  readonly code: string
  readonly status: number
}

export class Policy extends Context.Tag("@birzha/domain/api/Policy")<Policy, OperationPolicy>() {}

/**
 * The input fields an operation reads, for an operation declaring a shared field set of which it
 * uses a part (the relation operations, relations/RelationsApi.ts): its handler refuses the others,
 * and the MCP tools offer only these. An annotation of the endpoint only: the OpenAPI document keeps
 * the spec's whole set.
 */
export class UsedFields extends Context.Tag("@birzha/domain/api/UsedFields")<UsedFields, ReadonlyArray<string>>() {}

/** What a declaration states of its policy; the rest of `OperationPolicy` is derived. */
export interface DeclaredPolicy {
  readonly scopes?: ReadonlyArray<string>
  readonly approval?: boolean
  readonly specId?: string | null
  readonly extension?: boolean
  readonly summary?: string
  readonly sameOrigin?: boolean
  readonly invalidInput?: OperationPolicy["invalidInput"]
  readonly sessionOnly?: boolean
  readonly keyOnly?: boolean
  readonly noStore?: boolean
  readonly widenedBy?: Readonly<Record<string, string>>
}

/**
 * Declares one operation: the endpoint's name is the operation id, and the id, scopes and approval
 * flag travel as annotations so the router, OpenAPI, SDK, MCP and approval flow read the same facts.
 */
export const operation = <const Method extends HttpMethod, const Id extends string, const Path extends HttpApiEndpoint.PathSegment>(
  method: Method,
  id: Id,
  path: Path,
  policy: DeclaredPolicy = {}
) => {
  const full: OperationPolicy = {
    access: "public",
    operator: false,
    noStore: policy.noStore ?? policy.sameOrigin ?? false,
    widenedBy: policy.widenedBy ?? {},
    scopes: policy.scopes ?? [],
    approval: policy.approval ?? false,
    specId: policy.extension === true ? null : policy.specId === undefined ? id : policy.specId,
    extension: policy.extension ?? false,
    sameOrigin: policy.sameOrigin ?? false,
    invalidInput: policy.invalidInput ?? {},
    sessionOnly: policy.sessionOnly ?? false,
    keyOnly: policy.keyOnly ?? false
  }
  let annotations = Context.empty().pipe(
    Context.add(OpenApi.Identifier, id),
    Context.add(Policy, full),
    Context.add(OpenApi.Override, {
      "x-scopes": [...full.scopes],
      "x-approval": full.approval,
      ...(full.extension ? { "x-extension": true } : {}),
      ...(full.sessionOnly ? { "x-session-only": true } : {}),
      ...(full.keyOnly ? { "x-key-only": true } : {})
    })
  )
  if (policy.summary !== undefined) annotations = Context.add(annotations, OpenApi.Summary, policy.summary)
  return HttpApiEndpoint.make(method)(id, path).annotateContext(annotations)
}

/** The errors of an operation on one record: it does not exist for the caller (404), or the caller may not act on it (403). */
export const recordErrors = Schema.Union(wire(NotFound), wire(Forbidden))

/** The errors of a declaration as one schema: what `addError` of their union adds. */
type ErrorList<Errors extends ReadonlyArray<Schema.Schema.Any>> = Schema.Schema<
  Schema.Schema.Type<Errors[number]>,
  Schema.Schema.Encoded<Errors[number]>,
  Schema.Schema.Context<Errors[number]>
>

/**
 * The builders every area declares its operations with, one line each: `operation` behind the
 * middleware its callers need, with its errors in the order given. `addError` of a union adds its
 * members one by one (`HttpApiSchema.UnionUnify`), so the list is exactly the `.addError` chain it
 * replaces, and the OpenAPI document lists them in that order. A middleware adds its own failure
 * to the errors when applied, so the middleware comes first, as a hand-written chain has it.
 */

/** An operation anyone may call (no `Authentication`): public reads and the browser's sign-in steps. */
export const anyone = <
  const Method extends HttpMethod,
  const Id extends string,
  const Path extends HttpApiEndpoint.PathSegment,
  const Errors extends ReadonlyArray<Schema.Schema.Any> = []
>(method: Method, id: Id, path: Path, policy: DeclaredPolicy, errors?: Errors) => {
  const endpoint = operation(method, id, path, policy)
  type WithErrors = ReturnType<typeof endpoint.addError<ErrorList<Errors>>>
  return (errors === undefined || errors.length === 0 ? endpoint : endpoint.addError(Schema.Union(...errors))) as WithErrors
}

/** An operation for a signed-in caller: `operation` behind the `Authentication` middleware. */
export const authenticated = <
  const Method extends HttpMethod,
  const Id extends string,
  const Path extends HttpApiEndpoint.PathSegment,
  const Errors extends ReadonlyArray<Schema.Schema.Any> = []
>(method: Method, id: Id, path: Path, policy: DeclaredPolicy, errors?: Errors) => {
  const endpoint = operation(method, id, path, policy).middleware(Authentication)
  type WithErrors = ReturnType<typeof endpoint.addError<ErrorList<Errors>>>
  return (errors === undefined || errors.length === 0 ? endpoint : endpoint.addError(Schema.Union(...errors))) as WithErrors
}

/**
 * An operation for a signed-in caller that the operator may run from the CLI too (`OperatorAccess`):
 * moderation.
 */
export const authenticatedOrOperator = <
  const Method extends HttpMethod,
  const Id extends string,
  const Path extends HttpApiEndpoint.PathSegment,
  const Errors extends ReadonlyArray<Schema.Schema.Any> = []
>(method: Method, id: Id, path: Path, policy: DeclaredPolicy, errors?: Errors) => {
  const endpoint = operation(method, id, path, policy).middleware(Authentication).middleware(OperatorAccess)
  type WithErrors = ReturnType<typeof endpoint.addError<ErrorList<Errors>>>
  return (errors === undefined || errors.length === 0 ? endpoint : endpoint.addError(Schema.Union(...errors))) as WithErrors
}

/** One row of the catalog as every derived surface sees it. */
export interface CatalogEntry extends OperationPolicy {
  readonly id: string
  readonly method: HttpMethod
  /** OpenAPI form: `{param}` */
  readonly path: string
  readonly group: string
  /** What the operation does, in words (its declared `summary`; the id when none is declared). */
  readonly summary: string
  /** The group's declared description (OpenAPI tag description), or "". */
  readonly groupDescription: string
  /** The status of a successful answer (200; 201, 202 or 204 where declared). */
  readonly successStatus: number
  /**
   * The declaration's annotations: an area reads its own policy from them (a learning operation's
   * `EnrollmentAccess` rule, learning/enrollments/EnrollmentRule.ts) without the kernel knowing it.
   */
  readonly annotations: Context.Context<never>
  /** The input fields the operation reads when it declares them (`UsedFields`); absent: every declared input field. */
  readonly usedFields: ReadonlyArray<string> | undefined
  /** The input schemas (path, query, body) the MCP tools and approval flow decode with. */
  readonly schemas: {
    readonly path: Option.Option<SchemaAST.AST>
    readonly urlParams: Option.Option<SchemaAST.AST>
    readonly payload: Option.Option<SchemaAST.AST>
    readonly success: SchemaAST.AST
  }
}

/**
 * The operation the current call runs, set by the registry (operations/Operations.ts) around every
 * implementation, or already in the fiber's refs from its start for a transport's fiber of one call
 * (`callStartRefs`): a rule shared by many operations reads the running one's declared policy from
 * it instead of each caller naming its own id.
 */
export const currentOperation: FiberRef.FiberRef<CatalogEntry | undefined> = FiberRef.unsafeMake<CatalogEntry | undefined>(undefined)

const authenticationKey = "@birzha/domain/api/Authentication"
const operatorKey = "@birzha/domain/api/OperatorAccess"

const toOpenApiPath = (path: string) => path.replace(/:(\w+)\??/g, "{$1}")

/** Walks a declared HttpApi and lists its operations: the single list every surface derives from. */
export const catalogOf = <Api extends HttpApi.HttpApi.Any>(api: Api): ReadonlyArray<CatalogEntry> => {
  const entries: Array<CatalogEntry> = []
  HttpApi.reflect(api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup() {},
    onEndpoint({ endpoint, group }) {
      const policy = Context.getOrElse(endpoint.annotations, Policy, (): OperationPolicy => ({
        access: "public",
        scopes: [],
        approval: false,
        specId: endpoint.name,
        extension: false,
        sameOrigin: false,
        invalidInput: {},
        sessionOnly: false,
        keyOnly: false,
        operator: false,
        noStore: false,
        widenedBy: {}
      }))
      const authenticated = [...endpoint.middlewares].some((tag) => tag.key === authenticationKey)
      entries.push({
        ...policy,
        access: authenticated ? "authenticated" : "public",
        operator: [...endpoint.middlewares].some((tag) => tag.key === operatorKey),
        // Per-user answers are never cached; public ones may declare the same.
        noStore: policy.noStore || authenticated,
        successStatus: HttpApiSchema.getStatusSuccessAST(endpoint.successSchema.ast),
        id: endpoint.name,
        method: endpoint.method,
        path: toOpenApiPath(endpoint.path),
        group: group.identifier,
        summary: Option.getOrElse(Context.getOption(endpoint.annotations, OpenApi.Summary), () => endpoint.name),
        groupDescription: Option.getOrElse(Context.getOption(group.annotations, OpenApi.Description), () => ""),
        annotations: endpoint.annotations,
        usedFields: Option.getOrUndefined(Context.getOption(endpoint.annotations, UsedFields)),
        schemas: {
          path: Option.map(endpoint.pathSchema, (schema) => schema.ast),
          urlParams: Option.map(endpoint.urlParamsSchema, (schema) => schema.ast),
          payload: Option.map(endpoint.payloadSchema, (schema) => schema.ast),
          success: endpoint.successSchema.ast
        }
      })
    }
  })
  return entries
}
