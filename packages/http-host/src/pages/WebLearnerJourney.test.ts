import { catalog } from "@birzha/domain"
import { advanceRuns } from "@birzha/domain/internal"
import { ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { signIn, type SignedIn } from "../../../../testing/signIn.js"
import { openJourney, poll } from "./webJourney.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

// The learner's journey through the web application's pages (packages/web): an author, set up
// through the API, publishes a course with a text step, a quiz and a reviewed assignment and opens
// a run; two learners find it and enroll through the pages; one reads the text, answers the quiz
// (a wrong answer, then the right one: the score and the attempts left shown), writes the
// assignment (its draft saved as they type; a newer draft saved in another tab is explained, not
// lost), asks for more time (the calendar shows the new date and where it comes from) and submits;
// the author reviews it through the API and the learner's open page shows the grade without a
// reload. Every learning page is checked in both languages at 1280 and 390 px.

const moderatorEmail = "moderator.web-learner@example.com"

const world = openJourney({ label: "web_learner", moderators: [moderatorEmail], shots: "web-learning", subnet: 107 })

type Body = Record<string, any>

/** One operation over HTTP at its declared route, as `who`: path parameters from the arguments, the rest as the query (GET) or the body. */
const act = async (who: SignedIn, id: string, args: Body = {}): Promise<Body> => {
  const entry = catalog.find((candidate) => candidate.id === id)
  if (entry === undefined) throw new Error(`no operation ${id} in the catalog`)
  const rest: Body = { ...args }
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = String(rest[name])
    delete rest[name]
    return encodeURIComponent(value)
  })
  const answer = entry.method === "GET"
    ? await world.service.call<Body>("GET", `${path}?${new URLSearchParams(Object.entries(rest).map(([k, v]) => [k, String(v)])).toString()}`, who)
    : await world.service.call<Body>(entry.method, path, who, { requestUuid: randomUUID(), ...rest })
  expect(answer.status, `${id}: ${JSON.stringify(answer.body)}`).toBe(200)
  return answer.body
}

const day = 86_400_000

