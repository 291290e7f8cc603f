import { statements } from "./statements.js"

/**
 * Sequencing and reading of events. The outbox gets an in-transaction order (`append_order`,
 * from a sequence, so it follows the order of `appendEvent` calls within one transaction: uuids
 * are random and never order anything) and the time its position was assigned. The position
 * counter lives in its own one-row table, so deleting old events (retention) can never make a
 * position be handed out twice.
 */
export const events = statements(
  `ALTER TABLE outbox_events ADD COLUMN append_order bigint GENERATED ALWAYS AS IDENTITY`,
  `ALTER TABLE outbox_events ADD COLUMN sequenced_at timestamptz`,
  `DROP INDEX outbox_events_unsequenced`,
  // What the sequencer scans: only rows still waiting for a position, in numbering order.
  `CREATE INDEX outbox_events_unsequenced ON outbox_events (transaction_id, append_order) WHERE position IS NULL`,
  `CREATE TABLE event_sequence (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    last_position bigint NOT NULL CHECK (last_position >= 0)
  )`,
  `INSERT INTO event_sequence (last_position) SELECT coalesce(max(position), 0) FROM outbox_events`
)
