import { HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Forbidden, NotFound, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"
import {
  AccountDeletion,
  AccountPath,
  AccountSearch,
  AdminAccountDetail,
  AdminAccountList,
  AdminActionList,
  AdminHealth,
  AdminMailbox,
  AdminRoles,
  AuditQuery,
  MailboxQuery,
  RoleChange
} from "./Admin.js"

/**
 * The admin area: operations of ours for accounts holding the operator role (`BIRZHA_OPERATORS`,
 * `birzha operators grant`, or another operator). To anyone else every one of them answers 404, as
 * a path the service does not have would (admin/Operators.ts, `operatorOf`). Browser sessions only:
 * `admin:` scopes are reserved (keys/Scopes.ts) and a change needs the service's `Origin`.
 */
const read = { extension: true, sessionOnly: true, scopes: ["admin:read"] } as const
const change = { extension: true, sessionOnly: true, sameOrigin: true, scopes: ["admin:write"] } as const

export const AdminApi = HttpApiGroup.make("admin", { topLevel: true })
  .add(
    authenticated("GET", "admin.health", "/api/v1/admin/health", {
      ...read,
      summary: "Health at a glance: readiness, event sequencing lag, queue depths, failing webhook endpoints, suspended checkers (operators only)"
    }, [wire(NotFound)]).addSuccess(AdminHealth)
  )
  .add(
    authenticated("GET", "admin.accounts.find", "/api/v1/admin/accounts", {
      ...read,
      summary: "Accounts whose address contains the text given, live ones first (operators only)"
    }, [wire(NotFound)]).setUrlParams(AccountSearch).addSuccess(AdminAccountList)
  )
  .add(
    authenticated("GET", "admin.accounts.get", "/api/v1/admin/accounts/:uuid", {
      ...read,
      summary: "One account: its roles, profiles, usable sessions and keys, never a secret (operators only)"
    }, [wire(NotFound)]).setPath(AccountPath).addSuccess(AdminAccountDetail)
  )
  .add(
    authenticated("POST", "admin.accounts.delete", "/api/v1/admin/accounts/delete", {
      ...change,
      summary: "Delete another account, as its owner would: its profiles, sessions and keys end (operators only; recorded)"
    }, [wire(NotFound), wire(Forbidden)]).setPayload(AccountDeletion).addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    authenticated("GET", "admin.roles.list", "/api/v1/admin/roles", {
      ...read,
      summary: "Who holds the moderator and operator roles, and how each was granted (operators only)"
    }, [wire(NotFound)]).addSuccess(AdminRoles)
  )
  .add(
    authenticated("POST", "admin.roles.grant", "/api/v1/admin/roles/grant", {
      ...change,
      summary: "Grant the moderator or operator role to an address (operators only; recorded)"
    }, [wire(NotFound)]).setPayload(RoleChange).addSuccess(AdminRoles)
  )
  .add(
    authenticated("POST", "admin.roles.revoke", "/api/v1/admin/roles/revoke", {
      ...change,
      summary: "Take the moderator or operator role from an address; an operator keeps their own (operators only; recorded)"
    }, [wire(NotFound), wire(Forbidden)]).setPayload(RoleChange).addSuccess(AdminRoles)
  )
  .add(
    authenticated("GET", "admin.audit.list", "/api/v1/admin/audit", {
      ...read,
      summary: "The admin area's audit trail, newest first: who did what to which account or address (operators only)"
    }, [wire(NotFound)]).setUrlParams(AuditQuery).addSuccess(AdminActionList)
  )
  .add(
    authenticated("GET", "admin.mail.list", "/api/v1/admin/mail", {
      ...read,
      summary: "The development mailbox (no BIRZHA_SMTP_URL): the messages the service would have mailed, newest first (operators only)"
    }, [wire(NotFound)]).setUrlParams(MailboxQuery).addSuccess(AdminMailbox)
  )
  .annotate(OpenApi.Description, "The admin area: health, accounts, roles, the audit trail and the development mailbox, for operators only")
