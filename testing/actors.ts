/**
 * The actor a session of `signedIn`'s account and profile stands for (as
 * packages/domain/src/auth/Sessions.ts makes it from a session row), for tests that call the
 * domain's functions directly on a database where `accountForVerifiedEmail` made the account: no
 * session row is written. Typed by its shape, so this folder needs no package of the workspace.
 */
export const sessionActor = (
  signedIn: { readonly accountUuid: string; readonly email: string; readonly profileUuid: string },
  profileName: string,
  lifetimeMs = 600_000
) => ({
  ...signedIn,
  profileName,
  profileType: "Физлицо" as const,
  via: "session" as const,
  sessionUuid: crypto.randomUUID(),
  expiresAt: new Date(Date.now() + lifetimeMs)
})
