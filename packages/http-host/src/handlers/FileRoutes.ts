import {
  ContentMismatch,
  envelope,
  imageMimeTypes,
  InvalidRequest,
  NotFound,
  ServiceUnavailable,
  sessionCookieName,
  SizeMismatch,
  UploadExpired,
  UploadUsed
} from "@birzha/domain"
import {
  actorForToken,
  BlobStore,
  type FileContent,
  readFileContent,
  receiveUpload,
  ServerSecret,
  uploadTarget
} from "@birzha/domain/internal"
import { HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Option, Redacted, Stream } from "effect"
import type { IncomingMessage } from "node:http"

/**
 * The routes that carry a file's bytes: raw bytes, not JSON, so they are the host's own routes
 * beside the catalog's operations (listed here for the route table's 404/405).
 * - `PUT /api/v1/files/uploads/{uuid}?token=…`: the one-time upload address `files.prepare` returns;
 * - `GET /api/v1/files/{uuid}/content`: a ready file's bytes, for whoever may read them.
 */
export const fileRoutes = [
  { method: "PUT", path: "/api/v1/files/uploads/{uuid}" },
  { method: "GET", path: "/api/v1/files/{uuid}/content" }
] as const

class BodyUnreadable extends Data.TaggedError("BodyUnreadable")<{ readonly cause: unknown }> {}

/**
 * An answer in the envelope. Refused uploads also close the connection: the part of the body
 * that was not read stays on the wire, and reading it only to throw it away would let a client
 * stream without end.
 */
const refuse = (cls: { readonly code: string; readonly status: number }, message: string, close: boolean) =>
  HttpServerResponse.unsafeJson(envelope(cls, message), {
    status: cls.status,
    headers: { "cache-control": "no-store", ...(close ? { connection: "close" } : {}) }
  })

const unavailable = (close: boolean) => (error: SqlError) =>
  Effect.logWarning("database unavailable", error).pipe(
    Effect.as(refuse(ServiceUnavailable, "The service is temporarily unavailable", close))
  )

/**
 * Reads the request body, but never more than `size` bytes: one byte over and reading stops.
 * The Node request is read directly (without destroying it when the read stops) because the
 * platform's body readers destroy the socket when they stop early, which would lose the answer.
 */
const readAtMost = (source: IncomingMessage, size: number) =>
  NodeStream.fromReadable<BodyUnreadable, Uint8Array>(() => source, (cause) => new BodyUnreadable({ cause }), {
    closeOnDone: false
  }).pipe(
    Stream.runFoldEffect({ chunks: [] as Array<Uint8Array>, length: 0 }, (read, chunk) => {
      const length = read.length + chunk.length
      if (length > size) {
        return Effect.fail(new SizeMismatch({ message: `The file was declared with ${size} bytes; more arrived` }))
      }
      read.chunks.push(chunk)
      return Effect.succeed({ chunks: read.chunks, length })
    }),
    Effect.map(({ chunks, length }) => new Uint8Array(Buffer.concat(chunks, length)))
  )

const declaredLength = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const header = request.headers["content-length"]
  return header !== undefined && /^\d{1,15}$/.test(header) ? Number(header) : undefined
}

/**
 * The upload address. Token, deadline and use are checked before a byte is read, then a
 * declared `Content-Length` against the size, then the bytes themselves (at most the size).
 * The request is logged without its query, which holds the token.
 */
