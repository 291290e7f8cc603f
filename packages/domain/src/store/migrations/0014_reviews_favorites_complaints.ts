import { statements } from "./statements.js"

/**
 * Favorites, complaints, double-blind reviews, their statistics and customer aliases, and the
 * moderators' decisions on complaints and reviews with the audit of their reads.
 */
export const reviewsFavoritesComplaints = statements(
  // A favorite's uuid is a v5 uuid of (profile, kind, entity): the aggregate survives remove and add
  // again, and its revision counts the changes. A removed favorite keeps its row with present = false.
  `CREATE TABLE favorites (
    uuid uuid PRIMARY KEY,
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    entity_kind text NOT NULL CHECK (entity_kind IN ('profile', 'publication')),
    entity_uuid uuid NOT NULL,
    present boolean NOT NULL,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (profile_uuid, entity_kind, entity_uuid)
  )`,
  `CREATE INDEX favorites_profile ON favorites (profile_uuid, created_at DESC, uuid DESC) WHERE present`,
  `CREATE TABLE complaints (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    author_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    subject_kind text NOT NULL CHECK (subject_kind IN ('profile', 'publication', 'message', 'relation')),
    subject_uuid uuid NOT NULL,
    body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 5000),
    -- The subject as the author saw it when filing: moderators only.
    subject_snapshot jsonb NOT NULL,
    status text NOT NULL CHECK (status IN ('open', 'upheld', 'dismissed')),
    decision text CHECK (decision IN ('uphold', 'dismiss')),
    action text CHECK (action IN ('unpublish', 'hide_message', 'hide_profile', 'remove_review', 'none')),
    reason text,
    decided_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE UNIQUE INDEX complaints_one_open ON complaints (author_profile_uuid, subject_kind, subject_uuid) WHERE status = 'open'`,
  `CREATE INDEX complaints_author ON complaints (author_profile_uuid, created_at DESC, uuid DESC)`,
  `CREATE INDEX complaints_queue ON complaints (status, created_at, uuid)`,
  `CREATE INDEX complaints_subject ON complaints (subject_kind, subject_uuid) WHERE status = 'open'`,
  `CREATE TABLE reviews (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    relation_uuid uuid NOT NULL REFERENCES relations (uuid),
    author_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    subject_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    subject_role text NOT NULL CHECK (subject_role IN ('specialist', 'customer')),
    rating smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    body text NOT NULL DEFAULT '' CHECK (char_length(body) <= 5000),
    status text NOT NULL CHECK (status IN ('submitted', 'published', 'removed')),
    window_ends_at timestamptz NOT NULL,
    reply_body text CHECK (char_length(reply_body) BETWEEN 1 AND 2000),
    reply_created_at timestamptz,
    reply_updated_at timestamptz,
    moderation_reason text,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz,
    UNIQUE (relation_uuid, author_profile_uuid)
  )`,
  `CREATE INDEX reviews_public ON reviews (subject_profile_uuid, subject_role, published_at DESC, uuid DESC) WHERE status = 'published'`,
  `CREATE INDEX reviews_subject ON reviews (subject_profile_uuid, created_at DESC, uuid DESC)`,
  `CREATE INDEX reviews_author ON reviews (author_profile_uuid, created_at DESC, uuid DESC)`,
  `CREATE INDEX reviews_sealed ON reviews (window_ends_at) WHERE status = 'submitted'`,
  `CREATE TABLE review_stats (
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    subject_role text NOT NULL CHECK (subject_role IN ('specialist', 'customer')),
    review_count integer NOT NULL,
    rating_sum integer NOT NULL,
    ratings integer[] NOT NULL,
    PRIMARY KEY (profile_uuid, subject_role)
  )`,
  `CREATE TABLE customer_aliases (
    profile_uuid uuid PRIMARY KEY REFERENCES profiles (uuid),
    alias text NOT NULL UNIQUE CHECK (alias ~ '^c-[a-z2-7]{10}$'),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  // Completed deals as the customer, with profiles of other accounts: counted when a deal completes
  // (customers.get reads one row instead of counting the customer's deals).
  `CREATE TABLE customer_stats (
    profile_uuid uuid PRIMARY KEY REFERENCES profiles (uuid),
    completed_deals integer NOT NULL CHECK (completed_deals >= 0)
  )`,
  `CREATE TABLE moderation_subject_decisions (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    subject_kind text NOT NULL CHECK (subject_kind IN ('complaint', 'review')),
    subject_uuid uuid NOT NULL,
    subject_revision integer NOT NULL,
    moderator_account_uuid uuid REFERENCES accounts (uuid),
    moderator text NOT NULL,
    decision text NOT NULL CHECK (decision IN ('uphold', 'dismiss', 'remove', 'restore')),
    action text,
    reason text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX moderation_subject_decisions_subject ON moderation_subject_decisions (subject_kind, subject_uuid, created_at)`,
  `CREATE TABLE moderation_audit (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    moderator_account_uuid uuid REFERENCES accounts (uuid),
    moderator text NOT NULL,
    subject_kind text NOT NULL,
    subject_uuid uuid NOT NULL,
    complaint_uuid uuid,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
)
