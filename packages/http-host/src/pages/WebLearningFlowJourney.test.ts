import { advanceRuns, type CallReport, checkReply, claimGradingCalls, finishGradingCalls } from "@birzha/domain/internal"
import { Effect, ManagedRuntime } from "effect"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { openJourney, type Person, poll } from "./webJourney.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

// The learning flow from end to end, through the web application's pages only (the learning
// area's whole journey). Each person signs in through the sign-in page in a browser context of their
// own; the test reads nothing from the service but the mail (development_mailbox) and the sign-in
// codes, as webJourney.ts does. An author writes a training, a moderator approves it on the
// moderation page, the author turns it into a course with a quiz, a code step checked by a
// declarative checker and a staff-reviewed assignment whose grade staff release; validation names
// the checker that has not passed its preflight, the preflight passes, the course is published, a
// run opens; an instructor and a reviewer are invited by email and accept from the mail; two
// learners enroll; one submits the quiz (its score shown), the code (the automatic result arrives
// without a reload) and the assignment; the reviewer claims it and decides in the workspace, then
// releases it; the learner sees the score and appeals; the instructor resolves the appeal; a
// request for more time is approved and the learner's calendar shows the new date and its source;
// a regrade plan's difference is shown and committed; the learner's completion shows.
//
// What the service's workers do in production runs here as they would, in the background: the run
// clock (advanceRuns) and the grading worker's declarative checks (claimed, checked and applied as
// packages/worker-host/src/learning/GradingJob.ts does). The test host itself runs no workers.

const moderatorEmail = "moderator.web-learnflow@example.com"
const shots = "learning-flow"

const world = openJourney({ label: "web_learnflow", moderators: [moderatorEmail], shots, subnet: 144 })

/** Once the page's script runs, its buttons are enabled (useHydrated): typing before that would be lost. */
const hydrated = (tab: Page) => poll(() => tab.locator("main button[disabled]").count()).toBe(0)

/** The link a mail sent to `to` carries to `path` (the newest such mail), read from the development mailbox. */
const mailedLink = async (to: string, path: string) => {
  let link: string | undefined
  await poll(async () => {
    const { rows } = await world.db.query<{ text_body: string }>(
      "SELECT text_body FROM development_mailbox WHERE to_address = $1 AND text_body LIKE $2 ORDER BY created_at DESC LIMIT 1",
      [to, `%${path}%`]
    )
    link = rows[0]?.text_body.match(new RegExp(`(https?://\\S+${path}/[0-9a-f-]{36}#token=[\\w-]+)`))?.[1]
    return link !== undefined
  }).toBe(true)
  return link!
}

/**
 * The service's background work while the journey runs: the run clock, and grading jobs of
 * declarative checkers (claimed, each case checked by the checker's rules, applied) — what the
 * worker host's learning_runs and learning_grading jobs do. Stopped by the function it answers.
 */
const startWorkers = (databaseUrl: string) => {
  const runtime = ManagedRuntime.make(testPgLayer(databaseUrl, 1))
  const once = Effect.gen(function*() {
    yield* advanceRuns(new Date())
    const calls = yield* claimGradingCalls(16)
    const finished = calls.map((call) => ({
      call,
      reports: call.cases.map((one): CallReport => ({
        _tag: "evaluated",
        result: call.rules === null
          ? { fraction: 0, verdict: "invalid_reply", feedback: "the checker has no rules" }
          : checkReply(call.rules, one.reply, one.clue ?? undefined),
        latencyMs: 0
      }))
    }))
    if (finished.length > 0) yield* finishGradingCalls(finished)
  })
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      await runtime.runPromise(once).catch((error: unknown) => console.warn("background work failed", error))
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
  })()
  return async () => {
    stopped = true
    await loop
    await runtime.dispose()
  }
}

