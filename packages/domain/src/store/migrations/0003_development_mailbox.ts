import { statements } from "./statements.js"

/** The development mailbox: every message the service would have mailed, when no SMTP is configured. */
export const developmentMailbox = statements(
  `CREATE TABLE development_mailbox (
    uuid uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    to_address text NOT NULL,
    subject text NOT NULL,
    text_body text NOT NULL,
    html_body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`,
  `CREATE INDEX development_mailbox_recent ON development_mailbox (to_address, created_at DESC)`
)
