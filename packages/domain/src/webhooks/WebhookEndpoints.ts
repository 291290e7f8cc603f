import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option, Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../kernel/ApiError.js"
import type { Actor, SessionActor } from "../kernel/Authentication.js"
import { ServerSecret } from "../auth/ServerSecret.js"
import { expandTypePatterns } from "../events/TypePattern.js"
import { idempotent } from "../store/Idempotency.js"
import { requireRevision } from "../store/Revision.js"
import { newSigningSecret, openSecret, sealSecret } from "./SigningSecret.js"
import { cancelPendingDeliveries } from "./WebhookDeliveryRepository.js"
import { type PayloadMode, WebhookEndpoint, webhookLimits } from "./WebhookEndpoint.js"
import {
  approveEndpoint,
  countOwnEndpointsLocked,
  type EndpointRow,
  findOwnEndpoint,
  insertEndpoint,
  listOwnEndpoints,
  lockOwnEndpointDeletion,
  rotateEndpointSecret,
  softDeleteEndpoint,
  transactionNow,
  updateEndpointSettings
} from "./WebhookEndpointRepository.js"

export { cancelPendingDeliveries } from "./WebhookDeliveryRepository.js"
export { type EndpointRow, endpointColumns, findLiveEndpoint, findOwnEndpoint } from "./WebhookEndpointRepository.js"
import { approvalPageUrl, WebhookSettings } from "./WebhookSettings.js"
import { normalizeWebhookUrl } from "./WebhookUrl.js"

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
  Effect.flatMap(
    findOwnEndpoint(actor.profileUuid, uuid, options),
    Option.match({ onNone: () => Effect.fail(notFound()), onSome: Effect.succeed })
  )

const checkTypes = (patterns: ReadonlyArray<string>): Either.Either<ReadonlyArray<string>, InvalidRequest> =>
  Either.map(
    Either.mapLeft(expandTypePatterns(patterns), (message) => new InvalidRequest({ message: `eventTypes: ${message}` })),
    // Stored as given (deduplicated): the owner's patterns, expanded again at delivery time.
    () => [...new Set(patterns)]
  )

const checkUrl = (url: string, allowHttpLoopback: boolean): Either.Either<string, InvalidRequest> =>
  Either.mapLeft(normalizeWebhookUrl(url, { allowHttpLoopback }), (message) => new InvalidRequest({ message }))

const view = (row: EndpointRow) => Effect.map(WebhookSettings, (settings) => endpointView(row, settings.publicOrigin))

/** `webhooks.list`: the acting profile's endpoints, oldest first (at most 20, so one page). */
export const listWebhookEndpoints = (actor: Actor) =>
  Effect.gen(function*() {
    const rows = yield* listOwnEndpoints(actor.profileUuid)
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
        if ((yield* countOwnEndpointsLocked(actor.profileUuid)) >= webhookLimits.endpointsPerProfile) {
          return yield* new Forbidden({ message: `A profile has at most ${webhookLimits.endpointsPerProfile} webhook endpoints` })
        }
        const uuid = crypto.randomUUID()
        const sealedSecret = sealSecret(serverSecret, uuid, newSigningSecret())
        const row = yield* insertEndpoint({
          uuid,
          profileUuid: actor.profileUuid,
          url,
          description: input.description ?? "",
          eventTypes,
          payloadMode: input.payloadMode ?? "reference",
          secretSealed: sealedSecret
        })
        return { endpoint: yield* view(row), sealedSecret }
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
        const row = yield* ownEndpoint(actor, uuid, { lock: true })
        yield* requireRevision("webhook endpoint", row.revision, input.expectedRevision)
        const now = yield* transactionNow
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
        const updated = yield* updateEndpointSettings(uuid, next, becomesActive)
        if (updated.state !== "active" || configChanged) {
          yield* cancelPendingDeliveries(uuid, configChanged ? "endpoint changed" : `endpoint ${updated.state}`)
        }
        return { endpoint: yield* view(updated) }
      })
    )
  })

/** `webhooks.delete`: the endpoint stops receiving at once (pending attempts cancelled); deleting it again changes nothing. */
export const deleteWebhookEndpoint = (actor: Actor, uuid: string): Effect.Effect<void, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      const deleted = yield* lockOwnEndpointDeletion(actor.profileUuid, uuid)
      if (Option.isNone(deleted)) return yield* notFound()
      if (deleted.value) return
      yield* softDeleteEndpoint(uuid)
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
      return { endpoint: yield* view(yield* approveEndpoint(uuid)) }
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
        yield* ownEndpoint(actor, uuid, { lock: true })
        const sealedSecret = sealSecret(serverSecret, uuid, newSigningSecret())
        return { endpoint: yield* view(yield* rotateEndpointSecret(uuid, sealedSecret)), sealedSecret }
      })
    )
    return yield* unseal(uuid)(stored)
  })
