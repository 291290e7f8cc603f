import { statements } from "./statements.js"

/** The account's pending commands (`/approvals`), soonest expiry first. */
export const pendingApprovals = statements(
  `CREATE INDEX integration_commands_pending ON integration_commands (account_uuid, expires_at) WHERE state = 'pending'`
)
