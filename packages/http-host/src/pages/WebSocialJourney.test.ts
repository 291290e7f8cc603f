import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { openJourney, poll, eventWorker } from "./webJourney.js"

// Favorites, comments, complaints and notifications through the web application's pages
// (packages/web), three people at once in one real Chromium: an author publishes a task, a
// moderator approves it; a reader keeps it in favorites, comments, and the author answers; the
// reader complains about it; the moderator upholds the complaint with a reason on the complaints
// queue; the reader sees the decision on "My complaints", and the notification of the reader's
// own automation rule arrives: the header's badge counts it until it is marked read.

const moderatorEmail = "moderator.web-social@example.com"

const world = openJourney({ label: "web_social", moderators: [moderatorEmail], shots: "web-social", subnet: 105 })

// The worker's steps, on demand (the test host runs no in-process workers): events numbered,
// then fanned out to the automation rules, whose notification.create writes the inbox's entry.
const runWorker = eventWorker(world)

// Six pages checked in both languages and widths: longer than a journey of three on a busy machine.
describe("favorites, comments, complaints and notifications through the pages", { timeout: 900_000 }, () => {
  it("favorite → comment and reply → complain → the moderator upholds → the status and a notification with the badge", async () => {
    const { origin, person, checkPage, service } = world
    // One after another: three sign-ins at once strain a busy machine's page loads.
    const author = await person(`author.web-social.${Date.now()}@example.com`)
    const reader = await person(`reader.web-social.${Date.now()}@example.com`)
    const moderator = await person(moderatorEmail)
    const title = `A shop window for Quillberry ${Date.now().toString(36)}`

    // The author publishes a task; the moderator approves it.
    const a = author.tab
    await a.goto(`${origin}/tasks/new?lang=en`)
    await a.getByLabel("Title").fill(title)
    await a.getByLabel("Category").selectOption("Сайты")
    await a.getByLabel("Description").fill("A small shop window with a catalog of teas and a contact form.")
    await a.getByRole("button", { name: "Send to moderation" }).click()
    await a.waitForURL(`${origin}/publications?lang=en`)
    const m = moderator.tab
    await m.goto(`${origin}/moderation?lang=en`)
    await m.locator("li.row", { hasText: title }).getByRole("button", { name: "Approve" }).click()
    await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)

    // The reader's own rule: a notification when a moderator decides on their complaint (rules
    // have no page yet: it is made through the API with the reader's session).
    const r = reader.tab
    const session = (await reader.context.cookies()).find((cookie) => cookie.name === "__Host-birzha_session")!
    const rule = await service.call("POST", "/api/v1/automations", { cookie: `${session.name}=${session.value}` }, {
      requestUuid: randomUUID(),
      name: "Решение по жалобе",
      trigger: { eventType: "complaint.moderated" },
      action: { type: "notification.create" },
      limits: { maxRunsPerDay: 100 }
    })
    expect(rule.status, JSON.stringify(rule.body)).toBe(200)

    // The reader finds the task and keeps it in favorites; the page remembers.
    await r.goto(`${origin}/catalog?lang=en`)
    await r.getByLabel("Words to search for").fill("Quillberry")
    await r.getByRole("button", { name: "Search" }).click()
    await r.getByRole("link", { name: title }).click()
    await r.waitForURL(/\/p\/[0-9a-f-]{36}\?lang=en$/)
    const publicationPath = new URL(r.url()).pathname
    const star = r.getByRole("button", { name: "Add to favorites" })
    expect(await star.getAttribute("aria-pressed")).toBe("false")
    await star.click()
    await r.getByRole("button", { name: "In favorites" }).waitFor()
    await r.reload()
    expect(await r.getByRole("button", { name: "In favorites" }).getAttribute("aria-pressed")).toBe("true")
    // Favorites are in the person's menu under their name.
    await r.locator(".site-menu summary").click()
    await r.getByRole("link", { name: "Favorites" }).click()
    await r.waitForURL(`${origin}/favorites?lang=en`)
    expect(await r.locator("li.row", { hasText: title }).locator(".tag").textContent()).toBe("Task")
    await checkPage(r, "favorites", "/favorites")

    // A comment from the reader; the author answers it (marked as the publication's author).
    await r.goto(`${origin}${publicationPath}?lang=en`)
    expect(await r.locator("#comments-heading + p").textContent()).toBe("No comments yet.")
    await r.getByLabel("Your comment").fill("Do you need the texts of the tea cards too?")
    await r.getByRole("button", { name: "Publish the comment" }).click()
    await r.locator(".comment", { hasText: "tea cards too" }).waitFor()
    await a.goto(`${origin}${publicationPath}?lang=en`)
    const question = a.locator(".comment", { hasText: "tea cards too" })
    await question.locator("summary", { hasText: "Reply" }).click()
    await question.getByLabel("Your reply").fill("Yes, forty cards, I will send the list.")
    await question.getByRole("button", { name: "Send the reply" }).click()
    await a.locator(".comments--answers .comment", { hasText: "forty cards" }).waitFor()
    expect(await a.locator(".comments--answers .comment").textContent()).toContain("Author of the publication")
    // The author may delete answers on their publication; the reader only their own comment.
    await r.reload()
    expect(await r.locator(".comments--answers .comment", { hasText: "forty cards" }).getByRole("button").count()).toBe(0)
    expect(await r.locator(".comment", { hasText: "tea cards too" }).first().getByRole("button", { name: /^Delete the comment of/ }).count()).toBe(1)

    // The reader complains about the publication; "My complaints" shows it under review.
    await r.locator("summary", { hasText: "Report this publication" }).click()
    await r.getByLabel("What is wrong").fill("The same task is published three times under other names.")
    await r.getByRole("button", { name: "Send the complaint" }).click()
    await r.getByText("Your complaint has been sent.").waitFor()
    await checkPage(r, "publication-social", publicationPath)
    await r.goto(`${origin}/complaints?lang=en`)
    const complaint = r.locator("li.row", { hasText: "three times" })
    expect(await complaint.locator(".tag").textContent()).toBe("Under review")
    await checkPage(r, "complaints", "/complaints")

    // The moderator: the complaints queue, from the publications' queue; uphold with a reason.
    await m.goto(`${origin}/moderation?lang=en`)
    await m.getByRole("navigation", { name: "Queues" }).getByRole("link", { name: "Complaints" }).click()
    await m.waitForURL(`${origin}/moderation/complaints?lang=en`)
    const queued = m.locator("li.row", { hasText: "three times" })
    expect(await queued.getByRole("link", { name: title }).count()).toBe(1)
    await checkPage(m, "moderation-complaints", "/moderation/complaints")
    // A decision needs its reason: without one the page asks for it and sends nothing.
    await queued.getByRole("button", { name: "Uphold" }).click()
    await queued.getByText("Write the reason of the decision.").waitFor()
    await queued.getByLabel("Reason (the author of the complaint reads it)").fill("Thank you: the duplicates were merged.")
    await queued.getByLabel("If upheld").selectOption("none")
    await queued.getByRole("button", { name: "Uphold" }).click()
    await poll(() => m.locator("li.row", { hasText: "three times" }).count()).toBe(0)
    // The queue reloads itself after a decision: a navigation started meanwhile is interrupted, so try again.
    await poll(() => m.goto(`${origin}/moderation/complaints?lang=en&status=upheld`).then(() => true, () => false)).toBe(true)
    expect(await m.locator("li.row", { hasText: "three times" }).textContent()).toContain("Thank you: the duplicates were merged.")
    await checkPage(m, "moderation-reviews", "/moderation/reviews")

    // The reader: the decision and its reason; the rule's notification arrives, the badge counts it.
    await runWorker()
    await r.goto(`${origin}/complaints?lang=en`)
    expect(await complaint.locator(".tag").textContent()).toBe("Upheld")
    expect(await complaint.textContent()).toContain("Reason: Thank you: the duplicates were merged.")
    expect(await r.locator("#unread-badge").textContent()).toBe("1")
    expect(await r.locator("#notifications-link").textContent()).toContain("Notifications: 1 unread")
    await r.locator("#notifications-link").click()
    await r.waitForURL(`${origin}/notifications?lang=en`)
    const note = r.locator("li.row", { hasText: "Решение по жалобе" })
    expect(await note.textContent()).toContain("A moderator decided on a complaint")
    await checkPage(r, "notifications", "/notifications")
    await r.goto(`${origin}/notifications?lang=ru`)
    expect(await r.locator("li.row", { hasText: "Решение по жалобе" }).textContent()).toContain("Модератор принял решение по жалобе")
    expect(await r.locator("#unread-badge").textContent()).toBe("1")
    await r.getByRole("button", { name: "Отметить «Решение по жалобе» прочитанным" }).click()
    await poll(() => r.locator("#unread-badge").count()).toBe(0)
    expect(await r.locator("li.row", { hasText: "Решение по жалобе" }).locator(".tag").count()).toBe(0)

    // At 390 px the header stays one row: the sections fold into the menu, which opens and closes by keyboard.
    await r.setViewportSize({ width: 390, height: 800 })
    await r.goto(`${origin}/favorites?lang=en`)
    const header = await r.locator(".site-header__inner").boundingBox()
    expect(header!.height).toBeLessThan(70)
    expect(await r.getByRole("link", { name: "Deals" }).count()).toBe(0)
    await r.locator(".site-menu summary").focus()
    await r.keyboard.press("Enter")
    expect(await r.getByRole("link", { name: "Deals" }).isVisible()).toBe(true)
    await r.keyboard.press("Escape")
    expect(await r.getByRole("link", { name: "Deals" }).count()).toBe(0)
    await r.setViewportSize({ width: 1280, height: 900 })

    // Without a session the new pages send to sign-in and back.
    for (const path of ["/favorites", "/complaints", "/notifications", "/moderation/complaints", "/moderation/reviews"]) {
      const answer = await fetch(`${origin}${path}?lang=en`, { redirect: "manual" })
      expect([path, answer.status, answer.headers.get("location")]).toEqual([path, 303, `/sign-in?lang=en&next=${encodeURIComponent(`${path}?lang=en`)}`])
    }
    expect([...author.errors, ...reader.errors, ...moderator.errors]).toEqual([])
    await Promise.all([author.context.close(), reader.context.close(), moderator.context.close()])
  })
})
