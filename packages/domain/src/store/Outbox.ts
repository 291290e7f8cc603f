import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect } from "effect"
import type { EventType } from "../events/EventType.js"
import { insertOutboxEvent } from "../events/OutboxEventRepository.js"

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
  insertOutboxEvent({
    type: event.type,
    schemaVersion: event.schemaVersion ?? 1,
    aggregate: event.aggregate,
    data: event.data,
    context: event.context ?? {}
  })
