import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Chunk, Effect, Schema, SchemaAST, Stream } from "effect"
import type { InvalidRequest, ServiceUnavailable } from "../kernel/ApiError.js"
import type { Actor, Authentication, OperatorAccess, SystemCaller } from "../kernel/Authentication.js"

/**
 * What one operation's implementation receives: the decoded path, query and body of its
 * declaration (no request, no headers: an implementation never sees a transport), and who calls.
 */
export type OperationInput<E extends HttpApiEndpoint.HttpApiEndpoint.Any> = Omit<
  HttpApiEndpoint.HttpApiEndpoint.Request<E>,
  "request" | "headers"
>

/**
 * The caller an implementation is given, typed from the declaration: an operator operation also
 * accepts the CLI's `SystemCaller`; an authenticated one always has an `Actor` (the registry
 * refuses anyone else before it runs); a public one may have nobody (`undefined`).
 */
export type CallerOf<E extends HttpApiEndpoint.HttpApiEndpoint.Any> = OperatorAccess extends HttpApiEndpoint.HttpApiEndpoint.Context<E>
  ? Actor | SystemCaller
  : Authentication extends HttpApiEndpoint.HttpApiEndpoint.Context<E> ? Actor
  : Actor | undefined

/** An answer already encoded as JSON text (a large public document shared by concurrent readers). */
export class EncodedJson {
  #bytes: Buffer | undefined
  constructor(readonly json: string) {}
  /** The text as UTF-8, encoded on first use and kept: a constant answer is encoded once, not per request. */
  get bytes(): Buffer {
    return this.#bytes ??= Buffer.from(this.json)
  }
}

/**
 * A constant answer encoded once, at start, with the operation's declared success schema (which
 * stays its allowlist): every call sends the same text instead of encoding and serialising the
 * same value again (`events.types` is read by every client at start).
 */
export const encodedOnce = <A, I>(schema: Schema.Schema<A, I>, value: A): EncodedJson =>
  new EncodedJson(JSON.stringify(Schema.encodeSync(schema)(value)))

/**
 * An answer written while it is read (the public catalog: 26 MiB of JSON at 10k publications): its
 * JSON text in chunks, pulled only as fast as the transport sends them, so no process holds the
 * whole document. HTTP writes the chunks to the socket with backpressure; every other caller gets
 * them collected into one `EncodedJson` (`Operations.invoke`). The registry provides the stream
 * with its services (`R`), as it does an implementation's effect.
 */
export class StreamedJson<R = never> {
  constructor(readonly chunks: Stream.Stream<string, CommonFailure, R>) {}
}

/** A struct's value with any of its array fields given as a stream of the array's items. */
export type StreamedFields<Fields extends Schema.Struct.Fields, R> = {
  readonly [K in keyof Schema.Struct.Type<Fields>]: Schema.Struct.Type<Fields>[K] extends ReadonlyArray<infer A>
    ? Schema.Struct.Type<Fields>[K] | Stream.Stream<A, CommonFailure, R>
    : Schema.Struct.Type<Fields>[K]
}

const isStream = (value: unknown): value is Stream.Stream<unknown, unknown, unknown> =>
  typeof value === "object" && value !== null && Stream.StreamTypeId in value

/** The item schema of an array field (`Schema.Array(item)`); anything else cannot be streamed. */
const itemSchemaOf = (ast: SchemaAST.AST): Schema.Schema<unknown, unknown> => {
  if (SchemaAST.isTupleType(ast) && ast.elements.length === 0 && ast.rest.length === 1) return Schema.make(ast.rest[0]!.type)
  throw new Error("only an array field of a struct can be given as a stream")
}

/**
 * The JSON text of a struct whose array fields come as streams of their items (read page by page),
 * in chunks: byte for byte `JSON.stringify(Schema.encodeSync(schema)(value))` of the collected
 * value. Fields are written in the schema's order; each item is encoded with the array's item
 * schema (the declared schema stays the allowlist), one piece of text per chunk of items. The text
 * between items (`{"schemaVersion":1,"profiles":[`) is held until the next items are read and goes
 * out just before them, so nothing is written before the first page has been read: a failure there
 * is still answered in the envelope.
 */
