import { statements } from "./statements.js"

/**
 * Automation rules, their executions and the one notification inbox with its preferences.
 * One execution per (rule, event) by a unique key; the fan-out's position in the event stream is
 * `automation_cursor`; the daily limit is a counter per rule and UTC day, incremented only while
 * below the limit. Rules are found per event through the partial index on their event type.
 */
export const automations = statements(
  `CREATE TABLE automation_rules (
    uuid uuid PRIMARY KEY,
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    account_uuid uuid NOT NULL REFERENCES accounts (uuid),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 160),
    event_type text NOT NULL,
    filter jsonb,
    action jsonb NOT NULL,
    -- The scope the action needs beside automations:write (a key's rule stops without it).
    action_scope text,
    max_runs_per_day integer NOT NULL CHECK (max_runs_per_day BETWEEN 1 AND 1000),
    enabled boolean NOT NULL DEFAULT true,
    created_via text NOT NULL CHECK (created_via IN ('session', 'key', 'mcp')),
    key_uuid uuid REFERENCES api_keys (uuid),
    -- Events at or before it never trigger this revision (a new or changed rule never fires on history).
    start_position bigint NOT NULL,
    consecutive_failures integer NOT NULL DEFAULT 0,
    paused_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
  )`,
  `CREATE INDEX automation_rules_profile ON automation_rules (profile_uuid, created_at, uuid) WHERE deleted_at IS NULL`,
  `CREATE INDEX automation_rules_trigger ON automation_rules (event_type) WHERE deleted_at IS NULL AND enabled AND paused_at IS NULL`,
  `CREATE TABLE automation_rule_days (
    rule_uuid uuid NOT NULL REFERENCES automation_rules (uuid),
    day date NOT NULL,
    used integer NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (rule_uuid, day)
  )`,
  `CREATE TABLE automation_executions (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    rule_uuid uuid NOT NULL REFERENCES automation_rules (uuid),
    rule_revision integer NOT NULL,
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    event_uuid uuid NOT NULL,
    event_type text NOT NULL,
    event_position bigint NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled', 'skipped_limit', 'skipped_chain')),
    cancel_reason text,
    chain_depth integer NOT NULL DEFAULT 0,
    request_uuid uuid,
    attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
    result jsonb,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    UNIQUE (rule_uuid, event_uuid)
  )`,
  `CREATE INDEX automation_executions_rule ON automation_executions (rule_uuid, created_at DESC, uuid DESC)`,
  `CREATE INDEX automation_executions_due ON automation_executions (next_attempt_at) WHERE status IN ('pending', 'running')`,
  `CREATE INDEX automation_executions_running ON automation_executions (profile_uuid) WHERE status = 'running'`,
  `CREATE INDEX automation_executions_request ON automation_executions (rule_uuid, request_uuid) WHERE request_uuid IS NOT NULL`,
  `CREATE TABLE automation_cursor (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    position bigint NOT NULL CHECK (position >= 0)
  )`,
  `INSERT INTO automation_cursor (position) SELECT last_position FROM event_sequence`,
  `CREATE TABLE notifications (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    source text NOT NULL CHECK (source IN ('automation', 'learning')),
    -- What it tells: a learning event type, or automation.rule (a rule's action) / automation.paused.
    kind text NOT NULL,
    rule_uuid uuid,
    execution_uuid uuid UNIQUE,
    event_uuid uuid,
    event_type text,
    title text NOT NULL,
    body text NOT NULL,
    link text,
    read_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX notifications_profile ON notifications (profile_uuid, created_at DESC, uuid DESC)`,
  `CREATE INDEX notifications_unread ON notifications (profile_uuid, created_at DESC, uuid DESC) WHERE read_at IS NULL`,
  // Per profile: by notification kind {inApp, email, digest}, and quiet hours (the learning notifier reads them).
  `CREATE TABLE notification_preferences (
    profile_uuid uuid PRIMARY KEY REFERENCES profiles (uuid),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    kinds jsonb NOT NULL DEFAULT '{}'::jsonb,
    quiet_hours jsonb,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
)
