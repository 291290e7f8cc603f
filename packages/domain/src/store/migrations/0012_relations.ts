import { statements } from "./statements.js"

/**
 * Relations: responses, offers, deals and job contacts in one table, with
 * their history and a deal's handed-over results. Per-kind status checks; at most one
 * not-withdrawn response per (task, responder) and one open job contact per (publication,
 * initiator); one deal per origin.
 */
export const relations = statements(
  `CREATE TABLE relations (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind text NOT NULL CHECK (kind IN ('response', 'offer', 'deal', 'job_response', 'job_invitation')),
    status text NOT NULL,
    initiator_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    recipient_profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    initiator_role text NOT NULL CHECK (initiator_role IN ('customer', 'contractor', 'employer', 'candidate')),
    publication_uuid uuid REFERENCES publications (uuid),
    origin_relation_uuid uuid UNIQUE REFERENCES relations (uuid),
    thread_uuid uuid,
    body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 5000),
    budget text CHECK (char_length(budget) <= 80),
    deadline text CHECK (char_length(deadline) <= 120),
    refs jsonb NOT NULL DEFAULT '[]',
    reason text CHECK (char_length(reason) <= 2000),
    auto_complete_at timestamptz,
    completed_at timestamptz,
    revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (
      (kind = 'response' AND status IN ('pending', 'shortlisted', 'accepted', 'declined', 'withdrawn')) OR
      (kind = 'offer' AND status IN ('pending', 'accepted', 'declined', 'withdrawn')) OR
      (kind = 'deal' AND status IN ('active', 'results_submitted', 'completed', 'terminated')) OR
      (kind = 'job_response' AND status IN ('applied', 'accepted', 'declined', 'withdrawn')) OR
      (kind = 'job_invitation' AND status IN ('invited', 'accepted', 'declined', 'withdrawn'))
    ),
    CHECK ((kind = 'deal') = (origin_relation_uuid IS NOT NULL)),
    CHECK (initiator_profile_uuid <> recipient_profile_uuid)
  )`,
  // Lists: a profile's relations of a family, sent and received, most recently changed first.
  `CREATE INDEX relations_initiator ON relations (initiator_profile_uuid, kind, updated_at DESC, uuid)`,
  `CREATE INDEX relations_recipient ON relations (recipient_profile_uuid, kind, updated_at DESC, uuid)`,
  // "A prior relation between two profiles" (the new-contacts limit, private recipients).
  `CREATE INDEX relations_pair ON relations (initiator_profile_uuid, recipient_profile_uuid)`,
  `CREATE INDEX relations_publication ON relations (publication_uuid) WHERE publication_uuid IS NOT NULL`,
  `CREATE INDEX relations_thread ON relations (thread_uuid) WHERE thread_uuid IS NOT NULL`,
  `CREATE UNIQUE INDEX relations_one_response ON relations (publication_uuid, initiator_profile_uuid)
    WHERE kind = 'response' AND status <> 'withdrawn'`,
  `CREATE UNIQUE INDEX relations_one_job_contact ON relations (kind, publication_uuid, initiator_profile_uuid)
    WHERE kind IN ('job_response', 'job_invitation') AND status IN ('applied', 'invited', 'accepted')`,
  // The worker's auto-complete scan.
  `CREATE INDEX relations_auto_complete ON relations (auto_complete_at) WHERE status = 'results_submitted'`,
  `CREATE TABLE relation_history (
    relation_uuid uuid NOT NULL REFERENCES relations (uuid),
    seq bigint GENERATED ALWAYS AS IDENTITY,
    status text NOT NULL,
    by_role text NOT NULL CHECK (by_role IN ('customer', 'contractor', 'employer', 'candidate', 'system')),
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (relation_uuid, seq)
  )`,
  `CREATE TABLE relation_results (
    relation_uuid uuid NOT NULL REFERENCES relations (uuid),
    version integer NOT NULL CHECK (version >= 1),
    body text NOT NULL CHECK (char_length(body) <= 5000),
    refs jsonb NOT NULL DEFAULT '[]',
    submitted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (relation_uuid, version)
  )`
)
