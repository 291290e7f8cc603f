import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../api/ApiError.js"
import type { Actor, SessionActor } from "../api/Authentication.js"
import { ServerSecret } from "../auth/ServerSecret.js"
import { expandTypePatterns } from "../events/TypePattern.js"
import { idempotent } from "../store/Idempotency.js"
import { requireRevision } from "../store/Revision.js"
import { newSigningSecret, openSecret, sealSecret } from "./SigningSecret.js"
import {
  type DisabledReason,
  type PayloadMode,
  WebhookEndpoint,
  webhookLimits,
  type WebhookState
} from "./WebhookEndpoint.js"
import { approvalPageUrl, WebhookSettings } from "./WebhookSettings.js"
import { normalizeWebhookUrl } from "./WebhookUrl.js"

/** A row of `webhook_endpoints` as the commands and the worker read it. */
export interface EndpointRow {
  readonly uuid: string
  readonly profile_uuid: string
  readonly url: string
  readonly description: string
  readonly event_types: ReadonlyArray<string>
  readonly payload_mode: PayloadMode
  readonly state: WebhookState
  readonly config_version: number
  readonly approved_at: Date | null
  readonly verified_at: Date | null
  readonly paused_at: Date | null
  readonly disabled_at: Date | null
  readonly disabled_reason: DisabledReason | null
  readonly failing_since: Date | null
  readonly secret_sealed: string
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: Date | null
  readonly secret_rotated_at: Date | null
  readonly revision: number
  readonly created_at: Date
  readonly updated_at: Date
}

export const endpointColumns = `w.uuid, w.profile_uuid, w.url, w.description, w.event_types, w.payload_mode, w.state,
  w.config_version, w.approved_at, w.verified_at, w.paused_at, w.disabled_at, w.disabled_reason, w.failing_since,
  w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at, w.secret_rotated_at, w.revision,
  w.created_at, w.updated_at`

const optionalDate = <K extends string>(key: K, value: Date | null): { readonly [P in K]?: Date } =>
  (value === null ? {} : { [key]: value }) as { readonly [P in K]?: Date }

/** The owner's view of a row. */
export const endpointView = (row: EndpointRow, publicOrigin: string): WebhookEndpoint => ({
  uuid: row.uuid,
  revision: row.revision,
  url: row.url,
  description: row.description,
  eventTypes: row.event_types,
  payloadMode: row.payload_mode,
  state: row.state,
  ...(row.approved_at === null ? { approvalUrl: approvalPageUrl(publicOrigin, row.uuid) } : {}),
  ...optionalDate("approvedAt", row.approved_at),
  ...optionalDate("verifiedAt", row.verified_at),
  ...optionalDate("pausedAt", row.paused_at),
  ...optionalDate("disabledAt", row.disabled_at),
  ...(row.disabled_reason === null ? {} : { disabledReason: row.disabled_reason }),
  ...optionalDate("failingSince", row.failing_since),
  ...optionalDate("secretRotatedAt", row.secret_rotated_at),
  ...(row.previous_secret_expires_at !== null && row.previous_secret_expires_at.getTime() > Date.now()
    ? { previousSecretExpiresAt: row.previous_secret_expires_at }
    : {}),
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const notFound = () => new NotFound({ message: "No such webhook endpoint of the acting profile" })

/** The acting profile's live endpoint, locked for the rest of the transaction when `lock`. */
export const ownEndpoint = (actor: Actor, uuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<EndpointRow>`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints w
      WHERE w.uuid = ${uuid} AND w.profile_uuid = ${actor.profileUuid} AND w.deleted_at IS NULL
      ${options.lock ? sql`FOR UPDATE` : sql``}`
    if (row === undefined) return yield* notFound()
    return row
  })

const checkTypes = (patterns: ReadonlyArray<string>): Either.Either<ReadonlyArray<string>, InvalidRequest> =>
  Either.map(
    Either.mapLeft(expandTypePatterns(patterns), (message) => new InvalidRequest({ message: `eventTypes: ${message}` })),
    // Stored as given (deduplicated): the owner's patterns, expanded again at delivery time.
    () => [...new Set(patterns)]
  )

const checkUrl = (url: string, allowHttpLoopback: boolean): Either.Either<string, InvalidRequest> =>
  Either.mapLeft(normalizeWebhookUrl(url, { allowHttpLoopback }), (message) => new InvalidRequest({ message }))

/**
 * Pending attempts of the endpoint end as `cancelled` (spec: pause and disable cancel pending
 * attempts). One a worker is sending right now finishes its request (it cannot be recalled) and is
 * not retried.
 */
export const cancelPendingDeliveries = (endpointUuid: string, reason: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`UPDATE webhook_deliveries SET status = 'cancelled', cancel_reason = ${reason},
        next_attempt_at = NULL, finished_at = now(), updated_at = now()
      WHERE endpoint_uuid = ${endpointUuid} AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())
      RETURNING uuid`
    return rows.length
  })

