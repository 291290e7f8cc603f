import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Effect, type FiberId, FiberRef, FiberRefs, HashMap, Layer, Option, ParseResult, Schema, type SchemaAST } from "effect"
import { randomUUID } from "node:crypto"
import { detailsOf, envelope, InternalError, InvalidRequest, ServiceUnavailable, Unauthenticated } from "../kernel/ApiError.js"
import {
  type Actor,
  type Caller,
  type SystemCaller,
  holdsScope
} from "../kernel/Authentication.js"
import type { BirzhaApi } from "../api/BirzhaApi.js"
import { type CatalogEntry, currentOperation } from "../kernel/Operation.js"
import { authorizeKey } from "../keys/KeyAccess.js"
import { ApprovalRequired, InsufficientScope, KeyRequired, SessionRequired } from "../keys/KeyErrors.js"
import { type FastParser, fastDecoder, fastEncoder, Unfit } from "../store/FastParse.js"
import { currentCommandPath } from "../store/Idempotency.js"
import { currentRequestId, tracingOn } from "../kernel/Tracing.js"
import { type AnyImplementation, type Call, type CommonFailure, EncodedJson, type Facts, forEachPiece, type GroupImplementation, type JsonPiece, pieceText, StreamedJson } from "./Implementation.js"
import { type InputProblem, unsafeValueProblem } from "./InputSafety.js"
import { firstViolation } from "./Violation.js"

/** The input of a call before decoding, as a transport has it: path parameters, query, body. */
export interface RawInput {
  readonly path?: Readonly<Record<string, string>>
  readonly urlParams?: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly payload?: unknown
}

export interface CallOptions {
  readonly clientAddress?: string
  /**
   * Only the commit of an approved prepared command passes `true`: an approval operation then runs
   * for the key that prepared it.
   */
  readonly approved?: boolean
  /**
   * The transport writes an answer read as it is sent (`StreamedJson`, the catalog) piece by piece
   * (HTTP); without it the registry collects the pieces into one `EncodedJson` first (MCP, the
   * approval commit, automations, the CLI, tests).
   */
  readonly streamed?: boolean
}

/** A finished call in wire form: what every transport answers with (HTTP as is, MCP as tool result). */
export interface Answer {
  readonly status: number
  /**
   * The encoded success, the error envelope, JSON text already encoded (`EncodedJson`), or, for a
   * `streamed` call, JSON text still to be read (`StreamedJson`); `undefined` for 204.
   */
  readonly body: unknown
  readonly facts: Facts
  /** The error's code when the call failed (the body is then its envelope). */
  readonly errorCode?: string
}

/** A domain error class's status and code (statics every error of the service carries). */
const errorClassOf = (error: unknown): { readonly status: number; readonly code: string } | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const status: unknown = Reflect.get(error.constructor, "status")
  const code: unknown = Reflect.get(error.constructor, "code")
  return typeof status === "number" && typeof code === "string" ? { status, code } : undefined
}

const isSqlError = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError"

/**
 * Whether the database refused a value rather than failed: SQLSTATE class 22 (data exception:
 * a character the encoding cannot hold 22021, an unsupported escape 22P05, bad text for a type,
 * a number out of range...) and 54000 (a value too large for an index or a search vector). Input
 * causes these, so they answer 400; only the rest of the database's failures are 503.
 */
export const isRefusedValue = (error: unknown): boolean => {
  if (!isSqlError(error)) return false
  const cause: unknown = Reflect.get(error as object, "cause")
  const code: unknown = typeof cause === "object" && cause !== null ? Reflect.get(cause, "code") : undefined
  return typeof code === "string" && (code.startsWith("22") || code === "54000")
}

/** An issue is cut at this length: the value it quotes is the caller's own, at any length (a 64 KiB title). */
const maxIssueLength = 300

const cut = (text: string) => (text.length > maxIssueLength ? `${text.slice(0, maxIssueLength)}…` : text)

const describe = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>) =>
  issues.slice(0, 5).map((issue) => cut(`${issue.path.length > 0 ? issue.path.join(".") : "request"}: ${issue.message}`)).join("; ") ||
  "The request does not match the operation's schema"

/**
 * One issue per member: an optional member's schema is a union with `undefined`, so a bad value
 * fails both sides ("Expected a Universally Unique Identifier…" and "Expected undefined…"); only
 * the member's own rule explains it. The first other issue of each path is kept, in order.
 */
