import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { openJourney, poll } from "./webJourney.js"

// The admin area through the web application's pages (packages/web/src/pages/Admin*): an operator
// (BIRZHA_OPERATORS) sees the service's health with a failing webhook endpoint, finds an account by
// its address, sees its sessions and keys, grants it the moderator role and revokes it, and reads
// the audit trail, and reads the development mailbox; the account itself, before and after, gets the "not found" page on every admin
// address, and no link to the area.

const operatorEmail = "operator.web-admin@example.com"

const world = openJourney({ label: "web_admin", operators: [operatorEmail], shots: "web-admin", subnet: 143 })

const adminPaths = (accountUuid: string) => ["/admin", "/admin/accounts", `/admin/accounts?email=example`, `/admin/accounts/${accountUuid}`, "/admin/roles", "/admin/mail"]

describe("the admin area through the pages", { timeout: 900_000 }, () => {
  it("health → find an account → its sessions and keys → grant and revoke a role → audit; a non-operator gets 404 everywhere", async () => {
    const { origin, person, checkPage, db } = world
    const operator = await person(operatorEmail)
    const memberEmail = `member.web-admin.${Date.now()}@example.com`
    const member = await person(memberEmail)
    const { rows: [account] } = await db.query<{ uuid: string; profile_uuid: string }>(
      "SELECT a.uuid, p.uuid AS profile_uuid FROM accounts a JOIN profiles p ON p.account_uuid = a.uuid WHERE a.email = $1", [memberEmail])

    // Not an operator: every admin page is the "not found" page, and the header does not link the area.
    const u = member.tab
    for (const path of adminPaths(account!.uuid)) {
      const response = await u.goto(`${origin}${path}${path.includes("?") ? "&" : "?"}lang=en`)
      expect(response?.status(), path).toBe(404)
      await expect.poll(() => u.locator("main").innerText()).toContain("There is no such page")
    }
    expect(await u.locator("header a", { hasText: "Admin area" }).count()).toBe(0)

    // A webhook endpoint of the member's that keeps failing: the health view names its host only.
    await db.query(
      `INSERT INTO webhook_endpoints (uuid, profile_uuid, url, event_types, payload_mode, secret_sealed, approved_at, verified_at, failing_since)
        VALUES ($1, $2, 'https://hooks.quillberry.example/in?token=abc', '["message.received"]', 'reference', 'sealed', now(), now(), now() - interval '2 hours')`,
      [randomUUID(), account!.profile_uuid]
    )

    // The operator: health at a glance.
    const o = operator.tab
    await o.goto(`${origin}/admin?lang=en`)
    await expect.poll(() => o.locator("#admin-readiness").innerText()).toContain("The service is ready")
    await expect.poll(() => o.locator("main").innerText()).toContain("hooks.quillberry.example")
    expect(await o.locator("main").innerText()).not.toContain("token=abc")
    await checkPage(o, "admin-health", "/admin")

    // Find the account by a part of its address, open it: its session and its personal key.
    await o.goto(`${origin}/admin/accounts?lang=en`)
    await o.getByLabel("Email address or a part of it").fill(memberEmail.slice(0, 20).toUpperCase())
    await o.getByRole("button", { name: "Search accounts" }).click()
    await o.waitForURL(/\/admin\/accounts\?/)
    await o.getByRole("link", { name: memberEmail }).click()
    await o.waitForURL(`${origin}/admin/accounts/${account!.uuid}?lang=en`)
    await poll(() => o.locator("#admin-session-list li").count()).toBeGreaterThanOrEqual(1)
    await expect.poll(() => o.locator("#admin-key-list").innerText()).toContain("Personal key")
    await checkPage(o, "admin-accounts", `/admin/accounts?email=${encodeURIComponent(memberEmail)}`)
    await checkPage(o, "admin-account", `/admin/accounts/${account!.uuid}`)

    // Grant the member the moderator role: the moderation queue opens for them; then revoke it.
    await o.goto(`${origin}/admin/roles?lang=en`)
    await o.getByLabel("Role to grant").selectOption("moderator")
    await o.getByLabel("Email address of the person").fill(memberEmail)
    await o.getByRole("button", { name: "Grant the role" }).click()
    await poll(() => o.locator("#admin-moderator-list li", { hasText: memberEmail }).count()).toBe(1)
    await u.goto(`${origin}/moderation?lang=en`)
    await expect.poll(() => u.locator("main").innerText()).not.toContain("This page is for moderators.")
    await checkPage(o, "admin-roles", "/admin/roles")
    await o.goto(`${origin}/admin/roles?lang=en`)
    await o.getByRole("button", { name: `Revoke the role from ${memberEmail}` }).click()
    await poll(() => o.locator("#admin-moderator-list li", { hasText: memberEmail }).count()).toBe(0)
    await expect.poll(() => o.locator("#admin-audit-list").innerText()).toContain(`Revoked the moderator role from ${memberEmail}`)
    expect(await o.locator("#admin-audit-list").innerText()).toContain(`Granted the moderator role to ${memberEmail}`)
    // The operator's own operator role offers no revoke button.
    expect(await o.locator(`#admin-operator-list li[data-email="${operatorEmail}"] button`).count()).toBe(0)
    await u.goto(`${origin}/moderation?lang=en`)
    await expect.poll(() => u.locator("main").innerText()).toContain("This page is for moderators.")
    expect((await u.goto(`${origin}/admin/roles?lang=en`))?.status()).toBe(404)

    // The development mailbox (no SMTP in the test service): the member's sign-in message.
    await o.goto(`${origin}/admin/mail?lang=en`)
    await o.getByLabel("Only messages to this address").fill(memberEmail)
    await o.getByRole("button", { name: "Show the messages" }).click()
    await poll(() => o.locator("#admin-mail-list li").count()).toBeGreaterThanOrEqual(1)
    await checkPage(o, "admin-mail", `/admin/mail?to=${encodeURIComponent(memberEmail)}`)

    // The header links the area for the operator only.
    expect(await o.locator("header a", { hasText: "Admin area" }).count()).toBeGreaterThan(0)
    expect([...operator.errors, ...member.errors]).toEqual([])
  })
})