describe("the learning flow through the pages, from a training to a completed course", { timeout: 1_500_000 }, () => {
  it("training approved → course built, validated, preflighted, published → run opened → staff invited by email → two learners enroll → quiz, code and assignment → review claimed, decided and released → appeal resolved → extension on the calendar → regrade committed → completion", async () => {
    const { origin, person, checkPage, service } = world
    const stopWorkers = startWorkers(service.database.url)
    const everyone: Array<Person> = []
    const signInAs = async (email: string) => {
      const someone = await person(email)
      everyone.push(someone)
      return someone
    }
    try {
      const stamp = Date.now().toString(36)
      const title = `Основы программирования ${stamp}`

      // The author writes a training on the publications page and sends it to moderation; a moderator approves it.
      const author = await signInAs(`author.web-learnflow.${stamp}@example.com`)
      const a = author.tab
      await a.goto(`${origin}/publications?lang=en`)
      await a.getByRole("link", { name: "New training" }).click()
      await a.waitForURL(`${origin}/trainings/new?lang=en`)
      await hydrated(a)
      await a.getByLabel("Title", { exact: true }).fill(title)
      await a.getByLabel("Description", { exact: true }).fill("Переменные, циклы и функции на коротких задачах")
      await a.getByLabel("Format").selectOption("online")
      await a.getByLabel("Level").selectOption("beginner")
      await a.getByLabel("Duration, hours").fill("12")
      await a.getByRole("button", { name: "Send to moderation" }).click()
      await a.waitForURL(`${origin}/publications?lang=en`)
      expect(await a.locator("li.row", { hasText: title }).locator(".tag").textContent()).toBe("Awaiting moderation")

      const moderator = await signInAs(moderatorEmail)
      const m = moderator.tab
      await m.goto(`${origin}/moderation?lang=en`)
      await hydrated(m)
      await m.locator("li.row", { hasText: title }).getByRole("button", { name: "Approve" }).click()
      await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)

      // /authoring: the approved training becomes a course.
      await a.goto(`${origin}/authoring?lang=en`)
      await hydrated(a)
      await a.getByRole("button", { name: `Make a course of «${title}»` }).click()
      await a.waitForURL(/\/authoring\/courses\/[0-9a-f-]{36}\?lang=en$/)
      const editorPath = new URL(a.url()).pathname
      const course = editorPath.split("/")[3]!
      const tree = a.locator(".authoring-tree nav")
      await hydrated(a)
      await a.getByLabel("Who finds it").selectOption("listed")

      // A quiz, a code step and a staff-reviewed assignment whose grade staff release by hand.
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
      await a.locator("#new-step-type").selectOption("code")
      await a.locator("#new-step-title").fill("Функция удвоения")
      await a.getByRole("button", { name: "Add the step" }).click()
      await a.getByLabel("Task and starting code").fill("Напишите тело функции double(x), которое возвращает удвоенное x.")
      await a.locator("#new-step-type").selectOption("assignment")
      await a.locator("#new-step-title").fill("Эссе о циклах")
      await a.getByRole("button", { name: "Add the step" }).click()
      await a.getByLabel("Task", { exact: true }).fill("Опишите своими словами, чем цикл for отличается от while.")
      expect(await a.getByLabel("Review", { exact: true }).inputValue()).toBe("staff")
      await a.getByLabel("Points to pass").fill("6")
      await a.getByLabel("The grade is shown").selectOption("manual")
      await a.getByRole("button", { name: "Save the draft" }).click()
      await poll(() => a.locator(".save-bar__state").textContent()).toBe("The draft is saved.")

      // A declarative checker with its tests, chosen for the code step.
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

      // Validate: the code step's checker has not passed its preflight, shown at the step; publishing is refused.
      await a.getByRole("button", { name: "Check the draft" }).click()
      const codeNode = tree.locator("li.authoring-tree__node--step", { hasText: "Функция удвоения" })
      await poll(() => codeNode.locator(".node-issues").textContent()).toBe("The checker of step «Функция удвоения» has not passed its preflight yet.")
      expect(await a.locator(".validation").innerText()).toContain("Blocking publication: 1.")
      await a.getByLabel("What changed (shown with the version)").fill("Первый выпуск: тест, код и эссе")
      await a.getByRole("button", { name: "Publish a new version" }).click()
      await poll(() => a.locator("section[aria-labelledby=publish] .status").textContent()).toBe("A step's checker has not passed its preflight: run it, then publish.")
      await screenshot(a, `${shots}/editor-unpreflighted-en-1280`)

      // The preflight fixes it: validation clean, the course published.
      await a.goto(`${origin}${editorPath}?lang=en`)
      await hydrated(a)
      await a.getByRole("button", { name: "Run the preflight of «Удвоение»" }).click()
      await poll(() => checkerRow.locator(".checker-status").textContent()).toBe("Ready")
      await a.getByRole("button", { name: "Check the draft" }).click()
      await poll(() => a.locator(".validation").textContent()).toBe("No problems: the course can be published.")
      await a.getByLabel("What changed (shown with the version)").fill("Первый выпуск: тест, код и эссе")
      await a.getByRole("button", { name: "Publish a new version" }).click()
      await poll(() => a.locator("ol.versions").textContent()).toContain("Первый выпуск: тест, код и эссе")
      await hydrated(a)
      expect(await a.locator(".card__meta .tag").first().textContent()).toBe("Published")

      // A run, created and opened for enrollment.
      await a.getByRole("link", { name: "Runs" }).click()
      await a.waitForURL(/\/runs\?lang=en$/)
      await hydrated(a)
      await a.getByLabel("Run title").fill("Весенний поток")
      await a.getByRole("button", { name: "Create the run" }).click()
      const runRow = a.locator("li.run", { hasText: "Весенний поток" })
      await poll(() => runRow.locator(".run-status").textContent()).toBe("Draft")
      await hydrated(a)
      await a.getByRole("button", { name: "Open «Весенний поток» for enrollment" }).click()
      await poll(() => a.locator("li.run", { hasText: "Весенний поток" }).locator(".run-status").textContent()).not.toBe("Draft")

      // Staff: an instructor and a reviewer invited by email; each accepts from the mailed link.
      const staff = async (role: "instructor" | "reviewer", label: string) => {
        const email = `${role}.web-learnflow.${stamp}@example.com`
        await a.goto(`${origin}/authoring/courses/${course}/staff?lang=en`)
        await hydrated(a)
        await a.getByLabel("Email", { exact: true }).fill(email)
        await a.getByLabel("Role").selectOption(role)
        await a.getByRole("button", { name: "Send the invitation" }).click()
        await poll(() => a.locator("li.invitation", { hasText: `${email[0]}***@example.com` }).first().textContent()).toContain("Waiting for an answer")
        const someone = await signInAs(email)
        await someone.tab.goto(await mailedLink(email, "/learning/staff-invitations"))
        await hydrated(someone.tab)
        expect(await someone.tab.locator("main").innerText()).toContain(title)
        await someone.tab.getByRole("button", { name: "Accept" }).click()
        await someone.tab.getByText(`You are on the course team as ${label}.`).waitFor()
        return someone
      }
      const instructor = await staff("instructor", "Instructor")
      const reviewer = await staff("reviewer", "Reviewer")

      // Two learners enroll from the course's page.
      const learner = await signInAs(`learner.web-learnflow.${stamp}@example.com`)
      const second = await signInAs(`second.web-learnflow.${stamp}@example.com`)
      const l = learner.tab
      const s = second.tab
      for (const tab of [l, s]) {
        await tab.goto(`${origin}/courses/${course}?lang=en`)
        await hydrated(tab)
        expect(await tab.locator("main").innerText()).toContain("Весенний поток")
        await tab.getByRole("button", { name: "Enroll" }).click()
        await tab.waitForURL(/\/learning\/[0-9a-f-]{36}\?lang=en$/)
      }
      const playerPath = new URL(l.url()).pathname
      const secondPath = new URL(s.url()).pathname
      const player = l.locator(".player__tree")
      const openStep = async (tab: Page, name: string) => {
        await tab.locator(".player__tree").getByRole("link", { name }).click()
        // The player opens the step in place; its address follows once it is shown.
        await poll(() => tab.locator("#step-title").textContent()).toBe(name)
        await hydrated(tab)
      }

      // The first learner: the introduction read, then the quiz (its score shown).
      await openStep(l, "О курсе")
      await l.getByRole("button", { name: "Mark as done" }).click()
      await poll(() => player.locator("li", { hasText: "О курсе" }).first().locator(".tag").textContent()).toBe("Done")
      await openStep(l, "Проверка: умножение")
      await l.getByLabel("Your answer").fill("42")
      await l.getByRole("button", { name: "Submit the answer" }).click()
      await poll(() => l.locator(".attempt").first().locator(".score__total").textContent()).toContain("10 of 10 points")

      // The code: checked by the declarative checker in the background; the result arrives on the open page.
      await openStep(l, "Функция удвоения")
      await l.getByLabel("Your work").fill("return x * 2")
      await l.getByRole("button", { name: /^Submit/ }).click()
      await poll(() => l.locator(".attempt").first().locator(".score__total").textContent()).toContain("of 10 points")
      expect(await l.locator(".attempt").first().textContent()).toContain("passed")
      expect(await l.locator(".attempt").first().locator(".layers").textContent()).toContain("Automatic check")
      await checkPage(l, "player-code", `${playerPath}?step=${new URL(l.url()).searchParams.get("step")}`)

      // The assignment: submitted, it waits for a reviewer.
      await openStep(l, "Эссе о циклах")
      const essayStep = new URL(l.url()).searchParams.get("step")!
      await l.getByLabel("Your work").fill("Цикл for проходит по коллекции, а while повторяет тело, пока условие истинно.")
      await l.getByRole("button", { name: "Submit for review" }).click()
      await poll(() => l.locator(".attempt").first().locator(".tag").first().textContent()).toBe("Waiting for review")
      const essay = (await l.locator(".attempt").first().getAttribute("data-uuid"))!

      // The second learner answers the quiz in words: not accepted (yet).
      await openStep(s, "Проверка: умножение")
      const quizStep = new URL(s.url()).searchParams.get("step")!
      await s.getByLabel("Your answer").fill("сорок два")
      await s.getByRole("button", { name: "Submit the answer" }).click()
      await poll(() => s.locator(".attempt").first().locator(".score__total").textContent()).toContain("0 of 10 points")

      // The reviewer: from the dashboard's count to the queue, claimed, decided in the workspace, released.
      const r = reviewer.tab
      await r.goto(`${origin}/teaching/${course}?lang=en`)
      await r.getByRole("link", { name: "1 work waits for a reviewer" }).click()
      await r.waitForURL(/\/reviews\?.*status=pooled/)
      await hydrated(r)
      await r.locator(`li.row[data-submission="${essay}"]`).getByRole("button", { name: /Take for review/ }).click()
      await r.waitForURL(new RegExp(`/teaching/${course}/reviews/${essay}`))
      await hydrated(r)
      expect(await r.locator("section[aria-labelledby=reply]").textContent()).toContain("Цикл for проходит по коллекции")
      await r.getByLabel("Criterion 1", { exact: true }).fill("Различие циклов")
      await r.getByLabel("Points for criterion 1").fill("8")
      await r.getByLabel("Comment to the learner").fill("Верно, но не хватает примера")
      await poll(() => r.locator("#review-draft").textContent()).toBe("The draft of your review is saved.")
      await r.getByLabel("Accept", { exact: true }).check()
      await r.getByRole("button", { name: "Save the decision" }).click()
      await poll(() => r.locator(".assignment-status").textContent()).toBe("Decided, not released")
      // Decided, not released: the learner's open page shows no score yet.
      await l.reload()
      expect(await l.locator(".attempt").first().locator(".score__total").count()).toBe(0)
      await r.getByRole("button", { name: "Release to the learner" }).click()
      await poll(() => r.locator(".assignment-status").textContent()).toBe("Released to the learner")

      // The learner sees the score after the release, and appeals it.
      await l.reload()
      await hydrated(l)
      const latest = l.locator(".attempt").first()
      expect(await latest.locator(".score__total").textContent()).toContain("8 of 10 points")
      expect(await latest.textContent()).toContain("Верно, но не хватает примера")
      await latest.getByText("Appeal this grade").click()
      await latest.getByLabel("Why the grade seems wrong").fill("Пример есть во втором предложении")
      await latest.getByLabel("The points you think fair (optional)").fill("10")
      await latest.getByRole("button", { name: "Send the appeal" }).click()
      await poll(() => l.locator(".attempt").first().locator(".learner-appeals").textContent()).toContain("Waiting for a decision")

      // The instructor resolves the appeal: the points changed to those asked.
      const i = instructor.tab
      await i.goto(`${origin}/teaching/${course}?lang=en`)
      await i.getByRole("link", { name: "1 appeal waits for a decision" }).click()
      await i.waitForURL(/\/appeals\?.*status=open/)
      await hydrated(i)
      const appeal = i.locator("li.row", { hasText: "Пример есть во втором предложении" })
      await appeal.getByLabel("Change the points").check()
      await appeal.getByLabel("New points (to adjust)").fill("10")
      await appeal.getByLabel("Answer to the learner").fill("Согласен, пример засчитан")
      await appeal.getByRole("button", { name: "Send the decision" }).click()
      await poll(() => i.locator("li.row", { hasText: "Пример есть во втором предложении" }).count()).toBe(0)
      await l.reload()
      expect(await l.locator(".attempt").first().locator(".score__total").textContent()).toContain("10 of 10 points")
      expect(await l.locator(".attempt").first().locator(".learner-appeals").textContent()).toContain("The points were changed")

      // The second learner, whose quiz is not passed yet, asks for more time on it on the calendar
      // (beyond what is approved at once); the instructor approves it.
      await s.goto(`${origin}${secondPath}/calendar?lang=en`)
      await hydrated(s)
      const quizRow = s.locator(`li.row[data-node="${quizStep}"]`)
      const dueBefore = await quizRow.locator("time.due").getAttribute("datetime")
      await quizRow.getByText("Ask for more time").click()
      await quizRow.getByLabel("How many more days").fill("4")
      await quizRow.getByLabel("Why you need them").fill("Болел на этой неделе")
      await quizRow.getByRole("button", { name: "Send the request" }).click()
      await poll(() => s.locator("section[aria-labelledby=extensions]").textContent()).toContain("Болел на этой неделе")
      await i.goto(`${origin}/teaching/${course}?lang=en`)
      await i.getByRole("link", { name: "1 request for more time" }).click()
      await i.waitForURL(/\/extensions\?.*status=requested/)
      await hydrated(i)
      const request = i.locator("li.row", { hasText: "Болел на этой неделе" })
      await request.getByLabel("Answer to the learner").fill("Поправляйтесь")
      await request.getByRole("button", { name: /^Approve/ }).click()
      await poll(() => i.locator("li.row", { hasText: "Болел на этой неделе" }).count()).toBe(0)
      await s.reload()
      await poll(() => s.locator(`li.row[data-node="${quizStep}"] .sources--dueAt .sources__effective`).textContent()).toContain("Extension")
      const dueAfter = await s.locator(`li.row[data-node="${quizStep}"] time.due`).getAttribute("datetime")
      expect(new Date(dueAfter!).getTime() - new Date(dueBefore!).getTime()).toBe(4 * 86_400_000)
      expect(await s.locator("section[aria-labelledby=extensions]").textContent()).toContain("Поправляйтесь")
      await checkPage(s, "calendar-extended", `${secondPath}/calendar`)

      // A regrade plan: «сорок два» accepted as well; its difference (the second learner, 0 → 10) shown, then committed.
      await i.goto(`${origin}/teaching/${course}/regrades?lang=en`)
      await hydrated(i)
      await i.getByLabel("Step", { exact: true }).selectOption(quizStep)
      await i.getByLabel("Rule", { exact: true }).selectOption("accept_answer")
      await i.getByLabel("The answer to accept as well").fill("сорок два")
      await i.getByRole("button", { name: "Show the difference" }).click()
      await i.waitForURL(/\/regrades\?.*plan=/)
      const changed = i.locator("table.regrade-diff tbody tr", { has: i.locator(".old", { hasText: /^0 of 10 points$/ }) })
      expect(await changed.count()).toBe(1)
      expect(await changed.locator(".new").textContent()).toBe("10 of 10 points")
      expect(await i.locator(".plan-status").textContent()).toBe("Ready to commit")
      await checkPage(i, "regrade-plan", `/teaching/${course}/regrades?plan=${new URL(i.url()).searchParams.get("plan")}`)
      await hydrated(i)
      await i.getByRole("button", { name: "Commit the recalculation" }).click()
      await poll(() => i.locator(".plan-status").textContent()).toBe("Committed")
      await s.goto(`${origin}${secondPath}?lang=en&step=${quizStep}`)
      expect(await s.locator(".attempt").first().locator(".score__total").textContent()).toContain("10 of 10 points")
      expect(await s.locator(".attempt").first().locator(".layers").textContent()).toContain("Recalculation")

      // The first learner has done every step: the completion shows in the player and in «My learning».
      await l.goto(`${origin}${playerPath}?lang=en&step=${essayStep}`)
      await poll(async () => {
        await l.reload()
        return l.locator(".completion").count()
      }).toBe(1)
      expect(await l.locator(".completion").textContent()).toMatch(/completed|completion criteria/)
      await checkPage(l, "player-completed", playerPath)

      expect(everyone.flatMap((someone) => someone.errors)).toEqual([])
    } catch (error) {
      // What each person's page showed when the journey stopped, beside the other screenshots.
      for (const [n, someone] of everyone.entries()) await screenshot(someone.tab, `${shots}/failed-${n}`).catch(() => undefined)
      throw error
    } finally {
      await Promise.all(everyone.map((someone) => someone.context.close()))
      await stopWorkers()
    }
  })
})
