import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { openJourney, poll, eventWorker } from "./webJourney.js"

// The automation rule pages of the web application (packages/web, RulesPage and RulePage) in real
// headless Chromium: a rule built with a nested condition, dry-run against a stored event with a
// verdict per condition, backtested, switched on; it fires once on the next event and its
// execution shows in the history; paused, deleted, its history kept.

const world = openJourney({ label: "web_rules", shots: "web-rules", subnet: 141 })

// The worker's steps, on demand (the test host runs no in-process workers): events numbered, then
// fanned out to the automation rules, whose notification.create action runs right there.
const runWorker = eventWorker(world)

const task = (title: string) => ({
  requestUuid: randomUUID(),
  data: { title, category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
})

describe("the automation rule pages", { timeout: 900_000 }, () => {
  it("builds a rule with a nested condition, dry-runs it on a stored event with a verdict per condition, backtests it, switches it on; it fires once and its run shows in the history", async () => {
    const { origin, service, checkPage } = world
    const person = await world.person(`rules.${Date.now()}@example.com`)
    const { tab, context } = person
    const session = (await context.cookies()).find((c) => c.name === "__Host-birzha_session")!
    const cookie = `${session.name}=${session.value}`

    // A stored event to try the rule on: a task's draft saved before the rule exists.
    const before = await service.call("POST", "/api/v1/commands/tasks.save", { cookie }, task("Лендинг до правила"))
    expect(before.status, JSON.stringify(before.body)).toBe(200)
    await runWorker()
    const events = (await service.call("GET", "/api/v1/events?limit=100", { cookie })).body.items as Array<{ uuid: string; type: string }>
    const stored = events.find((event) => event.type === "publication.draft_saved")!
    expect(stored).toBeDefined()

    // From the integrations page to the rules, none yet.
    await tab.goto(`${origin}/settings/integrations?lang=en`)
    await tab.getByRole("link", { name: "Automation rules" }).click()
    await tab.waitForURL(`${origin}/settings/rules?lang=en`)
    expect(await tab.title()).toBe("Automation rules · Birzha")
    expect(await tab.locator("#no-rules").textContent()).toBe("You have no automation rules yet.")
    await tab.getByRole("link", { name: "New rule" }).click()
    await tab.waitForURL(`${origin}/settings/rules/new?lang=en`)
    await tab.locator("#save:not([disabled])").waitFor()

    // The builder: all of (1) status equals draft and (2) any of (2.1) kind equals publication, (2.2) revision at least 100.
    await tab.getByLabel("Rule name").fill("Черновик сохранён: сообщить мне")
    await tab.getByLabel("When this event happens").selectOption("publication.draft_saved")
    await tab.getByRole("button", { name: "Add a condition", exact: true }).click()
    const first = tab.locator("fieldset[data-number='1']")
    expect(await first.locator("legend").textContent()).toBe("Condition 1")
    await first.getByLabel("What to check").selectOption("data.status")
    await first.getByLabel("How to compare").selectOption("eq")
    await first.getByLabel("Value to compare with").fill("draft")
    await tab.getByRole("button", { name: "Add a group of conditions", exact: true }).click()
    const group = tab.locator("fieldset[data-number='2']")
    expect(await group.locator(":scope > legend").textContent()).toBe("Group of conditions 2")
    await group.getByLabel("The event must meet").selectOption("any")
    const kind = tab.locator("fieldset[data-number='2.1']")
    await kind.getByLabel("What to check").selectOption("aggregate.kind")
    await kind.getByLabel("Value to compare with").fill("publication")
    await tab.getByRole("button", { name: "Add a condition to group 2" }).click()
    const revision = tab.locator("fieldset[data-number='2.2']")
    await revision.getByLabel("What to check").selectOption("aggregate.revision")
    await revision.getByLabel("How to compare").selectOption("gte")
    // A value in the wrong shape is named at its condition before anything is sent.
    await revision.getByLabel("Value to compare with").fill("many")
    await tab.getByRole("button", { name: "Save the rule (switched off)" }).click()
    await poll(() => revision.locator(".status").textContent()).toBe("The revision is compared with whole numbers only.")
    expect(await tab.locator("#status").textContent()).toBe("Some fields need fixing first; they are marked.")
    await revision.getByLabel("Value to compare with").fill("100")
    await tab.getByLabel("Send me a notification").check()
    await tab.getByLabel("Runs a day at most").fill("5")
    await tab.getByRole("button", { name: "Save the rule (switched off)" }).click()
    await tab.waitForURL(/\/settings\/rules\/[0-9a-f-]{36}\?lang=en$/)
    const ruleUuid = /rules\/([0-9a-f-]{36})/.exec(tab.url())![1]!
    expect(await tab.title()).toBe("Черновик сохранён: сообщить мне · Birzha")
    expect(await tab.locator("#rule-state").getAttribute("data-state")).toBe("disabled")
    const saved = (await service.call("GET", "/api/v1/automations", { cookie })).body.items as Array<{ uuid: string; trigger: unknown; enabled: boolean }>
    expect(saved.map((rule) => rule.uuid)).toEqual([ruleUuid])
    expect(saved[0]!.trigger).toEqual({
      eventType: "publication.draft_saved",
      filter: {
        all: [
          { field: "data.status", op: "eq", value: "draft" },
          { any: [{ field: "aggregate.kind", op: "eq", value: "publication" }, { field: "aggregate.revision", op: "gte", value: 100 }] }
        ]
      }
    })
    // The builder reads the saved rule back as it was built.
    expect(await tab.locator("fieldset[data-number='2.2']").getByLabel("Value to compare with").inputValue()).toBe("100")

    // Dry run against the stored event: a verdict per condition, the whole first.
    await tab.locator("#dry-run:not([disabled])").waitFor()
    await tab.getByLabel("an event you already have").check()
    await tab.getByLabel("Stored event").selectOption(stored.uuid)
    await tab.getByRole("button", { name: "Run the dry run" }).click()
    await tab.locator("#dry-run-result").waitFor()
    expect(await tab.locator("#dry-run-result").getAttribute("data-matched")).toBe("true")
    expect(await tab.locator("#dry-run-verdict").textContent()).toBe("The rule would start on this event and do its action.")
    const verdicts = await tab.locator("#verdicts > li").evaluateAll((items) => items.map((item) => [item.getAttribute("data-path"), item.getAttribute("data-result")]))
    expect(verdicts).toEqual([
      ["trigger.filter", "true"],
      ["trigger.filter.all.0", "true"],
      ["trigger.filter.all.1", "true"],
      ["trigger.filter.all.1.any.0", "true"],
      ["trigger.filter.all.1.any.1", "false"]
    ])
    expect(await tab.locator("#verdicts > li").nth(4).textContent()).toBe("✗ Condition 2.2: not met · aggregate.revision is at least · in the event: 1")
    expect(await tab.locator("#verdicts > li").nth(1).textContent()).toBe("✓ Condition 1: met · data.status is equal to · in the event: draft")
    // Nothing was run or recorded.
    expect((await service.call("GET", `/api/v1/automations/${ruleUuid}/executions`, { cookie })).body.items).toEqual([])
    for (const width of [1280, 390]) {
      await tab.setViewportSize({ width, height: 900 })
      await screenshot(tab, `web-rules/rule-dry-run-en-${width}`)
    }
    await tab.setViewportSize({ width: 1280, height: 900 })

    // A synthetic event the condition refuses: the verdicts say which condition.
    await tab.getByLabel("an event you describe").check()
    await tab.locator("#syn-status").fill("pending")
    await tab.getByRole("button", { name: "Run the dry run" }).click()
    await poll(() => tab.locator("#dry-run-result").getAttribute("data-matched")).toBe("false")
    expect(await tab.locator("#verdicts > li[data-path='trigger.filter.all.0']").getAttribute("data-result")).toBe("false")

    // Backtest over the stored events: the one draft would have started it.
    await tab.getByRole("button", { name: "Run the backtest" }).click()
    await tab.locator("#backtest-result").waitFor()
    expect(await tab.locator("#backtest-summary").textContent()).toBe("Would have started: 1 of the 1 latest events of this type.")
    expect(await tab.locator("#backtest-items > li").getAttribute("data-event")).toBe(stored.uuid)

    // Switched on; it fires once, on the next draft, not on the one before it.
    await tab.getByRole("button", { name: "Switch the rule on" }).click()
    await poll(() => tab.locator("#rule-state").getAttribute("data-state")).toBe("active")
    expect(await tab.locator("#no-executions").count()).toBe(1)
    const after = await service.call("POST", "/api/v1/commands/tasks.save", { cookie }, task("Лендинг после правила"))
    expect(after.status, JSON.stringify(after.body)).toBe(200)
    await runWorker()
    await tab.reload()
    const executions = tab.locator("#executions > li")
    expect(await executions.count()).toBe(1)
    expect(await executions.first().getAttribute("data-status")).toBe("succeeded")
    expect(await executions.first().locator(".row__title").textContent()).toBe("Done A draft was saved")
    expect(await executions.first().locator(".attempt").count()).toBe(1)
    expect(await executions.first().locator(".attempt").getAttribute("data-outcome")).toBe("succeeded")
    expect(await tab.locator("#used-today-text").textContent()).toBe("Used today: 1 of 5")
    const notifications = await service.call("GET", "/api/v1/learning/notifications", { cookie })
    expect(JSON.stringify(notifications.body)).toContain("Черновик сохранён: сообщить мне")

    // The list shows it on, with today's use.
    await tab.goto(`${origin}/settings/rules?lang=en`)
    const row = tab.locator(`#rules > li[data-uuid='${ruleUuid}']`)
    expect(await row.getAttribute("data-state")).toBe("active")
    expect(await row.locator(".card__meta").textContent()).toContain("Used today: 1 of 5")

    // Every page in both languages and widths (looked at in the screenshots).
    await checkPage(tab, "rules", "/settings/rules")
    await checkPage(tab, "rule", `/settings/rules/${ruleUuid}`)
    await checkPage(tab, "rule-new", "/settings/rules/new")

    // Paused, then deleted: it stops, and its history stays readable.
    await tab.goto(`${origin}/settings/rules/${ruleUuid}?lang=en`)
    await tab.getByRole("button", { name: "Pause the rule" }).click()
    await poll(() => tab.locator("#rule-state").getAttribute("data-state")).toBe("disabled")
    tab.once("dialog", (dialog) => void dialog.accept())
    await tab.getByRole("button", { name: "Delete the rule" }).click()
    await tab.waitForURL(`${origin}/settings/rules?lang=en`)
    expect(await tab.locator("#no-rules").count()).toBe(1)
    await tab.goto(`${origin}/settings/rules/${ruleUuid}?lang=en`)
    expect(await tab.locator("#deleted").textContent()).toBe("This rule was deleted and no longer runs. Its history is kept below.")
    expect(await tab.locator("#executions > li").count()).toBe(1)
    await checkPage(tab, "rule-deleted", `/settings/rules/${ruleUuid}`)
    expect(person.errors).toEqual([])
    await context.close()
  })

  it("sends an anonymous visitor to sign in and back; a rule the profile never had is not found; a rule that saves a draft is built in Russian", async () => {
    const { origin } = world
    const anonymous = await world.browser.newContext()
    const page = await anonymous.newPage()
    await page.goto(`${origin}/settings/rules/new?lang=ru`)
    expect(page.url()).toBe(`${origin}/sign-in?lang=ru&next=${encodeURIComponent("/settings/rules/new?lang=ru")}`)
    await anonymous.close()
    const person = await world.person(`rules.stranger.${Date.now()}@example.com`)
    expect((await person.tab.goto(`${origin}/settings/rules/${randomUUID()}?lang=en`))!.status()).toBe(404)
    expect((await person.tab.goto(`${origin}/settings/rules/not-a-rule?lang=en`))!.status()).toBe(404)
    // The other two actions, in Russian: no webhook yet is said with the way to make one; a draft's
    // title out of bounds is named before anything is sent; the rule is saved with its command.
    const tab = person.tab
    await tab.goto(`${origin}/settings/rules/new?lang=ru`)
    await tab.locator("#save:not([disabled])").waitFor()
    await tab.getByLabel("Доставить событие на мой вебхук").check()
    expect(await tab.locator("#no-webhooks").count()).toBe(1)
    await tab.getByLabel("Сохранить черновик публикации").check()
    await tab.getByLabel("Название правила").fill("Черновик по событию")
    await tab.getByLabel("Заголовок черновика").fill("ab")
    await tab.getByRole("button", { name: "Сохранить правило (выключенным)" }).click()
    await poll(() => tab.locator("#title-problem").textContent()).toBe("Заголовок черновика — от 3 до 160 символов.")
    await tab.getByLabel("Заголовок черновика").fill("Ответ на новый черновик")
    await tab.getByRole("button", { name: "Сохранить правило (выключенным)" }).click()
    await tab.waitForURL(/\/settings\/rules\/[0-9a-f-]{36}\?lang=ru$/)
    expect(await tab.locator("#rule-state").getAttribute("data-state")).toBe("disabled")
    expect(await tab.getByLabel("Заголовок черновика").inputValue()).toBe("Ответ на новый черновик")
    expect(person.errors).toEqual([])
    await person.context.close()
  })
})