export const oneIssuePerField = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>): ReadonlyArray<ParseResult.ArrayFormatterIssue> => {
  const key = (issue: ParseResult.ArrayFormatterIssue) => JSON.stringify(issue.path)
  const optionalSide = (issue: ParseResult.ArrayFormatterIssue) => issue.message.startsWith("Expected undefined")
  const explained = new Set(issues.filter((issue) => !optionalSide(issue)).map(key))
  const seen = new Set<string>()
  return issues.filter((issue) => {
    const path = key(issue)
    if (seen.has(path) || (optionalSide(issue) && explained.has(path))) return false
    seen.add(path)
    return true
  })
}

/**
 * The declared error a schema violation answers with: the operation may name its own for a field
 * (invalid_email, invalid_code, ...), for a body kind (`kind=task`: invalid_task) or for any field
 * (`*`); `invalid_request` otherwise.
 */
export const inputErrorOf = (
  entry: CatalogEntry,
  allIssues: ReadonlyArray<ParseResult.ArrayFormatterIssue>,
  payload: unknown,
  rule?: string
) => {
  const issues = oneIssuePerField(allIssues)
  const fields = new Set(issues.map((issue) => String(issue.path[0] ?? "")))
  const invalidInput = entry.invalidInput
  const kind = typeof payload === "object" && payload !== null && "kind" in payload && typeof payload.kind === "string"
    ? payload.kind
    : undefined
  const byKind = kind !== undefined && Object.hasOwn(invalidInput, `kind=${kind}`) ? invalidInput[`kind=${kind}`] : undefined
  // Own entries only: a field named `constructor` or `__proto__` must not find Object's.
  const own = (name: string) => (Object.hasOwn(invalidInput, name) ? invalidInput[name] : undefined)
  const named = [...fields].map(own).find((cls) => cls !== undefined) ?? byKind ?? own("*")
  const message = describe(issues)
  // The first issue's member and rule as fields (the message lists up to five issues); none for the input as a whole.
  const first = issues[0]
  const props = {
    message,
    ...(first !== undefined && first.path.length > 0 ? { field: first.path.map(String).join(".") } : {}),
    ...(rule !== undefined ? { rule } : {})
  }
  return named !== undefined ? new named(props) : new InvalidRequest(props)
}

/** The answer to a schema violation of an operation's input: its own error with the first violation's field and rule. */
export const schemaErrorOf = (entry: CatalogEntry, error: ParseResult.ParseError, payload: unknown) =>
  inputErrorOf(entry, ParseResult.ArrayFormatter.formatErrorSync(error), payload, firstViolation(error.issue).rule)

/** Path parameter names of a catalog path (`/api/v1/x/{uuid}`). */
const pathNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? "")

/**
 * The operations flat arguments widen the call into (`widenedBy`: tasks.save with `submit: true` is
 * also tasks.submit), and whether the call so needs the owner's approval: the operation's own flag
 * or a widened one's. The approval flow (prepare, the MCP tools) decides with it.
 */
export const approvalOf = (
  entry: CatalogEntry,
  args: Readonly<Record<string, unknown>>,
  entries: ReadonlyMap<string, CatalogEntry>
): { readonly needed: boolean; readonly widened: ReadonlyArray<CatalogEntry> } => {
  const widened = Object.entries(entry.widenedBy)
    .filter(([field]) => Object.hasOwn(args, field) && args[field] === true)
    .flatMap(([, id]) => {
      const other = entries.get(id)
      return other === undefined ? [] : [other]
    })
  return { needed: entry.approval || widened.some((other) => other.approval), widened }
}

/**
 * Flat arguments (an MCP tool call's, a prepared command's) split the way the declaration reads
 * them: path parameters by name, the rest as the body, or as the query when there is no body.
 */
export const inputOfArguments = (entry: CatalogEntry, args: Readonly<Record<string, unknown>>): RawInput => {
  const names = new Set(pathNames(entry.path))
  const path: Record<string, string> = {}
  const rest: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(args)) {
    if (names.has(name)) path[name] = typeof value === "string" ? value : JSON.stringify(value)
    else rest[name] = value
  }
  if (Option.isSome(entry.schemas.payload)) return { path, payload: rest }
  const urlParams: Record<string, string> = {}
  for (const [name, value] of Object.entries(rest)) urlParams[name] = typeof value === "string" ? value : JSON.stringify(value)
  return { path, urlParams }
}

