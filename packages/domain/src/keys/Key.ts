import { Schema } from "effect"
import { codePoints, DateTime, maxChars, RequestUuid, strict } from "../kernel/Common.js"
import { ProfileType } from "../profiles/Profile.js"

/**
 * `personal`: the one key every account has (made automatically, bound to its individual profile);
 * `application`: made by the owner for a program, bound to one of their profiles;
 * `company`: the same, bound to a company profile (`Компания`);
 * `agent`: a connection an agent made by signing in (OAuth, `oauth/`): no secret of its own, its
 * short-lived tokens act with its scopes; listed and disconnected as a connected agent, not as a key.
 */
export const KeyKind = Schema.Literal("personal", "application", "company", "agent").annotations({ identifier: "KeyKind" })
export type KeyKind = typeof KeyKind.Type

/**
 * `not_issued`: no secret yet (the automatic personal key until its owner first shows it);
 * `active`; `expired` (reissue renews it); `revoked` (final).
 */
export const KeyStatus = Schema.Literal("not_issued", "active", "expired", "revoked").annotations({ identifier: "KeyStatus" })
export type KeyStatus = typeof KeyStatus.Type

/** Bounds of ours (the spec fixes only the 90-day default lifetime). */
export const keyLimits = {
  nameMaxLength: 100,
  lifetimeDaysDefault: 90,
  lifetimeDaysMax: 365,
  liveKeysPerAccount: 50,
  scopesMax: 100,
  /** A secret is shown only to a session signed in at most this long ago. */
  recentSignInSeconds: 10 * 60
} as const

/** A scope name as the catalog spells them: `area:action`. Whether it exists is checked against the catalog. */
export const ScopeName = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$/, { message: () => "a scope looks like area:action, e.g. profiles:read" }),
  maxChars(64)
).annotations({ identifier: "ScopeName" })

const KeyName = Schema.String.pipe(
  Schema.filter((s) => {
    const length = codePoints(s.trim())
    return (length >= 1 && length <= keyLimits.nameMaxLength) ||
      `a key name has 1 to ${keyLimits.nameMaxLength} characters after trimming`
  })
).annotations({ jsonSchema: { type: "string", minLength: 1, maxLength: keyLimits.nameMaxLength } })

const Scopes = Schema.Array(ScopeName).pipe(Schema.maxItems(keyLimits.scopesMax))

/** A key as its owner sees it. The secret itself is never here: only `secretHint`, its last four characters. */
export const Key = Schema.Struct({
  uuid: Schema.UUID,
  kind: KeyKind,
  name: Schema.String,
  profile: Schema.Struct({ uuid: Schema.UUID, name: Schema.String, type: ProfileType }),
  scopes: Schema.Array(Schema.String),
  httpEnabled: Schema.Boolean,
  mcpEnabled: Schema.Boolean,
  lifetimeDays: Schema.Int,
  status: KeyStatus,
  secretHint: Schema.optional(Schema.String),
  issuedAt: Schema.optional(DateTime),
  expiresAt: Schema.optional(DateTime),
  lastUsedAt: Schema.optional(DateTime),
  revokedAt: Schema.optional(DateTime),
  revision: Schema.Int,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "Key" })
export type Key = typeof Key.Type

export const KeyList = Schema.Struct({
  items: Schema.Array(Key),
  recentSignIn: Schema.optional(Schema.Boolean).annotations({
    description: "Whether this session signed in within the last 10 minutes, so keys.create and keys.reissue will answer a secret now (a sign-in again otherwise)"
  })
}).annotations({ identifier: "KeyList" })

export const KeyResult = Schema.Struct({ key: Key }).annotations({ identifier: "KeyResult" })

/** The answer of create and reissue: the only time the secret is ever sent. */
export const KeyWithSecret = Schema.Struct({
  key: Key,
  secret: Schema.String.annotations({
    description: "The bearer key: `birzha_pk_<32 base62>_<6 base62 CRC32>`. Shown once; store it now"
  })
}).annotations({ identifier: "KeyWithSecret" })

export const KeyCreate = Schema.Struct({
  requestUuid: RequestUuid,
  name: KeyName,
  /** The profile the key acts as; the session's acting profile when absent. A company profile makes a `company` key. */
  profileUuid: Schema.optional(Schema.UUID),
  scopes: Scopes,
  httpEnabled: Schema.Boolean,
  mcpEnabled: Schema.Boolean,
  lifetimeDays: Schema.optional(Schema.Int.pipe(Schema.between(1, keyLimits.lifetimeDaysMax)))
}).annotations({ identifier: "KeyCreate", ...strict })
export type KeyCreate = typeof KeyCreate.Type

/** The whole editable part of a key at `expectedRevision` (like the save commands: not a patch). */
export const KeyUpdate = Schema.Struct({
  requestUuid: RequestUuid,
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  name: KeyName,
  scopes: Scopes,
  httpEnabled: Schema.Boolean,
  mcpEnabled: Schema.Boolean
}).annotations({ identifier: "KeyUpdate", ...strict })
export type KeyUpdate = typeof KeyUpdate.Type

export const KeyPath = Schema.Struct({ uuid: Schema.UUID })

/** One scope of the catalog: the operations that name it, and whether a key may hold it. */
export const ScopeInfo = Schema.Struct({
  name: Schema.String,
  grantable: Schema.Boolean,
  operations: Schema.Array(Schema.String)
}).annotations({ identifier: "ScopeInfo" })
export type ScopeInfo = typeof ScopeInfo.Type

export const ScopeList = Schema.Struct({ items: Schema.Array(ScopeInfo) }).annotations({ identifier: "ScopeList" })
