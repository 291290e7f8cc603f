import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ok, only, refused } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import { assignStaff } from "../staff/Staff.js"
import { checkerAllows, checkerTransitions, type CheckerTrigger } from "./Checkers.js"
import { maxReferenceCases } from "./GradingModel.js"

/**
 * Checker operations through `Operations.invoke` on real Postgres:
 * create with its validation (HTTPS and public addresses only, as webhooks; rules checked; exact
 * bounds), immutable versions, declarative preflight inline, the state machine generated from its
 * table for every state × control operation, idempotency, permissions; the secret is never answered.
 */

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("learning_checkers")
})
afterAll(async () => {
  await m?.close()
})

const secret = "whsec_" + Buffer.from("a secret of at least 24 characters").toString("base64")
const httpChecker = (extra: Record<string, unknown> = {}) => ({
  requestUuid: randomUUID(),
  name: "Grader",
  kind: "http",
  url: "https://grader.example.com/grade",
  secret,
  referenceCases: [{ reply: "1", expected: "correct" }],
  ...extra
})
const declarative = (extra: Record<string, unknown> = {}) => ({
  requestUuid: randomUUID(),
  name: "Exact",
  kind: "declarative",
  rules: { kind: "exact", answers: ["42"] },
  referenceCases: [{ name: "answer", reply: "42", expected: "correct" }, { reply: "41", expected: "wrong" }],
  ...extra
})

const course = async () => {
  const owner = await m.profile()
  const made = ok<{ uuid: string }>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Проверки", kind: "single" } }))
  const create = (caller: SessionActor, payload: Record<string, unknown>) => m.invoke("learning.checkers.create", caller, { path: { course: made.uuid }, payload })
  return { owner, course: made.uuid, create }
}

interface CheckerView {
  uuid: string
  status: string
  revision: number
}