const upload = Effect.gen(function*() {
  yield* HttpMiddleware.withLoggerDisabled(Effect.void)
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, "http://host")
  const uuid = (yield* HttpRouter.params)["uuid"] ?? ""
  const token = url.searchParams.get("token") ?? ""
  const response = yield* Effect.gen(function*() {
    const target = yield* uploadTarget(uuid, token)
    const length = declaredLength(request)
    if (length !== undefined && length !== target.size) {
      return yield* new SizeMismatch({ message: `The file was declared with ${target.size} bytes; the request carries ${length}` })
    }
    const bytes = yield* readAtMost(NodeHttpServerRequest.toIncomingMessage(request), target.size)
    yield* receiveUpload(uuid, token, bytes)
    return HttpServerResponse.unsafeJson({ uuid: target.uuid, status: "uploaded" }, { headers: { "cache-control": "no-store" } })
  }).pipe(
    Effect.catchTags({
      NotFound: (error) => Effect.succeed(refuse(NotFound, error.message, true)),
      UploadUsed: (error) => Effect.succeed(refuse(UploadUsed, error.message, true)),
      UploadExpired: (error) => Effect.succeed(refuse(UploadExpired, error.message, true)),
      SizeMismatch: (error) => Effect.succeed(refuse(SizeMismatch, error.message, true)),
      ContentMismatch: (error) => Effect.succeed(refuse(ContentMismatch, error.message, true)),
      BodyUnreadable: () => Effect.succeed(refuse(InvalidRequest, "The request body could not be read", true)),
      SqlError: unavailable(true)
    })
  )
  yield* Effect.annotateLogs(Effect.log("Sent HTTP response"), {
    "http.method": request.method,
    "http.url": url.pathname,
    "http.status": response.status
  })
  return response
})

const inlineTypes: ReadonlyArray<string> = imageMimeTypes

// RFC 6266/5987: an ASCII fallback and the exact UTF-8 name.
const contentDisposition = (file: FileContent) => {
  const kind = inlineTypes.includes(file.mimeType) ? "inline" : "attachment"
  const fallback = file.name.replace(/[^\x20-\x7e]|["\\%;]/g, "_")
  const exact = encodeURIComponent(file.name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${exact}`
}

const contentTypeOf = (file: FileContent) =>
  file.mimeType === "text/plain" || file.mimeType === "text/csv" ? `${file.mimeType}; charset=utf-8` : file.mimeType

const matches = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined &&
  ifNoneMatch.split(",").map((tag) => tag.trim().replace(/^W\//, "")).some((tag) => tag === etag || tag === "*")

/**
 * A ready file's bytes, to whoever may read them (`readFileContent` decides; anyone else gets
 * the same 404 as for an absent file). The bytes of a file never change, so the ETag is their
 * hash; public files may be cached by anyone for 5 minutes (a hidden publication stops serving
 * its files within that time), the others only by the reader's browser, revalidated each time.
 */
const content = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const uuid = (yield* HttpRouter.params)["uuid"] ?? ""
  const sessionToken = request.cookies[sessionCookieName]
  const viewer = sessionToken === undefined ? Option.none() : yield* actorForToken(Redacted.make(sessionToken))
  const found = yield* readFileContent(uuid, viewer)
  if (Option.isNone(found)) return refuse(NotFound, "No such file", false)
  const file = found.value
  const etag = `"${file.sha256}"`
  const headers = {
    etag,
    "cache-control": file.isPublic ? "public, max-age=300" : "private, no-cache",
    "content-disposition": contentDisposition(file),
    "x-content-type-options": "nosniff",
    // Opened directly, a file is a sandboxed document that can run nothing and load nothing.
    "content-security-policy": "default-src 'none'; sandbox",
    ...(file.isPublic ? {} : { vary: "cookie" })
  }
  if (matches(request.headers["if-none-match"], etag)) return HttpServerResponse.empty({ status: 304, headers })
  return HttpServerResponse.uint8Array(file.bytes, { contentType: contentTypeOf(file), headers })
}).pipe(Effect.catchTag("SqlError", unavailable(false)))

/** The file routes, on the database, server key and blob store the host runs with. */
export const FileRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<SqlClient.SqlClient | ServerSecret | BlobStore>()
    yield* router.put("/api/v1/files/uploads/:uuid", Effect.provide(upload, services))
    yield* router.get("/api/v1/files/:uuid/content", Effect.provide(content, services))
  })
)
