import { statements } from "./statements.js"

export const foundation = statements(
  `CREATE EXTENSION IF NOT EXISTS pg_trgm`,
  // Commands idempotent by requestUuid: the first result, stored with a hash of the request.
  `CREATE TABLE idempotency_keys (
    scope text NOT NULL,
    request_uuid uuid NOT NULL,
    operation_id text NOT NULL,
    request_hash text NOT NULL,
    response jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, request_uuid)
  )`,
  `CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`,
  // The outbox: written in the business transaction; the sequencer gives committed rows a
  // gapless position later, in commit order of their transaction ids, never by uuid or time.
  `CREATE TABLE outbox_events (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    type text NOT NULL,
    schema_version integer NOT NULL DEFAULT 1,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    aggregate_kind text NOT NULL,
    aggregate_uuid uuid NOT NULL,
    aggregate_revision integer NOT NULL CHECK (aggregate_revision >= 0),
    data jsonb NOT NULL,
    context jsonb NOT NULL DEFAULT '{}'::jsonb,
    transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
    position bigint UNIQUE CHECK (position > 0)
  )`,
  `CREATE INDEX outbox_events_unsequenced ON outbox_events (transaction_id, uuid) WHERE position IS NULL`,
  `CREATE INDEX outbox_events_aggregate ON outbox_events (aggregate_kind, aggregate_uuid, position)`
)