const view = (row: EndpointRow) => Effect.map(WebhookSettings, (settings) => endpointView(row, settings.publicOrigin))

/** `webhooks.list`: the acting profile's endpoints, oldest first (at most 20, so one page). */
export const listWebhookEndpoints = (actor: Actor) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<EndpointRow>`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints w
      WHERE w.profile_uuid = ${actor.profileUuid} AND w.deleted_at IS NULL ORDER BY w.created_at, w.uuid`
    return { items: yield* Effect.forEach(rows, view) }
  })

/** What idempotency stores for create and rotate: the secret only sealed, so a retry can show it again. */
const SealedResult = Schema.Struct({ endpoint: WebhookEndpoint, sealedSecret: Schema.String })

const unseal = (endpointUuid: string) => (stored: typeof SealedResult.Type) =>
  Effect.map(ServerSecret, (serverSecret) => ({
    endpoint: stored.endpoint,
    secret: openSecret(serverSecret, endpointUuid, stored.sealedSecret)
  }))

export interface WebhookCreateInput {
  readonly requestUuid: string
  readonly url: string
  readonly eventTypes: ReadonlyArray<string>
  readonly payloadMode?: PayloadMode | undefined
  readonly description?: string | undefined
}

/**
 * `webhooks.create`: a `prepared` endpoint with a new signing secret, shown in this answer (and
 * to a retry with the same `requestUuid`); stored only encrypted.
 */
export const createWebhookEndpoint = (
  actor: Actor,
  input: WebhookCreateInput
): Effect.Effect<
  { readonly endpoint: WebhookEndpoint; readonly secret: string },
  InvalidRequest | Forbidden | RequestConflict | SqlError,
  SqlClient.SqlClient | ServerSecret | WebhookSettings
