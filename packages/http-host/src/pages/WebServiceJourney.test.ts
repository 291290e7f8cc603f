import { describe, expect, it } from "vitest"
import { openJourney, poll } from "./webJourney.js"

// The service journey through the web application's pages (packages/web), three people at once
// in one real Chromium: a specialist publishes a service with a price, a moderator approves it, a
// customer makes an offer from its page, the specialist declines; the customer offers again, the
// specialist counters with other terms, the customer accepts the counter-offer: a deal starts and
// both see it on /deals. Every step is a click or a keystroke on a page.

const moderatorEmail = "moderator.web-service@example.com"

const world = openJourney({ label: "web_service", moderators: [moderatorEmail], shots: "web-more", subnet: 103 })

describe("the service journey through the pages", { timeout: 900_000 }, () => {
  it("publish a service with a price → moderate → offer → declined → offer again → counter-offer → accepted → a deal on /deals", async () => {
    const { origin, person, checkPage } = world
    const [specialist, customer, moderator] = await Promise.all([
      person(`specialist.web-service.${Date.now()}@example.com`),
      person(`customer.web-service.${Date.now()}@example.com`),
      person(moderatorEmail)
    ])
    const word = `Lumenlogo${Date.now().toString(36)}`
    const title = `A logo for ${word} in three days`
    const offers = (tab: typeof specialist.tab, text: string) => tab.locator("section[aria-labelledby=offers-heading] li.row", { hasText: text })

    // The specialist: a public profile (offers reach only public profiles, or ones already dealt
    // with: reachableProfile in packages/domain/src/threads/Threads.ts), then a service with a
    // price, sent to moderation.
    const s = specialist.tab
    await s.goto(`${origin}/settings/profile?lang=en`)
    await s.getByLabel("Name", { exact: true }).first().fill("Lev Logo")
    await s.getByLabel("Public profile").check()
    await s.getByRole("button", { name: "Save the profile" }).click()
    await s.getByText("The profile is saved.").waitFor()
    await s.goto(`${origin}/publications?lang=en`)
    await s.getByRole("link", { name: "New service" }).click()
    await s.waitForURL(`${origin}/services/new?lang=en`)
    await checkPage(s, "service-editor", "/services/new")
    await s.getByLabel("Title").fill(title)
    await s.getByLabel("Description").fill("Three sketches, two rounds of changes, the files in SVG and PNG.")
    await s.getByLabel("Amount").fill("5 000")
    await s.getByLabel("For", { exact: true }).selectOption("fixed")
    // A delivery time out of bounds is refused on the page; nothing is saved.
    await s.getByLabel("Delivery time, days").fill("0")
    await s.getByRole("button", { name: "Send to moderation" }).click()
    await s.getByText("Check the price (a whole amount) and the delivery time (1 to 365 days).").waitFor()
    await s.getByLabel("Delivery time, days").fill("3")
    await s.getByRole("button", { name: "Send to moderation" }).click()
    await s.waitForURL(`${origin}/publications?lang=en`)
    const row = s.locator("li.row", { hasText: title })
    expect(await row.locator(".tag").textContent()).toBe("Awaiting moderation")
    expect(await row.textContent()).toContain("Service")

    const m = moderator.tab
    await m.goto(`${origin}/moderation?lang=en`)
    await m.locator("li.row", { hasText: title }).getByRole("button", { name: "Approve" }).click()
    await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)

    // The customer finds it and makes an offer from its page.
    const c = customer.tab
    await c.goto(`${origin}/catalog?lang=en`)
    await c.getByLabel("Words to search for").fill(word)
    await c.getByRole("button", { name: "Search" }).click()
    await c.waitForURL(/\/catalog\?.*q=/)
    await c.getByRole("link", { name: title }).click()
    await c.waitForURL(/\/p\/[0-9a-f-]{36}\?lang=en$/)
    const servicePath = new URL(c.url()).pathname
    expect(await c.locator("main").innerText()).toMatch(/5[\s\u00a0,]000/)
    await checkPage(c, "service-offer", servicePath)
    await c.getByLabel("What you need").fill("A logo for my bakery, warm colours.")
    await c.getByLabel("Your budget (optional)").fill("4 000 ₽")
    await c.getByRole("button", { name: "Send the offer" }).click()
    await c.getByText("Your offer has been sent.").waitFor()

    // The specialist declines it.
    await s.goto(`${origin}/responses?lang=en`)
    expect(await offers(s, "warm colours").locator(".tag").textContent()).toBe("Waiting for an answer")
    await offers(s, "warm colours").getByRole("button", { name: "Decline" }).click()
    await poll(() => offers(s, "warm colours").locator(".tag").textContent()).toBe("Declined")

    // The customer offers again; the specialist counters with other terms.
    await c.goto(`${origin}${servicePath}?lang=en`)
    await c.getByLabel("What you need").fill("A logo and a sign for my bakery.")
    await c.getByLabel("Your budget (optional)").fill("6 000 ₽")
    await c.getByRole("button", { name: "Send the offer" }).click()
    await c.getByText("Your offer has been sent.").waitFor()
    await s.reload()
    await offers(s, "and a sign").getByRole("button", { name: "Counter-offer" }).click()
    // The form opens with the keyboard in its first field.
    expect(await s.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("body")
    await s.keyboard.type("The logo and the sign together, five days.")
    await offers(s, "and a sign").getByLabel("Your budget (optional)").fill("7 500 ₽")
    await offers(s, "and a sign").getByLabel("Deadline (optional)").fill("five days")
    await offers(s, "and a sign").getByRole("button", { name: "Send the counter-offer" }).click()
    await poll(() => offers(s, "and a sign").locator(".tag").textContent()).toBe("Declined")
    expect(await offers(s, "together, five days").getByRole("button", { name: "Withdraw" }).count()).toBe(1)

    // The customer sees the counter-offer and accepts it; a deal starts for both.
    await c.goto(`${origin}/responses?lang=en`)
    const counter = offers(c, "together, five days")
    expect(await counter.textContent()).toContain("Budget: 7 500 ₽")
    expect(await counter.textContent()).toContain("Deadline: five days")
    expect(await counter.locator(".tag").textContent()).toBe("Waiting for an answer")
    await checkPage(c, "service-offers", "/responses")
    await offers(c, "together, five days").getByRole("button", { name: "Accept" }).click()
    await poll(() => offers(c, "together, five days").locator(".tag").textContent()).toBe("Accepted")
    await offers(c, "together, five days").getByRole("link", { name: "To the deal" }).click()
    await c.waitForURL(`${origin}/deals?lang=en`)
    const deal = c.locator("li.row", { hasText: title })
    expect(await deal.locator(".tag").first().textContent()).toBe("In progress")
    expect(await deal.textContent()).toContain("7 500 ₽")
    await checkPage(c, "service-deal", "/deals")
    await s.goto(`${origin}/deals?lang=en`)
    expect(await s.locator("li.row", { hasText: title }).locator(".tag").first().textContent()).toBe("In progress")

    expect([...specialist.errors, ...customer.errors, ...moderator.errors]).toEqual([])
    await Promise.all([specialist.context.close(), customer.context.close(), moderator.context.close()])
  })
})
