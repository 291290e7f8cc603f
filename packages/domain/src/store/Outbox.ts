import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { EventType } from "../events/EventType.js"

export interface NewEvent {
  readonly type: EventType
  readonly aggregate: { readonly kind: string; readonly uuid: string; readonly revision: number }
  /**
   * The reference payload: `objectUuid`, `status` (one of the type's values in the event catalog)
   * and whatever else the type carries; the current-resource mode is built at delivery.
   */
  readonly data: { readonly objectUuid: string; readonly status: string } & Readonly<Record<string, unknown>>
  /**
   * `profileUuid`: the acting profile; `audience`: further profiles the event is addressed to.
   * Both decide who sees the event (`eventVisibleTo`), with ownership of profiles, publications and files.
   */
  readonly context?: { readonly profileUuid?: string; readonly audience?: ReadonlyArray<string> } & Readonly<Record<string, unknown>>
  readonly schemaVersion?: number
}

/**
 * Writes an event into the outbox inside the caller's transaction, so it exists exactly when the
 * business change it describes committed. The row has no position yet: the sequencer numbers
 * committed rows later. Returns the event's uuid.
 */
export const appendEvent = (event: NewEvent): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ uuid: string }>`
      INSERT INTO outbox_events (type, schema_version, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
      VALUES (${event.type}, ${event.schemaVersion ?? 1}, ${event.aggregate.kind}, ${event.aggregate.uuid},
        ${event.aggregate.revision}, ${JSON.stringify(event.data)}::jsonb, ${JSON.stringify(event.context ?? {})}::jsonb)
      RETURNING uuid`
    return row!.uuid
  })