export const streamedStruct = <Fields extends Schema.Struct.Fields, R>(
  schema: Schema.Struct<Fields>,
  value: StreamedFields<Fields, R>
): StreamedJson<R> => {
  const ast = schema.ast
  if (!SchemaAST.isTypeLiteral(ast) || ast.indexSignatures.length > 0) throw new Error("streamedStruct takes a struct of plain fields")
  const fields = value as Readonly<Record<PropertyKey, unknown>>
  const parts: Array<string | { readonly items: Stream.Stream<unknown, CommonFailure, R>; readonly encode: (item: unknown) => unknown }> = []
  let text = ""
  for (const field of ast.propertySignatures) {
    const given = fields[field.name]
    if (given === undefined) continue
    text += `${text === "" ? "{" : ","}${JSON.stringify(field.name)}:`
    if (!isStream(given)) {
      text += JSON.stringify(Schema.encodeSync(Schema.make(field.type))(given))
      continue
    }
    parts.push(`${text}[`, { items: given as Stream.Stream<unknown, CommonFailure, R>, encode: Schema.encodeSync(itemSchemaOf(field.type)) })
    text = "]"
  }
  parts.push(text === "" ? "{}" : `${text}}`)
  return new StreamedJson(Stream.suspend(() => {
    // Per run of the stream: the text not yet written, and whether an array has had its first item.
    let pending = ""
    const pieces = parts.map((part) => {
      if (typeof part === "string") {
        return Stream.suspend(() => {
          pending += part
          return Stream.empty
        })
      }
      let first = true
      return Stream.mapChunks(part.items, (items) => {
        if (Chunk.isEmpty(items)) return Chunk.empty<string>()
        // One JSON.stringify of the encoded items and its text without the brackets (the slice is
        // the one flat copy the socket needs anyway), where the items' texts joined and then
        // prefixed made two more (the join, and flattening the prefixed text for its byte length).
        // The text before the items is a chunk of its own for the same reason.
        const encoded = Chunk.toReadonlyArray(items).map((item) => part.encode(item))
        const json = JSON.stringify(encoded).slice(1, -1)
        const prefix = `${pending}${first ? "" : ","}`
        pending = ""
        first = false
        return prefix === "" ? Chunk.of(json) : Chunk.make(prefix, json)
      })
    })
    return Stream.concat(Stream.concatAll(Chunk.fromIterable(pieces)), Stream.suspend(() => Stream.succeed(pending)))
  }))
}

/** Errors any implementation may fail with beside its declared ones; the registry answers them (a `SqlError` is 503). */
export type CommonFailure = SqlError | InvalidRequest | ServiceUnavailable

export type Implementation<E extends HttpApiEndpoint.HttpApiEndpoint.Any, R> = (
  input: OperationInput<E>,
  caller: CallerOf<E>,
  call: Call
) => Effect.Effect<
  HttpApiEndpoint.HttpApiEndpoint.Success<E> | EncodedJson | StreamedJson<R>,
  HttpApiEndpoint.HttpApiEndpoint.Error<E> | CommonFailure,
  R
>

/** Every operation of a group, by operation id: a missing or misspelt one is a type error. */
export type GroupImplementations<Group extends HttpApiGroup.HttpApiGroup.Any, R> = {
  readonly [Name in HttpApiEndpoint.HttpApiEndpoint.Name<HttpApiGroup.HttpApiGroup.Endpoints<Group>>]: Implementation<
    HttpApiEndpoint.HttpApiEndpoint.WithName<HttpApiGroup.HttpApiGroup.Endpoints<Group>, Name>,
    R
  >
}

/** Untyped form the registry stores; typed at `implement`. */
export type AnyImplementation = (input: never, caller: never, call: Call) => Effect.Effect<unknown, unknown, unknown>

/** One group's implementations, built once with the services they need (captured by the registry). */
export interface GroupImplementation<R> {
  readonly group: string
  readonly build: Effect.Effect<Readonly<Record<string, AnyImplementation>>, never, R>
}

/** Implements a declared group in the domain: one function per operation id. */
export const implement = <Group extends HttpApiGroup.HttpApiGroup.Any>(group: Group) =>
<RH>(implementations: GroupImplementations<Group, RH>): GroupImplementation<RH> => ({
  group: group.identifier,
  build: Effect.succeed(implementations as Readonly<Record<string, AnyImplementation>>)
})

/**
 * The same, for implementations that need something once when the registry is made (a setting,
 * shared state): `setup` runs once, its value is handed to `make`.
 */
export const implementWith = <Group extends HttpApiGroup.HttpApiGroup.Any, S, R>(group: Group, setup: Effect.Effect<S, never, R>) =>
<RH>(make: (services: S) => GroupImplementations<Group, RH>): GroupImplementation<R | RH> => ({
  group: group.identifier,
  build: Effect.map(setup, (services) => make(services) as Readonly<Record<string, AnyImplementation>>)
})

/**
 * What an operation tells its transport beside its answer, for the transport to express its own
 * way (HTTP: cookies and `Retry-After`; MCP and automations ignore them). Set on `call.facts`.
 */
export interface Facts {
  /** Sign-in completed: the new session's secret and end (HTTP sets the session cookie). */
  session?: { readonly token: string; readonly expiresAt: Date } | "ended"
  /** A refused attempt may be retried after this many seconds. */
  retryAfterSeconds?: number
}

/**
 * The call in progress: where it came from and what it tells its transport. The registry hands it
 * to every implementation as its third argument (not as a service: a per-call service meant
 * merging a context on every call, the registry's largest cost, bench/README.md).
 */
export interface Call {
  /** The client's network address as the transport saw it (`unknown` when there is none: CLI, worker). */
  readonly clientAddress: string
  /** The channel a key came through: what `getMyCapabilities` reports and key access is checked for. */
  readonly channel: "http" | "mcp" | "internal"
  readonly facts: Facts
}

