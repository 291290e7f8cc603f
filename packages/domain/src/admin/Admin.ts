import { Schema } from "effect"
import { DateTime, Email, field, optionalField, PageLimit, strict } from "../kernel/Common.js"

/** The wire shapes of the admin area (admin/AdminApi.ts). */

const Count = Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))

export const AdminHealth = Schema.Struct({
  /** What readyz answers, as two booleans rather than a 503. */
  readiness: Schema.Struct({ database: Schema.Boolean, migrations: Schema.Boolean }),
  events: Schema.Struct({ outboxDepth: Count, sequencingLagSeconds: Schema.Number }),
  webhookDeliveries: Schema.Struct({ pending: Count, succeeded: Count, failed: Count, cancelled: Count }),
  gradingJobs: Schema.Struct({ queued: Count, running: Count, succeeded: Count, failed: Count, cancelled: Count }),
  failingEndpoints: Schema.Array(Schema.Struct({
    uuid: Schema.UUID,
    profileUuid: Schema.UUID,
    /** The receiver's host only: a path or query may carry the receiver's own token. */
    host: Schema.String,
    state: Schema.String,
    failingSince: Schema.NullOr(DateTime),
    disabledReason: Schema.NullOr(Schema.String),
    pendingDeliveries: Count
  })),
  suspendedCheckers: Schema.Array(Schema.Struct({
    uuid: Schema.UUID,
    name: Schema.String,
    courseUuid: Schema.UUID,
    courseTitle: Schema.String,
    suspendedAt: DateTime,
    /** Suspended by the circuit breaker (consecutive platform errors), not by the course's staff. */
    automatic: Schema.Boolean
  }))
}).annotations({ identifier: "AdminHealth" })
export type AdminHealth = typeof AdminHealth.Type

export const AdminAccount = Schema.Struct({
  uuid: Schema.UUID,
  email: Schema.String,
  createdAt: DateTime,
  deletedAt: Schema.NullOr(DateTime)
}).annotations({ identifier: "AdminAccount" })

export const AdminAccountList = Schema.Struct({ items: Schema.Array(AdminAccount) }).annotations({ identifier: "AdminAccountList" })

export const AdminSession = Schema.Struct({
  uuid: Schema.UUID,
  profileUuid: Schema.UUID,
  profileName: Schema.String,
  createdAt: DateTime,
  expiresAt: DateTime
}).annotations({ identifier: "AdminSession" })

export const AdminKey = Schema.Struct({
  uuid: Schema.UUID,
  name: Schema.String,
  kind: Schema.String,
  profileName: Schema.String,
  scopes: Schema.Array(Schema.String),
  httpEnabled: Schema.Boolean,
  mcpEnabled: Schema.Boolean,
  /** `unissued`: no secret shown yet (a personal key before its owner asks for it). */
  state: Schema.Literal("live", "unissued", "expired", "revoked"),
  lastUsedAt: Schema.NullOr(DateTime),
  expiresAt: Schema.NullOr(DateTime)
}).annotations({ identifier: "AdminKey" })

export const RoleName = Schema.Literal("moderator", "operator").annotations({ identifier: "RoleName" })
export type RoleName = typeof RoleName.Type

export const AdminAccountDetail = Schema.Struct({
  account: AdminAccount,
  roles: Schema.Array(RoleName),
  profiles: Schema.Array(Schema.Struct({ uuid: Schema.UUID, name: Schema.String, type: Schema.String })),
  sessions: Schema.Array(AdminSession),
  keys: Schema.Array(AdminKey)
}).annotations({ identifier: "AdminAccountDetail" })

export const RoleHolder = Schema.Struct({
  email: Schema.String,
  /** `cli`: granted by hand (the CLI or the admin area); `config`: by BIRZHA_MODERATORS or BIRZHA_OPERATORS. */
  source: Schema.Literal("cli", "config"),
  grantedAt: DateTime
}).annotations({ identifier: "RoleHolder" })

export const AdminRoles = Schema.Struct({
  moderators: Schema.Array(RoleHolder),
  operators: Schema.Array(RoleHolder)
}).annotations({ identifier: "AdminRoles" })

export const AdminAction = Schema.Struct({
  uuid: Schema.UUID,
  operator: Schema.String,
  operation: Schema.String,
  target: Schema.String,
  detail: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Boolean) }),
  createdAt: DateTime
}).annotations({ identifier: "AdminAction" })

export const AdminActionList = Schema.Struct({ items: Schema.Array(AdminAction) }).annotations({ identifier: "AdminActionList" })

export const AccountSearch = Schema.Struct({
  email: field(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(254)), "A part of the address to look for (compared lower-cased)."),
  limit: Schema.optional(PageLimit)
}).annotations({ identifier: "AccountSearch" })

export const AccountPath = Schema.Struct({ uuid: Schema.UUID })

export const AccountDeletion = Schema.Struct({
  accountUuid: Schema.UUID,
  confirmEmail: field(Schema.String.pipe(Schema.maxLength(254)), "The account's address, typed again: the deletion is refused when it differs.")
}).annotations({ identifier: "AccountDeletion", ...strict })

export const RoleChange = Schema.Struct({
  role: RoleName,
  email: field(Email, "The address that gains or loses the role; it need not have signed in yet.")
}).annotations({ identifier: "RoleChange", ...strict })

export const AuditQuery = Schema.Struct({ limit: Schema.optional(PageLimit) }).annotations({ identifier: "AuditQuery" })

export const MailboxQuery = Schema.Struct({
  to: optionalField(Schema.String.pipe(Schema.maxLength(254)), "Only messages to this address (compared lower-cased)."),
  limit: Schema.optional(PageLimit)
}).annotations({ identifier: "MailboxQuery" })

export const AdminMailbox = Schema.Struct({
  /** false when mail really goes out (BIRZHA_SMTP_URL): there is no development mailbox to show. */
  available: Schema.Boolean,
  items: Schema.Array(Schema.Struct({
    uuid: Schema.UUID,
    to: Schema.String,
    subject: Schema.String,
    text: Schema.String,
    createdAt: DateTime
  }))
}).annotations({ identifier: "AdminMailbox" })
