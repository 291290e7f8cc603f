import { EventEnvelope, type PayloadMode, webhookLimits } from "@birzha/domain"
import { findOwnPublication, getPublication, ownProfileView, testEventType, visibleEventRows, wireEnvelopeOf } from "@birzha/domain/internal"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option, Schema } from "effect"

/** The body of `webhook.test` (spec): uuid, type, schemaVersion and data.test = true; no user content. */
export const testBody = (uuid: string): string =>
  JSON.stringify({ uuid, type: testEventType, schemaVersion: 1, data: { test: true } })

/** An event as sent: the envelope's wire form (exactly the spec's fields), checked against `EventEnvelope`. */
export type WireEnvelope = typeof EventEnvelope.Encoded

const isEnvelope = Schema.is(Schema.encodedSchema(EventEnvelope))

/**
 * The events of `uuids` the profile may see now (spec: rights are checked again at send time,
 * with the same rule as `events.list`), as wire envelopes by uuid. An absent uuid is an event
 * that is no longer visible to the profile, or no longer kept.
 */
export const visibleEnvelopes = (
  profileUuid: string,
  uuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyMap<string, WireEnvelope>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const found = new Map<string, WireEnvelope>()
    const rows = yield* visibleEventRows(profileUuid, uuids)
    for (const row of rows) {
      const wire = wireEnvelopeOf(row)
      // An emitter that broke the envelope's shape is a defect of ours; such an event is not sent.
      if (isEnvelope(wire)) found.set(row.uuid, wire)
      else yield* Effect.logError("outbox event does not match EventEnvelope; not delivered").pipe(Effect.annotateLogs({ event: row.uuid }))
    }
    return found
  })

type ResourceStatus = "available" | "unavailable" | "too_large"

/**
 * The record an event is about, as `profileUuid` may read it now (spec payload mode `current`):
 * a publication in its owner's view when the profile owns it, otherwise its public view; a
 * profile of the endpoint's own account in its owner's view (events of other profiles are not
 * visible to it); anything
 * else (files: their bytes are never copied), or nothing readable, is `unavailable`. Links are not
 * followed.
 */
const currentResource = (
  profileUuid: string,
  aggregate: WireEnvelope["aggregate"]
): Effect.Effect<Either.Either<unknown, "unavailable">, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (aggregate.kind === "profile") {
      const own = yield* ownProfileView(profileUuid, aggregate.uuid)
      return own._tag === "Some" ? Either.right(own.value) : Either.left("unavailable" as const)
    }
    if (aggregate.kind !== "publication") return Either.left("unavailable" as const)
    const found = yield* findOwnPublication(profileUuid, aggregate.uuid)
    const own = Option.getOrUndefined(found)
    if (own !== undefined) {
      return Either.right({
        uuid: own.uuid,
        id: own.id,
        kind: own.kind,
        revision: own.revision,
        status: own.status,
        draft: own.draft,
        approved: own.approved,
        hidden: own.hidden,
        closed: own.closed,
        reason: own.reason,
        createdAt: own.created_at,
        updatedAt: own.updated_at
      })
    }
    const publication = yield* getPublication(aggregate.uuid)
    return publication._tag === "Some" ? Either.right(publication.value) : Either.left("unavailable" as const)
  })

/**
 * The body of an event delivery. `reference`: the envelope as is. `current`: `data` also carries
 * `resourceReadAt`, `resourceStatus` and, when available and at most 1 MiB of JSON, `resource`.
 */
export const eventBody = (
  envelope: WireEnvelope,
  mode: PayloadMode,
  profileUuid: string
): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (mode === "reference") return JSON.stringify(envelope)
    const readAt = new Date().toISOString()
    const read = yield* currentResource(profileUuid, envelope.aggregate)
    let status: ResourceStatus = "unavailable"
    let resource: { readonly resource?: unknown } = {}
    if (Either.isRight(read)) {
      const tooLarge = Buffer.byteLength(JSON.stringify(read.right)) > webhookLimits.resourceBytes
      status = tooLarge ? "too_large" : "available"
      if (!tooLarge) resource = { resource: read.right }
    }
    return JSON.stringify({ ...envelope, data: { ...envelope.data, resourceReadAt: readAt, resourceStatus: status, ...resource } })
  })