describe("the learner's journey through the pages", { timeout: 900_000 }, () => {
  it("catalog → course page → enroll (two learners) → text → quiz scored → assignment drafted and submitted → extension on the calendar → reviewed: the grade appears without a reload", async () => {
    const { origin, person, checkPage, service, db } = world
    const people = { url: service.host.url, origin, db }
    const [author, moderator] = await Promise.all([signIn(people), signIn({ ...people, email: moderatorEmail })])
    const word = `Питонлаб${Date.now().toString(36)}`
    const title = `Основы программирования ${word}`

    // The author: a training publication, approved, becomes a course with a text step, a quiz and a reviewed assignment.
    const publication = await act(author, "learning.save", {
      data: { title, description: "Переменные, циклы и функции на коротких задачах", training: { level: "beginner", format: "online", durationHours: 12 } }
    })
    const submitted = await act(author, "learning.submit", { publicationUuid: publication.uuid, expectedRevision: publication.revision })
    const approved = await service.call("POST", "/api/v1/moderation/decisions", moderator, {
      requestUuid: randomUUID(), publicationUuid: publication.uuid, expectedRevision: submitted.revision, decision: "approve"
    })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    const draft = await act(author, "learning.courses.from_publication", { publicationUuid: publication.uuid })
    const course = draft.uuid as string
    const edited = await act(author, "learning.courses.update", {
      course,
      expectedRevision: draft.revision,
      visibility: "listed",
      nodes: [
        ...draft.nodes,
        {
          nodeKey: "quiz", parentKey: "module-1", kind: "step", stepType: "quiz", title: "Проверка: умножение",
          body: "Сколько будет шесть умножить на семь? Ответ — число.",
          grading: { maxPoints: 10, passThreshold: 10, attempts: 3, check: { kind: "exact", answers: ["42"] } }, dueOffsetDays: 7
        },
        {
          nodeKey: "essay", parentKey: "module-1", kind: "step", stepType: "assignment", title: "Эссе о циклах",
          body: "Опишите своими словами, чем цикл for отличается от while.",
          grading: { maxPoints: 10, passThreshold: 6, review: { mode: "staff" } }, dueOffsetDays: 14
        }
      ]
    })
    await act(author, "learning.courses.publish", { course, expectedRevision: edited.revision, changelog: "Первый выпуск" })
    const created = await act(author, "learning.runs.create", {
      course, versionNumber: 1, title: "Весенний поток", pacing: "cohort",
      startsAt: new Date(Date.now() - 60_000).toISOString(), endsAt: new Date(Date.now() + 60 * day).toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 },
      extensionPolicy: { autoApproveDays: 7, maxDays: 30, maxCount: 3, windowDays: 7 }
    })
    await act(author, "learning.runs.update", { run: created.uuid, expectedRevision: created.revision, publish: true })
    // The run clock (the worker's learning_runs job; the test host runs no workers) starts it.
    const worker = ManagedRuntime.make(testPgLayer(service.database.url, 1))
    try {
      expect(await worker.runPromise(advanceRuns(new Date()))).toBeGreaterThanOrEqual(1)
    } finally {
      await worker.dispose()
    }

    // One after the other: two sign-ins at once are slow on a busy machine.
    const learner = await person(`learner.web-learning.${Date.now()}@example.com`)
    const second = await person(`second.web-learning.${Date.now()}@example.com`)

    // The first learner finds the course in the learning catalog and opens its page.
    const l = learner.tab
    await l.goto(`${origin}/courses?lang=en`)
    await l.getByLabel("Words to look for").fill(word)
    await l.getByRole("button", { name: "Search" }).click()
    await l.waitForURL(/\/courses\?.*q=/)
    await checkPage(l, "learning-courses", `/courses?q=${encodeURIComponent(word)}`)
    await l.getByRole("link", { name: title }).click()
    await l.waitForURL(/\/courses\/[0-9a-f-]{36}\?lang=en$/)
    const coursePath = new URL(l.url()).pathname
    const page = await l.locator("main").innerText()
    expect(page).toContain("Проверка: умножение")
    expect(page).toContain("Весенний поток")
    expect(page).toContain("open enrollment")
    await checkPage(l, "learning-course", coursePath)
    await l.getByRole("button", { name: "Enroll" }).click()
    await l.waitForURL(/\/learning\/[0-9a-f-]{36}\?lang=en$/)
    const playerPath = new URL(l.url()).pathname

    // The second learner enrolls from the course's page too.
    const s = second.tab
    await s.goto(`${origin}${coursePath}?lang=en`)
    await s.getByRole("button", { name: "Enroll" }).click()
    await s.waitForURL(/\/learning\/[0-9a-f-]{36}\?lang=en$/)
    expect(await s.locator(".player__tree").innerText()).toContain("Эссе о циклах")

    // The text step: read, marked done.
    const tree = l.locator(".player__tree")
    expect(await tree.locator("a").count()).toBe(3)
    await checkPage(l, "learning-player", playerPath)
    const firstStep = tree.locator("a").first()
    await firstStep.click()
    await l.getByRole("button", { name: "Mark as done" }).click()
    await poll(() => tree.locator("li").first().locator(".tag").textContent()).toBe("Done")

    // The quiz: a wrong answer (0 points, two attempts left), then the right one (10 of 10, passed).
    await tree.getByRole("link", { name: "Проверка: умножение" }).click()
    await l.waitForURL(/step=quiz/)
    expect(await l.locator("#attempts").textContent()).toBe("Attempts left: 3 of 3")
    await l.getByLabel("Your answer").fill("41")
    await l.getByRole("button", { name: "Submit the answer" }).click()
    await poll(() => l.locator(".attempt").first().locator(".score__total").textContent()).toContain("0 of 10 points")
    expect(await l.locator("#attempts").textContent()).toBe("Attempts left: 2 of 3")
    await l.getByLabel("Your answer").fill("42")
    await l.getByRole("button", { name: "Submit the answer" }).click()
    await poll(() => l.locator(".attempt").first().locator(".score__total").textContent()).toContain("10 of 10 points")
    expect(await l.locator(".attempt").first().textContent()).toContain("passed")
    expect(await l.locator(".attempt").first().locator(".layers").textContent()).toContain("Automatic check")
    await l.reload()
    expect(await tree.getByRole("listitem").filter({ hasText: "Проверка: умножение" }).locator(".tag").textContent()).toBe("Done")

    // The assignment: the draft is saved while typing; a newer draft saved in another tab is explained and the text kept.
    await tree.getByRole("link", { name: "Эссе о циклах" }).click()
    await l.waitForURL(/step=essay/)
    await l.getByLabel("Your work").fill("Цикл for проходит по коллекции.")
    await poll(() => l.locator("#draft-state").textContent()).toBe("The draft is saved.")
    const other = await learner.context.newPage()
    await other.goto(`${origin}${playerPath}?lang=en&step=essay`)
    expect(await other.getByLabel("Your work").inputValue()).toBe("Цикл for проходит по коллекции.")
    await other.getByLabel("Your work").fill("Черновик из другой вкладки.")
    await poll(() => other.locator("#draft-state").textContent()).toBe("The draft is saved.")
    await other.close()
    await l.getByLabel("Your work").fill("Цикл for проходит по коллекции, а while — пока условие истинно.")
    await l.getByRole("alert").getByText("A newer draft of this step was saved elsewhere").waitFor()
    expect(await l.getByRole("alert").textContent()).toContain("Черновик из другой вкладки.")
    expect(await l.getByLabel("Your work").inputValue()).toBe("Цикл for проходит по коллекции, а while — пока условие истинно.")
    await l.getByRole("button", { name: "Keep my text" }).click()
    await poll(() => l.locator("#draft-state").textContent()).toBe("The draft is saved.")
    expect(await l.getByRole("alert").count()).toBe(0)

    // More time on the essay, asked from the calendar: approved at once (within the run's policy), the new date shown with its source.
    await l.goto(`${origin}${playerPath}/calendar?lang=en`)
    const essayRow = l.locator("li.row[data-node=essay]")
    const dueBefore = await essayRow.locator("time.due").getAttribute("datetime")
    expect(await essayRow.locator(".sources--dueAt").textContent()).toContain("Course schedule")
    await essayRow.getByText("Ask for more time").click()
    await essayRow.getByLabel("How many more days").fill("3")
    await essayRow.getByLabel("Why you need them").fill("Уезжаю на конференцию")
    await essayRow.getByRole("button", { name: "Send the request" }).click()
    await poll(() => l.locator("li.row[data-node=essay] .sources--dueAt .sources__effective").textContent()).toContain("Extension")
    const dueAfter = await l.locator("li.row[data-node=essay] time.due").getAttribute("datetime")
    expect(new Date(dueAfter!).getTime() - new Date(dueBefore!).getTime()).toBe(3 * day)
    expect(await l.locator("section[aria-labelledby=extensions]").textContent()).toContain("Approved")
    await checkPage(l, "learning-calendar", `${playerPath}/calendar`)

    // The essay is submitted and waits for a review.
    await l.goto(`${origin}${playerPath}?lang=en&step=essay`)
    expect(await l.getByLabel("Your work").inputValue()).toBe("Цикл for проходит по коллекции, а while — пока условие истинно.")
    await l.getByRole("button", { name: "Submit for review" }).click()
    const latest = l.locator(".attempt").first()
    await poll(() => latest.locator(".tag").first().textContent()).toBe("Waiting for review")
    await checkPage(l, "learning-player-essay", `${playerPath}?step=essay`)
    await l.goto(`${origin}${playerPath}?lang=en&step=essay`)

    // My learning: the course with its progress and the next step.
    const mine = await learner.context.newPage()
    await mine.goto(`${origin}/learning?lang=en`)
    const row = mine.locator("li.row", { hasText: title })
    expect(await row.locator(".tag").textContent()).toBe("Learning")
    expect(await row.textContent()).toContain("2 of 3 steps done")
    await checkPage(mine, "learning-mine", "/learning")
    await mine.close()

    // The author reviews the essay through the API; the learner's open page shows the grade by itself.
    const essayUuid = await latest.getAttribute("data-uuid")
    const claimed = await act(author, "learning.reviews.claim", { submission: essayUuid })
    await act(author, "learning.reviews.decide", {
      submission: essayUuid, expectedRevision: claimed.revision, outcome: "accept", points: 8,
      rubric: [{ criterion: "Полнота", points: 8 }], comment: "Хорошо, но не хватает примера"
    })
    await poll(() => latest.locator(".score__total").textContent()).toContain("8 of 10 points")
    expect(await latest.textContent()).toContain("Хорошо, но не хватает примера")
    // The attempt's state arrives with the page's next read of the history, not always with the score.
    await poll(() => latest.locator(".tag").first().textContent()).toBe("Accepted")
    expect(await latest.locator(".layers").textContent()).toContain("The grade a reviewer gave your work.")
    await screenshot(l, "web-learning/learning-graded-en-1280")

    // The learner's review of the course, shown on its public page.
    await l.getByLabel("4 stars").check()
    await l.getByLabel("What you think of it (optional)").fill("Понятные задания и быстрые проверки")
    await l.getByRole("button", { name: "Save the review" }).click()
    await l.getByText("Thank you, the review is saved.").waitFor()
    await s.goto(`${origin}${coursePath}?lang=en`)
    expect(await s.locator("section[aria-labelledby=course-reviews]").textContent()).toContain("Понятные задания и быстрые проверки")
    expect(await s.locator("section[aria-labelledby=course-reviews]").textContent()).toContain("1 review, on average 4 of 5")

    expect([...learner.errors, ...second.errors]).toEqual([])
    await Promise.all([learner.context.close(), second.context.close()])
  })
})
