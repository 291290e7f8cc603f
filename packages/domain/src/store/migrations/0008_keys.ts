import { statements } from "./statements.js"

/**
 * Integration (bearer) keys. A key acts as one profile of its account with its own scopes; only a
 * keyed hash of its current secret is stored (`secret_hash`, NULL until the first secret is
 * issued). `revoked_at` is final and is the one column later features join on: prepared commands
 * and automation rules started by a key stop when `api_keys.revoked_at IS NOT NULL`.
 */
export const keys = statements(
  `CREATE TABLE api_keys (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_uuid uuid NOT NULL REFERENCES accounts (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    kind text NOT NULL CHECK (kind IN ('personal', 'application', 'company')),
    name text NOT NULL,
    scopes jsonb NOT NULL DEFAULT '[]'::jsonb,
    http_enabled boolean NOT NULL,
    mcp_enabled boolean NOT NULL,
    lifetime_days integer NOT NULL CHECK (lifetime_days BETWEEN 1 AND 365),
    secret_hash text UNIQUE,
    secret_hint text,
    issued_at timestamptz,
    expires_at timestamptz,
    last_used_at timestamptz,
    revoked_at timestamptz,
    revision integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  // One live personal key per account; a revoked one is replaced by a fresh one (without a secret).
  `CREATE UNIQUE INDEX api_keys_personal_live ON api_keys (account_uuid) WHERE kind = 'personal' AND revoked_at IS NULL`,
  `CREATE INDEX api_keys_account ON api_keys (account_uuid, created_at)`
)
