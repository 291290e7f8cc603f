import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { openJourney, type Person, poll, eventWorker } from "./webJourney.js"

// The web application's last pieces (packages/web), three people in one real Chromium: a
// customer's reputation by alias (/customers/{alias}, public), reached from the specialist's deals
// board and from the customer's own settings, where the customer answers a review; the owner's
// hide, restore, close and delete on "My publications", each confirmed first; the training editor
// at /trainings (the old /learning/new answers 303 there); the header's and home page's links to
// courses and My learning; the unread badge counting a new notification without a reload.

const moderatorEmail = "moderator.web-lifecycle@example.com"

const world = openJourney({ label: "web_lifecycle", moderators: [moderatorEmail], shots: "web-lifecycle", subnet: 121 })

// The worker's steps, on demand (the test host runs no in-process workers): events numbered,
// then fanned out to the automation rules, whose notification.create writes the inbox's entry.
const runWorker = eventWorker(world)

const cookieOf = async (person: Person) => {
  const session = (await person.context.cookies()).find((cookie) => cookie.name === "__Host-birzha_session")!
  return { cookie: `${session.name}=${session.value}` }
}

describe("customer reputation, publication lifecycle, moved training editor, header links and the live badge", { timeout: 900_000 }, () => {
  it("deal → reviews → /customers/{alias} from deals and settings → hide, restore, close, delete with confirmation → badge without reload", async () => {
    const { origin, person, checkPage, service, browser } = world
    const stamp = Date.now().toString(36)
    const customer = await person(`customer.web-lifecycle.${stamp}@example.com`)
    const contractor = await person(`contractor.web-lifecycle.${stamp}@example.com`)
    const moderator = await person(moderatorEmail)
    const asCustomer = await cookieOf(customer)
    const asContractor = await cookieOf(contractor)
    const command = async (id: string, who: { readonly cookie: string }, payload: Record<string, unknown>) => {
      const answer = await service.call("POST", `/api/v1/commands/${id}`, who, { requestUuid: randomUUID(), ...payload })
      expect(answer.status, `${id}: ${JSON.stringify(answer.body)}`).toBe(200)
      return answer.body as Record<string, any>
    }

    // Two tasks of the customer, approved on the moderation page: one for a deal, one to hide and close.
    const task = (title: string) => ({
      data: { title, category: "Сайты", description: "A landing page for a small bakery, with a menu and a map.", budget: "30 000 ₽", deadline: "two weeks", files: [] },
      submit: true
    })
    const dealTitle = `Bakery landing ${stamp}`
    const ownTitle = `Bakery menu ${stamp}`
    const dealTask = await command("tasks.save", asCustomer, task(dealTitle))
    const ownTask = await command("tasks.save", asCustomer, task(ownTitle))
    const m = moderator.tab
    await m.goto(`${origin}/moderation?lang=en`)
    for (const title of [dealTitle, ownTitle]) {
      await m.locator("li.row", { hasText: title }).getByRole("button", { name: "Approve" }).click()
      await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)
    }

    // A deal from the contractor's response, completed; both review it (published once both have written).
    const response = await command("responses.create", asContractor, { publicationUuid: dealTask["uuid"], body: "I have built three bakery sites." })
    const accepted = await command("responses.status", asCustomer, { relationUuid: response["uuid"], expectedRevision: 1, status: "accepted", body: "Agreed." })
    const dealUuid = accepted["dealUuid"] as string
    await command("deals.complete", asCustomer, { relationUuid: dealUuid, expectedRevision: 1 })
    await command("reviews.create", asContractor, { relationUuid: dealUuid, rating: 4, body: "Clear brief, paid on time." })
    await command("reviews.create", asCustomer, { relationUuid: dealUuid, rating: 5, body: "Fast and careful." })

    // The contractor: the deals board links the customer's reputation, by alias.
    const k = contractor.tab
    await k.goto(`${origin}/deals?lang=en`)
    const deal = k.locator("li.row", { hasText: dealTitle })
    await deal.getByRole("link", { name: /^Reputation of .+ as a customer$/ }).click()
    await k.waitForURL(/\/customers\/c-[a-z2-7]{10}\?lang=en$/)
    const customerPath = new URL(k.url()).pathname
    expect(await k.locator("h1").textContent()).toBe(`Customer ${customerPath.slice("/customers/".length)}`)
    expect(await k.locator("#completed-deals").textContent()).toBe("1")
    expect(await k.locator(".review", { hasText: "Clear brief, paid on time." }).count()).toBe(1)
    // A stranger reads it too (public, rendered on the server); an unknown alias is the HTML 404.
    const anonymous = await fetch(`${origin}${customerPath}?lang=ru`)
    expect(anonymous.status).toBe(200)
    const html = await anonymous.text()
    expect(html).toContain("Clear brief, paid on time.")
    // The alias stands for the customer: the page never names their profile.
    expect(html).not.toContain(accepted["recipientProfileUuid"] as string)
    expect((await fetch(`${origin}/customers/c-aaaaaaaaaa?lang=en`)).status).toBe(404)

    // The customer finds the page from their settings and answers the review there.
    const c = customer.tab
    await c.goto(`${origin}/settings/profile?lang=en`)
    await c.getByRole("link", { name: "Your reputation as a customer" }).click()
    await c.waitForURL(`${origin}${customerPath}?lang=en`)
    const review = c.locator(".review", { hasText: "Clear brief, paid on time." })
    await review.locator("summary", { hasText: "Reply to the review" }).click()
    await review.getByLabel("Your reply").fill("Thank you, it was a pleasure.")
    await review.getByRole("button", { name: "Publish the reply" }).click()
    await poll(() => c.locator(".review__reply", { hasText: "it was a pleasure" }).count()).toBe(1)
    await checkPage(c, "customer", customerPath)

    // The customer's rule: a notification when one of their publications is hidden (for the badge below).
    const rule = await service.call("POST", "/api/v1/automations", asCustomer, {
      requestUuid: randomUUID(), name: "Скрыта публикация", trigger: { eventType: "publication.hidden" }, action: { type: "notification.create" },
      limits: { maxRunsPerDay: 100 }
    })
    expect(rule.status, JSON.stringify(rule.body)).toBe(200)

    // My publications: hide, asked for again first; the public page then answers 404; the badge's clock is ours.
    await c.clock.install()
    await c.goto(`${origin}/publications?lang=en`)
    const row = c.locator("li.row", { hasText: ownTitle })
    const publicRead = async () => (await service.call("GET", `/api/v1/publications/${ownTask["uuid"]}`)).status
    expect(await row.getByRole("button").allTextContents()).toEqual(["Hide", "Close", "Delete"])
    await row.getByRole("button", { name: `Hide «${ownTitle}»` }).click()
    expect(await row.getByRole("group").textContent()).toContain(`Hide «${ownTitle}»? It leaves the catalog`)
    await row.getByRole("button", { name: "Cancel" }).click()
    expect(await publicRead()).toBe(200)
    await row.getByRole("button", { name: `Hide «${ownTitle}»` }).click()
    await row.getByRole("button", { name: "Yes, hide" }).click()
    await poll(() => row.locator(".tag", { hasText: "Hidden" }).count()).toBe(1)
    expect(await publicRead()).toBe(404)
    expect(await row.getByRole("button").allTextContents()).toEqual(["Restore", "Delete"])

    // The rule's notification arrives; the badge shows it at the next poll, without a reload.
    expect(await c.locator("#unread-badge").count()).toBe(0)
    await runWorker()
    await c.clock.fastForward(31_000)
    await poll(() => c.locator("#unread-badge").textContent().catch(() => null)).toBe("1")
    expect(await c.locator("#notifications-link").textContent()).toContain("Notifications: 1 unread")

    // Restore, then close: the task is public again, marked closed.
    await row.getByRole("button", { name: `Restore «${ownTitle}»` }).click()
    await row.getByRole("button", { name: "Yes, restore" }).click()
    await poll(() => row.locator(".tag", { hasText: "Hidden" }).count()).toBe(0)
    expect(await publicRead()).toBe(200)
    await row.getByRole("button", { name: `Close the task «${ownTitle}»` }).click()
    expect(await row.getByRole("group").textContent()).toContain("takes no new responses")
    await row.getByRole("button", { name: "Yes, close" }).click()
    await poll(() => row.locator(".tag", { hasText: "Closed" }).count()).toBe(1)
    expect((await service.call("GET", `/api/v1/publications/${ownTask["uuid"]}`)).body.closed).toBe(true)
    expect(await row.getByRole("button").allTextContents()).toEqual(["Hide", "Delete"])
    await checkPage(c, "my-publications", "/publications")

    // Delete, confirmed: the row is gone, and so is the task for its owner.
    await c.goto(`${origin}/publications?lang=en`)
    await row.getByRole("button", { name: `Delete «${ownTitle}»` }).click()
    expect(await row.getByRole("group").textContent()).toContain("cannot be undone")
    await row.getByRole("button", { name: "Yes, delete" }).click()
    await poll(() => row.count()).toBe(0)
    expect((await service.call("GET", `/api/v1/commands/tasks.get?publicationUuid=${ownTask["uuid"]}`, asCustomer)).status).toBe(404)

    // The training editor lives at /trainings; the old address answers 303 there. The person's menu links My learning.
    await c.getByRole("link", { name: "New training" }).click()
    await c.waitForURL(`${origin}/trainings/new?lang=en`)
    const moved = await fetch(`${origin}/learning/new?lang=en`, { redirect: "manual", headers: asCustomer })
    expect([moved.status, moved.headers.get("location")]).toEqual([303, "/trainings/new?lang=en"])
    const movedEdit = await fetch(`${origin}/learning/${ownTask["uuid"]}/edit?lang=ru`, { redirect: "manual", headers: asCustomer })
    expect([movedEdit.status, movedEdit.headers.get("location")]).toEqual([303, `/trainings/${ownTask["uuid"]}/edit?lang=ru`])
    await c.locator(".site-menu summary").click()
    await c.getByRole("link", { name: "My learning" }).click()
    await c.waitForURL(`${origin}/learning?lang=en`)

    // A visitor: the header's courses link and the home page's way into them.
    const visitorContext = await browser.newContext({ locale: "en-GB" })
    const v = await visitorContext.newPage()
    await v.goto(`${origin}/?lang=en`)
    // The page's styles are inline (no stylesheet request before the first paint), allowed by the CSP's hash: the theme's colour applies.
    expect(await v.locator(".hero .button").first().evaluate((element) => getComputedStyle(element).backgroundColor)).toBe("rgb(29, 78, 216)")
    expect(await v.locator("link[rel=stylesheet]").count()).toBe(0)
    expect(await v.getByRole("link", { name: "My learning" }).count()).toBe(0)
    await v.getByRole("link", { name: "Browse courses" }).click()
    await v.waitForURL(`${origin}/courses?lang=en`)
    expect(await v.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Courses" }).getAttribute("aria-current")).toBe("page")
    await checkPage(v, "home", "/")

    expect([...customer.errors, ...contractor.errors, ...moderator.errors]).toEqual([])
    await Promise.all([customer.context.close(), contractor.context.close(), moderator.context.close(), visitorContext.close()])
  })
})
