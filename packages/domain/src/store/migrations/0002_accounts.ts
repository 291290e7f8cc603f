import { statements } from "./statements.js"

/** Accounts, their profiles, email sign-in challenges, persisted rate limits and sessions. */
export const accounts = statements(
  `CREATE TABLE accounts (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email text NOT NULL,
    current_profile_uuid uuid,
    revision integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
  )`,
  // One live account per address; a deleted account frees its address for a new sign-up.
  `CREATE UNIQUE INDEX accounts_email_live ON accounts (email) WHERE deleted_at IS NULL`,
  `CREATE TABLE profiles (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    id text NOT NULL UNIQUE,
    account_uuid uuid REFERENCES accounts (uuid),
    imported_email text,
    name text NOT NULL,
    type text NOT NULL CHECK (type IN ('Физлицо', 'Самозанятый', 'ИП', 'Компания')),
    is_public boolean NOT NULL DEFAULT false,
    show_contacts boolean NOT NULL DEFAULT false,
    avatar_url text,
    about text NOT NULL DEFAULT '',
    categories jsonb NOT NULL DEFAULT '[]'::jsonb,
    contacts text NOT NULL DEFAULT '',
    networks jsonb NOT NULL DEFAULT '[]'::jsonb,
    skills jsonb NOT NULL DEFAULT '[]'::jsonb,
    structured_contacts jsonb NOT NULL DEFAULT '[]'::jsonb,
    revision integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
  )`,
  `CREATE INDEX profiles_account ON profiles (account_uuid, created_at) WHERE deleted_at IS NULL`,
  `CREATE TABLE sign_in_challenges (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email text NOT NULL,
    account_uuid uuid REFERENCES accounts (uuid),
    code_hash text NOT NULL,
    link_hash text,
    wrong_guesses integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    consumed_at timestamptz,
    link_superseded_at timestamptz
  )`,
  `CREATE INDEX sign_in_challenges_email ON sign_in_challenges (email, created_at DESC)`,
  // Limits that must survive a restart: one row per counted event, looked up by bucket and subject.
  `CREATE TABLE rate_limit_hits (
    bucket text NOT NULL,
    subject text NOT NULL,
    at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX rate_limit_hits_lookup ON rate_limit_hits (bucket, subject, at DESC)`,
  `CREATE TABLE sessions (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    token_hash text NOT NULL UNIQUE,
    account_uuid uuid NOT NULL REFERENCES accounts (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`,
  `CREATE INDEX sessions_account ON sessions (account_uuid) WHERE revoked_at IS NULL`
)
