import type { BirzhaClient } from "@birzha/client"
import { Effect, type Either } from "effect"
import type { AdminAccountView, AdminHealthView, PageData } from "../model.js"
import type { Refusal, ServerApi } from "./api.js"
import { type Json, optional, plain, uuidPattern } from "../components/json.js"

// The admin area's pages (/admin…), read through the client with the operator's session. To anyone
// else each admin operation answers 404, and so does each page (packages/domain/src/admin/AdminApi.ts).

const healthOf = (health: unknown): AdminHealthView => {
  const h = plain(health)
  return {
    readiness: h["readiness"], events: h["events"], webhookDeliveries: h["webhookDeliveries"], gradingJobs: h["gradingJobs"],
    failingEndpoints: (h["failingEndpoints"] as ReadonlyArray<Json>).map((e) => ({
      uuid: e["uuid"], host: e["host"], state: e["state"], pendingDeliveries: e["pendingDeliveries"],
      ...optional("failingSince", e["failingSince"]), ...optional("disabledReason", e["disabledReason"])
    })),
    suspendedCheckers: (h["suspendedCheckers"] as ReadonlyArray<Json>).map((c) => ({
      uuid: c["uuid"], name: c["name"], courseTitle: c["courseTitle"], suspendedAt: c["suspendedAt"], automatic: c["automatic"]
    }))
  }
}

const accountItemOf = (account: Json) => ({
  uuid: account["uuid"], email: account["email"], createdAt: account["createdAt"], ...optional("deletedAt", account["deletedAt"])
})

const accountViewOf = (detail: unknown, me: string): AdminAccountView => {
  const d = plain(detail)
  return {
    account: accountItemOf(d["account"]),
    roles: d["roles"],
    profiles: d["profiles"],
    sessions: (d["sessions"] as ReadonlyArray<Json>).map((s) => ({ uuid: s["uuid"], profileName: s["profileName"], createdAt: s["createdAt"], expiresAt: s["expiresAt"] })),
    keys: (d["keys"] as ReadonlyArray<Json>).map((k) => ({
      uuid: k["uuid"], name: k["name"], kind: k["kind"], profileName: k["profileName"], scopes: k["scopes"], httpEnabled: k["httpEnabled"],
      mcpEnabled: k["mcpEnabled"], state: k["state"], ...optional("lastUsedAt", k["lastUsedAt"]), ...optional("expiresAt", k["expiresAt"])
    })),
    self: d["account"]["uuid"] === me
  }
}

const holdersOf = (list: ReadonlyArray<unknown>) =>
  list.map((item) => {
    const h = plain(item)
    return { email: h["email"], source: h["source"], grantedAt: h["grantedAt"] }
  })

/**
 * The admin pages: health (`/admin`), accounts found by email (`/admin/accounts?email=`), one
 * account (`/admin/accounts/{uuid}`), the roles with the audit trail (`/admin/roles`) and the
 * development mailbox (`/admin/mail`).
 * `undefined`: not one of these paths.
 */
export const loadAdmin = (
  api: ServerApi,
  path: string,
  search: URLSearchParams,
  cookie: string
): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  if (path === "/admin") {
    return run((client) => Effect.map(client["admin.health"](), (health): PageData => ({ page: "adminHealth", health: healthOf(health) })))
  }
  if (path === "/admin/accounts") {
    const email = (search.get("email") ?? "").trim().slice(0, 254)
    return run((client) =>
      email === ""
        // Without a search the page still asks the service, so a non-operator gets its 404 here too.
        ? Effect.map(client["admin.roles.list"](), (): PageData => ({ page: "adminAccounts", email, items: [] }))
        : Effect.map(client["admin.accounts.find"]({ urlParams: { email, limit: 50 } }), (found): PageData => ({
          page: "adminAccounts", email, items: found.items.map((item) => accountItemOf(plain(item)))
        })))
  }
  if (path.startsWith("/admin/accounts/")) {
    const uuid = path.slice("/admin/accounts/".length)
    if (!uuidPattern.test(uuid)) return undefined
    return run((client) =>
      Effect.all({ detail: client["admin.accounts.get"]({ path: { uuid: uuid.toLowerCase() } }), me: client.getMyCapabilities() }).pipe(
        Effect.map(({ detail, me }): PageData => ({ page: "adminAccount", view: accountViewOf(detail, me.account.uuid) }))
      ))
  }
  if (path === "/admin/mail") {
    const to = (search.get("to") ?? "").trim().slice(0, 254)
    return run((client) =>
      Effect.map(client["admin.mail.list"]({ urlParams: { limit: 50, ...(to === "" ? {} : { to }) } }), (mail): PageData => ({
        page: "adminMail",
        to,
        available: mail.available,
        items: mail.items.map((item) => {
          const m = plain(item)
          return { uuid: m["uuid"], to: m["to"], subject: m["subject"], text: m["text"], createdAt: m["createdAt"] }
        })
      })))
  }
  if (path === "/admin/roles") {
    return run((client) =>
      Effect.all({ roles: client["admin.roles.list"](), audit: client["admin.audit.list"]({ urlParams: { limit: 50 } }), me: client.getMyCapabilities() }).pipe(
        Effect.map(({ audit, me, roles }): PageData => ({
          page: "adminRoles",
          me: me.account.email,
          moderators: holdersOf(roles.moderators),
          operators: holdersOf(roles.operators),
          audit: audit.items.map((item) => {
            const a = plain(item)
            return { uuid: a["uuid"], operator: a["operator"], operation: a["operation"], target: a["target"], detail: a["detail"], createdAt: a["createdAt"] }
          })
        }))
      ))
  }
  return undefined
}
