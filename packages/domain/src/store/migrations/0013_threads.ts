import { statements } from "./statements.js"

/**
 * Threads and messages: two participants each, one per relation (a deal
 * shares its origin's), at most one direct thread per pair of profiles and publication (or none).
 * A participant's row carries its read marker and the thread's last-message time, so a profile's
 * threads list by last message from one index.
 */
export const threads = statements(
  `CREATE TABLE threads (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    relation_uuid uuid UNIQUE REFERENCES relations (uuid),
    publication_uuid uuid REFERENCES publications (uuid),
    -- The pair, lower uuid first: one direct thread per pair and publication.
    low_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    high_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    created_by_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    last_message_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (low_profile_uuid < high_profile_uuid)
  )`,
  `CREATE UNIQUE INDEX threads_direct ON threads (low_profile_uuid, high_profile_uuid, coalesce(publication_uuid, '00000000-0000-0000-0000-000000000000'))
    WHERE relation_uuid IS NULL`,
  // "Do these two profiles share a thread" (the new-contacts limit, private recipients).
  `CREATE INDEX threads_pair ON threads (low_profile_uuid, high_profile_uuid)`,
  `CREATE TABLE thread_participants (
    thread_uuid uuid NOT NULL REFERENCES threads (uuid),
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    last_read_seq bigint NOT NULL DEFAULT 0,
    last_message_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_uuid, profile_uuid)
  )`,
  `CREATE INDEX thread_participants_profile ON thread_participants (profile_uuid, last_message_at DESC, thread_uuid)`,
  `CREATE TABLE messages (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    thread_uuid uuid NOT NULL REFERENCES threads (uuid),
    author_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 5000),
    refs jsonb NOT NULL DEFAULT '[]',
    hidden boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX messages_thread ON messages (thread_uuid, seq)`,
  `ALTER TABLE relations ADD CONSTRAINT relations_thread_fk FOREIGN KEY (thread_uuid) REFERENCES threads (uuid)`
)
