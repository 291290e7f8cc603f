import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { accountRowByUuid, accountsMatching } from "../auth/AccountRepository.js"
import { deleteAccount } from "../auth/Accounts.js"
import { liveSessionsOfAccount } from "../auth/SessionRepository.js"
import { Forbidden, NotFound } from "../kernel/ApiError.js"
import { keysOfAccount, type KeyRow } from "../keys/KeyRepository.js"
import { implementWith } from "../operations/Implementation.js"
import { Readiness } from "../operations/Readiness.js"
import { Mailer } from "../mail/Mailer.js"
import { liveProfilesOfAccount } from "../profiles/ProfileRepository.js"
import { grantModerator, listModerators, revokeModerator } from "../publications/Moderation.js"
import type { AdminHealth, RoleName } from "./Admin.js"
import { insertAdminAction, recentAdminActions } from "./AdminActionRepository.js"
import { AdminApi } from "./AdminApi.js"
import type { AccountRow } from "../auth/AccountRepository.js"
import { grantOperator, listOperators, type Operator, operatorOf, revokeOperator } from "./Operators.js"
import { rolesOfAddress } from "../store/RoleGrants.js"
import { failingEndpoints, mailboxMessages, readQueueState, suspendedCheckers } from "./ServiceState.js"

const accountOf = (row: AccountRow) => ({ uuid: row.uuid, email: row.email, createdAt: row.created_at, deletedAt: row.deleted_at })

const keyStateOf = (row: KeyRow) =>
  row.revoked_at !== null ? "revoked" as const : row.issued_at === null ? "unissued" as const : row.expired ? "expired" as const : "live" as const

const hostOf = (url: string) => {
  try {
    return new URL(url).host
  } catch {
    return ""
  }
}

const holders = (rows: ReadonlyArray<{ readonly email: string; readonly source: "cli" | "config"; readonly granted_at: Date }>) =>
  rows.map((row) => ({ email: row.email, source: row.source, grantedAt: row.granted_at }))

const roles = Effect.all({ moderators: Effect.map(listModerators, holders), operators: Effect.map(listOperators, holders) })

/** Records an admin action in the transaction of the change it describes. */
const recorded = (operator: Operator, operation: string, target: string, detail: { readonly [key: string]: string | boolean }) =>
  insertAdminAction({ operatorAccountUuid: operator.accountUuid, operator: operator.email, operation, target, detail })

const grant = (role: RoleName, email: string) => role === "moderator" ? grantModerator(email) : grantOperator(email)

/**
 * The admin area: each operation first asks `operatorOf` (404 to anyone but an operator), and every
 * change is written with its row in `admin_actions`, in one transaction.
 */