describe("learning checkers", () => {
  it("validates a new checker: HTTPS public endpoints only, rules, secret, exact bounds, strict fields", async () => {
    const { create, owner } = await course()
    expect(refused(await create(owner, httpChecker({ url: "http://grader.example.com/grade" })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, httpChecker({ url: "https://10.1.2.3/grade" })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, httpChecker({ url: "https://169.254.169.254/latest" })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, httpChecker({ url: "https://intranet/grade" })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, httpChecker({ secret: undefined })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, httpChecker({ url: undefined })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, declarative({ url: "https://grader.example.com/grade" })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, declarative({ rules: undefined })))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, declarative({ rules: { kind: "pattern", pattern: "(a)\\1" } })))).toEqual([400, "invalid_request"])
    const unknown = await create(owner, httpChecker({ colour: "red" }))
    expect(refused(unknown)).toEqual([400, "invalid_request"])
    expect(JSON.stringify(unknown.body)).toContain("colour")
    expect(refused(await create(owner, httpChecker({ timeoutMs: 30_001 })))).toEqual([400, "invalid_request"])
    expect(ok<{ timeoutMs: number }>(await create(owner, httpChecker({ timeoutMs: 30_000 }))).timeoutMs).toBe(30_000)
    const cases = (n: number) => Array.from({ length: n }, (_, i) => ({ reply: String(i), expected: "wrong" }))
    expect(ok<{ referenceCases: Array<unknown> }>(await create(owner, httpChecker({ referenceCases: cases(maxReferenceCases) }))).referenceCases).toHaveLength(50)
    expect(refused(await create(owner, httpChecker({ referenceCases: cases(maxReferenceCases + 1) })))).toEqual([400, "invalid_request"])
    // The secret is stored sealed and never answered.
    const made = ok<CheckerView>(await create(owner, httpChecker()))
    const [stored] = await m.sql<{ secret_sealed: string }>("SELECT secret_sealed FROM learning_checkers WHERE uuid = $1", made.uuid)
    expect(stored!.secret_sealed).not.toContain(secret)
    const { course: courseUuid } = await m.sql<{ course: string }>("SELECT course_uuid AS course FROM learning_checkers WHERE uuid = $1", made.uuid).then((rows) => rows[0]!)
    for (const answer of [
      await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: made.uuid } }),
      await m.invoke("learning.checkers.list", owner, { path: { course: courseUuid }, urlParams: { limit: "100" } })
    ]) {
      expect(answer.status).toBe(200)
      expect(JSON.stringify(answer.body)).not.toContain(secret)
    }
    expect(refused(await m.invoke("learning.checkers.list", owner, { path: { course: courseUuid }, urlParams: { limit: "101" } }))).toEqual([400, "invalid_request"])
  })

  it("preflights a declarative checker inline, makes versions of a lineage immutable, and is idempotent by requestUuid", async () => {
    const { course: courseUuid, create, owner } = await course()
    const payload = declarative()
    const v1 = ok<CheckerView & { version: number }>(await create(owner, payload))
    expect(ok<{ uuid: string }>(await create(owner, payload)).uuid).toBe(v1.uuid)
    expect(refused(await create(owner, { ...payload, name: "Other" }))).toEqual([409, "request_conflict"])
    const job = ok<{ uuid: string; kind: string; status: string; verdict: string }>(await m.invoke("learning.checkers.preflight", owner, {
      path: { course: courseUuid, checker: v1.uuid },
      payload: { requestUuid: randomUUID() }
    }))
    expect(job).toMatchObject({ kind: "preflight", status: "succeeded", verdict: "passed" })
    expect(ok<{ passed: boolean; cases: Array<{ name?: string; verdict: string; passed: boolean }> }>(
      await m.invoke("learning.preflights.get", owner, { path: { course: courseUuid, job: job.uuid } })))
      .toMatchObject({ passed: true, cases: [{ name: "answer", verdict: "accepted", passed: true }, { verdict: "wrong", passed: true }] })
    const ready = ok<CheckerView & { rules: unknown }>(await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: v1.uuid } }))
    expect(ready.status).toBe("ready")
    // A new version: the old one stays ready until the new one passes, then is superseded; its rules never change.
    const v2 = ok<CheckerView & { version: number; replaces: string }>(await create(owner, declarative({ rules: { kind: "exact", answers: ["42", "forty-two"] }, replaces: v1.uuid })))
    expect([v2.version, v2.replaces]).toEqual([2, v1.uuid])
    expect(ok<CheckerView>(await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: v1.uuid } })).status).toBe("ready")
    ok(await m.invoke("learning.checkers.preflight", owner, { path: { course: courseUuid, checker: v2.uuid }, payload: { requestUuid: randomUUID() } }))
    const old = ok<CheckerView & { rules: unknown; supersededBy: string }>(await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: v1.uuid } }))
    expect([old.status, old.supersededBy, old.rules]).toEqual(["superseded", v2.uuid, ready.rules])
    expect(refused(await create(owner, declarative({ replaces: v1.uuid })))).toEqual([400, "invalid_request"])
    // A failing reference case fails the preflight and emits learning.checker.failed.
    const strict = ok<CheckerView>(await create(owner, declarative({ referenceCases: [{ reply: "forty-two", expected: "correct" }] })))
    ok(await m.invoke("learning.checkers.preflight", owner, { path: { course: courseUuid, checker: strict.uuid }, payload: { requestUuid: randomUUID() } }))
    expect(ok<CheckerView>(await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: strict.uuid } })).status).toBe("preflight_failed")
    const [events] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM outbox_events WHERE type = 'learning.checker.failed' AND aggregate_uuid = $1", strict.uuid)
    expect(events!.n).toBe(1)
  })

  it("validates and refuses to publish a step whose checker never passed its preflight (checker_not_ready), and publishes once it is ready", async () => {
    const { course: courseUuid, create, owner } = await course()
    const checker = ok<CheckerView>(await create(owner, declarative()))
    expect(checker.status).toBe("draft")
    const author = async () => ok<{ revision: number; status: string; latestVersion: number }>(
      await m.invoke("learning.courses.author_get", owner, { path: { course: courseUuid } }))
    const draft = await author()
    const nodes = [
      { nodeKey: "m1", kind: "module", title: "Модуль" },
      { nodeKey: "q1", parentKey: "m1", kind: "step", stepType: "quiz", title: "Вопрос", body: "?", grading: { maxPoints: 10, checkerUuid: checker.uuid } }
    ]
    const update = async (tree: ReadonlyArray<unknown>) =>
      ok<{ revision: number }>(await m.invoke("learning.courses.update", owner, {
        path: { course: courseUuid },
        payload: { requestUuid: randomUUID(), expectedRevision: (await author()).revision, nodes: tree }
      }))
    await update(nodes)
    const issues = async () =>
      ok<{ issues: Array<{ severity: string; nodeKey?: string; code: string }> }>(await m.invoke("learning.courses.validate", owner, { path: { course: courseUuid } }))
        .issues.filter((issue) => issue.severity === "error").map(({ code, nodeKey, severity }) => ({ code, nodeKey, severity }))
    expect(await issues()).toEqual([{ severity: "error", nodeKey: "q1", code: "checker_not_ready" }])
    const versions = async () => only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_course_versions WHERE course_uuid = $1", courseUuid)).n
    const publish = () => m.invoke("learning.courses.publish", owner, {
      path: { course: courseUuid },
      payload: { requestUuid: randomUUID(), expectedRevision: draft.revision + 1, changelog: "" }
    })
    // Every state that never passed a preflight refuses; nothing is created (no version, no event, the course still a draft).
    for (const state of ["draft", "preflighting", "preflight_failed"]) {
      await m.sql("UPDATE learning_checkers SET status = $2 WHERE uuid = $1", checker.uuid, state)
      expect(refused(await publish()), state).toEqual([409, "checker_not_ready"])
    }
    await m.sql("UPDATE learning_checkers SET status = 'draft' WHERE uuid = $1", checker.uuid)
    expect(await versions()).toBe(0)
    expect(await m.sql("SELECT 1 FROM outbox_events WHERE type = 'learning.course.published' AND aggregate_uuid = $1", courseUuid)).toEqual([])
    expect(await author()).toMatchObject({ status: "draft", latestVersion: 0, revision: draft.revision + 1 })
    // With another blocking issue too, the answer is course_invalid (it counts both).
    await update([...nodes, { nodeKey: "q2", parentKey: "m1", kind: "step", stepType: "quiz", title: "Без проверки", body: "?" }])
    expect((await issues()).map((issue) => issue.code).sort()).toEqual(["checker_not_ready", "missing_grading"])
    expect(refused(await m.invoke("learning.courses.publish", owner, {
      path: { course: courseUuid },
      payload: { requestUuid: randomUUID(), expectedRevision: (await author()).revision, changelog: "" }
    }))).toEqual([409, "course_invalid"])
    await update(nodes)
    // The preflight makes the checker ready: no issue left, the course publishes.
    ok(await m.invoke("learning.checkers.preflight", owner, { path: { course: courseUuid, checker: checker.uuid }, payload: { requestUuid: randomUUID() } }))
    expect(ok<CheckerView>(await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: checker.uuid } })).status).toBe("ready")
    expect(await issues()).toEqual([])
    expect(ok<{ number: number }>(await m.invoke("learning.courses.publish", owner, {
      path: { course: courseUuid },
      payload: { requestUuid: randomUUID(), expectedRevision: (await author()).revision, changelog: "" }
    })).number).toBe(1)
    expect(await versions()).toBe(1)
  })

  it("allows every control operation exactly where the checker's transition table does (every state × operation)", async () => {
    const { course: courseUuid, create, owner } = await course()
    const operations: ReadonlyArray<readonly [string, CheckerTrigger]> = [
      ["learning.checkers.suspend", "learning.checkers.suspend"],
      ["learning.checkers.resume", "learning.checkers.resume"],
      ["learning.checkers.preflight", "learning.checkers.preflight"]
    ]
    const states = ["draft", "preflighting", "ready", "preflight_failed", "suspended", "superseded"] as const
    for (const state of states) {
      for (const [operation, trigger] of operations) {
        const made = ok<CheckerView>(await create(owner, declarative()))
        await m.sql("UPDATE learning_checkers SET status = $2 WHERE uuid = $1", made.uuid, state)
        const answer = await m.invoke(operation, owner, {
          path: { course: courseUuid, checker: made.uuid },
          payload: operation === "learning.checkers.preflight" ? { requestUuid: randomUUID() } : { requestUuid: randomUUID(), expectedRevision: made.revision, reason: "test" }
        })
        if (checkerAllows(trigger, state)) {
          expect(answer.status, `${operation} from ${state}`).toBe(200)
          const [after] = await m.sql<{ status: string }>("SELECT status FROM learning_checkers WHERE uuid = $1", made.uuid)
          const expected = trigger === "learning.checkers.preflight" ? ["ready", "preflight_failed"] : [checkerTransitions[trigger].to]
          expect(expected, `${operation} from ${state}`).toContain(after!.status)
        } else {
          const code = operation === "learning.checkers.resume" && ["draft", "preflighting", "preflight_failed"].includes(state) ? "checker_not_ready" : "invalid_state"
          expect(refused(answer), `${operation} from ${state}`).toEqual([409, code])
        }
      }
    }
  })

  it("logs suspend and resume with actor and reason, checks revisions, and keeps checkers to the course's authors", async () => {
    const { course: courseUuid, create, owner } = await course()
    const made = ok<CheckerView>(await create(owner, declarative()))
    ok(await m.invoke("learning.checkers.preflight", owner, { path: { course: courseUuid, checker: made.uuid }, payload: { requestUuid: randomUUID() } }))
    const ready = ok<CheckerView>(await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: made.uuid } }))
    expect(refused(await m.invoke("learning.checkers.suspend", owner, {
      path: { course: courseUuid, checker: made.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: ready.revision - 1, reason: "stale" }
    }))).toEqual([409, "revision_conflict"])
    const suspended = ok<CheckerView>(await m.invoke("learning.checkers.suspend", owner, {
      path: { course: courseUuid, checker: made.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: ready.revision, reason: "grader maintenance" }
    }))
    ok(await m.invoke("learning.checkers.resume", owner, {
      path: { course: courseUuid, checker: made.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: suspended.revision, reason: "back" }
    }))
    const history = ok<{ items: Array<{ action: string; actorUuid?: string; reason: string }>; nextCursor?: string }>(
      await m.invoke("learning.checkers.control_history", owner, { path: { course: courseUuid, checker: made.uuid }, urlParams: { limit: "2" } }))
    expect(history.items.map((item) => [item.action, item.actorUuid, item.reason])).toEqual([
      ["resume", owner.profileUuid, "back"],
      ["suspend", owner.profileUuid, "grader maintenance"]
    ])
    const rest = ok<{ items: Array<{ action: string }> }>(await m.invoke("learning.checkers.control_history", owner, {
      path: { course: courseUuid, checker: made.uuid },
      urlParams: { limit: "2", cursor: history.nextCursor! }
    }))
    expect(rest.items.map((item) => item.action)).toEqual(["preflight_passed", "preflight"])
    const [audit] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_audit_events WHERE subject_uuid = $1 AND action IN ('checker.suspend', 'checker.resume')", made.uuid)
    expect(audit!.n).toBe(2)

    // Reviewers and analysts are staff without checkers_manage: 403; strangers to a draft course: 404.
    const reviewer = await m.profile()
    await m.runtime.runPromise(assignStaff({ courseUuid, profileUuid: reviewer.profileUuid, role: "reviewer", byProfileUuid: owner.profileUuid }))
    expect(refused(await m.invoke("learning.checkers.get", reviewer, { path: { course: courseUuid, checker: made.uuid } }))).toEqual([403, "forbidden"])
    expect(refused(await create(reviewer, declarative()))).toEqual([403, "forbidden"])
    const analyst = await m.profile()
    await m.runtime.runPromise(assignStaff({ courseUuid, profileUuid: analyst.profileUuid, role: "analyst", byProfileUuid: owner.profileUuid }))
    const range = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() }
    expect(ok<{ items: Array<unknown> }>(await m.invoke("learning.grading.usage", analyst, { path: { course: courseUuid }, urlParams: range })).items).toEqual([])
    expect(refused(await m.invoke("learning.grading.usage", owner, {
      path: { course: courseUuid },
      urlParams: { from: range.to, to: range.from }
    }))).toEqual([400, "invalid_request"])
    const stranger = await m.profile()
    expect(refused(await m.invoke("learning.checkers.list", stranger, { path: { course: courseUuid } }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.checkers.get", owner, { path: { course: courseUuid, checker: randomUUID() } }))).toEqual([404, "not_found"])
  })
})
