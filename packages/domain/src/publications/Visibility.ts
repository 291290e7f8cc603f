/**
 * When a publication is public: it has an approved snapshot, its owner did not hide or delete it,
 * and its owner profile and account are live. Absent and not public read the same (404). A
 * publication of a private profile is still public: the profile's own page is what `isPublic` hides.
 *
 * SQL over aliases `p` (publications) and `o` (owner profile); join with
 * `publicationsJoin`.
 */
export const publicationsJoin = `publications p
  JOIN profiles o ON o.uuid = p.owner_profile_uuid`

// The publication's own part (the predicate of its public indexes), then the owner's.
// Deleting an account soft-deletes its profiles in the same transaction (auth/Accounts.ts), so a
// live profile means a live account; joining accounts too only misled the planner.
export const publiclyVisibleRow = `p.approved IS NOT NULL AND NOT p.hidden AND p.deleted_at IS NULL`
export const publiclyVisible = `${publiclyVisibleRow} AND o.deleted_at IS NULL`
