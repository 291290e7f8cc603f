import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { oauthLimits, OAuthRefusal } from "./OAuth.js"
import { type ClientRow, findClient, saveClient } from "./OAuthRepository.js"

/**
 * Fetches a client ID metadata document (the MCP authorization specification's preferred way for a
 * client to say who it is: its client id is the https address of a JSON document about itself).
 * The host gives it, fetching through the webhooks' SSRF-safe address policy
 * (packages/domain/src/webhooks/AddressPolicy.ts); a refusal is a rejected promise.
 */
export interface ClientResolver {
  readonly fetchDocument: (url: URL) => Promise<unknown>
  /** `http://` client ids on loopback too (`BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK`: tests, local development). */
  readonly allowHttpLoopback: boolean
}

const refuse = (error: string, message: string) => Effect.fail(new OAuthRefusal({ error, message }))

/** https anywhere, or http on a loopback address (RFC 8252 §7.3: a native client's local listener); no fragment. */
export const redirectUriProblem = (value: unknown): string | undefined => {
  if (typeof value !== "string" || value.length > 2000) return "a redirect URI is a string of at most 2000 characters"
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `${value} is not an absolute URL`
  }
  if (url.hash !== "") return `${value} has a fragment`
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname)) return undefined
  return `${value} must be https, or http on a loopback address`
}

interface ClientMetadata {
  readonly name: string
  readonly clientUri: string | undefined
  readonly redirectUris: ReadonlyArray<string>
}

/** The fields of RFC 7591 client metadata we use, checked: redirect_uris (required), client_name, client_uri; public clients only. */
export const clientMetadataOf = (body: unknown, fallbackName: string): ClientMetadata | string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "the client metadata must be a JSON object"
  const fields = body as Record<string, unknown>
  const uris = fields["redirect_uris"]
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > oauthLimits.redirectUrisMax) {
    return `redirect_uris must list 1 to ${oauthLimits.redirectUrisMax} addresses`
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri)
    if (problem !== undefined) return `redirect_uris: ${problem}`
  }
  const method = fields["token_endpoint_auth_method"]
  if (method !== undefined && method !== "none") return "token_endpoint_auth_method must be none: clients here are public and prove themselves with PKCE"
  const name = fields["client_name"]
  if (name !== undefined && (typeof name !== "string" || name.trim() === "" || name.length > oauthLimits.clientNameMax)) {
    return `client_name has 1 to ${oauthLimits.clientNameMax} characters`
  }
  const clientUri = fields["client_uri"]
  if (clientUri !== undefined && (typeof clientUri !== "string" || !/^https?:\/\//.test(clientUri) || clientUri.length > 2000)) {
    return "client_uri must be an http(s) address"
  }
  return {
    name: typeof name === "string" ? name.trim() : fallbackName,
    clientUri: typeof clientUri === "string" ? clientUri : undefined,
    redirectUris: uris as ReadonlyArray<string>
  }
}

const isMetadataDocumentId = (clientId: string, allowHttpLoopback: boolean) => {
  try {
    const url = new URL(clientId)
    const scheme = url.protocol === "https:" || (allowHttpLoopback && url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname))
    return scheme && url.pathname !== "/"
  } catch {
    return false
  }
}

/**
 * The client behind a client id: a registered one from the database; an https client id is a
 * metadata document, fetched (and kept a day) and checked to name itself.
 */
export const resolveClient = (
  clientId: string,
  resolver: ClientResolver
): Effect.Effect<ClientRow, OAuthRefusal | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const stored = yield* findClient(clientId, oauthLimits.clientMetadataSeconds)
    if (Option.isSome(stored) && (stored.value.kind === "registered" || !stored.value.stale)) return stored.value
    if (!isMetadataDocumentId(clientId, resolver.allowHttpLoopback)) return yield* refuse("invalid_client", "no client is registered with this client_id")
    const document = yield* Effect.tryPromise({
      try: () => resolver.fetchDocument(new URL(clientId)),
      catch: (error) => new OAuthRefusal({ error: "invalid_client", message: `its metadata document could not be fetched: ${error instanceof Error ? error.message : String(error)}` })
    })
    if (typeof document !== "object" || document === null || (document as Record<string, unknown>)["client_id"] !== clientId) {
      return yield* refuse("invalid_client", "the metadata document's client_id must be its own address")
    }
    const metadata = clientMetadataOf(document, new URL(clientId).host)
    if (typeof metadata === "string") return yield* refuse("invalid_client", `its metadata document is refused: ${metadata}`)
    yield* saveClient({ clientId, kind: "metadata_document", ...metadata })
    return { client_id: clientId, kind: "metadata_document", name: metadata.name, client_uri: metadata.clientUri ?? null, redirect_uris: metadata.redirectUris, stale: false } as const
  })

/** POST /oauth/register (RFC 7591): a public client; the answer is its registration (no secret is ever issued). */
export const registerClient = (body: unknown): Effect.Effect<Record<string, unknown>, OAuthRefusal | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const metadata = clientMetadataOf(body, "Agent")
    if (typeof metadata === "string") {
      return yield* refuse(metadata.startsWith("redirect_uris") ? "invalid_redirect_uri" : "invalid_client_metadata", metadata)
    }
    const clientId = `birzha_client_${randomUUID()}`
    yield* saveClient({ clientId, kind: "registered", ...metadata })
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      client_name: metadata.name,
      ...(metadata.clientUri === undefined ? {} : { client_uri: metadata.clientUri }),
      redirect_uris: metadata.redirectUris,
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"]
    }
  })