/** One input part's decoder: the compiled fast path, the general parser where it declines. */
interface PartDecoder {
  readonly fast: FastParser
  readonly general: (input: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
}

/** An operation compiled once: its decoders, its encoder and its implementation. */
interface Compiled {
  readonly entry: CatalogEntry
  readonly implementation: AnyImplementation
  readonly decodePath: PartDecoder | undefined
  readonly decodeUrlParams: PartDecoder | undefined
  readonly decodePayload: PartDecoder | undefined
  readonly encodeFast: FastParser
  readonly encodeSuccess: (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
}

const partDecoder = (ast: Option.Option<SchemaAST.AST>): PartDecoder | undefined =>
  Option.match(ast, {
    onNone: () => undefined,
    onSome: (ast) => {
      const schema = Schema.make(ast)
      return { fast: fastDecoder(schema), general: Schema.decodeUnknown(schema) }
    }
  })

const compile = (entry: CatalogEntry, implementation: AnyImplementation): Compiled => ({
  entry,
  implementation,
  decodePath: partDecoder(entry.schemas.path),
  decodeUrlParams: partDecoder(entry.schemas.urlParams),
  decodePayload: partDecoder(entry.schemas.payload),
  // Always encoded: the declared schema is also the allowlist of what an answer may carry (fields
  // an implementation's value has beyond it are dropped), so no shortcut for plain schemas. The
  // compiled encoder answers exactly as the general one (FastParse.ts) or declines.
  encodeFast: fastEncoder(Schema.make(entry.schemas.success)),
  encodeSuccess: Schema.encodeUnknown(Schema.make(entry.schemas.success))
})

type AuthorizationFailure = Unauthenticated | KeyRequired | SessionRequired | InsufficientScope | ApprovalRequired | Effect.Effect.Error<ReturnType<typeof authorizeKey>>

/**
 * Whether `caller` may run `entry`, from the declaration alone, so a new operation needs no code
 * here. Returns who the implementation is given.
 */
export const authorize = (
  entry: CatalogEntry,
  caller: Caller,
  approved: boolean
): Effect.Effect<Actor | SystemCaller | undefined, AuthorizationFailure> => {
  switch (caller.via) {
    case "anonymous":
      return entry.access === "public"
        ? Effect.succeed(undefined)
        : Effect.fail(new Unauthenticated({ message: "Sign in first, or send a valid key as Authorization: Bearer <key>" }))
    case "system":
      // The operator at the database runs what is marked for it, and public reads.
      return entry.operator || entry.access === "public"
        ? Effect.succeed(caller)
        : Effect.fail(new Unauthenticated({ message: `${entry.id} needs a signed-in profile; the operator may not run it` }))
    case "session":
      return entry.keyOnly
        ? Effect.fail(new KeyRequired({ message: "This is for bearer clients; in a browser session call the operation directly", operation: entry.id }))
        : Effect.succeed(caller)
    case "key":
    case "mcp":
      return Effect.as(authorizeKey(entry, caller, { channel: caller.via === "mcp" ? "mcp" : "http", approved }), caller)
    case "automation": {
      if (entry.sessionOnly || entry.keyOnly) {
        return Effect.fail(new SessionRequired({ message: `${entry.id} is not available to automation rules`, operation: entry.id }))
      }
      if (entry.scopes.length > 0 && !entry.scopes.some((scope) => holdsScope(caller, scope))) {
        return Effect.fail(new InsufficientScope({
          message: `${entry.id} needs the scope ${entry.scopes.join(" or ")}; the rule does not hold it`,
          operation: entry.id,
          scopes: entry.scopes
        }))
      }
      // A rule never stands in for the owner's approval.
      return entry.approval
        ? Effect.fail(new ApprovalRequired({ message: `${entry.id} needs the owner's approval and cannot run from an automation rule`, operation: entry.id }))
        : Effect.succeed(caller)
    }
  }
}


/** The input decoded by the compiled decoders, or `Unfit` when one declines (the general path then answers). */
const decodeInputFast = (compiled: Compiled, raw: RawInput): Record<string, unknown> | Unfit => {
  const input: Record<string, unknown> = {}
  if (compiled.decodePath !== undefined) {
    const path = compiled.decodePath.fast(raw.path ?? {})
    if (path === Unfit) return Unfit
    input["path"] = path
  }
  if (compiled.decodeUrlParams !== undefined) {
    const urlParams = compiled.decodeUrlParams.fast(raw.urlParams ?? {})
    if (urlParams === Unfit) return Unfit
    input["urlParams"] = urlParams
  }
  if (compiled.decodePayload !== undefined) {
    const payload = compiled.decodePayload.fast(raw.payload)
    if (payload === Unfit) return Unfit
    input["payload"] = payload
  }
  return input
}

/**
 * Checked before any schema sees the input, for every operation and transport alike: nesting at
 * most `maxInputDepth`, no control characters in any string or property name. A problem answers
 * as a schema violation of that field would (the operation's own code, `invalid_request` otherwise).
 */
export const unsafeInputProblem = (raw: RawInput): InputProblem | undefined =>
  unsafeValueProblem(raw.path) ?? unsafeValueProblem(raw.urlParams) ?? unsafeValueProblem(raw.payload)

const decodeSafeInput = (compiled: Compiled, raw: RawInput) =>
  Effect.gen(function*() {
    const input: Record<string, unknown> = {}
    if (compiled.decodePath !== undefined) input["path"] = yield* compiled.decodePath.general(raw.path ?? {})
    if (compiled.decodeUrlParams !== undefined) input["urlParams"] = yield* compiled.decodeUrlParams.general(raw.urlParams ?? {})
    if (compiled.decodePayload !== undefined) input["payload"] = yield* compiled.decodePayload.general(raw.payload)
    return input
  }).pipe(
    Effect.catchTag("ParseError", (error) =>
      Effect.fail(schemaErrorOf(compiled.entry, error, raw.payload)))
  )

export interface OperationsService {
  /** The catalog entries the registry serves, by operation id. */
  readonly entries: ReadonlyMap<string, CatalogEntry>
  /**
   * The services every implementation runs with (those the registry was built with, and the
   * registry itself). A transport that runs each call in a fiber of its own starts that fiber with
   * this context (`Runtime.make`), and the registry then provides nothing per call; any other
   * caller's context is merged with it for the call, as `Effect.provide` does.
   */
  readonly context: Context.Context<never>
  /**
   * Runs one operation for `caller` and answers in wire form: decoded with the catalog's schemas,
   * authorized from its declared policy, run, encoded. Never fails: refusals, domain errors, a
   * database failure (503) and defects (500 with a correlation id the log carries) are answers.
   */
  readonly invoke: (operationId: string, caller: Caller, input: RawInput, options?: CallOptions) => Effect.Effect<Answer>
  /** The same call, answering the implementation's own success or typed error (the CLI, automations, tests). */
  readonly execute: (operationId: string, caller: Caller, input: RawInput, options?: CallOptions) => Effect.Effect<unknown, unknown>
}

/**
 * The one transport-free entry every caller uses: HTTP, MCP tools, approval commits, the CLI and
 * automation rules all run operations through it.
 */
export class Operations extends Context.Tag("@birzha/domain/operations/Operations")<Operations, OperationsService>() {
  /**
   * Builds the registry from the catalog and the groups' implementations. Every catalog entry must
   * be implemented (a missing group fails here, at start).
   */
  static layer = <const Impls extends ReadonlyArray<GroupImplementation<unknown>>>(
    catalog: ReadonlyArray<CatalogEntry>,
    implementations: Impls
  ): Layer.Layer<Operations, never, ServicesOf<Impls>> =>
    Layer.effect(
      Operations,
      Effect.gen(function*() {
        const context = yield* Effect.context<ServicesOf<Impls>>()
        const byId = new Map<string, AnyImplementation>()
        for (const group of implementations) {
          // Each group's build needs only services the layer requires (`ServicesOf`).
          const built = yield* (group.build as Effect.Effect<Readonly<Record<string, AnyImplementation>>, never, ServicesOf<Impls>>)
          for (const [id, implementation] of Object.entries(built)) byId.set(id, implementation)
        }
        // Both ways at start: every catalog entry implemented, and nothing implemented outside it
        // (the kinds' owner groups are built by name, where the types cannot tell).
        const declared = new Set(catalog.map((entry) => entry.id))
        for (const id of byId.keys()) {
          if (!declared.has(id)) return yield* Effect.dieMessage(`implementation ${id} has no operation in the catalog`)
        }
        const compiled = new Map<string, Compiled>()
        for (const entry of catalog) {
          const implementation = byId.get(entry.id)
          if (implementation === undefined) return yield* Effect.dieMessage(`operation ${entry.id} has no implementation`)
          compiled.set(entry.id, compile(entry, implementation))
        }
        // Implementations may call the registry themselves (an approval commit runs the approved operation).
        const service: OperationsService = makeService(catalog, compiled, () => Context.add(context, Operations, service))
        return service
      })
    )
}

/** What a set of implementations needs from the host: everything but the registry itself. */
export type ServicesOf<Impls extends ReadonlyArray<GroupImplementation<unknown>>> = Exclude<
  Impls[number] extends infer G ? G extends GroupImplementation<infer R> ? R : never : never,
  Operations
>

/**
 * The fiber refs a transport's fiber for one call starts with (`Runtime.runCallback`'s
 * `updateRefs`): the call's operation as `currentOperation`, which `invoke` then finds set, and
 * the request's id as the `requestId` log annotation every log line of the call carries
 * (`currentRequestId`). Set once as the fiber is made instead of around the call: each change of a
 * fiber ref copies all the fiber's refs, and a scoped change (`locally`, `annotateLogs`) makes two.
 */
export const callStartRefs = (entry: CatalogEntry, requestId: string | undefined) =>
(refs: FiberRefs.FiberRefs, fiberId: FiberId.Runtime): FiberRefs.FiberRefs =>
  FiberRefs.updateManyAs(refs, {
    entries: requestId === undefined
      ? [[currentOperation, [[fiberId, entry]]]]
      : [
        [currentOperation, [[fiberId, entry]]],
        [
          FiberRef.currentLogAnnotations,
          [[fiberId, HashMap.set(FiberRefs.getOrDefault(refs, FiberRef.currentLogAnnotations), "requestId", requestId)]]
        ]
      ]
  })

const unknownOperation = (operationId: string) =>
  new InvalidRequest({ message: `operationId: no operation ${operationId} in the catalog` })

const channelOf = (caller: Caller): Call["channel"] =>
  caller.via === "mcp" ? "mcp" : caller.via === "key" || caller.via === "session" ? "http" : "internal"

const makeService = (
  catalog: ReadonlyArray<CatalogEntry>,
  compiled: ReadonlyMap<string, Compiled>,
  makeContext: () => Context.Context<never>
): OperationsService => {
  let services: Context.Context<never> | undefined
  const servicesOf = () => (services ??= makeContext())

  /** A command on a record named by its path runs with that path known to `idempotent` (its request hash). */
  const withCommandPath = <A, E, R>(input: unknown, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const { path, payload } = input as { readonly path?: Readonly<Record<string, unknown>>; readonly payload?: unknown }
    return path === undefined || payload === undefined ? effect : Effect.locally(effect, currentCommandPath, path)
  }

  /** Decoded, then run (after authorization). */
  const decodeAndRun = (operation: Compiled, actor: unknown, raw: RawInput, call: Call): Effect.Effect<unknown, unknown> => {
    const run = operation.implementation as (input: unknown, caller: unknown, call: Call) => Effect.Effect<unknown, unknown, unknown>
    // Called while the call runs (inside authorization's continuation), never when it is described.
    // The shared checks once: no decoder sees an input they refuse, and a refusal is their first problem.
    const problem = unsafeInputProblem(raw)
    if (problem !== undefined) {
      return Effect.fail(inputErrorOf(operation.entry, [{ _tag: "Type", path: problem.path, message: problem.message }], raw.payload, problem.rule))
    }
    // With the registry's services: nothing to do in a fiber started with them (a transport's),
    // merged into the caller's context otherwise (MCP, the CLI, tests). The running operation is
    // known to the rules it calls (its declared policy: `currentOperation`), set here unless the
    // fiber started with it (a transport's, `callStartRefs`): each change of a fiber ref copies all
    // the fiber's refs, and `locally` makes two.
    const running = (input: unknown) =>
      Effect.withFiberRuntime<unknown, unknown>((fiber) => {
        const context = servicesOf()
        const effect = withCommandPath(input, run(input, actor, call)) as Effect.Effect<unknown, unknown>
        const provided = fiber.currentContext === context ? effect : Effect.provide(effect, context)
        return fiber.getFiberRef(currentOperation) === operation.entry ? provided : Effect.locally(provided, currentOperation, operation.entry)
      })
    const input = decodeInputFast(operation, raw)
    if (input !== Unfit) return running(input)
    return Effect.flatMap(decodeSafeInput(operation, raw), running)
  }

  const executeCompiled = (operation: Compiled, caller: Caller, raw: RawInput, options: CallOptions, facts: Facts): Effect.Effect<unknown, unknown> =>
    Effect.flatMap(authorize(operation.entry, caller, options.approved === true), (actor) => {
      const call: Call = { clientAddress: options.clientAddress ?? "unknown", channel: channelOf(caller), facts }
      // A flag that makes the call another operation's is authorized as that operation too.
      const widened: Array<Effect.Effect<unknown, unknown>> = []
      for (const field in operation.entry.widenedBy) {
        const other = compiled.get(operation.entry.widenedBy[field]!)
        const payload = raw.payload
        if (other !== undefined && typeof payload === "object" && payload !== null && Reflect.get(payload, field) === true) {
          // Approved with the call itself: the owner approved the command with its flags (the approval page shows them).
          widened.push(authorize(other.entry, caller, options.approved === true))
        }
      }
      return widened.length === 0
        ? decodeAndRun(operation, actor, raw, call)
        : Effect.zipRight(Effect.all(widened, { discard: true }), decodeAndRun(operation, actor, raw, call))
    })

  const execute = (operationId: string, caller: Caller, raw: RawInput, options: CallOptions, facts: Facts): Effect.Effect<unknown, unknown> => {
    const operation = compiled.get(operationId)
    return operation === undefined ? Effect.fail(unknownOperation(operationId)) : executeCompiled(operation, caller, raw, options, facts)
  }

  /** A streamed answer read with the registry's services, as an implementation's effect has them. */
  const provided = (value: StreamedJson<unknown>): StreamedJson =>
    new StreamedJson(() => Effect.provide(value.read() as Effect.Effect<JsonPiece | undefined, CommonFailure>, servicesOf()))

  /** A streamed answer read to its end: the same text in one piece (bytes decoded as they come: they are valid until the next piece). */
  const collected = (value: StreamedJson<unknown>): Effect.Effect<EncodedJson, CommonFailure> =>
    Effect.suspend(() => {
      const pieces: Array<string> = []
      return Effect.map(forEachPiece(provided(value), (piece) => Effect.sync(() => void pieces.push(pieceText(piece)))), () => new EncodedJson(pieces.join("")))
    })

  /** The success in wire form: the compiled encoder, or the general one where it declines. */
  const encoded = (operation: Compiled, value: unknown, facts: Facts, streamed: boolean): Effect.Effect<Answer> => {
    if (value instanceof EncodedJson) return Effect.succeed<Answer>({ status: 200, body: value, facts })
    if (value instanceof StreamedJson) {
      // A failure while collecting is answered like the implementation's own; once streaming, the transport's to handle.
      return streamed
        ? Effect.succeed<Answer>({ status: 200, body: provided(value), facts })
        : Effect.matchCauseEffect(collected(value), {
          onSuccess: (body) => Effect.succeed<Answer>({ status: 200, body, facts }),
          onFailure: (cause) => answerOfCause(cause, facts, { operationId: operation.entry.id })
        })
    }
    const body = operation.encodeFast(value)
    if (body !== Unfit) return Effect.succeed<Answer>({ status: operation.entry.successStatus, body, facts })
    return Effect.matchCauseEffect(operation.encodeSuccess(value), {
      onSuccess: (body) => Effect.succeed<Answer>({ status: operation.entry.successStatus, body, facts }),
      onFailure: (cause) => answerOfCause(cause, facts, { operationId: operation.entry.id })
    })
  }

  const invoke = (operationId: string, caller: Caller, raw: RawInput, options: CallOptions = {}): Effect.Effect<Answer> => {
    const facts: Facts = {}
    const operation = compiled.get(operationId)
    if (operation === undefined) return answerOfCause(Cause.fail(unknownOperation(operationId)), facts, { operationId })
    const answered = Effect.matchCauseEffect(executeCompiled(operation, caller, raw, options, facts), {
      onSuccess: (value) => encoded(operation, value, facts, options.streamed === true),
      onFailure: (cause) => answerOfCause(cause, facts, { operationId })
    })
    // Decided per call from the fiber, so a host without tracing builds no span (kernel/Tracing.ts).
    return Effect.withFiberRuntime((fiber) =>
      fiber.getFiberRef(tracingOn) && fiber.getFiberRef(FiberRef.currentTracerEnabled) ? withOperationSpan(operation.entry, caller, answered) : answered
    )
  }

  return {
    entries: new Map(catalog.map((entry) => [entry.id, entry])),
    get context() {
      return servicesOf()
    },
    invoke,
    execute: (operationId, caller, raw, options = {}) =>
      execute(operationId, caller, raw, options, {}).pipe(
        // A typed caller gets the value, not the text a transport would send.
        Effect.flatMap((value) => {
          const operation = compiled.get(operationId)
          if (operation === undefined) return Effect.succeed(value)
          const decoded = (text: EncodedJson) => Effect.orDie(Schema.decodeUnknown(Schema.make(operation.entry.schemas.success))(JSON.parse(text.json)))
          if (value instanceof StreamedJson) return Effect.flatMap(collected(value), decoded)
          return value instanceof EncodedJson ? decoded(value) : Effect.succeed(value)
        })
      )
  }
}

/**
 * The call as a span named by its operation id: who called (`birzha.actor.kind`: anonymous,
 * session, key, mcp, automation, system), the answer's status and error code. Never an input, an
 * account, an email or a credential: those stay out of traces as out of logs.
 */
const withOperationSpan = (entry: CatalogEntry, caller: Caller, answered: Effect.Effect<Answer>): Effect.Effect<Answer> =>
  Effect.flatMap(currentRequestId, (requestId) =>
    answered.pipe(
      Effect.tap((answer) =>
        Effect.annotateCurrentSpan(
          answer.errorCode === undefined
            ? { "birzha.status": answer.status }
            : { "birzha.status": answer.status, "birzha.error.code": answer.errorCode }
        )
      ),
      Effect.withSpan(entry.id, {
        kind: "internal",
        attributes: {
          "birzha.operation": entry.id,
          "birzha.actor.kind": caller.via,
          "birzha.channel": channelOf(caller),
          ...(requestId === null ? {} : { "birzha.request_id": requestId })
        }
      })
    ))

/** A database failure answered as `cls`: its cause goes to the log only, never to the body. */
const databaseAnswer = (
  cls: { readonly status: number; readonly code: string },
  message: string,
  logMessage: string,
  cause: Cause.Cause<unknown>,
  facts: Facts,
  annotations: Readonly<Record<string, unknown>>
): Effect.Effect<Answer> =>
  Effect.logWarning(logMessage, cause).pipe(
    Effect.annotateLogs(annotations),
    Effect.as<Answer>({ status: cls.status, body: envelope(cls, message), facts, errorCode: cls.code })
  )

/**
 * The answer for a failed call, the one mapping every transport uses (the registry for operations,
 * the HTTP host for its own routes and credential lookups): a domain error is its own status and
 * code, with the members of the error vocabulary it carries (`detailsOf`); a value the database
 * refuses (`isRefusedValue`) 400 `invalid_request`; any other database failure, whether failed or
 * died with, 503 `unavailable`; anything else a defect,
 * 500 with a correlation id the log line carries too. Never a stack or SQL in the body.
 */
export const answerOfCause = (
  cause: Cause.Cause<unknown>,
  facts: Facts = {},
  annotations: Readonly<Record<string, unknown>> = {}
): Effect.Effect<Answer> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    const cls = errorClassOf(error)
    if (cls !== undefined) {
      const message = typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : ""
      return Effect.succeed({ status: cls.status, body: envelope(cls, message, undefined, detailsOf(error)), facts, errorCode: cls.code })
    }
  }
  const sqlFailure = Option.getOrElse(failure, () => Cause.squash(cause))
  if (isRefusedValue(sqlFailure)) {
    return databaseAnswer(InvalidRequest, "A value of the request cannot be stored", "the database refused a value of the request", cause, facts, annotations)
  }
  if (isSqlError(sqlFailure)) {
    return databaseAnswer(ServiceUnavailable, "The service is temporarily unavailable", "database unavailable", cause, facts, annotations)
  }
  const correlationId = randomUUID()
  return Effect.logError("unexpected failure", cause).pipe(
    Effect.annotateLogs({ ...annotations, correlationId }),
    Effect.as<Answer>({
      status: InternalError.status,
      body: envelope(InternalError, "An unexpected error occurred", correlationId),
      facts,
      errorCode: InternalError.code
    })
  )
}

