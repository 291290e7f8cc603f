import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import type { KeyActor, SessionActor } from "../kernel/Authentication.js"
import { sequenceBatch } from "../events/OutboxEventRepository.js"
import { claimExecutions, fanOutAutomations, runDueExecutions } from "./AutomationWorker.js"
import type { Notification } from "../notifications/Notification.js"
import type { AutomationExecution, AutomationRule } from "./Rule.js"

let m: Marketplace

beforeAll(async () => {
  m = await openMarketplace("automation-worker")
})
afterAll(async () => {
  await m?.close()
})

/** What the worker does, to the end: sequence, fan out, run, until nothing is left. */
const drain = async () => {
  for (let round = 0; round < 10; round++) {
    const work = await m.runtime.runPromise(Effect.gen(function*() {
      let done = 0
      for (;;) {
        const sequenced = yield* sequenceBatch(1000)
        const { covered } = yield* fanOutAutomations
        done += sequenced + covered
        if (sequenced === 0 && covered === 0) break
      }
      for (;;) {
        const ran = yield* runDueExecutions(100)
        done += ran
        if (ran === 0) break
      }
      return done
    }))
    if (work === 0) return
  }
}

const taskDraft = (title: string) => ({
  title,
  category: "Сайты",
  description: "Описание задачи для автоматизации",
  budget: "",
  deadline: "",
  files: []
})

const save = (actor: SessionActor, title: string) =>
  m.invoke("tasks.save", actor, { payload: { requestUuid: randomUUID(), data: taskDraft(title) } })

const createRule = async (actor: SessionActor | KeyActor, over: Record<string, unknown>) => {
  const answer = await m.invoke("automations.create", actor, {
    payload: {
      requestUuid: randomUUID(),
      name: "Черновик сохранён",
      trigger: { eventType: "publication.draft_saved" },
      action: { type: "notification.create" },
      limits: { maxRunsPerDay: 100 },
      ...over
    }
  })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return bodyOf<{ rule: AutomationRule }>(answer).rule
}

const executions = async (actor: SessionActor, ruleUuid: string, requestUuid?: string) =>
  bodyOf<{ items: Array<AutomationExecution> }>(
    await m.invoke("automations.executions", actor, { path: { uuid: ruleUuid }, urlParams: requestUuid === undefined ? {} : { requestUuid } })
  ).items

