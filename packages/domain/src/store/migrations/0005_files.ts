import { statements } from "./statements.js"

/**
 * Files uploaded by profiles (prepare → PUT → complete) and the default blob store's bytes.
 * The upload token is kept only as a keyed hash; it stays after use so a second PUT is told
 * "already used" rather than "unknown".
 */
export const files = statements(
  `CREATE TABLE files (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    purpose text NOT NULL CHECK (purpose IN ('publication_asset', 'publication_file', 'avatar')),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 240),
    mime_type text NOT NULL,
    size integer NOT NULL CHECK (size > 0),
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'uploaded', 'ready')),
    upload_token_hash text NOT NULL,
    upload_expires_at timestamptz NOT NULL,
    sha256 text,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    uploaded_at timestamptz,
    ready_at timestamptz
  )`,
  `CREATE INDEX files_profile ON files (profile_uuid, purpose, status)`,
  // Unfinished uploads, for a cleanup job to find.
  `CREATE INDEX files_unfinished ON files (upload_expires_at) WHERE status <> 'ready'`,
  `CREATE TABLE file_blobs (
    key text PRIMARY KEY,
    bytes bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
)