/** The operation ids of the catalog, for typed calls. */
type GroupsOf<Api> = Api extends HttpApi.HttpApi<infer _Id, infer Groups, infer _E, infer _R> ? Groups : never
type Endpoints = HttpApiGroup.HttpApiGroup.Endpoints<GroupsOf<typeof BirzhaApi>>
/** One part of an input: absent where the operation declares none, optional where every field of it is. */
type InputPart<Name extends string, A> = [A] extends [never] ? {}
  : {} extends A ? { readonly [K in Name]?: A }
  : { readonly [K in Name]: A }
/**
 * Each operation's types by its id, worked out once for the whole catalog. Spelling `SuccessOf`
 * and the rest as `Extract` of the catalog's union of endpoints made the compiler filter all of
 * them again for every id and every generic use (docs/test-suite.md, "Type check time").
 */
type OperationTable = {
  readonly [Endpoint in Endpoints as HttpApiEndpoint.HttpApiEndpoint.Name<Endpoint>]: {
    readonly success: HttpApiEndpoint.HttpApiEndpoint.Success<Endpoint>
    readonly error: HttpApiEndpoint.HttpApiEndpoint.Error<Endpoint>
    readonly input:
      & InputPart<"path", HttpApiEndpoint.HttpApiEndpoint.PathParsed<Endpoint>>
      & InputPart<"urlParams", HttpApiEndpoint.HttpApiEndpoint.UrlParams<Endpoint>>
      & InputPart<"payload", HttpApiEndpoint.HttpApiEndpoint.Payload<Endpoint>>
  }
}
interface OperationTypes extends OperationTable {}
export type OperationId = keyof OperationTypes
export type SuccessOf<Id extends OperationId> = OperationTypes[Id]["success"]
export type ErrorOf<Id extends OperationId> = OperationTypes[Id]["error"]

