import { catalog } from "@birzha/domain"
import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { signIn } from "../../../../testing/signIn.js"
import type { Caller } from "../testService.js"
import { openJourney, type Person, poll } from "./webJourney.js"

// The author's journey through the web application's pages (packages/web): an approved training
// publication (written and approved through the API) becomes a course on /authoring; the author
// adds a quiz, a code step checked by a declarative checker and a staff-reviewed assignment,
// saves, and sees validation name the checker that has not passed its preflight at its step
// (publishing is refused for it); the preflight passes and publishing succeeds; a run is created,
// its dates previewed as a plan and applied, and it opens for enrollment; an instructor invited by
// email accepts from the mailed link and the author narrows their rights; a learner enrolls in the
// run from the course's page. Every author page is checked in both languages at 1280 and 390 px.

const moderatorEmail = "moderator.web-authoring@example.com"

const world = openJourney({ label: "web_authoring", moderators: [moderatorEmail], shots: "course-admin", subnet: 134 })

type Body = Record<string, any>

/** One operation over HTTP at its declared route, as `who`: path parameters from the arguments, the rest as the body. */
const act = async (who: Caller, id: string, args: Body = {}): Promise<Body> => {
  const entry = catalog.find((candidate) => candidate.id === id)
  if (entry === undefined) throw new Error(`no operation ${id} in the catalog`)
  const rest: Body = { ...args }
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = String(rest[name])
    delete rest[name]
    return encodeURIComponent(value)
  })
  const answer = await world.service.call<Body>(entry.method, path, who, { requestUuid: randomUUID(), ...rest })
  expect(answer.status, `${id}: ${JSON.stringify(answer.body)}`).toBe(200)
  return answer.body
}

/** The session a person signed in with through the pages, for the API calls that seed their data. */
const sessionOf = async (person: Person): Promise<Caller> => {
  const cookie = (await person.context.cookies()).find((c) => c.name === "__Host-birzha_session")
  if (cookie === undefined) throw new Error("no session cookie after signing in")
  return { cookie: `${cookie.name}=${cookie.value}` }
}

/** Once the page's script runs, its buttons are enabled (useHydrated): typing before that would be lost. */
const hydrated = (tab: Person["tab"]) => poll(() => tab.locator("main button[disabled]").count()).toBe(0)

