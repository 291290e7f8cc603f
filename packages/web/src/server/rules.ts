import { type BirzhaClient, NotFound } from "@birzha/client"
import { Effect, type Either } from "effect"
import type { PageData, RuleExecutionView, RuleView } from "../model.js"
import type { Refusal, ServerApi } from "./api.js"
import { type Json, optional, plain, uuidPattern } from "../components/json.js"

/** How many pages of events.list (100 each) the dry run's event picker reads; it keeps the latest of them. */
const eventPages = 5
/** Stored events offered for a dry run, newest first. */
const eventsOffered = 50

export const ruleOf = (rule: unknown): RuleView => {
  const r = plain(rule)
  return {
    uuid: r["uuid"], revision: r["revision"], name: r["name"], trigger: r["trigger"], action: r["action"], limits: r["limits"],
    enabled: r["enabled"], state: r["state"], runsToday: r["runsToday"], createdAt: r["createdAt"], updatedAt: r["updatedAt"],
    ...optional("suspendedReason", r["suspendedReason"]), ...optional("deletedAt", r["deletedAt"])
  }
}

const executionOf = (execution: unknown): RuleExecutionView => {
  const e = plain(execution)
  return {
    uuid: e["uuid"], ruleRevision: e["ruleRevision"], eventUuid: e["eventUuid"], eventType: e["eventType"], status: e["status"],
    attempts: (e["attempts"] as ReadonlyArray<Json>).map((a) => ({
      attemptedAt: a["attemptedAt"], durationMs: a["durationMs"], outcome: a["outcome"], ...optional("error", a["error"])
    })),
    createdAt: e["createdAt"], ...optional("cancelReason", e["cancelReason"]), ...optional("finishedAt", e["finishedAt"])
  }
}

/** The latest events the profile may read: events.list reads forward from the oldest kept, so the last pages read are the newest. */
const latestEvents = (client: BirzhaClient) =>
  Effect.gen(function*() {
    const items: Array<Json> = []
    let cursor = ""
    let more = true
    for (let page = 0; page < eventPages && more; page++) {
      const got = yield* client["events.list"]({ urlParams: { limit: 100, ...(cursor === "" ? {} : { cursor }) } })
      items.push(...got.items.map((item) => plain(item)))
      cursor = got.nextCursor
      more = got.hasMore
    }
    return items.slice(-eventsOffered).reverse().map((e) => ({ uuid: e["uuid"], type: e["type"], occurredAt: e["occurredAt"], aggregateKind: e["aggregate"]?.["kind"] ?? "" }))
  })

/** What the builder needs beside the rule: the event types, stored events and webhook endpoints. */
const builderFacts = (client: BirzhaClient) =>
  Effect.all({
    types: client["events.types"](),
    events: latestEvents(client),
    webhooks: client["webhooks.list"]()
  }, { concurrency: "unbounded" }).pipe(
    Effect.map(({ events, types, webhooks }) => ({
      eventTypes: types.types.map(String),
      events,
      webhooks: webhooks.items.map((w) => ({ uuid: w.uuid, url: w.url, state: w.state }))
    }))
  )

/**
 * The automation rule pages: the list (`/settings/rules`), a new rule (`/settings/rules/new`) and
 * one rule (`/settings/rules/{uuid}`, a deleted one too: its history is kept). `undefined`: not one
 * of these paths.
 */
export const loadRules = (api: ServerApi, path: string, cookie: string): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  if (path === "/settings/rules") {
    return run((client) => Effect.map(client["automations.list"](), (list): PageData => ({ page: "rules", rules: list.items.map(ruleOf) })))
  }
  if (path === "/settings/rules/new") {
    return run((client) => Effect.map(builderFacts(client), (facts): PageData => ({ page: "rule", deleted: false, executions: [], ...facts })))
  }
  if (!path.startsWith("/settings/rules/")) return undefined
  const uuid = path.slice("/settings/rules/".length)
  if (!uuidPattern.test(uuid)) return run(() => Effect.fail(new NotFound({ message: "No such rule" })))
  return run((client) =>
    Effect.all({
      list: client["automations.list"](),
      // The rule's executions; NotFound when the profile never had such a rule.
      executions: client["automations.executions"]({ path: { uuid: uuid.toLowerCase() }, urlParams: {} }),
      facts: builderFacts(client)
    }, { concurrency: "unbounded" }).pipe(
      Effect.map(({ executions, facts, list }): PageData => {
        const found = list.items.find((rule) => rule.uuid === uuid.toLowerCase())
        return {
          page: "rule",
          ...(found === undefined ? {} : { rule: ruleOf(found) }),
          deleted: found === undefined,
          executions: executions.items.map(executionOf),
          ...facts
        }
      })
    ))
}