/**
 * A typed call of one operation (input in its encoded form, as a client would send it): the CLI,
 * automation rules and tests use it.
 */
export const runOperation = <Id extends OperationId>(
  operationId: Id,
  caller: Caller,
  input: RawInput,
  options?: CallOptions
): Effect.Effect<SuccessOf<Id>, ErrorOf<Id> | AuthorizationFailure | InvalidRequest | SqlError, Operations> =>
  Effect.flatMap(Operations, (operations) =>
    // `execute` answers exactly the implementation's success and failures, decoded by the same catalog types.
    operations.execute(operationId, caller, input, options) as Effect.Effect<SuccessOf<Id>, ErrorOf<Id> | AuthorizationFailure | InvalidRequest | SqlError>)

/**
 * An operation's input typed from its declaration, in its decoded form (as `@birzha/client` takes
 * it): `path`, `urlParams` and `payload` where the operation declares them.
 */
export type InputOf<Id extends OperationId> = OperationTypes[Id]["input"]

const encodePart = (ast: Option.Option<SchemaAST.AST>, value: unknown) =>
  Option.isNone(ast) || value === undefined ? Effect.succeed(undefined) : Effect.orDie(Schema.encodeUnknown(Schema.make(ast.value))(value))

/**
 * `runOperation` with its input typed from the catalog (a misspelt id or field does not compile),
 * encoded by the operation's own schemas before it runs through the one entry: what tests and
 * in-process callers write.
 */
export const callOperation = <Id extends OperationId>(
  operationId: Id,
  caller: Caller,
  input: InputOf<Id>,
  options?: CallOptions
): Effect.Effect<SuccessOf<Id>, ErrorOf<Id> | AuthorizationFailure | InvalidRequest | SqlError, Operations> =>
  Effect.gen(function*() {
    const operations = yield* Operations
    const entry = operations.entries.get(operationId)
    const given = input as { readonly path?: unknown; readonly urlParams?: unknown; readonly payload?: unknown }
    if (entry === undefined) return yield* runOperation(operationId, caller, {}, options)
    const path = yield* encodePart(entry.schemas.path, given.path)
    const urlParams = yield* encodePart(entry.schemas.urlParams, given.urlParams)
    const payload = yield* encodePart(entry.schemas.payload, given.payload)
    const raw: RawInput = {
      ...(path === undefined ? {} : { path: path as RawInput["path"] & {} }),
      ...(urlParams === undefined ? {} : { urlParams: urlParams as RawInput["urlParams"] & {} }),
      ...(payload === undefined ? {} : { payload })
    }
    return yield* runOperation(operationId, caller, raw, options)
  })
