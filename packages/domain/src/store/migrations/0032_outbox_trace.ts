import { statements } from "./statements.js"

/**
 * The request an event came from (kernel/Tracing.ts): its `x-request-id`, and the span that wrote
 * it as a W3C `traceparent` when traces are exported. The worker's work on the event (a webhook
 * attempt, an automation execution) joins that trace and names that request in its logs. Neither
 * is part of the event's envelope.
 */
export const outboxTrace = statements(
  `ALTER TABLE outbox_events ADD COLUMN trace_parent text, ADD COLUMN request_id text`
)
