import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { openJourney, poll } from "./webJourney.js"

// The task journey through the web application's pages (packages/web), three people at once in
// one real Chromium (a context each): a customer publishes a task with two pictures, a moderator
// approves it, a contractor finds it and responds, the customer accepts, they write to each other,
// the work is handed over with a file, sent back once, accepted, both review, the rating shows.
// Every step is a click or a keystroke on a page; only the moderator role comes from the setting.

const moderatorEmail = "moderator.web-task@example.com"
const shots = "web-task"

// Two real PNG pictures (1×1), different bytes.
const pngs = [
  Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64"),
  Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64")
]

const world = openJourney({ label: "web_task", moderators: [moderatorEmail], shots, subnet: 100 })

describe("the task journey through the pages", { timeout: 900_000 }, () => {
  it("publish with pictures → moderate → find and respond → accept → messages both ways → results with a file → changes → accepted → sealed reviews → the rating", async () => {
    const { origin, person, checkPage } = world
    // One after another: three sign-ins at once strain a busy machine's page loads.
    const customer = await person(`customer.web-task.${Date.now()}@example.com`)
    const contractor = await person(`contractor.web-task.${Date.now()}@example.com`)
    const moderator = await person(moderatorEmail)
    const word = `Zephyrbakery${Date.now().toString(36)}`
    const title = `Landing page for ${word}`

    // The customer: the header leads to the editor; a draft with two pictures, captioned.
    const c = customer.tab
    await c.goto(`${origin}/account?lang=en`)
    expect(await c.getByRole("navigation").getByRole("link", { name: "Moderation" }).count()).toBe(0)
    await c.getByRole("navigation").getByRole("link", { name: "New task" }).click()
    await c.waitForURL(`${origin}/tasks/new?lang=en`)
    await c.getByLabel("Title").fill(title)
    await c.getByLabel("Category").selectOption("Сайты")
    await c.getByLabel("Description").fill("A one-page site with the menu, a map and an order form; mobile first.")
    await c.getByLabel("Budget", { exact: true }).fill("до 30 000 ₽")
    await c.getByLabel("Deadline").fill("two weeks")
    await c.getByLabel("Add pictures").setInputFiles([
      { name: "front.png", mimeType: "image/png", buffer: pngs[0]! },
      { name: "menu.png", mimeType: "image/png", buffer: pngs[1]! }
    ])
    await c.getByLabel("Caption of picture 2").waitFor()
    await c.getByLabel("Caption of picture 1").fill("The bakery's front")
    await c.getByLabel("Caption of picture 2").fill("The menu board")
    await c.getByRole("button", { name: "Save draft" }).click()
    await c.waitForURL(`${origin}/publications?lang=en`)
    const row = c.locator("li.row", { hasText: title })
    expect(await row.locator(".tag").textContent()).toBe("Draft")
    await row.getByRole("link", { name: `Edit “${title}”` }).click()
    await c.waitForURL(/\/tasks\/[0-9a-f-]{36}\/edit\?lang=en$/)
    const taskUuid = c.url().match(/\/tasks\/([0-9a-f-]{36})\//)![1]!
    expect(await c.getByLabel("Caption of picture 2").inputValue()).toBe("The menu board")
    await checkPage(c, "task-editor", `/tasks/${taskUuid}/edit`)
    await c.getByRole("button", { name: "Send to moderation" }).click()
    await c.waitForURL(`${origin}/publications?lang=en`)
    expect(await c.locator("li.row", { hasText: title }).locator(".tag").textContent()).toBe("Awaiting moderation")
    await checkPage(c, "my-publications", "/publications")

    // The moderator: the queue, from the header; approve.
    const m = moderator.tab
    await m.goto(`${origin}/account?lang=en`)
    await m.getByRole("navigation").getByRole("link", { name: "Moderation" }).click()
    await m.waitForURL(`${origin}/moderation?lang=en`)
    await checkPage(m, "moderation", "/moderation")
    const pending = m.locator("li.row", { hasText: title })
    expect(await pending.locator("img").evaluateAll((images) => images.map((img) => (img as HTMLImageElement).alt))).toEqual(["The bakery's front", "The menu board"])
    // Returned once with a reason; the customer sees it, edits and sends it again.
    await pending.getByLabel("Reason for the author (needed to return or reject)").fill("Please name the bakery's city.")
    await pending.getByRole("button", { name: "Return for changes" }).click()
    await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)
    await c.reload()
    const returned = c.locator("li.row", { hasText: title })
    expect(await returned.locator(".tag").textContent()).toBe("Returned for changes")
    expect(await returned.textContent()).toContain("The moderator's reason: Please name the bakery's city.")
    await returned.getByRole("link", { name: `Edit “${title}”` }).click()
    await c.getByLabel("Description").fill("A one-page site for a bakery in Kazan: the menu, a map and an order form; mobile first.")
    await c.getByRole("button", { name: "Send to moderation" }).click()
    await c.waitForURL(`${origin}/publications?lang=en`)
    await m.reload()
    await m.locator("li.row", { hasText: title }).getByRole("button", { name: "Approve" }).click()
    await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)
    await c.reload()
    expect(await c.locator("li.row", { hasText: title }).locator(".tag").textContent()).toBe("Published")

    // The contractor: finds it by a word, sees both pictures, responds.
    const k = contractor.tab
    await k.goto(`${origin}/catalog?lang=en`)
    await k.getByLabel("Words to search for").fill(word)
    await k.getByRole("button", { name: "Search" }).click()
    await k.waitForURL(/\/catalog\?.*q=/)
    await k.getByRole("link", { name: title }).click()
    await k.waitForURL(`${origin}/p/${taskUuid}?lang=en`)
    const pictures = k.locator(".gallery img")
    expect(await pictures.evaluateAll((images) => images.map((img) => (img as HTMLImageElement).alt))).toEqual(["The bakery's front", "The menu board"])
    for (const picture of await pictures.all()) {
      await poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
    }
    await checkPage(k, "publication-respond", `/p/${taskUuid}`)
    await k.getByLabel("Your message to the customer").fill("I will make it in ten days; see my portfolio.")
    await k.getByLabel("Your price (optional)").fill("25 000 ₽")
    await k.getByRole("button", { name: "Send the response" }).click()
    await k.getByText("Your response has been sent.").waitFor()

    // The customer: the response received; accept it.
    await c.goto(`${origin}/responses?lang=en`)
    const received = c.locator("section[aria-labelledby=responses-received] li.row", { hasText: title })
    expect(await received.textContent()).toContain("I will make it in ten days")
    expect(await received.textContent()).toContain("Budget: 25 000 ₽")
    await checkPage(c, "responses", "/responses")
    await received.getByRole("button", { name: "Accept" }).click()
    await poll(() => c.locator("section[aria-labelledby=responses-received] li.row .tag").first().textContent()).toBe("Accepted")

    // Messages: the customer writes first from the deal; each sees the other's without reloading.
    await c.getByRole("navigation").getByRole("link", { name: "Deals" }).click()
    await c.waitForURL(`${origin}/deals?lang=en`)
    const deal = c.locator("li.row", { hasText: title })
    await deal.getByText("Write a message").click()
    await deal.getByLabel("Your message").fill("Hello! Start whenever you are ready.")
    await deal.getByRole("button", { name: "Send" }).click()
    await c.waitForURL(/\/messages\/[0-9a-f-]{36}\?lang=en$/)
    await k.goto(`${origin}/messages?lang=en`)
    await checkPage(k, "messages", "/messages")
    await k.locator("ul.rows a").first().click()
    await k.waitForURL(/\/messages\/[0-9a-f-]{36}\?lang=en$/)
    await k.locator(".messages", { hasText: "Hello! Start whenever you are ready." }).waitFor()
    await k.getByLabel("Your message").fill("Thanks, starting today.")
    await k.getByRole("button", { name: "Send", exact: true }).click()
    // The customer's open page shows the reply by itself (no reload), within the page's liveness bound (testing/browser.ts).
    const before = c.url()
    await c.locator(".messages", { hasText: "Thanks, starting today." }).waitFor()
    expect(c.url()).toBe(before)
    await c.getByLabel("Your message").fill("Great.")
    await c.getByRole("button", { name: "Send", exact: true }).click()
    await k.locator(".messages", { hasText: "Great." }).waitFor()
    await checkPage(k, "thread", new URL(k.url()).pathname)

    // The contractor hands over the work with a file.
    await k.goto(`${origin}/deals?lang=en`)
    const kDeal = k.locator("li.row", { hasText: title })
    await kDeal.getByLabel("What you hand over").fill("The first version: the layout and the sources.")
    await kDeal.getByLabel("Attach a file (up to 1 MB)").setInputFiles({ name: "layout.png", mimeType: "image/png", buffer: pngs[0]! })
    await kDeal.getByRole("button", { name: "Hand over the work" }).click()
    await poll(() => k.locator("li.row", { hasText: title }).locator(".tag").first().textContent()).toBe("Work handed over")

    // The customer: sees the work and its file, the auto-completion date; requests changes.
    await c.goto(`${origin}/deals?lang=en`)
    const cDeal = c.locator("li.row", { hasText: title })
    expect(await cDeal.textContent()).toMatch(/Completes by itself on \d{1,2} [A-Z][a-z]+ \d{4}/)
    const file = await cDeal.getByRole("link", { name: "File 1" }).getAttribute("href")
    // The handed-over file is the contractor's upload, and the customer, the deal's other party, reads it.
    expect(file).toMatch(/^\/api\/v1\/files\/[0-9a-f-]{36}\/content$/)
    const bytes = await c.request.get(`${origin}${file}`)
    expect([bytes.status(), Buffer.from(await bytes.body()).equals(pngs[0]!)]).toEqual([200, true])
    await checkPage(c, "deals", "/deals")
    await c.locator("li.row", { hasText: title }).getByRole("button", { name: "Request changes" }).click()
    await poll(() => c.locator("li.row", { hasText: title }).locator(".tag").first().textContent()).toBe("In progress")
    expect(await c.locator("li.row", { hasText: title }).getByRole("button", { name: "Request changes" }).count()).toBe(0)

    // Handed over again, then accepted.
    await k.goto(`${origin}/deals?lang=en`)
    await k.locator("li.row", { hasText: title }).getByLabel("What you hand over").fill("The second version, with the changes.")
    await k.locator("li.row", { hasText: title }).getByRole("button", { name: "Hand over the work" }).click()
    await poll(() => k.locator("li.row", { hasText: title }).locator(".tag").first().textContent()).toBe("Work handed over")
    await c.goto(`${origin}/deals?lang=en`)
    await c.locator("li.row", { hasText: title }).getByRole("button", { name: "Accept the work" }).click()
    await poll(() => c.locator("li.row", { hasText: title }).locator(".tag").first().textContent()).toBe("Completed")

    // Reviews: the first stays sealed until the second.
    const review = async (tab: Page, stars: string, body: string) => {
      const row = tab.locator("li.row", { hasText: title })
      await row.getByLabel(stars, { exact: true }).check()
      await row.getByLabel("Review", { exact: true }).fill(body)
      await row.getByRole("button", { name: "Publish the review" }).click()
    }
    await review(c, "4 stars", "Done on time, clean code.")
    await c.locator("li.row", { hasText: title }).getByText("Your review is sealed").waitFor()
    await checkPage(c, "deals-sealed", "/deals")
    await k.goto(`${origin}/deals?lang=en`)
    await review(k, "5 stars", "A clear brief.")
    await k.locator("li.row", { hasText: title }).getByText("Both reviews are published.").waitFor()

    // The contractor makes their profile public on its settings page; it then shows the rating.
    await k.goto(`${origin}/settings?lang=en`)
    await k.waitForURL(`${origin}/settings/profile?lang=en`)
    await k.getByLabel("Public profile").check()
    await k.getByRole("button", { name: "Save the profile" }).click()
    await k.getByText("The profile is saved.").waitFor()
    const contractorUuid = new URL(await k.getByRole("link", { name: "Open the public page" }).getAttribute("href") ?? "", origin).pathname.slice("/u/".length)
    await c.goto(`${origin}/u/${contractorUuid}?lang=en`)
    expect(await c.getByRole("img", { name: "Rated 4 out of 5", exact: true }).count()).toBe(1)
    expect(await c.locator(".reviews").textContent()).toContain("Done on time, clean code.")

    // The contractor answers the review on their own profile (only they see the form); the customer reads the answer.
    await k.goto(`${origin}/u/${contractorUuid}?lang=en`)
    const reviewed = k.locator(".review", { hasText: "Done on time" })
    await reviewed.locator("summary", { hasText: "Reply to the review" }).click()
    await reviewed.getByLabel("Your reply").fill("Thank you, it was a pleasure.")
    await reviewed.getByRole("button", { name: "Publish the reply" }).click()
    await k.locator(".review__reply", { hasText: "it was a pleasure" }).waitFor()
    await checkPage(k, "profile-own", `/u/${contractorUuid}`)
    await c.reload()
    expect(await c.locator(".review__reply").textContent()).toContain("Thank you, it was a pleasure.")
    expect(await c.locator(".review summary").count()).toBe(0)

    // The moderator removes the review from the reviews queue, with a reason; the profile shows it no more.
    await m.goto(`${origin}/moderation/reviews?lang=en`)
    const moderated = m.locator("li.row", { hasText: "Done on time" })
    await moderated.getByLabel("Reason (the review's author and its subject read it)").fill("Removed as a test of the queue.")
    // The decision loads the page again: the next address only once that load is over.
    await Promise.all([m.waitForEvent("load"), moderated.getByRole("button", { name: "Remove the review" }).click()])
    expect(await m.locator("li.row", { hasText: "Done on time" }).count()).toBe(0)
    await m.goto(`${origin}/moderation/reviews?lang=en&status=removed`)
    expect(await m.locator("li.row", { hasText: "Done on time" }).textContent()).toContain("Removed as a test of the queue.")
    await c.reload()
    expect(await c.locator("main").textContent()).not.toContain("Done on time")

    // Addresses a person would guess, without a session: to sign in and back.
    for (const path of ["/tasks/new", "/publications", "/deals", "/messages", "/responses", "/moderation"]) {
      const answer = await fetch(`${origin}${path}?lang=en`, { redirect: "manual" })
      expect([path, answer.status, answer.headers.get("location")]).toEqual([path, 303, `/sign-in?lang=en&next=${encodeURIComponent(`${path}?lang=en`)}`])
    }
    expect([...customer.errors, ...contractor.errors, ...moderator.errors]).toEqual([])
    await Promise.all([customer.context.close(), contractor.context.close(), moderator.context.close()])
  })
})
