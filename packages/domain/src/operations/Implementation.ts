import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema, SchemaAST } from "effect"
import type { InvalidRequest, ServiceUnavailable } from "../kernel/ApiError.js"
import type { Actor, Authentication, OperatorAccess, SystemCaller } from "../kernel/Authentication.js"
import { Paged } from "../store/Cursor.js"

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
 * A piece of a streamed answer's JSON text: text, or its UTF-8 bytes. Bytes are valid only until
 * the next piece is asked for: a reading may write its next page's bytes over them.
 */
export type JsonPiece = string | Uint8Array

const utf8Decoder = new TextDecoder()

/** A piece as text (bytes decoded: they are valid only until the next piece). */
export const pieceText = (piece: JsonPiece): string => typeof piece === "string" ? piece : utf8Decoder.decode(piece)

/**
 * An answer written while it is read (the public catalog: 26 MiB of JSON at 10k publications): its
 * JSON text in pieces, read only as fast as the transport sends them, so no process holds the
 * whole document. `read()` starts a reading from the beginning; each run of the effect it returns
 * gives the next piece, `undefined` after the last (`forEachPiece` runs them in order). HTTP writes
 * each piece once the socket has written the one before; every other caller gets them collected
 * into one `EncodedJson` (`Operations.invoke`). The registry provides the reading with its
 * services (`R`), as it does an implementation's effect.
 *
 * What it keeps while answering is a page, its text and one buffer of its UTF-8, whatever the
 * catalog's size (bench/README.md, `catalog`). A pull, not an Effect `Stream`: a stream's stages
 * keep the last chunk they emitted until they emit the next, so each page's rows and text lived
 * through the next page's read and were promoted to the old generation. A page's JSON text kept as
 * a string for the socket was promoted at almost every page; as a new `Uint8Array` for each page,
 * the buffers waited for V8 to free them (~40 MB at a time). So a reading encodes each page into
 * the same buffer (docs/decisions.md, "The catalog is streamed").
 */
export class StreamedJson<R = never> {
  constructor(readonly read: () => Effect.Effect<JsonPiece | undefined, CommonFailure, R>) {}
}

/** Runs `use` on each piece of a streamed answer in order; the next piece is asked for once `use` has finished with the one before. */
export const forEachPiece = <R, E2, R2>(json: StreamedJson<R>, use: (piece: JsonPiece) => Effect.Effect<void, E2, R2>): Effect.Effect<void, CommonFailure | E2, R | R2> =>
  Effect.suspend(() => {
    const next = json.read()
    const loop: Effect.Effect<void, CommonFailure | E2, R | R2> = Effect.flatMap(next, (piece) => piece === undefined ? Effect.void : Effect.zipRight(use(piece), loop))
    return loop
  })

/** A struct's value with any of its array fields given as pages of the array's items. */
export type StreamedFields<Fields extends Schema.Struct.Fields, R> = {
  readonly [K in keyof Schema.Struct.Type<Fields>]: Schema.Struct.Type<Fields>[K] extends ReadonlyArray<infer A>
    ? Schema.Struct.Type<Fields>[K] | Paged<A, CommonFailure, R>
    : Schema.Struct.Type<Fields>[K]
}

/** The item schema of an array field (`Schema.Array(item)`); anything else cannot be streamed. */
const itemSchemaOf = (ast: SchemaAST.AST): Schema.Schema<unknown, unknown> => {
  if (SchemaAST.isTupleType(ast) && ast.elements.length === 0 && ast.rest.length === 1) return Schema.make(ast.rest[0]!.type)
  throw new Error("only an array field of a struct can be given as pages")
}

const utf8Encoder = new TextEncoder()

/**
 * The JSON text of a struct whose array fields come as pages of their items, in pieces: byte for
 * byte `JSON.stringify(Schema.encodeSync(schema)(value))` of the collected value. Fields are
 * written in the schema's order; each item is encoded with the array's item schema (the declared
 * schema stays the allowlist), one piece of text per page. The text between items
 * (`{"schemaVersion":1,"profiles":[`) is held until the next items are read and given as a piece of
 * its own just before them, so nothing is given before the first page has been read: a failure
 * there is still answered in the envelope.
 */
export const streamedStruct = <Fields extends Schema.Struct.Fields, R>(
  schema: Schema.Struct<Fields>,
  value: StreamedFields<Fields, R>
): StreamedJson<R> => {
  const ast = schema.ast
  if (!SchemaAST.isTypeLiteral(ast) || ast.indexSignatures.length > 0) throw new Error("streamedStruct takes a struct of plain fields")
  const fields = value as Readonly<Record<PropertyKey, unknown>>
  const parts: Array<string | { readonly items: Paged<unknown, CommonFailure, R>; readonly encode: (item: unknown) => unknown }> = []
  let text = ""
  for (const field of ast.propertySignatures) {
    const given = fields[field.name]
    if (given === undefined) continue
    text += `${text === "" ? "{" : ","}${JSON.stringify(field.name)}:`
    if (!(given instanceof Paged)) {
      text += JSON.stringify(Schema.encodeSync(Schema.make(field.type))(given))
      continue
    }
    parts.push(`${text}[`, { items: given as Paged<unknown, CommonFailure, R>, encode: Schema.encodeSync(itemSchemaOf(field.type)) })
    text = "]"
  }
  parts.push(text === "" ? "{}" : `${text}}`)
  return new StreamedJson(() => {
    // Per reading: the text not yet given, the part being read, and a page's text waiting behind
    // the piece before it.
    let pending = ""
    let index = 0
    let reading: { readonly next: Effect.Effect<ReadonlyArray<unknown> | undefined, CommonFailure, R>; readonly encode: (item: unknown) => unknown; first: boolean } | undefined
    let waiting: Uint8Array | undefined
    // Each page's UTF-8 is written over the page before's (see `StreamedJson`).
    let scratch = new Uint8Array(0)
    const utf8Into = (text: string): Uint8Array => {
      for (;;) {
        const { read, written } = utf8Encoder.encodeInto(text, scratch)
        if (read === text.length) return scratch.subarray(1, written - 1)
        scratch = new Uint8Array(Math.max(scratch.length * 2, Math.ceil(text.length * 1.5)))
      }
    }
    const next: Effect.Effect<JsonPiece | undefined, CommonFailure, R> = Effect.suspend(() => {
      if (waiting !== undefined) {
        const piece = waiting
        waiting = undefined
        return Effect.succeed(piece)
      }
      for (; index < parts.length; index++) {
        const part = parts[index]!
        if (typeof part === "string") {
          pending += part
          continue
        }
        const current = reading ??= { next: part.items.start(), encode: part.encode, first: true }
        return Effect.flatMap(current.next, (page) => {
          if (page === undefined) {
            reading = undefined
            index++
            return next
          }
          if (page.length === 0) return next
          // One JSON.stringify of the page's encoded items, as UTF-8 without its brackets. The text
          // before them is a piece of its own, so the page is not copied again to prefix it.
          const json = utf8Into(JSON.stringify(page.map(current.encode)))
          // Never empty: the struct's text before the array, or the comma after the page before.
          const prefix = `${pending}${current.first ? "" : ","}`
          pending = ""
          current.first = false
          waiting = json
          return Effect.succeed(prefix)
        })
      }
      if (pending === "") return Effect.succeed(undefined)
      const last = pending
      pending = ""
      return Effect.succeed(last)
    })
    return next
  })
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