describe("the author's journey through the pages", { timeout: 900_000 }, () => {
  it("approved training → course with quiz, code (checker) and reviewed assignment → validate names the unpreflighted checker → preflight → publish → run previewed and opened → instructor invited by email accepts → a learner enrolls", async () => {
    const { origin, person, checkPage, service, db } = world
    const stamp = Date.now().toString(36)
    const author = await person(`author.web-authoring.${stamp}@example.com`)
    const moderator = await signIn({ url: service.host.url, origin, db, email: moderatorEmail })
    const title = `Основы программирования ${stamp}`

    // The author's training publication, approved by a moderator (seeded through the API).
    const session = await sessionOf(author)
    const publication = await act(session, "learning.save", {
      data: { title, description: "Переменные, циклы и функции на коротких задачах", training: { level: "beginner", format: "online", durationHours: 12 } }
    })
    const submitted = await act(session, "learning.submit", { publicationUuid: publication.uuid, expectedRevision: publication.revision })
    const approved = await service.call("POST", "/api/v1/moderation/decisions", moderator, {
      requestUuid: randomUUID(), publicationUuid: publication.uuid, expectedRevision: submitted.revision, decision: "approve"
    })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)

    // /authoring: the approved training waits to become a course; one button makes it one.
    const a = author.tab
    await a.goto(`${origin}/authoring?lang=en`)
    await hydrated(a)
    await a.getByRole("button", { name: `Make a course of «${title}»` }).click()
    await a.waitForURL(/\/authoring\/courses\/[0-9a-f-]{36}\?lang=en$/)
    const editorPath = new URL(a.url()).pathname
    const course = editorPath.split("/")[3]!
    const tree = a.locator(".authoring-tree nav")
    await hydrated(a)
    expect(await tree.innerText()).toContain("Введение")
    await a.getByLabel("Who finds it").selectOption("listed")

    // A quiz: the question, the accepted answer, points, attempts and a due date 7 days from the start.
    await a.getByRole("button", { name: "Введение" }).click()
    await a.locator("#new-step-type").selectOption("quiz")
    await a.locator("#new-step-title").fill("Проверка: умножение")
    await a.getByRole("button", { name: "Add the step" }).click()
    await a.getByLabel("Question").fill("Сколько будет шесть умножить на семь?")
    await a.locator("#node-answers").fill("42")
    await a.getByLabel("Points", { exact: true }).fill("10")
    await a.getByLabel("Points to pass").fill("10")
    await a.getByLabel("Attempts", { exact: true }).fill("3")
    await a.getByLabel("Due after, days from the start").fill("7")

    // A code step and a staff-reviewed assignment with a late penalty.
    await a.locator("#new-step-type").selectOption("code")
    await a.locator("#new-step-title").fill("Функция удвоения")
    await a.getByRole("button", { name: "Add the step" }).click()
    await a.getByLabel("Task and starting code").fill("Напишите тело функции double(x), которое возвращает удвоенное x.")
    await a.locator("#new-step-type").selectOption("assignment")
    await a.locator("#new-step-title").fill("Эссе о циклах")
    await a.getByRole("button", { name: "Add the step" }).click()
    await a.getByLabel("Task", { exact: true }).fill("Опишите своими словами, чем цикл for отличается от while.")
    expect(await a.getByLabel("Review", { exact: true }).inputValue()).toBe("staff")
    await a.getByLabel("After the due date").selectOption("penalty")
    await a.getByLabel("Points taken off, %").fill("25")
    // Moved above the code step, then saved.
    await a.getByRole("button", { name: "Move up" }).click()
    expect(await tree.locator("li.authoring-tree__node--step > .link-button").allTextContents()).toEqual(["О курсе", "Проверка: умножение", "Эссе о циклах", "Функция удвоения"])
    expect(await a.locator(".save-bar__state").textContent()).toBe("Changes not saved yet.")
    await a.getByRole("button", { name: "Save the draft" }).click()
    await poll(() => a.locator(".save-bar__state").textContent()).toBe("The draft is saved.")

    // A declarative checker with its tests (replies it must accept and refuse), then chosen for the code step.
    await a.getByText("A new checker").click()
    await a.getByLabel("Name", { exact: true }).fill("Удвоение")
    await a.locator("#checker-answers").fill("return x * 2\nreturn 2 * x")
    await a.getByLabel("Test replies it must accept, one per line").fill("return x * 2")
    await a.getByLabel("Test replies it must refuse, one per line").fill("return x + 2")
    await a.getByRole("button", { name: "Create the checker" }).click()
    const checkerRow = a.locator("li.checker", { hasText: "Удвоение" })
    await poll(() => checkerRow.locator(".checker-status").textContent()).toBe("Not checked yet")
    const checker = (await checkerRow.getAttribute("data-uuid"))!
    await tree.getByRole("button", { name: "Функция удвоения" }).click()
    await a.getByLabel("Checked by").selectOption(checker)
    expect(await a.locator(".code-tests").innerText()).toContain("return x + 2 must be refused")

    // Validate (the change saved first): the code step's checker has not passed its preflight — at the step, and in the list.
    await a.getByRole("button", { name: "Check the draft" }).click()
    const codeNode = tree.locator("li.authoring-tree__node--step", { hasText: "Функция удвоения" })
    await poll(() => codeNode.locator(".node-issues").textContent()).toBe("The checker of step «Функция удвоения» has not passed its preflight yet.")
    expect(await a.locator(".validation").innerText()).toContain("Blocking publication: 1. Warnings: 0.")
    expect(await a.locator(".node-editor .issues").innerText()).toContain("has not passed its preflight")
    await a.getByLabel("What changed (shown with the version)").fill("Первый выпуск: тест, код и эссе")
    await a.getByRole("button", { name: "Publish a new version" }).click()
    await poll(() => a.locator("section[aria-labelledby=publish] .status").textContent()).toBe("A step's checker has not passed its preflight: run it, then publish.")
    await checkPage(a, "authoring-editor-unpreflighted", `${editorPath}?node=${await codeNode.getAttribute("data-node")}`)

    // The preflight: both tests as expected, the checker ready; validation is clean.
    await a.goto(`${origin}${editorPath}?lang=en`)
    await hydrated(a)
    await a.getByRole("button", { name: "Run the preflight of «Удвоение»" }).click()
    await poll(() => checkerRow.locator(".checker-status").textContent()).toBe("Ready")
    expect(await checkerRow.locator(".preflight").innerText()).toContain("Preflight: passed")
    expect(await checkerRow.locator(".preflight li").allTextContents()).toEqual([
      "return x * 2 must be accepted → accepted · as expected",
      "return x + 2 must be refused → wrong · as expected"
    ])
    // Suspended (new replies would wait) and resumed, each with its reason.
    await checkerRow.getByLabel("Why suspend it").fill("Проверяем задачу ещё раз")
    await checkerRow.getByRole("button", { name: "Suspend" }).click()
    await poll(() => checkerRow.locator(".checker-status").textContent()).toBe("Suspended")
    await checkerRow.getByLabel("Why resume it").fill("Задача верна")
    await checkerRow.getByRole("button", { name: "Resume" }).click()
    await poll(() => checkerRow.locator(".checker-status").textContent()).toBe("Ready")
    await a.getByRole("button", { name: "Check the draft" }).click()
    await poll(() => a.locator(".validation").textContent()).toBe("No problems: the course can be published.")
    expect(await codeNode.locator(".node-issues").count()).toBe(0)

    // Publish with the changelog: version 1 in the versions.
    await a.getByLabel("What changed (shown with the version)").fill("Первый выпуск: тест, код и эссе")
    await a.getByRole("button", { name: "Publish a new version" }).click()
    await poll(() => a.locator("ol.versions").textContent()).toContain("Первый выпуск: тест, код и эссе")
    await hydrated(a)
    expect(await a.locator(".card__meta .tag").first().textContent()).toBe("Published")
    await checkPage(a, "authoring-editor", editorPath)

    // Runs: a new run (a draft), its dates moved two days later as a previewed plan, applied, then opened.
    await a.getByRole("link", { name: "Runs" }).click()
    await a.waitForURL(/\/runs\?lang=en$/)
    const runsPath = new URL(a.url()).pathname
    await hydrated(a)
    await a.getByLabel("Run title").fill("Весенний поток")
    await a.getByRole("button", { name: "Create the run" }).click()
    const runRow = a.locator("li.run", { hasText: "Весенний поток" })
    await poll(() => runRow.locator(".run-status").textContent()).toBe("Draft")
    await hydrated(a)
    const startBefore = await runRow.locator("p").nth(1).textContent()
    await runRow.getByText("Dates: preview a change, then apply it").click()
    await runRow.getByLabel("Move every date by, days").fill("2")
    await runRow.getByRole("button", { name: "Preview the dates" }).click()
    const plan = runRow.locator(".plan")
    await poll(() => plan.locator("tbody tr").count()).toBeGreaterThanOrEqual(3)
    const rows = await plan.locator("tbody tr td:first-child").allTextContents()
    expect(rows).toContain("The run: start date")
    expect(rows).toContain("Проверка: умножение: due")
    for (const width of [1280, 390]) {
      await a.setViewportSize({ width, height: 900 })
      await screenshot(a, `course-admin/authoring-runs-plan-en-${width}`)
    }
    await a.setViewportSize({ width: 1280, height: 900 })
    await runRow.getByRole("button", { name: "Apply the plan" }).click()
    await poll(() => a.locator("li.run", { hasText: "Весенний поток" }).locator("p").nth(1).textContent()).not.toBe(startBefore)
    await a.getByRole("button", { name: "Open «Весенний поток» for enrollment" }).click()
    await poll(() => a.locator("li.run", { hasText: "Весенний поток" }).locator(".run-status").textContent()).toBe("Open for enrollment")
    await checkPage(a, "authoring-runs", runsPath)

    // Staff: an instructor invited by email.
    await a.goto(`${origin}/authoring/courses/${course}/staff?lang=en`)
    await hydrated(a)
    const instructorEmail = `instructor.web-authoring.${stamp}@example.com`
    await a.getByLabel("Email", { exact: true }).fill(instructorEmail)
    await a.getByLabel("Role").selectOption("instructor")
    expect(await a.locator("#invite-role-rights").textContent()).toContain("Edits and publishes content")
    await a.getByLabel("Message (optional)").fill("Помогите вести весенний поток")
    await a.getByRole("button", { name: "Send the invitation" }).click()
    const invitationRow = a.locator("li.invitation")
    await poll(() => invitationRow.first().textContent()).toContain("Waiting for an answer")
    expect(await invitationRow.first().locator(".row__title").textContent()).toBe("i***@example.com")
    await checkPage(a, "authoring-staff", `/authoring/courses/${course}/staff`)

    // The instructor signs in, opens the link from the mail and accepts.
    const instructor = await person(instructorEmail)
    const { rows: mails } = await db.query<{ text_body: string }>(
      "SELECT text_body FROM development_mailbox WHERE to_address = $1 AND text_body LIKE '%staff-invitations%' ORDER BY created_at DESC LIMIT 1",
      [instructorEmail]
    )
    const link = mails[0]!.text_body.match(/(https?:\/\/\S+\/learning\/staff-invitations\/[0-9a-f-]{36}#token=[\w-]+)/)![1]!
    const i = instructor.tab
    await i.goto(link)
    await hydrated(i)
    const invitationPath = new URL(link).pathname
    expect(await i.locator("main").innerText()).toContain(title)
    expect(await i.locator("main").innerText()).toContain("Помогите вести весенний поток")
    await i.getByRole("button", { name: "Accept" }).click()
    await i.getByText("You are on the course team as Instructor.").waitFor()
    await checkPage(i, "authoring-invitation", invitationPath)

    // The author sees the instructor on the team and takes the right to publish away.
    await a.goto(`${origin}/authoring/courses/${course}/staff?lang=en`)
    await hydrated(a)
    const member = a.locator("li.member", { hasText: "Instructor" })
    expect(await member.locator(".tag--muted").textContent()).toBe("Active")
    expect(await a.locator("li.invitation").first().textContent()).toContain("Accepted")
    await member.locator("summary").click()
    await member.getByLabel("Publish versions").selectOption("deny")
    await member.getByRole("button", { name: "Save the rights" }).click()
    await poll(() => a.locator("li.member", { hasText: "Instructor" }).textContent()).toContain("Taken away: Publish versions.")

    // /authoring lists the course, published.
    await a.goto(`${origin}/authoring?lang=en`)
    const listed = a.locator("li.row", { hasText: title })
    expect(await listed.locator(".tag").first().textContent()).toBe("Published")
    expect(await a.locator("section[aria-labelledby=trainings]").textContent()).toContain("No approved training waits to become a course.")
    await checkPage(a, "authoring-list", "/authoring")

    // A learner enrolls in the opened run from the course's page.
    const learner = await person(`learner.web-authoring.${stamp}@example.com`)
    const l = learner.tab
    await l.goto(`${origin}/courses/${course}?lang=en`)
    expect(await l.locator("main").innerText()).toContain("Весенний поток")
    await l.getByRole("button", { name: "Enroll" }).click()
    await l.waitForURL(/\/learning\/[0-9a-f-]{36}\?lang=en$/)
    expect(await l.locator(".player__tree").innerText()).toContain("Функция удвоения")

    expect([...author.errors, ...instructor.errors, ...learner.errors]).toEqual([])
    await Promise.all([author.context.close(), instructor.context.close(), learner.context.close()])
  })
})
