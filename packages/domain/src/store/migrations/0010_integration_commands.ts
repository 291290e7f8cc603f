import { statements } from "./statements.js"

/**
 * Commands a bearer client prepared for the owner's approval. `request_uuid` is the requestUuid
 * the server fixes for the operation, so even a commit retried after a crash runs it once.
 * Revoking the key stops its commands (joined on `api_keys.revoked_at`).
 */
export const integrationCommands = statements(
  `CREATE TABLE integration_commands (
    uuid uuid PRIMARY KEY,
    key_uuid uuid NOT NULL REFERENCES api_keys (uuid),
    account_uuid uuid NOT NULL REFERENCES accounts (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    operation_id text NOT NULL,
    arguments jsonb NOT NULL,
    request_uuid uuid NOT NULL,
    state text NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'running', 'committed', 'failed')),
    expires_at timestamptz NOT NULL,
    decided_at timestamptz,
    claimed_at timestamptz,
    committed_at timestamptz,
    result_status integer,
    result jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX integration_commands_key ON integration_commands (key_uuid, created_at)`
)
