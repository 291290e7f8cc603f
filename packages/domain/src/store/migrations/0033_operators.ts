import { statements } from "./statements.js"

/**
 * The operator role and the record of what operators did in the admin area. The role belongs to an
 * address, as the moderator role does (0004): granted before the first sign-in, by the CLI or
 * `BIRZHA_OPERATORS` (re-synced at start, source 'config'). `admin_actions` is append-only: one row
 * per admin operation that changed something, with who ran it and on what.
 */
export const operators = statements(
  `CREATE TABLE operators (
    email text PRIMARY KEY,
    source text NOT NULL CHECK (source IN ('cli', 'config')),
    granted_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE admin_actions (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- The signed-in operator's account; null for an action run with the CLI.
    operator_account_uuid uuid REFERENCES accounts (uuid),
    operator text NOT NULL,
    operation text NOT NULL,
    target text NOT NULL,
    detail jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`,
  `CREATE INDEX admin_actions_recent ON admin_actions (created_at DESC, uuid DESC)`
)
