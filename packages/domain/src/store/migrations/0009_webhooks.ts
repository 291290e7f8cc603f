import { statements } from "./statements.js"

/**
 * Webhook endpoints, their deliveries and the real attempts (docs/decisions.md, Webhooks). The
 * endpoint's state is derived from facts in a generated column, so no combination of them can
 * contradict it. Secrets are stored sealed (AES-256-GCM under a key derived from the server secret).
 */
export const webhooks = statements(
  `CREATE TABLE webhook_endpoints (
    uuid uuid PRIMARY KEY,
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    url text NOT NULL,
    description text NOT NULL DEFAULT '',
    event_types jsonb NOT NULL,
    payload_mode text NOT NULL CHECK (payload_mode IN ('reference', 'current')),
    -- +1 on every change of url, event types or payload mode: a test only activates the configuration it tested.
    config_version integer NOT NULL DEFAULT 1,
    approved_at timestamptz,
    verified_at timestamptz,
    paused_at timestamptz,
    disabled_at timestamptz,
    disabled_reason text CHECK (disabled_reason IN ('gone', 'failing')),
    state text GENERATED ALWAYS AS (
      CASE
        WHEN disabled_at IS NOT NULL THEN 'disabled'
        WHEN paused_at IS NOT NULL THEN 'paused'
        WHEN approved_at IS NULL THEN 'prepared'
        WHEN verified_at IS NULL THEN 'awaiting_test'
        ELSE 'active'
      END
    ) STORED,
    secret_sealed text NOT NULL,
    previous_secret_sealed text,
    previous_secret_expires_at timestamptz,
    secret_rotated_at timestamptz,
    -- The last event position this endpoint's deliveries were created up to (set on activation).
    after_position bigint NOT NULL DEFAULT 0,
    failing_since timestamptz,
    revision integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
  )`,
  `CREATE INDEX webhook_endpoints_profile ON webhook_endpoints (profile_uuid, created_at) WHERE deleted_at IS NULL`,
  `CREATE INDEX webhook_endpoints_fan_out ON webhook_endpoints (after_position) WHERE state = 'active' AND deleted_at IS NULL`,
  `CREATE TABLE webhook_deliveries (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    endpoint_uuid uuid NOT NULL REFERENCES webhook_endpoints (uuid),
    kind text NOT NULL CHECK (kind IN ('event', 'test')),
    -- The webhook-id: the event's uuid, or a fresh uuid for a test message.
    event_uuid uuid NOT NULL,
    event_type text NOT NULL,
    event_position bigint,
    config_version integer NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
    -- Attempts since the delivery was queued or replayed: the step of the retry schedule.
    round_attempts integer NOT NULL DEFAULT 0,
    attempt_count integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    -- A worker sending it holds a lease; an expired lease (a worker that died) makes it due again.
    lease_until timestamptz,
    lease_token uuid,
    cancel_reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    UNIQUE (endpoint_uuid, event_uuid)
  )`,
  `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_uuid, next_attempt_at) WHERE status = 'pending'`,
  // The attempts in flight per endpoint (a small set), counted at every claim whatever the backlog.
  `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_uuid, lease_until) WHERE status = 'pending' AND lease_token IS NOT NULL`,
  `CREATE INDEX webhook_deliveries_history ON webhook_deliveries (endpoint_uuid, created_at DESC, uuid DESC)`,
  `CREATE INDEX webhook_deliveries_retention ON webhook_deliveries (coalesce(finished_at, updated_at)) WHERE status <> 'pending'`,
  `CREATE TABLE webhook_attempts (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    delivery_uuid uuid NOT NULL REFERENCES webhook_deliveries (uuid) ON DELETE CASCADE,
    endpoint_uuid uuid NOT NULL,
    attempted_at timestamptz NOT NULL,
    duration_ms integer NOT NULL CHECK (duration_ms >= 0),
    url text NOT NULL,
    -- The address the connection went to, after the SSRF guard resolved and checked it.
    address text,
    status_code integer,
    response_excerpt text NOT NULL DEFAULT '',
    error text,
    succeeded boolean NOT NULL
  )`,
  `CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_uuid, attempted_at)`,
  `CREATE INDEX webhook_attempts_retention ON webhook_attempts (attempted_at)`
)