describe("automations in the worker", () => {
  it("a rule fires on a later event of its profile only, and its notification appears in the inbox", async () => {
    const a = await m.profile()
    const b = await m.profile()
    await save(a, "Сохранено до правила")
    await drain()
    const rule = await createRule(a, { trigger: { eventType: "publication.draft_saved", filter: { field: "data.status", op: "eq", value: "draft" } } })
    await save(a, "Первая задача")
    await save(b, "Чужая задача")
    await drain()
    const runs = await executions(a, rule.uuid)
    expect(runs.map((x) => [x.status, x.attempts.length, x.ruleRevision])).toEqual([["succeeded", 1, 1]])
    const notes = await m.sql<{ title: string; source: string; execution_uuid: string; body: string }>(
      "SELECT title, source, execution_uuid, body FROM notifications WHERE profile_uuid = $1", a.profileUuid
    )
    expect(notes.map((n) => [n.title, n.source, n.execution_uuid])).toEqual([["Черновик сохранён", "automation", runs[0]!.uuid]])
    expect(await m.sql("SELECT 1 FROM notifications WHERE profile_uuid = $1", b.profileUuid)).toHaveLength(0)
    const inbox = bodyOf<{ items: Array<Notification> }>(await m.invoke("learning.notifications.list", a, { urlParams: { source: "automation" } }))
    expect(inbox.items.map((n) => [n.title, n.source, n.kind, n.ruleUuid, n.read, n.link])).toEqual([
      ["Черновик сохранён", "automation", "automation.rule", rule.uuid, false, "tasks.get"]
    ])
    expect(bodyOf<{ items: Array<Notification> }>(await m.invoke("learning.notifications.list", a, { urlParams: { source: "learning" } })).items).toEqual([])
    expect(bodyOf<{ items: Array<Notification> }>(await m.invoke("learning.notifications.list", b, { urlParams: {} })).items).toEqual([])
    // A crash after the fan-out (the cursor back) and after the action (the execution pending again) changes nothing.
    await m.sql("UPDATE automation_cursor SET position = 0")
    await m.sql("UPDATE automation_executions SET status = 'pending', finished_at = NULL WHERE uuid = $1", runs[0]!.uuid)
    await drain()
    expect(await executions(a, rule.uuid)).toHaveLength(1)
    expect(await m.sql("SELECT 1 FROM notifications WHERE profile_uuid = $1", a.profileUuid)).toHaveLength(1)
  })

  it("a command.execute rule saves a draft through the registry with a derived requestUuid; triggering itself stops by chain protection", async () => {
    const a = await m.profile()
    const rule = await createRule(a, {
      name: "Копия",
      action: { type: "command.execute", operationId: "tasks.save", arguments: { data: taskDraft("Создано правилом") } }
    })
    await save(a, "Исходная")
    await drain()
    const runs = await executions(a, rule.uuid)
    // The rule's own draft_saved event reached it again: skipped by chain protection, no second save.
    expect(runs.map((x) => x.status).sort()).toEqual(["skipped_chain", "succeeded"])
    const done = runs.find((x) => x.status === "succeeded")!
    expect(done.requestUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    const [made] = await m.sql<{ uuid: string }>("SELECT uuid FROM publications WHERE owner_profile_uuid = $1 AND draft ->> 'title' = $2", a.profileUuid, "Создано правилом")
    expect(done.result?.["publicationUuid"]).toBe(made?.uuid)
    const titles = await m.sql<{ title: string }>("SELECT draft ->> 'title' AS title FROM publications WHERE owner_profile_uuid = $1 ORDER BY created_at", a.profileUuid)
    expect(titles.map((t) => t.title)).toEqual(["Исходная", "Создано правилом"])
    const [caused] = await m.sql<{ automation: { ruleUuid: string; depth: number; executionUuid: string } }>(
      "SELECT context -> 'automation' AS automation FROM outbox_events WHERE aggregate_uuid = $1", done.result?.["publicationUuid"]
    )
    expect([caused!.automation.ruleUuid, caused!.automation.depth, caused!.automation.executionUuid]).toEqual([rule.uuid, 1, done.uuid])
    expect((await executions(a, rule.uuid, done.requestUuid)).map((x) => x.uuid)).toEqual([done.uuid])
    // Run again after a crash: the same requestUuid answers the first save; no second draft.
    await m.sql("UPDATE automation_executions SET status = 'pending', finished_at = NULL WHERE uuid = $1", done.uuid)
    await drain()
    expect(await m.sql("SELECT 1 FROM publications WHERE owner_profile_uuid = $1", a.profileUuid)).toHaveLength(2)
  })

  it("maxRunsPerDay 1 lets exactly one run a day; the rest are skipped_limit", async () => {
    const a = await m.profile()
    const rule = await createRule(a, { limits: { maxRunsPerDay: 1 } })
    await save(a, "Один")
    await save(a, "Два")
    await save(a, "Три")
    await drain()
    const runs = await executions(a, rule.uuid)
    expect(runs.map((x) => x.status).sort()).toEqual(["skipped_limit", "skipped_limit", "succeeded"])
    const list = bodyOf<{ items: Array<AutomationRule> }>(await m.invoke("automations.list", a)).items
    expect(list.find((r) => r.uuid === rule.uuid)?.runsToday).toBe(1)
  })

  it("revoking the key that made a rule stops it: matches are recorded as cancelled", async () => {
    const a = await m.profile()
    const [key] = await m.sql<{ uuid: string }>(
      `INSERT INTO api_keys (account_uuid, profile_uuid, kind, name, scopes, http_enabled, mcp_enabled, lifetime_days)
       VALUES ($1, $2, 'application', 'rules', '["automations:write"]'::jsonb, true, true, 90) RETURNING uuid`,
      a.accountUuid, a.profileUuid
    )
    const actor: KeyActor = {
      ...a, via: "key", keyUuid: key!.uuid, keyName: "rules", keyKind: "application",
      scopes: ["automations:write"], httpEnabled: true, mcpEnabled: true
    }
    const rule = await createRule(actor, {})
    await save(a, "До отзыва")
    await drain()
    await m.sql("UPDATE api_keys SET revoked_at = now() WHERE uuid = $1", key!.uuid)
    await save(a, "После отзыва")
    await drain()
    const runs = await executions(a, rule.uuid)
    expect(runs.map((x) => [x.status, x.cancelReason ?? null])).toEqual([["cancelled", "revoked: key_revoked"], ["succeeded", null]])
  })

  it("a notification.create execution is acted on by the fan-out itself: succeeded with one attempt, nothing left for the runner", async () => {
    const a = await m.profile()
    const rule = await createRule(a, {})
    await save(a, "Сразу")
    const { queued, ran } = await m.runtime.runPromise(Effect.gen(function*() {
      yield* sequenceBatch(1000)
      let queued = 0
      for (;;) {
        const round = yield* fanOutAutomations
        queued += round.queued
        if (round.covered === 0) break
      }
      return { queued, ran: yield* runDueExecutions(100) }
    }))
    expect([queued, ran]).toEqual([0, 0])
    const [run] = await executions(a, rule.uuid)
    expect([run?.status, run?.attempts.length, run?.attempts[0]?.outcome]).toEqual(["succeeded", 1, "succeeded"])
    const notes = await m.sql<{ execution_uuid: string; title: string }>(
      "SELECT execution_uuid, title FROM notifications WHERE rule_uuid = $1", rule.uuid)
    expect(notes).toEqual([{ execution_uuid: run!.uuid, title: "Черновик сохранён" }])
    expect(run?.result).toEqual({ notificationUuid: expect.stringMatching(/^[0-9a-f-]{36}$/) })
  })

  it("update cancels pending executions of the old revision; a disabled rule produces nothing", async () => {
    const a = await m.profile()
    // A command waits for the runner (a notification would be written by the fan-out at once).
    const rule = await createRule(a, { action: { type: "command.execute", operationId: "tasks.save", arguments: { data: taskDraft("Отложено") } } })
    await save(a, "Ждёт")
    await m.runtime.runPromise(Effect.gen(function*() {
      yield* sequenceBatch(1000)
      while ((yield* fanOutAutomations).covered > 0) { /* fan out only */ }
    }))
    expect((await executions(a, rule.uuid)).map((x) => x.status)).toEqual(["pending"])
    const { requestUuid: _r, ...body } = {
      requestUuid: "",
      name: "Выключено",
      trigger: { eventType: "publication.draft_saved" },
      action: { type: "notification.create" },
      limits: { maxRunsPerDay: 100 },
      enabled: false
    }
    expect((await m.invoke("automations.update", a, { path: { uuid: rule.uuid }, payload: { ...body, uuid: rule.uuid, expectedRevision: 1 } })).status).toBe(200)
    await save(a, "После выключения")
    await drain()
    expect((await executions(a, rule.uuid)).map((x) => [x.status, x.cancelReason])).toEqual([["cancelled", "rule_updated"]])
  })

  it("webhook.deliver queues one delivery of the event to an active endpoint of the profile", async () => {
    const a = await m.profile()
    const [endpoint] = await m.sql<{ uuid: string }>(
      `INSERT INTO webhook_endpoints (uuid, profile_uuid, url, description, event_types, payload_mode, secret_sealed, approved_at, verified_at, after_position)
       VALUES (gen_random_uuid(), $1, 'https://receiver.example/hook', '', '["file.ready"]'::jsonb, 'reference', 'sealed', now(), now(),
         (SELECT last_position FROM event_sequence)) RETURNING uuid`,
      a.profileUuid
    )
    const rule = await createRule(a, { action: { type: "webhook.deliver", endpointUuid: endpoint!.uuid } })
    await save(a, "Для вебхука")
    await drain()
    const [run] = await executions(a, rule.uuid)
    expect(run?.status).toBe("succeeded")
    const deliveries = await m.sql<{ uuid: string; event_uuid: string }>("SELECT uuid, event_uuid FROM webhook_deliveries WHERE endpoint_uuid = $1", endpoint!.uuid)
    expect(deliveries.map((d) => [d.uuid, d.event_uuid])).toEqual([[run!.result?.["deliveryUuid"], run!.eventUuid]])
    await m.sql("UPDATE webhook_endpoints SET paused_at = now() WHERE uuid = $1", endpoint!.uuid)
    await save(a, "Пауза")
    await drain()
    const latest = await executions(a, rule.uuid)
    expect(latest.map((x) => x.status)).toEqual(["failed", "succeeded"])
    expect(latest[0]!.attempts[0]?.error?.code).toBe("endpoint_inactive")
  })

  it("claims at most 4 running executions of one profile at once", async () => {
    const a = await m.profile()
    const rule = await createRule(a, {})
    for (let i = 0; i < 6; i++) {
      await m.sql(
        `INSERT INTO automation_executions (rule_uuid, rule_revision, profile_uuid, event_uuid, event_type, event_position, status)
         VALUES ($1, 1, $2, $3, 'publication.draft_saved', 1, 'pending')`, rule.uuid, a.profileUuid, randomUUID()
      )
    }
    const claimed = await m.runtime.runPromise(claimExecutions(100))
    expect(claimed.filter((x) => x.profile_uuid === a.profileUuid)).toHaveLength(4)
    expect(await m.runtime.runPromise(claimExecutions(100))).toHaveLength(0)
    await m.sql("UPDATE automation_executions SET status = 'cancelled', lease_until = NULL WHERE rule_uuid = $1", rule.uuid)
  })

  it("backtest: which of the latest visible events of the type the rule would have matched, with no effect", async () => {
    const a = await m.profile()
    const b = await m.profile()
    for (const title of ["Раз", "Два", "Три"]) await save(a, title)
    await drain()
    const [before] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM automation_executions")
    const test = (actor: SessionActor, value: string, limit?: number) =>
      m.invoke("automations.backtest", actor, {
        payload: {
          rule: {
            name: "Проверка",
            trigger: { eventType: "publication.draft_saved", filter: { field: "data.status", op: "eq", value } },
            action: { type: "notification.create" },
            limits: { maxRunsPerDay: 1 }
          },
          ...(limit === undefined ? {} : { limit })
        }
      })
    const hit = bodyOf<{ scanned: number; matched: number; items: Array<{ matched: boolean }> }>(await test(a, "draft"))
    expect([hit.scanned, hit.matched]).toEqual([3, 3])
    const miss = bodyOf<{ scanned: number; matched: number }>(await test(a, "approved", 2))
    expect([miss.scanned, miss.matched]).toEqual([2, 0])
    expect(bodyOf<{ scanned: number }>(await test(b, "draft")).scanned).toBe(0)
    expect((await test(a, "draft", 101)).status).toBe(400)
    const [after] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM automation_executions")
    expect(after!.n).toBe(before!.n)
  })

  it("fans out without any rule of the event's type cheaply and moves the cursor to the end", async () => {
    await drain()
    const [cursor] = await m.sql<{ position: string; last: string }>(
      "SELECT c.position::text AS position, s.last_position::text AS last FROM automation_cursor c, event_sequence s"
    )
    expect(cursor!.position).toBe(cursor!.last)
  })
})
