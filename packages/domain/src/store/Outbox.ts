import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, FiberRef } from "effect"
import type { EventType } from "../events/EventType.js"
import { insertOutboxEvents } from "../events/OutboxEventRepository.js"
import { currentTraceCause } from "../kernel/Tracing.js"

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

/** Who caused the events of a transaction an automation runs: copied into their `context.automation`. */
export interface AutomationCause {
  readonly ruleUuid: string
  readonly executionUuid: string
  readonly triggerEventUuid: string
  /** The trigger event's depth + 1 (an event without `context.automation` has depth 0). */
  readonly depth: number
}

/** Set while an automation's command runs; no operation needs code for chain protection. */
export const currentAutomationCause: FiberRef.FiberRef<AutomationCause | undefined> = FiberRef.unsafeMake<AutomationCause | undefined>(undefined)

/**
 * Writes an event into the outbox inside the caller's transaction, so it exists exactly when the
 * business change it describes committed. The row has no position yet: the sequencer numbers
 * committed rows later. Returns the event's uuid.
 */
export const appendEvent = (event: NewEvent): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.map(appendEvents([event]), ([uuid]) => uuid!)

/** `appendEvent` for several events in one statement (a group commit's batch); their uuids in order. */
export const appendEvents = (events: ReadonlyArray<NewEvent>): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(Effect.zip(FiberRef.get(currentAutomationCause), currentTraceCause), ([cause, trace]) =>
    insertOutboxEvents(events.map((event) => ({
      type: event.type,
      schemaVersion: event.schemaVersion ?? 1,
      aggregate: event.aggregate,
      data: event.data,
      context: cause === undefined ? event.context ?? {} : { ...event.context, automation: cause },
      trace
    }))))