export const AdminOperations = implementWith(AdminApi, Effect.all([Readiness, Mailer]))(([readiness, mailer]) => ({
  "admin.health": (_, actor) =>
    Effect.gen(function*() {
      yield* operatorOf(actor)
      const [ready, queues, endpoints, checkers] = yield* Effect.all([readiness.check, readQueueState, failingEndpoints(50), suspendedCheckers(50)])
      const health: AdminHealth = {
        readiness: ready,
        events: { outboxDepth: queues.outboxDepth, sequencingLagSeconds: queues.sequencingLagSeconds },
        webhookDeliveries: queues.webhookDeliveries,
        gradingJobs: queues.gradingJobs,
        failingEndpoints: endpoints.map((row) => ({
          uuid: row.uuid, profileUuid: row.profile_uuid, host: hostOf(row.url), state: row.state, failingSince: row.failing_since,
          disabledReason: row.disabled_reason, pendingDeliveries: Number(row.pending)
        })),
        suspendedCheckers: checkers.map((row) => ({
          uuid: row.uuid, name: row.name, courseUuid: row.course_uuid, courseTitle: row.course_title, suspendedAt: row.suspended_at, automatic: row.automatic
        }))
      }
      return health
    }),
  "admin.accounts.find": ({ urlParams }, actor) =>
    Effect.gen(function*() {
      yield* operatorOf(actor)
      const rows = yield* accountsMatching(urlParams.email.trim().toLowerCase(), urlParams.limit ?? 20)
      return { items: rows.map(accountOf) }
    }),
  "admin.accounts.get": ({ path }, actor) =>
    Effect.gen(function*() {
      yield* operatorOf(actor)
      const found = yield* accountRowByUuid(path.uuid)
      if (Option.isNone(found)) return yield* new NotFound({ message: "No such account" })
      const row = found.value
      const live = row.deleted_at === null
      const [{ moderator, operator }, profiles, sessions, keys] = yield* Effect.all([
        rolesOfAddress(row.email.toLowerCase()),
        live ? liveProfilesOfAccount(row.uuid) : Effect.succeed([]),
        live ? liveSessionsOfAccount(row.uuid) : Effect.succeed([]),
        live ? keysOfAccount(row.uuid, 30) : Effect.succeed([])
      ])
      return {
        account: accountOf(row),
        roles: [...(moderator ? ["moderator" as const] : []), ...(operator ? ["operator" as const] : [])],
        profiles: profiles.map((profile) => ({ uuid: profile.uuid, name: profile.name, type: profile.type })),
        sessions: sessions.map((session) => ({
          uuid: session.uuid, profileUuid: session.profile_uuid, profileName: session.profile_name, createdAt: session.created_at, expiresAt: session.expires_at
        })),
        keys: keys.map((key) => ({
          uuid: key.uuid, name: key.name, kind: key.kind, profileName: key.profile_name, scopes: key.scopes, httpEnabled: key.http_enabled,
          mcpEnabled: key.mcp_enabled, state: keyStateOf(key), lastUsedAt: key.last_used_at, expiresAt: key.expires_at
        }))
      }
    }),
  "admin.accounts.delete": ({ payload }, actor) =>
    Effect.gen(function*() {
      const operator = yield* operatorOf(actor)
      const found = yield* accountRowByUuid(payload.accountUuid)
      if (Option.isNone(found) || found.value.deleted_at !== null) return yield* new NotFound({ message: "No such account" })
      const account = found.value
      if (account.uuid === operator.accountUuid) {
        return yield* new Forbidden({ message: "An operator deletes their own account from the account page, not the admin area" })
      }
      if (payload.confirmEmail.trim().toLowerCase() !== account.email) {
        return yield* new Forbidden({ message: "confirmEmail does not match the account's address" })
      }
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* deleteAccount(account.uuid)
        yield* recorded(operator, "admin.accounts.delete", account.uuid, { email: account.email })
      }))
    }),
  "admin.roles.list": (_, actor) => Effect.zipRight(operatorOf(actor), roles),
  "admin.roles.grant": ({ payload }, actor) =>
    Effect.gen(function*() {
      const operator = yield* operatorOf(actor)
      const email = payload.email.trim().toLowerCase()
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* grant(payload.role, email)
        yield* recorded(operator, "admin.roles.grant", email, { role: payload.role })
      }))
      return yield* roles
    }),
  "admin.roles.revoke": ({ payload }, actor) =>
    Effect.gen(function*() {
      const operator = yield* operatorOf(actor)
      const email = payload.email.trim().toLowerCase()
      // An operator cannot lock themselves out; another operator (or the CLI) can take the role.
      if (payload.role === "operator" && email === operator.email) {
        return yield* new Forbidden({ message: "An operator cannot revoke their own operator role" })
      }
      const sql = yield* SqlClient.SqlClient
      const revoked = yield* sql.withTransaction(Effect.gen(function*() {
        const held = payload.role === "moderator" ? yield* revokeModerator(email) : yield* revokeOperator(email)
        if (held) yield* recorded(operator, "admin.roles.revoke", email, { role: payload.role })
        return held
      }))
      if (!revoked) return yield* new NotFound({ message: `${email} does not hold the ${payload.role} role` })
      return yield* roles
    }),
  "admin.mail.list": ({ urlParams }, actor) =>
    Effect.gen(function*() {
      yield* operatorOf(actor)
      // Only the development mailer keeps messages; with SMTP the table stays empty and says nothing.
      if (mailer.keepsMessages !== true) return { available: false, items: [] }
      const to = urlParams.to?.trim().toLowerCase()
      const rows = yield* mailboxMessages(to === "" ? undefined : to, urlParams.limit ?? 50)
      return {
        available: true,
        items: rows.map((row) => ({ uuid: row.uuid, to: row.to_address, subject: row.subject, text: row.text_body, createdAt: row.created_at }))
      }
    }),
  "admin.audit.list": ({ urlParams }, actor) =>
    Effect.gen(function*() {
      yield* operatorOf(actor)
      const rows = yield* recentAdminActions(urlParams.limit ?? 50)
      return {
        items: rows.map((row) => ({
          uuid: row.uuid, operator: row.operator, operation: row.operation, target: row.target,
          detail: Object.fromEntries(Object.entries(row.detail).filter((entry): entry is [string, string | boolean] =>
            typeof entry[1] === "string" || typeof entry[1] === "boolean")),
          createdAt: row.created_at
        }))
      }
    })
}))
