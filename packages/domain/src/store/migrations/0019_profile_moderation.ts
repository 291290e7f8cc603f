import { statements } from "./statements.js"

/**
 * When a moderator hid a profile (`hide_profile` of an upheld complaint): such a profile is no
 * longer made publicly visible by authoring a visible publication (`publiclyVisibleProfile`); only
 * its owner making it public again shows it, as before authors became visible.
 */
export const profileModeration = statements(
  `ALTER TABLE profiles ADD COLUMN hidden_by_moderation_at timestamptz`
)
