import { statements } from "./statements.js"

/** What the hourly retention job deletes by age, found by an index instead of a scan of the table. */
export const retention = statements(
  `CREATE INDEX rate_limit_hits_at ON rate_limit_hits (at)`,
  `CREATE INDEX sign_in_challenges_expires_at ON sign_in_challenges (expires_at)`
)
