import { statements } from "./statements.js"

/**
 * MCP authorization (OAuth 2.1, docs/decisions.md "MCP authorization"). A connection an agent makes
 * through sign-in and consent is an `api_keys` row of kind `agent` without a secret of its own, so
 * everything that joins on `api_keys.revoked_at` (prepared commands, automation rules) stops when the
 * connection is disconnected or its refresh token is reused. Codes and tokens are stored only as
 * keyed hashes; the agent's clients are public (PKCE, no client secret).
 */
export const oauth = statements(
  `ALTER TABLE api_keys DROP CONSTRAINT api_keys_kind_check`,
  `ALTER TABLE api_keys ADD CONSTRAINT api_keys_kind_check CHECK (kind IN ('personal', 'application', 'company', 'agent'))`,
  `CREATE TABLE oauth_clients (
    client_id text PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
    name text NOT NULL,
    client_uri text,
    redirect_uris jsonb NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE oauth_requests (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    client_id text NOT NULL REFERENCES oauth_clients (client_id),
    redirect_uri text NOT NULL,
    scopes jsonb NOT NULL,
    resource text NOT NULL,
    code_challenge text NOT NULL,
    state text,
    expires_at timestamptz NOT NULL,
    decided_at timestamptz,
    decision text CHECK (decision IN ('allow', 'deny')),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE oauth_codes (
    code_hash text PRIMARY KEY,
    request_uuid uuid NOT NULL REFERENCES oauth_requests (uuid),
    client_id text NOT NULL REFERENCES oauth_clients (client_id),
    account_uuid uuid NOT NULL REFERENCES accounts (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    scopes jsonb NOT NULL,
    redirect_uri text NOT NULL,
    resource text NOT NULL,
    code_challenge text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    key_uuid uuid REFERENCES api_keys (uuid),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE oauth_tokens (
    token_hash text PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
    key_uuid uuid NOT NULL REFERENCES api_keys (uuid),
    client_id text NOT NULL REFERENCES oauth_clients (client_id),
    resource text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX oauth_tokens_key ON oauth_tokens (key_uuid)`,
  `CREATE TABLE oauth_agent_clients (
    key_uuid uuid PRIMARY KEY REFERENCES api_keys (uuid),
    client_id text NOT NULL REFERENCES oauth_clients (client_id)
  )`
)
