import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, codeOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import type { KeyActor, SessionActor } from "../kernel/Authentication.js"
import type { AutomationRule, DryRunResult } from "./Rule.js"

let m: Marketplace
let a: SessionActor

beforeAll(async () => {
  m = await openMarketplace("automations")
  a = await m.profile({ name: "Анна" })
})
afterAll(async () => {
  await m?.close()
})

const rule = (over: Record<string, unknown> = {}) => ({
  requestUuid: randomUUID(),
  name: "Новые отклики",
  trigger: { eventType: "response.received" },
  action: { type: "notification.create" },
  limits: { maxRunsPerDay: 10 },
  ...over
})

const create = (actor: SessionActor | KeyActor, body: Record<string, unknown>) => m.invoke("automations.create", actor, { payload: body })

/** A condition nested `depth` levels deep (the root is level 1). */
const nested = (depth: number): Record<string, unknown> =>
  depth === 1 ? { field: "data.status", op: "eq", value: "pending" } : { all: [nested(depth - 1)] }

const leaf = { field: "type", op: "exists" }

const expectInvalid = async (body: Record<string, unknown>, path: string) => {
  const answer = await create(a, body)
  expect([answer.status, codeOf(answer)], JSON.stringify(body).slice(0, 200)).toEqual([400, "invalid_rule"])
  expect((answer.body as { error: { message: string } }).error.message).toContain(path)
}

const command = (args: Record<string, unknown>, operationId = "tasks.save") => ({ type: "command.execute", operationId, arguments: args })