> =>
  Effect.gen(function*() {
    const settings = yield* WebhookSettings
    const url = yield* checkUrl(input.url, settings.allowHttpLoopback)
    const eventTypes = yield* checkTypes(input.eventTypes)
    const serverSecret = yield* ServerSecret
    const stored = yield* idempotent(
      { scope: actor.profileUuid, operationId: "webhooks.create", requestUuid: input.requestUuid, request: input, result: SealedResult },
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // One count at a time per profile, so two concurrent creates cannot both pass the limit.
        yield* sql`SELECT 1 FROM profiles WHERE uuid = ${actor.profileUuid} FOR UPDATE`
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints
          WHERE profile_uuid = ${actor.profileUuid} AND deleted_at IS NULL`
        if ((count?.n ?? 0) >= webhookLimits.endpointsPerProfile) {
          return yield* new Forbidden({ message: `A profile has at most ${webhookLimits.endpointsPerProfile} webhook endpoints` })
        }
        const uuid = crypto.randomUUID()
        const sealedSecret = sealSecret(serverSecret, uuid, newSigningSecret())
        const [row] = yield* sql<EndpointRow>`INSERT INTO webhook_endpoints AS w
            (uuid, profile_uuid, url, description, event_types, payload_mode, secret_sealed)
          VALUES (${uuid}, ${actor.profileUuid}, ${url}, ${input.description ?? ""}, ${JSON.stringify(eventTypes)}::jsonb,
            ${input.payloadMode ?? "reference"}, ${sealedSecret})
          RETURNING ${sql.literal(endpointColumns)}`
        return { endpoint: yield* view(row!), sealedSecret }
      })
    )
    return yield* unseal(stored.endpoint.uuid)(stored)
  })

export interface WebhookUpdateInput {
  readonly requestUuid: string
  readonly expectedRevision: number
  readonly url?: string | undefined
  readonly eventTypes?: ReadonlyArray<string> | undefined
  readonly payloadMode?: PayloadMode | undefined
  readonly description?: string | undefined
  readonly paused?: boolean | undefined
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && a.every((x, i) => x === b[i])

const EndpointResult = Schema.Struct({ endpoint: WebhookEndpoint })

/**
 * `webhooks.update` at `expectedRevision`. A different `url`, `eventTypes` or `payloadMode` drops
 * the approval and the test (state `prepared`); `paused: true` pauses; `paused: false` resumes a
 * paused endpoint (back to where it was) or re-enables a disabled one, which must pass a new test
 * first. Leaving `active` cancels the pending attempts. An update that changes nothing changes no
 * revision.
 */
export const updateWebhookEndpoint = (
  actor: Actor,
  uuid: string,
  input: WebhookUpdateInput
): Effect.Effect<
  { readonly endpoint: WebhookEndpoint },
  InvalidRequest | NotFound | RevisionConflict | RequestConflict | SqlError,
  SqlClient.SqlClient | WebhookSettings
> =>
  Effect.gen(function*() {
    const settings = yield* WebhookSettings
    const url = input.url === undefined ? undefined : yield* checkUrl(input.url, settings.allowHttpLoopback)
    const eventTypes = input.eventTypes === undefined ? undefined : yield* checkTypes(input.eventTypes)
    return yield* idempotent(
      { scope: actor.profileUuid, operationId: "webhooks.update", requestUuid: input.requestUuid, request: { uuid, ...input }, result: EndpointResult },
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const row = yield* ownEndpoint(actor, uuid, { lock: true })
        yield* requireRevision("webhook endpoint", row.revision, input.expectedRevision)
        const [clock] = yield* sql<{ now: Date }>`SELECT now() AS now`
        const now = clock!.now
        const next = {
          url: url ?? row.url,
          eventTypes: eventTypes ?? row.event_types,
          payloadMode: input.payloadMode ?? row.payload_mode,
          description: input.description ?? row.description,
          configVersion: row.config_version,
          approvedAt: row.approved_at,
          verifiedAt: row.verified_at,
          pausedAt: row.paused_at,
          disabledAt: row.disabled_at,
          disabledReason: row.disabled_reason,
          failingSince: row.failing_since
        }
        const configChanged = next.url !== row.url || !sameList(next.eventTypes, row.event_types) || next.payloadMode !== row.payload_mode
        if (configChanged) {
          next.configVersion += 1
          next.approvedAt = null
          next.verifiedAt = null
        }
        if (input.paused === true && next.pausedAt === null) next.pausedAt = now
        if (input.paused === false) {
          next.pausedAt = null
          if (next.disabledAt !== null) {
            // The receiver went away or kept failing: it must answer a new test before events flow again.
            next.disabledAt = null
            next.disabledReason = null
            next.verifiedAt = null
            next.failingSince = null
          }
        }
        const changed = configChanged || next.description !== row.description || next.pausedAt !== row.paused_at ||
          next.disabledAt !== row.disabled_at
        if (!changed) return { endpoint: yield* view(row) }
        const becomesActive = row.state !== "active" && next.disabledAt === null && next.pausedAt === null &&
          next.approvedAt !== null && next.verifiedAt !== null
        const [updated] = yield* sql<EndpointRow>`UPDATE webhook_endpoints w SET
            url = ${next.url}, event_types = ${JSON.stringify(next.eventTypes)}::jsonb, payload_mode = ${next.payloadMode},
            description = ${next.description}, config_version = ${next.configVersion}, approved_at = ${next.approvedAt},
            verified_at = ${next.verifiedAt}, paused_at = ${next.pausedAt}, disabled_at = ${next.disabledAt},
            disabled_reason = ${next.disabledReason}, failing_since = ${next.failingSince},
            -- Events sequenced while the endpoint was not active are not sent to it.
            after_position = CASE WHEN ${becomesActive} THEN (SELECT last_position FROM event_sequence) ELSE w.after_position END,
            revision = w.revision + 1, updated_at = now()
          WHERE w.uuid = ${uuid}
          RETURNING ${sql.literal(endpointColumns)}`
        if (updated!.state !== "active" || configChanged) {
          yield* cancelPendingDeliveries(uuid, configChanged ? "endpoint changed" : `endpoint ${updated!.state}`)
        }
        return { endpoint: yield* view(updated!) }
      })
    )
  })

/** `webhooks.delete`: the endpoint stops receiving at once (pending attempts cancelled); deleting it again changes nothing. */
export const deleteWebhookEndpoint = (actor: Actor, uuid: string): Effect.Effect<void, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      const [row] = yield* sql<{ deleted: boolean }>`SELECT deleted_at IS NOT NULL AS deleted FROM webhook_endpoints
        WHERE uuid = ${uuid} AND profile_uuid = ${actor.profileUuid} FOR UPDATE`
      if (row === undefined) return yield* notFound()
      if (row.deleted) return
      yield* sql`UPDATE webhook_endpoints SET deleted_at = now(), updated_at = now(), revision = revision + 1 WHERE uuid = ${uuid}`
      yield* cancelPendingDeliveries(uuid, "endpoint deleted")
    }))
  })

/**
 * `webhooks.approve` (and the approval page): the owner approves exactly the URL stored at
 * `expectedRevision`: `prepared` → `awaiting_test`. Approving an already approved endpoint for the
 * same URL returns it unchanged, so a repeated click is harmless.
 */
export const approveWebhookEndpoint = (
  actor: SessionActor,
  uuid: string,
  input: { readonly url: string; readonly expectedRevision: number }
): Effect.Effect<{ readonly endpoint: WebhookEndpoint }, NotFound | RevisionConflict | InvalidState | SqlError, SqlClient.SqlClient | WebhookSettings> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const row = yield* ownEndpoint(actor, uuid, { lock: true })
      if (row.approved_at !== null && row.url === input.url) return { endpoint: yield* view(row) }
      yield* requireRevision("webhook endpoint", row.revision, input.expectedRevision)
      if (row.url !== input.url) {
        return yield* new InvalidState({ message: "The endpoint's URL is not the one approved; read it again and approve its exact URL" })
      }
      const [updated] = yield* sql<EndpointRow>`UPDATE webhook_endpoints w SET approved_at = now(), verified_at = NULL,
          revision = w.revision + 1, updated_at = now()
        WHERE w.uuid = ${uuid} RETURNING ${sql.literal(endpointColumns)}`
      return { endpoint: yield* view(updated!) }
    }))
  })

/**
 * `webhooks.rotate`: a new signing secret, shown in this answer. The one it replaces keeps signing
 * (a second `v1,` signature) for 24 hours; an older previous secret stops at once.
 */
export const rotateWebhookSecret = (
  actor: Actor,
  uuid: string,
  input: { readonly requestUuid: string }
): Effect.Effect<
  { readonly endpoint: WebhookEndpoint; readonly secret: string },
  NotFound | RequestConflict | SqlError,
  SqlClient.SqlClient | ServerSecret | WebhookSettings
> =>
  Effect.gen(function*() {
    const serverSecret = yield* ServerSecret
    const stored = yield* idempotent(
      { scope: actor.profileUuid, operationId: "webhooks.rotate", requestUuid: input.requestUuid, request: { uuid, ...input }, result: SealedResult },
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* ownEndpoint(actor, uuid, { lock: true })
        const sealedSecret = sealSecret(serverSecret, uuid, newSigningSecret())
        const [row] = yield* sql<EndpointRow>`UPDATE webhook_endpoints w SET
            previous_secret_sealed = w.secret_sealed,
            previous_secret_expires_at = now() + make_interval(hours => ${webhookLimits.previousSecretHours}),
            secret_sealed = ${sealedSecret}, secret_rotated_at = now(), revision = w.revision + 1, updated_at = now()
          WHERE w.uuid = ${uuid} RETURNING ${sql.literal(endpointColumns)}`
        return { endpoint: yield* view(row!), sealedSecret }
      })
    )
    return yield* unseal(uuid)(stored)
  })
