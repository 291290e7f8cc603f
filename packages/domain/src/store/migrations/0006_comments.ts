import { statements } from "./statements.js"

/**
 * Comments on publications: roots and their answers (one level deep, enforced by the domain).
 * Deletion is soft: the row stays (a deleted root with live answers keeps its place in the
 * thread) and its body is never shown again. `seq` orders a thread and backs its cursor.
 */
export const comments = statements(
  `CREATE TABLE publication_comments (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    publication_uuid uuid NOT NULL REFERENCES publications (uuid),
    parent_comment_uuid uuid REFERENCES publication_comments (uuid),
    author_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 5000),
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz,
    deleted_by_profile_uuid uuid REFERENCES profiles (uuid)
  )`,
  `CREATE INDEX publication_comments_roots ON publication_comments (publication_uuid, seq) WHERE parent_comment_uuid IS NULL`,
  `CREATE INDEX publication_comments_answers ON publication_comments (parent_comment_uuid, seq) WHERE parent_comment_uuid IS NOT NULL`
)
