import { describe, expect, it } from "vitest"
import { openJourney, poll } from "./webJourney.js"

// The vacancy journey through the web application's pages (packages/web), three people at once
// in one real Chromium: an employer publishes a vacancy, a moderator approves it, a job seeker
// finds it and responds with a cover letter, the employer sees the response among job contacts
// and accepts it; both see it accepted. Every step is a click or a keystroke on a page.

const moderatorEmail = "moderator.web-vacancy@example.com"

const world = openJourney({ label: "web_vacancy", moderators: [moderatorEmail], shots: "web-more", subnet: 102 })

describe("the vacancy journey through the pages", { timeout: 900_000 }, () => {
  it("publish a vacancy → moderate → find and respond → the employer accepts → both see it accepted", async () => {
    const { origin, person, checkPage } = world
    const [employer, seeker, moderator] = await Promise.all([
      person(`employer.web-vacancy.${Date.now()}@example.com`),
      person(`seeker.web-vacancy.${Date.now()}@example.com`),
      person(moderatorEmail)
    ])
    const word = `Quokkasoft${Date.now().toString(36)}`
    const title = `Front-end developer at ${word}`

    // The employer: from my publications to the vacancy editor.
    const e = employer.tab
    await e.goto(`${origin}/publications?lang=en`)
    await e.getByRole("link", { name: "New vacancy" }).click()
    await e.waitForURL(`${origin}/jobs/new?lang=en`)
    await checkPage(e, "vacancy-editor", "/jobs/new")
    await e.getByLabel("Position").fill(title)
    await e.getByLabel("Company").fill(`${word} Ltd`)
    await e.getByLabel("Description").fill("React and TypeScript, a design system, accessibility first.")
    await e.getByLabel("From", { exact: true }).fill("150 000")
    await e.getByLabel("Up to", { exact: true }).fill("120000")
    await e.getByLabel("Employment").selectOption("full_time")
    await e.getByLabel("Workplace").selectOption("remote")
    await e.getByLabel("Experience").selectOption("1-3")
    // A fork upside down is refused on the page; nothing is saved.
    await e.getByRole("button", { name: "Save draft" }).click()
    await e.getByText("Check the salary: whole amounts, the lower bound not above the upper one.").waitFor()
    expect(e.url()).toBe(`${origin}/jobs/new?lang=en`)
    await e.getByLabel("Up to", { exact: true }).fill("200 000")
    await e.getByRole("button", { name: "Save draft" }).click()
    await e.waitForURL(`${origin}/publications?lang=en`)
    const row = e.locator("li.row", { hasText: title })
    expect(await row.locator(".tag").textContent()).toBe("Draft")
    expect(await row.textContent()).toContain("Vacancy")
    await row.getByRole("link", { name: `Edit “${title}”` }).click()
    await e.waitForURL(/\/jobs\/[0-9a-f-]{36}\/edit\?lang=en$/)
    const vacancyUuid = e.url().match(/\/jobs\/([0-9a-f-]{36})\//)![1]!
    expect([await e.getByLabel("From", { exact: true }).inputValue(), await e.getByLabel("Up to", { exact: true }).inputValue(), await e.getByLabel("Workplace").inputValue()])
      .toEqual(["150000", "200000", "remote"])
    await e.getByRole("button", { name: "Send to moderation" }).click()
    await e.waitForURL(`${origin}/publications?lang=en`)
    expect(await e.locator("li.row", { hasText: title }).locator(".tag").textContent()).toBe("Awaiting moderation")

    // The moderator approves it from the queue.
    const m = moderator.tab
    await m.goto(`${origin}/moderation?lang=en`)
    await m.locator("li.row", { hasText: title }).getByRole("button", { name: "Approve" }).click()
    await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)
    await e.reload()
    expect(await e.locator("li.row", { hasText: title }).locator(".tag").textContent()).toBe("Published")

    // The job seeker finds it by a word and responds with a cover letter.
    const s = seeker.tab
    await s.goto(`${origin}/catalog?lang=en`)
    await s.getByLabel("Words to search for").fill(word)
    await s.getByRole("button", { name: "Search" }).click()
    await s.waitForURL(/\/catalog\?.*q=/)
    await s.getByRole("link", { name: title }).click()
    await s.waitForURL(`${origin}/p/${vacancyUuid}?lang=en`)
    expect(await s.locator("main").innerText()).toMatch(/150[\s\u00a0,]000/)
    await checkPage(s, "vacancy-respond", `/p/${vacancyUuid}`)
    await s.getByLabel("Your cover letter").fill("Five years of React; I care about keyboards and screen readers.")
    await s.getByRole("button", { name: "Send the response" }).click()
    await s.getByText("Your response has been sent.").waitFor()
    await s.goto(`${origin}/responses?lang=en`)
    const sent = s.locator("section[aria-labelledby=jobs-sent] li.row", { hasText: title })
    expect(await sent.locator(".tag").textContent()).toBe("Applied")

    // The employer: the response among job contacts; accepted.
    await e.goto(`${origin}/responses?lang=en`)
    const received = e.locator("section[aria-labelledby=jobs-received] li.row", { hasText: title })
    expect(await received.textContent()).toContain("Five years of React")
    expect(await received.locator(".tag").textContent()).toBe("Applied")
    await checkPage(e, "vacancy-contacts", "/responses")
    await e.locator("section[aria-labelledby=jobs-received] li.row", { hasText: title }).getByRole("button", { name: "Accept" }).click()
    await poll(() => e.locator("section[aria-labelledby=jobs-received] li.row", { hasText: title }).locator(".tag").textContent()).toBe("Accepted")
    expect(await e.locator("section[aria-labelledby=jobs-received] li.row", { hasText: title }).getByRole("button", { name: /^(Accept|Decline)$/ }).count()).toBe(0)
    // The job seeker sees it accepted; nothing left to withdraw.
    await s.reload()
    const after = s.locator("section[aria-labelledby=jobs-sent] li.row", { hasText: title })
    expect(await after.locator(".tag").textContent()).toBe("Accepted")
    expect(await after.getByRole("button", { name: "Withdraw" }).count()).toBe(0)

    for (const path of ["/jobs/new", `/jobs/${vacancyUuid}/edit`]) {
      const answer = await fetch(`${origin}${path}?lang=en`, { redirect: "manual" })
      expect([path, answer.status]).toEqual([path, 303])
    }
    expect([...employer.errors, ...seeker.errors, ...moderator.errors]).toEqual([])
    await Promise.all([employer.context.close(), seeker.context.close(), moderator.context.close()])
  })
})
