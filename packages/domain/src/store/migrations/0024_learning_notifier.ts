import { statements } from "./statements.js"

/**
 * The learning notifier. Its position in
 * the event stream is `learning_notifier_cursor` (it starts at the sequence's end: history never
 * notifies). Each learning event addressed to a profile becomes one row of
 * `learning_notification_queue`, keyed by (event, recipient), in the transaction that moves the
 * cursor; delivery decides each row once, with the recipient's rights and preferences at that
 * moment, and records the decision. At most one learning notification per (event, recipient): the
 * partial unique index makes a repeated delivery (a worker killed after its insert) a no-op.
 */
export const learningNotifier = statements(
  `CREATE TABLE learning_notifier_cursor (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    position bigint NOT NULL CHECK (position >= 0)
  )`,
  `INSERT INTO learning_notifier_cursor (position) SELECT last_position FROM event_sequence`,
  `CREATE TABLE learning_notification_queue (
    event_uuid uuid NOT NULL,
    profile_uuid uuid NOT NULL REFERENCES profiles (uuid),
    event_type text NOT NULL,
    event_position bigint NOT NULL,
    -- pending: waits for delivery (until due_at: quiet hours); the rest are decisions.
    status text NOT NULL DEFAULT 'pending'
      CHECK (status IN ('pending', 'delivered', 'preference_off', 'no_right')),
    due_at timestamptz NOT NULL DEFAULT now(),
    -- The channels the preferences asked for besides the inbox; no mail path for notifications exists yet.
    email_wanted boolean,
    digest_wanted boolean,
    notification_uuid uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    decided_at timestamptz,
    PRIMARY KEY (event_uuid, profile_uuid)
  )`,
  `CREATE INDEX learning_notification_queue_due ON learning_notification_queue (due_at, event_position) WHERE status = 'pending'`,
  `CREATE UNIQUE INDEX notifications_learning_event ON notifications (event_uuid, profile_uuid) WHERE source = 'learning'`
)
