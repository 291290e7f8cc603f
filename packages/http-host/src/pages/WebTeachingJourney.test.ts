import { catalog } from "@birzha/domain"
import { advanceRuns } from "@birzha/domain/internal"
import { ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { signIn } from "../../../../testing/signIn.js"
import type { Caller } from "../testService.js"
import { openJourney, type Person, poll } from "./webJourney.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

// The teachers' journey through the web application's pages (packages/web, /teaching): an owner,
// set up through the API, publishes a course with a quiz and a staff-reviewed assignment whose
// review is released by hand, and makes a reviewer and an instructor its staff; a learner enrolls
// and submits both (through the API: the learner's pages have their own journey). Then, through the
// pages only: the reviewer finds the work from the dashboard's count, claims it in the queue and
// decides it in the workspace (rubric, points, comment, the draft saved as they type), then releases
// it; the learner sees the score and appeals; the instructor adjusts the grade on the appeals page;
// the learner asks for more time, the instructor approves it and the learner's calendar shows the
// new date with its source; the instructor previews a regrade plan's difference (who changes from
// what to what) and commits it. Each role sees only the sections its rights open. Every teaching
// page is checked in both languages at 1280 and 390 px.

const moderatorEmail = "moderator.web-teaching@example.com"
const shots = "teaching"

const world = openJourney({ label: "web_teaching", moderators: [moderatorEmail], shots, subnet: 108 })

type Body = Record<string, any>

/** One operation over HTTP at its declared route, as `who`: path parameters from the arguments, the rest as the query (GET) or the body. */
const act = async (who: Caller, id: string, args: Body = {}): Promise<Body> => {
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

/** The session a person signed in with through the pages, for the API calls that set the scene. */
const sessionOf = async (person: Person): Promise<Caller> => {
  const cookie = (await person.context.cookies()).find((c) => c.name === "__Host-birzha_session")
  if (cookie === undefined) throw new Error("no session cookie after signing in")
  return { cookie: `${cookie.name}=${cookie.value}` }
}

/** The sections the course's teaching navigation offers, by their English names. */
const sections = async (tab: Page) => (await tab.locator("nav.tabs a").allTextContents()).map((text) => text.trim())

const day = 86_400_000

describe("the teachers' journey through the pages", { timeout: 900_000 }, () => {
  it("dashboard → queue → claim → review decided and released → learner appeals → instructor adjusts → extension approved on the calendar → regrade plan's difference committed", async () => {
    const { origin, person, checkPage, service, db } = world
    const people = { url: service.host.url, origin, db }
    const [owner, moderator] = await Promise.all([signIn(people), signIn({ ...people, email: moderatorEmail })])
    const title = `Алгоритмы ${Date.now().toString(36)}`

    // The owner: an approved training publication becomes a course with a quiz and an essay whose review is released by hand.
    const publication = await act(owner, "learning.save", {
      data: { title, description: "Сортировки, поиск и оценка сложности", training: { level: "beginner", format: "online", durationHours: 10 } }
    })
    const submitted = await act(owner, "learning.submit", { publicationUuid: publication.uuid, expectedRevision: publication.revision })
    const approved = await service.call("POST", "/api/v1/moderation/decisions", moderator, {
      requestUuid: randomUUID(), publicationUuid: publication.uuid, expectedRevision: submitted.revision, decision: "approve"
    })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    const draft = await act(owner, "learning.courses.from_publication", { publicationUuid: publication.uuid })
    const course = draft.uuid as string
    const edited = await act(owner, "learning.courses.update", {
      course,
      expectedRevision: draft.revision,
      visibility: "listed",
      nodes: [
        ...draft.nodes,
        {
          nodeKey: "quiz", parentKey: "module-1", kind: "step", stepType: "quiz", title: "Сложность сортировки",
          body: "Сколько сравнений делает сортировка пузырьком на 7 элементах в худшем случае?",
          grading: { maxPoints: 10, passThreshold: 10, attempts: 3, check: { kind: "exact", answers: ["21"] } }, dueOffsetDays: 7
        },
        {
          nodeKey: "essay", parentKey: "module-1", kind: "step", stepType: "assignment", title: "Эссе о бинарном поиске",
          body: "Объясните, почему бинарный поиск работает за логарифмическое время.",
          grading: { maxPoints: 10, passThreshold: 6, review: { mode: "staff", release: "manual" } }, dueOffsetDays: 14
        }
      ]
    })
    await act(owner, "learning.courses.publish", { course, expectedRevision: edited.revision, changelog: "Первый выпуск" })
    const created = await act(owner, "learning.runs.create", {
      course, versionNumber: 1, title: "Осенний поток", pacing: "cohort",
      startsAt: new Date(Date.now() - 60_000).toISOString(), endsAt: new Date(Date.now() + 60 * day).toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 },
      // Every request for more time waits for staff.
      extensionPolicy: { autoApproveDays: 0, maxDays: 30, maxCount: 3, windowDays: 7 }
    })
    await act(owner, "learning.runs.update", { run: created.uuid, expectedRevision: created.revision, publish: true })
    const worker = ManagedRuntime.make(testPgLayer(service.database.url, 1))
    try {
      expect(await worker.runPromise(advanceRuns(new Date()))).toBeGreaterThanOrEqual(1)
    } finally {
      await worker.dispose()
    }

    // Three people sign in through the pages, one after the other; the owner makes two of them staff.
    const stamp = Date.now()
    const reviewer = await person(`reviewer.web-teaching.${stamp}@example.com`)
    const instructor = await person(`instructor.web-teaching.${stamp}@example.com`)
    const learner = await person(`learner.web-teaching.${stamp}@example.com`)
    const [reviewerApi, instructorApi, learnerApi] = await Promise.all([reviewer, instructor, learner].map(sessionOf))
    for (const [who, role] of [[reviewerApi, "reviewer"], [instructorApi, "instructor"]] as const) {
      const me = await act(who, "getMyCapabilities")
      const assigned = await act(owner, "learning.staff.assign", { course, profileUuid: me.profile.uuid, role, scope: {} })
      await act(who, "learning.staff.accept", { assignment: assigned.uuid, expectedRevision: assigned.revision })
    }

    // The learner enrolls, answers the quiz wrongly (20: 0 points) and submits the essay; it waits for a reviewer.
    const enrollment = await act(learnerApi, "learning.enrollments.enroll", { run: created.uuid })
    await act(learnerApi, "learning.submissions.create", { enrollment: enrollment.uuid, node: "quiz", reply: "20" })
    const essay = await act(learnerApi, "learning.submissions.create", {
      enrollment: enrollment.uuid, node: "essay", reply: "Каждый шаг делит отрезок пополам, поэтому шагов не больше log2(n)."
    })
    expect(essay.status).toBe("awaiting_review")

    // An analyst's dashboard (read as HTML with their session): no section beyond the dashboard is offered.
    const analyst = await signIn(people)
    const analystProfile = await act(analyst, "getMyCapabilities")
    const analystRole = await act(owner, "learning.staff.assign", { course, profileUuid: analystProfile.profile.uuid, role: "analyst", scope: {} })
    await act(analyst, "learning.staff.accept", { assignment: analystRole.uuid, expectedRevision: analystRole.revision })
    const analystPage = await fetch(`${service.host.url}/teaching/${course}?lang=en`, { headers: { cookie: analyst.cookie } })
    expect(analystPage.status).toBe(200)
    const analystHtml = await analystPage.text()
    expect(analystHtml).toContain("Your role on this course has no lists to work through.")
    for (const section of ["reviews", "appeals", "extensions", "roster", "regrades"]) expect(analystHtml).not.toContain(`/teaching/${course}/${section}?`)
    expect(analystHtml).toContain(`/teaching/${course}/analytics?`)

    // Without a session the teaching pages send to sign-in; a learner of the course is answered the 404 page, not a dashboard.
    const anonymous = await fetch(`${service.host.url}/teaching/${course}?lang=en`, { redirect: "manual" })
    expect([anonymous.status, anonymous.headers.get("location")]).toEqual([303, expect.stringContaining("/sign-in")])
    const asLearner = await fetch(`${service.host.url}/teaching/${course}/reviews?lang=en`, { headers: { cookie: learnerApi.cookie! } })
    expect(asLearner.status).toBe(404)

    // The reviewer: the teaching page lists the course with one thing to do; its dashboard's count leads to the queue.
    const r = reviewer.tab
    await r.goto(`${origin}/teaching?lang=en`)
    const courseRow = r.locator("li.row", { hasText: title })
    expect(await courseRow.locator(".todo").textContent()).toBe("1 thing to do")
    await checkPage(r, "teaching-courses", "/teaching")
    await r.getByRole("link", { name: title }).click()
    await r.waitForURL(new RegExp(`/teaching/${course}\\?lang=en$`))
    expect(await sections(r)).toEqual(["Dashboard", "Reviews", "Appeals"])
    await checkPage(r, "teaching-dashboard-reviewer", `/teaching/${course}`)
    await r.getByRole("link", { name: "1 work waits for a reviewer" }).click()
    await r.waitForURL(/\/reviews\?.*status=pooled/)
    const queued = r.locator(`li.row[data-submission="${essay.uuid}"]`)
    expect(await queued.locator(".tag").first().textContent()).toBe("Waiting for a reviewer")
    await checkPage(r, "teaching-queue", `/teaching/${course}/reviews?status=pooled`)

    // Claimed from the queue, the work opens in the workspace: the reply, the rubric, the draft saved as one types.
    await queued.getByRole("button", { name: /Take for review/ }).click()
    await r.waitForURL(new RegExp(`/teaching/${course}/reviews/${essay.uuid}`))
    expect(await r.locator("section[aria-labelledby=reply]").textContent()).toContain("Каждый шаг делит отрезок пополам")
    expect(await r.locator(".assignment-status").textContent()).toBe("Being reviewed")
    await r.getByLabel("Criterion 1", { exact: true }).fill("Обоснование")
    await r.getByLabel("Points for criterion 1").fill("6")
    await r.getByRole("button", { name: "Add a criterion" }).click()
    await r.getByLabel("Criterion 2", { exact: true }).fill("Пример")
    await r.getByLabel("Points for criterion 2").fill("2")
    await r.getByLabel("Comment to the learner").fill("Верно, но не хватает примера с числами")
    // "Saved" stands for the latest edit (the page says "saving" from the first keystroke until the
    // save of the last one answers), so the pages loaded again below read the whole draft.
    await poll(() => r.locator("#review-draft").textContent()).toBe("The draft of your review is saved.")
    const workspacePath = `/teaching/${course}/reviews/${essay.uuid}`
    await checkPage(r, "teaching-workspace", workspacePath)
    // The draft came back from the service after the page was loaded again.
    await r.goto(`${origin}${workspacePath}?lang=en`)
    expect(await r.getByLabel("Criterion 2", { exact: true }).inputValue()).toBe("Пример")
    expect(await r.getByLabel("Comment to the learner").inputValue()).toBe("Верно, но не хватает примера с числами")
    await r.getByLabel("Accept", { exact: true }).check()
    await r.getByRole("button", { name: "Save the decision" }).click()
    await poll(() => r.locator(".assignment-status").textContent()).toBe("Decided, not released")
    expect(await r.locator(".decision__summary").textContent()).toContain("Decision: Accept, 8 points.")
    // Decided but not released: the learner sees no score yet.
    expect((await act(learnerApi, "learning.submissions.get", { submission: essay.uuid })).score).toBeUndefined()
    await r.getByRole("button", { name: "Release to the learner" }).click()
    await poll(() => r.locator(".assignment-status").textContent()).toBe("Released to the learner")
    await r.locator(".history summary").click()
    expect(await r.locator(".history").textContent()).toContain("Released")
    await screenshot(r, `${shots}/teaching-workspace-released-en-1280`)

    // The learner sees the score and the comment, and appeals it.
    const l = learner.tab
    const playerPath = `/learning/${enrollment.uuid}`
    await l.goto(`${origin}${playerPath}?lang=en&step=essay`)
    const latest = l.locator(".attempt").first()
    expect(await latest.locator(".score__total").textContent()).toContain("8 of 10 points")
    expect(await latest.textContent()).toContain("Верно, но не хватает примера с числами")
    await latest.getByText("Appeal this grade").click()
    await latest.getByLabel("Why the grade seems wrong").fill("Пример есть во втором абзаце")
    await latest.getByLabel("The points you think fair (optional)").fill("10")
    await latest.getByRole("button", { name: "Send the appeal" }).click()
    await poll(() => l.locator(".attempt").first().locator(".learner-appeals").textContent()).toContain("Waiting for a decision")

    // The instructor: every section; the appeal from the dashboard's count, adjusted to the points asked.
    const i = instructor.tab
    await i.goto(`${origin}/teaching/${course}?lang=en`)
    expect(await sections(i)).toEqual(["Dashboard", "Reviews", "Appeals", "Extensions", "Learners", "Regrading", "Incidents", "Analytics"])
    await checkPage(i, "teaching-dashboard-instructor", `/teaching/${course}`)
    await i.getByRole("link", { name: "1 appeal waits for a decision" }).click()
    await i.waitForURL(/\/appeals\?.*status=open/)
    const appeal = i.locator("li.row", { hasText: "Пример есть во втором абзаце" })
    expect(await appeal.textContent()).toContain("Grade appealed: 8 points")
    expect(await appeal.textContent()).toContain("asked for: 10")
    await checkPage(i, "teaching-appeals", `/teaching/${course}/appeals?status=open`)
    await appeal.getByLabel("Change the points").check()
    await appeal.getByLabel("New points (to adjust)").fill("10")
    await appeal.getByLabel("Answer to the learner").fill("Согласен, пример засчитан")
    await appeal.getByRole("button", { name: "Send the decision" }).click()
    // Decided, it leaves the open ones; all the appeals show it with its result.
    await poll(() => i.locator("li.row", { hasText: "Пример есть во втором абзаце" }).count()).toBe(0)
    await i.locator("nav.filter").getByRole("link", { name: "All" }).click()
    await poll(() => i.locator("li.row", { hasText: "Пример есть во втором абзаце" }).locator(".appeal-status").textContent()).toBe("Decided")
    expect(await i.locator("li.row", { hasText: "Пример есть во втором абзаце" }).locator(".appeal-result").textContent()).toContain("8 → 10 points")

    // The learner's grade is now the appeal's.
    await l.reload()
    expect(await l.locator(".attempt").first().locator(".score__total").textContent()).toContain("10 of 10 points")
    expect(await l.locator(".attempt").first().locator(".layers").textContent()).toContain("Appeal")
    expect(await l.locator(".attempt").first().locator(".learner-appeals").textContent()).toContain("The points were changed")

    // More time on the quiz: asked on the calendar, approved by the instructor, shown on the calendar with its source.
    await l.goto(`${origin}${playerPath}/calendar?lang=en`)
    const quizRow = l.locator("li.row[data-node=quiz]")
    const dueBefore = await quizRow.locator("time.due").getAttribute("datetime")
    await quizRow.getByText("Ask for more time").click()
    await quizRow.getByLabel("How many more days").fill("4")
    await quizRow.getByLabel("Why you need them").fill("Болел на этой неделе")
    await quizRow.getByRole("button", { name: "Send the request" }).click()
    await poll(() => l.locator("section[aria-labelledby=extensions]").textContent()).toContain("Болел на этой неделе")
    expect(await l.locator("li.row[data-node=quiz] time.due").getAttribute("datetime")).toBe(dueBefore)

    await i.goto(`${origin}/teaching/${course}?lang=en`)
    await i.getByRole("link", { name: "1 request for more time" }).click()
    await i.waitForURL(/\/extensions\?.*status=requested/)
    const request = i.locator("li.row", { hasText: "Болел на этой неделе" })
    await checkPage(i, "teaching-extensions", `/teaching/${course}/extensions?status=requested`)
    await request.getByLabel("Answer to the learner").fill("Поправляйтесь")
    await request.getByRole("button", { name: /^Approve/ }).click()
    await poll(() => i.locator("li.row", { hasText: "Болел на этой неделе" }).count()).toBe(0)
    await i.locator("nav.filter").getByRole("link", { name: "All" }).click()
    await poll(() => i.locator("li.row", { hasText: "Болел на этой неделе" }).locator(".extension-status").textContent()).toBe("Approved")

    await l.reload()
    await poll(() => l.locator("li.row[data-node=quiz] .sources--dueAt .sources__effective").textContent()).toContain("Extension")
    const dueAfter = await l.locator("li.row[data-node=quiz] time.due").getAttribute("datetime")
    expect(new Date(dueAfter!).getTime() - new Date(dueBefore!).getTime()).toBe(4 * day)
    expect(await l.locator("section[aria-labelledby=extensions]").textContent()).toContain("Поправляйтесь")

    // The roster: the learner learning, with progress.
    await i.getByRole("link", { name: "Learners" }).click()
    await i.waitForURL(/\/roster\?/)
    expect(await i.locator(`li.row[data-uuid="${enrollment.uuid}"] .enrollment-status`).textContent()).toBe("Learning")
    await checkPage(i, "teaching-roster", `/teaching/${course}/roster`)

    // Analytics: one learner, so every count of the funnel is hidden, visibly.
    await i.getByRole("link", { name: "Analytics" }).click()
    await i.waitForURL(/\/analytics\?/)
    expect(await i.locator("section[aria-labelledby=funnel]").textContent()).toContain("hidden: fewer than 5")
    await checkPage(i, "teaching-analytics", `/teaching/${course}/analytics`)

    // A regrade plan: "20" accepted as well on the quiz; its difference (the learner, 0 → 10) before the commit.
    await i.getByRole("link", { name: "Regrading" }).click()
    await i.waitForURL(/\/regrades\?/)
    await checkPage(i, "teaching-regrade-new", `/teaching/${course}/regrades`)
    await i.getByLabel("Step", { exact: true }).selectOption("quiz")
    await i.getByLabel("Rule", { exact: true }).selectOption("accept_answer")
    await i.getByLabel("The answer to accept as well").fill("20")
    await i.getByRole("button", { name: "Show the difference" }).click()
    await i.waitForURL(/\/regrades\?.*plan=/)
    const diff = i.locator("table.regrade-diff tbody tr").first()
    expect(await diff.locator(".old").textContent()).toBe("0 of 10 points")
    expect(await diff.locator(".new").textContent()).toBe("10 of 10 points")
    expect(await i.locator(".plan-status").textContent()).toBe("Ready to commit")
    // Nothing has changed yet: the learner's quiz still scores 0.
    const quizBefore = await act(learnerApi, "learning.submissions.history", { enrollment: enrollment.uuid, node: "quiz" })
    expect(quizBefore.items[0].score.points).toBe(0)
    await checkPage(i, "teaching-regrade-plan", `/teaching/${course}/regrades?plan=${new URL(i.url()).searchParams.get("plan")}`)
    await i.getByRole("button", { name: "Commit the recalculation" }).click()
    await poll(() => i.locator(".plan-status").textContent()).toBe("Committed")
    expect(await i.locator("table.regrade-diff tbody tr").first().locator(".new").textContent()).toContain("done")

    // The learner's quiz shows the recalculated grade and where it comes from.
    await l.goto(`${origin}${playerPath}?lang=en&step=quiz`)
    expect(await l.locator(".attempt").first().locator(".score__total").textContent()).toContain("10 of 10 points")
    expect(await l.locator(".attempt").first().locator(".layers").textContent()).toContain("Recalculation")

    // An outage during the quiz: recorded, its compensation previewed (the learner's due date before → after), then applied.
    await i.goto(`${origin}/teaching/${course}/incidents?lang=en`)
    await i.getByText("Record an incident").click()
    const utc = (at: number) => new Date(at).toISOString().slice(0, 16)
    await i.getByLabel("From (UTC)").fill(utc(Date.now() - 3_600_000))
    await i.getByLabel("To (UTC)").fill(utc(Date.now() + 600_000))
    await i.getByLabel("Сложность сортировки").check()
    await i.getByLabel("Description", { exact: true }).fill("Сервер проверки не отвечал")
    await i.getByRole("button", { name: "Record", exact: true }).click()
    const incident = i.locator("li.row", { hasText: "Сервер проверки не отвечал" })
    await poll(() => incident.textContent()).toContain("1 learner affected")
    await incident.getByLabel("Move due dates by days").fill("2")
    await incident.getByRole("button", { name: "Preview the compensation" }).click()
    await poll(() => i.locator("li.row", { hasText: "Сервер проверки не отвечал" }).locator(".compensation-plan tbody tr").count()).toBe(1)
    expect(await i.locator(".compensation-plan tbody tr").first().textContent()).toContain("More time")
    await checkPage(i, "teaching-incidents", `/teaching/${course}/incidents`)
    await i.getByRole("button", { name: "Apply the compensation" }).click()
    await poll(() => i.locator("li.row", { hasText: "Сервер проверки не отвечал" }).locator(".incident-status").textContent()).toBe("Resolved")

    expect([...reviewer.errors, ...instructor.errors, ...learner.errors]).toEqual([])
    await Promise.all([reviewer.context.close(), instructor.context.close(), learner.context.close()])
  })
})