describe("automations: the rule body exactly as the spec's table", () => {
  it("creates a rule, idempotently by requestUuid; a different body under the same requestUuid is a conflict", async () => {
    const body = rule()
    const first = await create(a, body)
    expect(first.status).toBe(200)
    const created = bodyOf<{ rule: AutomationRule }>(first).rule
    expect([created.revision, created.state, created.enabled, created.createdVia, created.runsToday]).toEqual([1, "active", true, "session", 0])
    const again = bodyOf<{ rule: AutomationRule }>(await create(a, body)).rule
    expect(again.uuid).toBe(created.uuid)
    expect(codeOf(await create(a, { ...body, name: "Другое" }))).toBe("request_conflict")
    const list = bodyOf<{ items: Array<AutomationRule> }>(await m.invoke("automations.list", a))
    expect(list.items.filter((item) => item.uuid === created.uuid)).toHaveLength(1)
  })

  it("name 1 to 160 characters", async () => {
    expect((await create(a, rule({ name: "я" }))).status).toBe(200)
    expect((await create(a, rule({ name: "я".repeat(160) }))).status).toBe(200)
    await expectInvalid(rule({ name: "" }), "name")
    await expectInvalid(rule({ name: "я".repeat(161) }), "name")
  })

  it("maxRunsPerDay 1 to 1000, an integer", async () => {
    expect((await create(a, rule({ limits: { maxRunsPerDay: 1 } }))).status).toBe(200)
    expect((await create(a, rule({ limits: { maxRunsPerDay: 1000 } }))).status).toBe(200)
    await expectInvalid(rule({ limits: { maxRunsPerDay: 0 } }), "limits.maxRunsPerDay")
    await expectInvalid(rule({ limits: { maxRunsPerDay: 1001 } }), "limits.maxRunsPerDay")
    await expectInvalid(rule({ limits: { maxRunsPerDay: 1.5 } }), "limits.maxRunsPerDay")
    await expectInvalid(rule({ limits: {} }), "limits.maxRunsPerDay")
  })

  it("requires name, trigger, action, limits and requestUuid; no other properties anywhere", async () => {
    for (const field of ["name", "trigger", "action", "limits", "requestUuid"]) {
      const body: Record<string, unknown> = rule()
      delete body[field]
      await expectInvalid(body, field)
    }
    await expectInvalid(rule({ extra: 1 }), "extra")
    await expectInvalid(rule({ trigger: { eventType: "response.received", other: 1 } }), "trigger.other")
    await expectInvalid(rule({ limits: { maxRunsPerDay: 1, other: 1 } }), "limits.other")
    await expectInvalid(rule({ action: { type: "notification.create", endpointUuid: randomUUID() } }), "action.endpointUuid")
    await expectInvalid(rule({ trigger: { eventType: "no.such" } }), "trigger.eventType")
    await expectInvalid(rule({ trigger: { eventType: "response.received", filter: { ...leaf, extra: 1 } } }), "trigger.filter.extra")
    await expectInvalid(rule({ enabled: "yes" }), "enabled")
    await expectInvalid(rule({ requestUuid: "nope" }), "requestUuid")
  })

  it("condition nesting depth at most 6", async () => {
    expect((await create(a, rule({ trigger: { eventType: "response.received", filter: nested(6) } }))).status).toBe(200)
    await expectInvalid(rule({ trigger: { eventType: "response.received", filter: nested(7) } }), "trigger.filter.all.0.all.0.all.0.all.0.all.0.all.0")
  })

  it("all and any take 1 to 10 conditions", async () => {
    for (const key of ["all", "any"]) {
      const of = (n: number) => rule({ trigger: { eventType: "response.received", filter: { [key]: Array.from({ length: n }, () => leaf) } } })
      expect((await create(a, of(1))).status).toBe(200)
      expect((await create(a, of(10))).status).toBe(200)
      await expectInvalid(of(0), `trigger.filter.${key}`)
      await expectInvalid(of(11), `trigger.filter.${key}`)
    }
  })

  it("array values 1 to 30 strings or numbers of one type; each op's value fits its field", async () => {
    const filter = (condition: Record<string, unknown>) => rule({ trigger: { eventType: "response.received", filter: condition } })
    const strings = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`)
    expect((await create(a, filter({ field: "data.status", op: "in", value: strings(1) }))).status).toBe(200)
    expect((await create(a, filter({ field: "data.status", op: "in", value: strings(30) }))).status).toBe(200)
    expect((await create(a, filter({ field: "aggregate.revision", op: "in", value: [1, 2, 3] }))).status).toBe(200)
    await expectInvalid(filter({ field: "data.status", op: "in", value: [] }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.status", op: "in", value: strings(31) }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.status", op: "in", value: ["a", 1] }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.status", op: "in", value: [true] }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.status", op: "eq", value: 1 }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.status", op: "eq", value: true }), "trigger.filter.value")
    await expectInvalid(filter({ field: "aggregate.revision", op: "eq", value: "1" }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.status", op: "gte", value: 1 }), "trigger.filter.op")
    await expectInvalid(filter({ field: "aggregate.revision", op: "contains", value: "1" }), "trigger.filter.op")
    await expectInvalid(filter({ field: "data.status", op: "contains", value: "" }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.status", op: "exists", value: "x" }), "trigger.filter.value")
    await expectInvalid(filter({ field: "data.other", op: "exists" }), "trigger.filter.field")
    await expectInvalid(filter({ field: "data.status", op: "like", value: "x" }), "trigger.filter.op")
    await expectInvalid(filter({ field: "data.status" }), "trigger.filter.op")
    await expectInvalid(filter({}), "trigger.filter.field")
    await expectInvalid(filter({ all: [leaf], field: "type", op: "exists" }), "trigger.filter")
    await expectInvalid(filter({ field: "data.status", op: "eq", value: { x: 1 } }), "trigger.filter.value")
  })

  it("command.execute: one of the seven saves, a title of 3 to 160, no nulls, publicationUuid with expectedRevision, no bound arguments", async () => {
    const ok = async (action: Record<string, unknown>) => expect((await create(a, rule({ action }))).status).toBe(200)
    await ok(command({ data: { title: "абв" } }))
    await ok(command({ data: { title: "а".repeat(160), description: "x" } }, "articles.save"))
    await ok(command({ data: { title: "Черновик" }, publicationUuid: randomUUID(), expectedRevision: 1 }))
    await expectInvalid(rule({ action: command({ data: { title: "аб" } }) }), "action.arguments.data.title")
    await expectInvalid(rule({ action: command({ data: { title: "а".repeat(161) } }) }), "action.arguments.data.title")
    await expectInvalid(rule({ action: command({ data: {} }) }), "action.arguments.data.title")
    await expectInvalid(rule({ action: command({}) }), "action.arguments.data")
    await expectInvalid(rule({ action: command({ data: { title: "Черновик", budget: null } }) }), "action.arguments.data.budget")
    await expectInvalid(rule({ action: command({ data: { title: "Черновик" }, publicationUuid: randomUUID() }) }), "action.arguments.expectedRevision")
    await expectInvalid(rule({ action: command({ data: { title: "Черновик" }, expectedRevision: 1 }) }), "action.arguments.publicationUuid")
    await expectInvalid(rule({ action: command({ data: { title: "Черновик" }, publicationUuid: randomUUID(), expectedRevision: 0 }) }), "action.arguments.expectedRevision")
    await expectInvalid(rule({ action: command({ data: { title: "Черновик" }, requestUuid: randomUUID() }) }), "action.arguments.requestUuid")
    await expectInvalid(rule({ action: command({ data: { title: "Черновик" }, profileUuid: randomUUID() }) }), "action.arguments.profileUuid")
    await expectInvalid(rule({ action: command({ data: { title: "Черновик" } }, "tasks.submit") }), "action.operationId")
    await expectInvalid(rule({ action: { type: "command.execute", operationId: "tasks.save" } }), "action.arguments")
    await expectInvalid(rule({ action: { type: "shell.run" } }), "action")
  })

  it("webhook.deliver needs an active endpoint of the acting profile", async () => {
    await expectInvalid(rule({ action: { type: "webhook.deliver", endpointUuid: randomUUID() } }), "action.endpointUuid")
    await expectInvalid(rule({ action: { type: "webhook.deliver" } }), "action.endpointUuid")
  })

  it("a key needs automations:write and the scope of its action; the rule remembers the key", async () => {
    const [key] = await m.sql<{ uuid: string }>(
      `INSERT INTO api_keys (account_uuid, profile_uuid, kind, name, scopes, http_enabled, mcp_enabled, lifetime_days)
       VALUES ($1, $2, 'application', 'rules', '["automations:write","automations:read"]'::jsonb, true, true, 90) RETURNING uuid`,
      a.accountUuid, a.profileUuid
    )
    const actor: KeyActor = {
      ...a, via: "key", keyUuid: key!.uuid, keyName: "rules", keyKind: "application",
      scopes: ["automations:write", "automations:read"], httpEnabled: true, mcpEnabled: true
    }
    const made = bodyOf<{ rule: AutomationRule }>(await create(actor, rule())).rule
    expect([made.createdVia, made.state]).toEqual(["key", "active"])
    expect(codeOf(await create(actor, rule({ action: command({ data: { title: "Черновик" } }) })))).toBe("insufficient_scope")
    expect(codeOf(await create({ ...actor, scopes: ["automations:read"] }, rule()))).toBe("insufficient_scope")
    await m.sql("UPDATE api_keys SET revoked_at = now() WHERE uuid = $1", key!.uuid)
    const after = bodyOf<{ items: Array<AutomationRule> }>(await m.invoke("automations.list", a)).items.find((item) => item.uuid === made.uuid)
    expect([after?.state, after?.suspendedReason]).toEqual(["suspended", "key_revoked"])
  })
})

describe("automations: update, delete, executions, the cap", () => {
  it("update replaces the rule at expectedRevision; stale is 409; the body's uuid must be the path's", async () => {
    const made = bodyOf<{ rule: AutomationRule }>(await create(a, rule())).rule
    const update = (body: Record<string, unknown>, uuid = made.uuid) => m.invoke("automations.update", a, { path: { uuid }, payload: body })
    const { requestUuid: _, ...fields } = rule({ name: "Обновлено", enabled: false })
    const updated = await update({ ...fields, uuid: made.uuid, expectedRevision: 1 })
    expect(updated.status).toBe(200)
    expect([bodyOf<{ rule: AutomationRule }>(updated).rule.revision, bodyOf<{ rule: AutomationRule }>(updated).rule.state]).toEqual([2, "disabled"])
    expect(codeOf(await update({ ...fields, uuid: made.uuid, expectedRevision: 1 }))).toBe("revision_conflict")
    expect(codeOf(await update({ ...fields, uuid: randomUUID(), expectedRevision: 2 }))).toBe("invalid_rule")
    expect(codeOf(await update({ ...fields, uuid: made.uuid }))).toBe("invalid_rule")
    expect(codeOf(await update({ ...fields, uuid: made.uuid, expectedRevision: 0 }))).toBe("invalid_rule")
    const other = randomUUID()
    expect(codeOf(await update({ ...fields, uuid: other, expectedRevision: 1 }, other))).toBe("not_found")
    const b = await m.profile()
    expect(codeOf(await m.invoke("automations.update", b, { path: { uuid: made.uuid }, payload: { ...fields, uuid: made.uuid, expectedRevision: 2 } }))).toBe("not_found")
  })

  it("delete is soft: gone from the list, executions still readable, deleting again answers the same record; pending executions cancelled", async () => {
    const made = bodyOf<{ rule: AutomationRule }>(await create(a, rule())).rule
    await m.sql(
      `INSERT INTO automation_executions (rule_uuid, rule_revision, profile_uuid, event_uuid, event_type, event_position, status)
       VALUES ($1, 1, $2, $3, 'response.received', 1, 'pending')`, made.uuid, a.profileUuid, randomUUID()
    )
    expect(codeOf(await m.invoke("automations.delete", a, { path: { uuid: made.uuid }, payload: { uuid: randomUUID() } }))).toBe("invalid_rule")
    expect(codeOf(await m.invoke("automations.delete", a, { path: { uuid: made.uuid }, payload: {} }))).toBe("invalid_rule")
    const deleted = await m.invoke("automations.delete", a, { path: { uuid: made.uuid }, payload: { uuid: made.uuid } })
    expect(bodyOf<{ rule: AutomationRule }>(deleted).rule.state).toBe("deleted")
    const again = await m.invoke("automations.delete", a, { path: { uuid: made.uuid }, payload: { uuid: made.uuid, requestUuid: randomUUID() } })
    expect(bodyOf<{ rule: AutomationRule }>(again).rule).toEqual(bodyOf<{ rule: AutomationRule }>(deleted).rule)
    const list = bodyOf<{ items: Array<AutomationRule> }>(await m.invoke("automations.list", a))
    expect(list.items.some((item) => item.uuid === made.uuid)).toBe(false)
    const executions = await m.invoke("automations.executions", a, { path: { uuid: made.uuid } })
    expect(bodyOf<{ items: Array<{ status: string; cancelReason?: string }> }>(executions).items.map((x) => [x.status, x.cancelReason]))
      .toEqual([["cancelled", "rule_deleted"]])
    expect(codeOf(await m.invoke("automations.executions", await m.profile(), { path: { uuid: made.uuid } }))).toBe("not_found")
  })

  it("at most 100 live rules per profile: the 101st is refused, a deleted one frees a place", async () => {
    const p = await m.profile()
    const made: Array<string> = []
    for (let i = 0; i < 100; i++) {
      const answer = await create(p, rule())
      expect(answer.status).toBe(200)
      made.push(bodyOf<{ rule: AutomationRule }>(answer).rule.uuid)
    }
    expect(codeOf(await create(p, rule()))).toBe("forbidden")
    await m.invoke("automations.delete", p, { path: { uuid: made[0]! }, payload: { uuid: made[0]! } })
    expect((await create(p, rule())).status).toBe(200)
  })
})

describe("automations: dry run", () => {
  const dry = (actor: SessionActor, body: Record<string, unknown>) => m.invoke("automations.dry_run", actor, { payload: body })
  const { requestUuid: _, ...body } = rule({
    trigger: {
      eventType: "response.received",
      filter: { all: [{ field: "data.status", op: "in", value: ["pending", "sent"] }, { any: [{ field: "aggregate.revision", op: "gte", value: 2 }, { field: "data.objectUuid", op: "exists" }] }] }
    }
  })

  it("evaluates a synthetic event with a trace of every node, and writes nothing", async () => {
    const [before] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM automation_executions")
    const answer = await dry(a, { rule: body, event: { type: "response.received", aggregate: { kind: "relation", revision: 3 }, data: { status: "pending" } } })
    expect(answer.status).toBe(200)
    const result = bodyOf<DryRunResult>(answer)
    expect([result.matched, result.typeMatches, result.wouldSkip, result.chainDepth, result.action.valid]).toEqual([true, true, null, 0, true])
    expect(result.trace.map((entry) => [entry.path, entry.result])).toEqual([
      ["trigger.filter.all.0", true],
      ["trigger.filter.all.1.any.0", true],
      ["trigger.filter.all.1.any.1", false],
      ["trigger.filter.all.1", true],
      ["trigger.filter", true]
    ])
    const missed = bodyOf<DryRunResult>(await dry(a, { rule: body, event: { type: "offer.received", data: { status: "done" } } }))
    expect([missed.matched, missed.typeMatches]).toEqual([false, false])
    const chained = bodyOf<DryRunResult>(await dry(a, { rule: body, event: { type: "response.received", context: { automation: { depth: 2 } } } }))
    expect([chained.wouldSkip, chained.chainDepth]).toEqual(["chain", 2])
    const [after] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM automation_executions")
    expect(after!.n).toBe(before!.n)
  })

  it("takes exactly one of eventUuid and event; an invisible event is 404; the rule is validated as in create", async () => {
    expect(codeOf(await dry(a, { rule: body }))).toBe("invalid_rule")
    expect(codeOf(await dry(a, { rule: body, eventUuid: randomUUID(), event: { type: "response.received" } }))).toBe("invalid_rule")
    expect(codeOf(await dry(a, { rule: body, eventUuid: randomUUID() }))).toBe("not_found")
    expect(codeOf(await dry(a, { rule: { ...body, name: "" }, event: { type: "response.received" } }))).toBe("invalid_rule")
    const deep = await dry(a, { rule: { ...body, trigger: { eventType: "response.received", filter: nested(7) } }, event: { type: "response.received" } })
    expect((deep.body as { error: { message: string } }).error.message).toContain("rule.trigger.filter")
  })

  it("decodes a command's arguments with the operation's own schema", async () => {
    const save = { ...body, action: command({ data: { title: "Черновик задачи" } }) }
    const result = bodyOf<DryRunResult>(await dry(a, { rule: save, event: { type: "response.received" } }))
    expect(result.action.type).toBe("command.execute")
    expect(result.action.valid).toBe(false)
    expect(result.action.error).toContain("data")
  })
})
