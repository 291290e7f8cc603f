import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { command, ok, only, refused, step } from "../../../test/learning.js"
import { bodyOf, type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import type { InputOf } from "../../operations/Operations.js"
import type { CourseAuthor, CourseNode, Run } from "./Model.js"
import type { Atom, StaffRole } from "../Permissions.js"
import { Cause, Effect, Exit } from "effect"
import { PostgresBlobStore } from "../../files/BlobStore.js"
import { runLearningJobs } from "./Jobs.js"
import { loadCourse, loadVersion } from "./CourseRepository.js"
import { loadRun } from "./RunRepository.js"
import { advanceRuns, runTransitions } from "./Runs.js"
import { assignStaff } from "../staff/Staff.js"

let m: Marketplace
let owner: SessionActor
let stranger: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learning")
  owner = await m.profile({ name: "Автор" })
  stranger = await m.profile({ name: "Прохожий" })
})
afterAll(async () => {
  await m?.close()
})


const tree: ReadonlyArray<CourseNode> = [
  { nodeKey: "m1", kind: "module", title: "Модуль 1" },
  step("s1", "m1"),
  step("s2", "m1", { stepType: "quiz", body: undefined, grading: { maxPoints: 10, passThreshold: 6, attempts: 3 }, dueOffsetDays: 7 })
].map((node) => JSON.parse(JSON.stringify(node)))

const create = async (actor: SessionActor = owner, title = "Основы SQL") =>
  ok<CourseAuthor>(await m.invoke("learning.courses.create", actor, { payload: { requestUuid: randomUUID(), title, kind: "single" } }))

const update = (actor: SessionActor, course: { uuid: string; revision: number }, changes: Record<string, unknown>) =>
  m.invoke("learning.courses.update", actor, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: course.revision, ...changes } })

const publish = (actor: SessionActor, course: { uuid: string; revision: number }, changelog = "") =>
  m.invoke("learning.courses.publish", actor, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: course.revision, changelog } })

const authorGet = (actor: SessionActor, uuid: string) => m.invoke("learning.courses.author_get", actor, { path: { course: uuid } })

/** A course with the tree, published once, unlisted. */
const publishedCourse = async (actor: SessionActor = owner) => {
  const draft = ok<CourseAuthor>(await update(actor, await create(actor), { nodes: tree }))
  ok(await publish(actor, draft))
  return ok<CourseAuthor>(await authorGet(actor, draft.uuid))
}

const runInput = (over: Record<string, unknown> = {}) => ({
  requestUuid: randomUUID(),
  versionNumber: 1,
  title: "Весенний поток",
  pacing: "cohort",
  startsAt: new Date(Date.now() + 86_400_000).toISOString(),
  admission: "open",
  waitlist: false,
  enrollmentWindow: {},
  pausePolicy: { maxDays: 14, maxCount: 2 },
  ...over
})
const createRun = async (course: { uuid: string }, over: Record<string, unknown> = {}, actor: SessionActor = owner) =>
  ok<Run>(await m.invoke("learning.runs.create", actor, { path: { course: course.uuid }, payload: runInput(over) }))

const runCommand = (id: string, actor: SessionActor, run: { uuid: string; revision: number }, extra: Record<string, unknown> = {}) =>
  m.invoke(id, actor, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, ...extra } })

const assign = (courseUuid: string, profile: SessionActor, role: StaffRole, options: { runUuid?: string; grants?: Array<Atom>; denies?: Array<Atom> } = {}) =>
  m.runtime.runPromise(assignStaff({ courseUuid, profileUuid: profile.profileUuid, role, byProfileUuid: owner.profileUuid, ...options }))

describe("learning courses: draft, validate, publish, versions", () => {
  it("goes draft → validate (issues) → publish v1 → edit → publish v2 while a run stays pinned to v1", async () => {
    const draft = await create()
    expect([draft.status, draft.latestVersion, draft.revision, draft.ownerProfileUuid]).toEqual(["draft", 0, 1, owner.profileUuid])
    const authored = (actor: SessionActor, status?: string) =>
      m.invoke("learning.courses.author_list", actor, { urlParams: { ...(status ? { status } : {}), limit: "100" } })
    expect(ok<{ items: Array<CourseAuthor> }>(await authored(owner, "draft")).items.map((c) => c.uuid)).toContain(draft.uuid)
    expect(ok<{ items: Array<CourseAuthor> }>(await authored(owner, "published")).items.map((c) => c.uuid)).not.toContain(draft.uuid)
    expect(ok<{ items: Array<CourseAuthor> }>(await authored(stranger)).items.map((c) => c.uuid)).not.toContain(draft.uuid)
    const ungraded = tree.map((node) => (node.nodeKey === "s2" ? { ...node, grading: undefined } : node)).map((node) => JSON.parse(JSON.stringify(node)))
    const edited = ok<CourseAuthor>(await update(owner, draft, { nodes: ungraded }))
    const { issues } = ok<{ issues: Array<{ severity: string; code: string; nodeKey?: string }> }>(
      await m.invoke("learning.courses.validate", owner, { path: { course: draft.uuid } })
    )
    expect(issues).toEqual([expect.objectContaining({ severity: "error", code: "missing_grading", nodeKey: "s2" })])
    // Validation wrote nothing.
    expect(ok<CourseAuthor>(await authorGet(owner, draft.uuid)).revision).toBe(edited.revision)
    expect(refused(await publish(owner, edited))).toEqual([409, "course_invalid"])

    const fixed = ok<CourseAuthor>(await update(owner, edited, { nodes: tree }))
    expect(fixed.validation).toEqual({ errors: 0, warnings: 0 })
    const v1 = ok<{ number: number; contentHash: string; nodes: Array<CourseNode> }>(await publish(owner, fixed, "Первая версия"))
    expect(v1.number).toBe(1)
    const events = await m.sql<{ type: string; data: { versionNumber: number } }>(
      "SELECT type, data FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY occurred_at",
      draft.uuid
    )
    expect(events.map((e) => [e.type, e.data.versionNumber])).toEqual([["learning.course.published", 1]])
    const run = await createRun(fixed)
    expect([run.versionNumber, run.status]).toEqual([1, "draft"])

    const afterV1 = ok<CourseAuthor>(await authorGet(owner, draft.uuid))
    expect(afterV1.diff).toEqual({ added: [], removed: [], changed: [] })
    const extended = ok<CourseAuthor>(await update(owner, afterV1, {
      nodes: [...tree, step("s3", "m1")],
      title: "Основы SQL, второе издание"
    }))
    expect(extended.diff).toEqual({ added: ["s3"], removed: [], changed: [] })
    const v2 = ok<{ number: number; contentHash: string }>(await publish(owner, extended))
    expect(v2.number).toBe(2)
    expect(v2.contentHash).not.toBe(v1.contentHash)

    const runs = ok<{ items: Array<Run> }>(await m.invoke("learning.runs.list", owner, { path: { course: draft.uuid } }))
    expect(runs.items.map((r) => [r.uuid, r.versionNumber])).toEqual([[run.uuid, 1]])
    const versions = ok<{ items: Array<{ number: number; nodes: Array<CourseNode> }> }>(
      await m.invoke("learning.versions.list", owner, { path: { course: draft.uuid } })
    )
    expect(versions.items.map((v) => [v.number, v.nodes.length])).toEqual([[2, 4], [1, 3]])
    const first = ok<{ items: Array<{ number: number }>; nextCursor?: string }>(
      await m.invoke("learning.versions.list", owner, { path: { course: draft.uuid }, urlParams: { limit: "1" } })
    )
    const second = ok<{ items: Array<{ number: number }>; nextCursor?: string }>(
      await m.invoke("learning.versions.list", owner, { path: { course: draft.uuid }, urlParams: { limit: "1", cursor: first.nextCursor! } })
    )
    expect([first.items.map((v) => v.number), second.items.map((v) => v.number), second.nextCursor]).toEqual([[2], [1], undefined])
    // Version 1 is unchanged by the edit (immutable).
    expect(versions.items[1]!.nodes).toEqual(tree)
    const publicView = ok<{ versionNumber: number; title: string; outline: Array<{ nodeKey: string }> }>(
      await m.invoke("learning.courses.get", stranger, { path: { course: draft.uuid } })
    )
    expect([publicView.versionNumber, publicView.title, publicView.outline.length]).toEqual([2, "Основы SQL, второе издание", 4])
  })

  it("refuses archiving while a run is running; archives once it finished", async () => {
    const course = await publishedCourse()
    const run = await createRun(course, { startsAt: new Date(Date.now() - 60_000).toISOString() })
    const scheduled = ok<Run>(await runCommand("learning.runs.update", owner, run, { publish: true }))
    expect(scheduled.status).toBe("scheduled")
    await m.runtime.runPromise(advanceRuns(new Date()))
    const running = only((await m.call("learning.runs.list", owner, { path: { course: course.uuid } })).items)
    expect(running.status).toBe("running")
    const archive = (revision: number) =>
      m.invoke("learning.courses.archive", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: revision, reason: "Курс закрыт" } })
    expect(refused(await archive(course.revision))).toEqual([409, "invalid_state"])
    expect(ok<CourseAuthor>(await authorGet(owner, course.uuid)).status).toBe("published")
    const finished = ok<Run>(await runCommand("learning.runs.finish", owner, running))
    expect([finished.status, finished.gradesFrozenAt !== undefined]).toEqual(["finished", true])
    const archived = ok<CourseAuthor>(await archive(course.revision))
    expect(archived.status).toBe("archived")
    expect(refused(await m.invoke("learning.runs.create", owner, { path: { course: course.uuid }, payload: runInput() }))).toEqual([409, "invalid_state"])
    const audit = ok<{ items: Array<{ action: string }> }>(await m.invoke("learning.audit.list", owner, { path: { course: course.uuid } }))
    expect(audit.items.map((item) => item.action)).toEqual(["course.archive", "run.finish", "course.publish", "staff.assign"])
  })

  it("gives a profile with no role 404 on author reads and on a draft, 403 on changes to a course it may see", async () => {
    const draft = await create()
    for (const id of ["learning.courses.author_get", "learning.courses.validate", "learning.versions.list", "learning.courses.get", "learning.runs.list"]) {
      expect(refused(await m.invoke(id, stranger, { path: { course: draft.uuid } })), id).toEqual([404, "not_found"])
    }
    expect(refused(await update(stranger, draft, { title: "Чужое" }))).toEqual([404, "not_found"])
    const course = await publishedCourse()
    for (const id of ["learning.courses.author_get", "learning.courses.validate", "learning.versions.list"]) {
      expect(refused(await m.invoke(id, stranger, { path: { course: course.uuid } })), id).toEqual([404, "not_found"])
    }
    expect(refused(await m.invoke("learning.courses.preview", stranger, { path: { course: course.uuid }, payload: { asOf: new Date().toISOString() } })))
      .toEqual([404, "not_found"])
    expect(refused(await update(stranger, course, { title: "Чужое" }))).toEqual([403, "forbidden"])
    expect(refused(await publish(stranger, course))).toEqual([403, "forbidden"])
    ok(await m.invoke("learning.courses.get", stranger, { path: { course: course.uuid } }))
    // A private course is unknown again to whoever has no role on it.
    ok(await update(owner, course, { visibility: "private" }))
    expect(refused(await m.invoke("learning.courses.get", stranger, { path: { course: course.uuid } }))).toEqual([404, "not_found"])
  })

  it("decides by role, scope, grants and denies: assistant, analyst, run-scoped instructor, a denied atom", async () => {
    const course = await publishedCourse()
    const [assistant, analyst, instructor, denied] = [await m.profile(), await m.profile(), await m.profile(), await m.profile()]
    await assign(course.uuid, assistant!, "assistant")
    await assign(course.uuid, analyst!, "analyst")
    const runA = await createRun(course)
    const runB = await createRun(course)
    await assign(course.uuid, instructor!, "instructor", { runUuid: runA.uuid })
    await assign(course.uuid, denied!, "instructor", { denies: ["content_publish"] })
    ok(await authorGet(assistant!, course.uuid))
    expect(refused(await update(assistant!, course, { title: "Ассистент" }))).toEqual([403, "forbidden"])
    ok(await m.invoke("learning.audit.list", analyst!, { path: { course: course.uuid } }))
    expect(refused(await m.invoke("learning.audit.list", assistant!, { path: { course: course.uuid } }))).toEqual([403, "forbidden"])
    ok(await runCommand("learning.runs.update", instructor!, runA, { title: "Мой поток" }))
    expect(refused(await runCommand("learning.runs.update", instructor!, runB, { title: "Чужой поток" }))).toEqual([403, "forbidden"])
    const edited = ok<CourseAuthor>(await update(denied!, course, { summary: "Правка" }))
    expect(refused(await publish(denied!, edited))).toEqual([403, "forbidden"])
    expect(refused(await runCommand("learning.runs.cancel", denied!, runB, { reason: "нет" }))).toEqual([403, "forbidden"])
    // Exactly one owner per course.
    await expect(assign(course.uuid, stranger, "owner")).rejects.toThrow(/owner/)
  })
})

describe("learning: bad input refused whole, nothing saved", () => {
  it("courses.create: each required field, bounds of title, unknown properties", async () => {
    const body = { requestUuid: randomUUID(), title: "Курс", kind: "single" }
    for (const field of ["requestUuid", "title", "kind"]) {
      const { [field]: _, ...rest } = body as Record<string, unknown>
      const answer = await m.invoke("learning.courses.create", owner, { payload: rest })
      expect(refused(answer), field).toEqual([400, "invalid_request"])
      expect(JSON.stringify(answer.body)).toContain(field)
    }
    ok(await m.invoke("learning.courses.create", owner, { payload: { ...body, requestUuid: randomUUID(), title: "я".repeat(160) } }))
    expect(refused(await m.invoke("learning.courses.create", owner, { payload: { ...body, requestUuid: randomUUID(), title: "я".repeat(161) } })))
      .toEqual([400, "invalid_request"])
    expect(refused(await m.invoke("learning.courses.create", owner, { payload: { ...body, requestUuid: randomUUID(), title: "" } }))).toEqual([400, "invalid_request"])
    expect(refused(await m.invoke("learning.courses.create", owner, { payload: { ...body, requestUuid: randomUUID(), extra: 1 } }))).toEqual([400, "invalid_request"])
    expect(refused(await m.invoke("learning.courses.create", owner, { payload: { ...body, requestUuid: randomUUID(), kind: "other" } }))).toEqual([400, "invalid_request"])
  })

  it("is idempotent by requestUuid; another body under the same requestUuid is a conflict", async () => {
    const body = { requestUuid: randomUUID(), title: "Один раз", kind: "single" }
    const first = ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: body }))
    const again = ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: body }))
    expect(again.uuid).toBe(first.uuid)
    expect(refused(await m.invoke("learning.courses.create", owner, { payload: { ...body, title: "Другое" } }))).toEqual([409, "request_conflict"])
    // The same requestUuid and body on another record (the path) is another request, not a replay.
    const [a, b] = [ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "А", kind: "single" } })),
      ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Б", kind: "single" } }))]
    const copy = { requestUuid: randomUUID(), title: "Копия", includeCheckers: false }
    const copied = ok<CourseAuthor>(await m.invoke("learning.courses.copy", owner, { path: { course: a.uuid }, payload: copy }))
    expect(ok<CourseAuthor>(await m.invoke("learning.courses.copy", owner, { path: { course: a.uuid }, payload: copy })).uuid).toBe(copied.uuid)
    expect(refused(await m.invoke("learning.courses.copy", owner, { path: { course: b.uuid }, payload: copy }))).toEqual([409, "request_conflict"])
  })

  it("refuses node trees with duplicate nodeKeys, unknown parents, steps holding nodes and cycles, changing nothing", async () => {
    const course = await create()
    const cases: Array<[ReadonlyArray<Record<string, unknown>>, string]> = [
      [[...tree, step("s1", "m1")], "nodes.3.nodeKey"],
      [[...tree, step("s9", "nope")], "nodes.3.parentKey"],
      [[...tree, step("s9", "s1")], "nodes.3.parentKey"],
      [[{ nodeKey: "a", parentKey: "b", kind: "module", title: "A" }, { nodeKey: "b", parentKey: "a", kind: "module", title: "B" }], "cycle"],
      [[{ nodeKey: "a", parentKey: "a", kind: "module", title: "A" }], "cycle"],
      [[{ nodeKey: "a", kind: "step", title: "A" }], "nodes.0.stepType"],
      [[{ nodeKey: "A b", kind: "module", title: "A" }], "nodes.0.nodeKey"],
      [[{ nodeKey: "a", kind: "module", title: "A", extra: true }], "nodes.0.extra"],
      [[step("s1", "m1", { grading: { maxPoints: 5, passThreshold: 6 } })], "nodes.0"]
    ]
    for (const [nodes, named] of cases) {
      const answer = await update(owner, course, { nodes })
      expect(refused(answer), named).toEqual([400, "invalid_request"])
      expect((answer.body as { error: { message: string } }).error.message, named).toContain(named)
    }
    const after = ok<CourseAuthor>(await authorGet(owner, course.uuid))
    expect([after.revision, after.nodes]).toEqual([1, []])
    expect(refused(await update(owner, { uuid: course.uuid, revision: 7 }, { title: "Старое" }))).toEqual([409, "revision_conflict"])
  })

  it("refuses a bundle of unpublished courses (409 not_eligible) and more than 20 members (400)", async () => {
    const bundle = await create(owner, "Пакет")
    const unpublished = await create(owner, "Черновик")
    const call = (members: Array<{ courseUuid: string; required: boolean }>) =>
      m.invoke("learning.courses.bundle", owner, { path: { course: bundle.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: 1, members } })
    expect(refused(await call([{ courseUuid: unpublished.uuid, required: true }]))).toEqual([409, "not_eligible"])
    const published = await publishedCourse()
    const foreign = await publishedCourse(stranger)
    expect(refused(await call([{ courseUuid: foreign.uuid, required: true }]))).toEqual([409, "not_eligible"])
    expect(refused(await call([]))).toEqual([400, "invalid_request"])
    expect(refused(await call(Array.from({ length: 21 }, () => ({ courseUuid: randomUUID(), required: false }))))).toEqual([400, "invalid_request"])
    expect(ok<CourseAuthor>(await authorGet(owner, bundle.uuid)).kind).toBe("single")
    const made = ok<CourseAuthor>(await call([{ courseUuid: published.uuid, required: true }]))
    expect([made.kind, made.members]).toEqual(["bundle", [{ courseUuid: published.uuid, required: true }]])
  })

  it("runs.create: version must exist, endsAt after startsAt, the course published", async () => {
    const draft = await create()
    expect(refused(await m.invoke("learning.runs.create", owner, { path: { course: draft.uuid }, payload: runInput() }))).toEqual([409, "invalid_state"])
    const course = await publishedCourse()
    const make = (over: Record<string, unknown>) => m.invoke("learning.runs.create", owner, { path: { course: course.uuid }, payload: runInput(over) })
    expect(refused(await make({ versionNumber: 2 }))).toEqual([400, "invalid_request"])
    expect(refused(await make({ endsAt: new Date(Date.now() - 1000).toISOString() }))).toEqual([400, "invalid_request"])
    expect(refused(await make({ capacity: 0 }))).toEqual([400, "invalid_request"])
    ok(await make({ capacity: 1 }))
    expect(refused(await make({ pausePolicy: { maxDays: 366, maxCount: 0 } }))).toEqual([400, "invalid_request"])
    for (const field of ["versionNumber", "title", "pacing", "startsAt", "admission", "waitlist", "enrollmentWindow", "pausePolicy"]) {
      const { [field]: _, ...rest } = runInput() as Record<string, unknown>
      expect(refused(await m.invoke("learning.runs.create", owner, { path: { course: course.uuid }, payload: rest })), field).toEqual([400, "invalid_request"])
    }
  })
})

describe("learning runs: the state machine as a table, every state × operation × role", () => {
  it("answers each transition by the table, each role by the permission model", async () => {
    const course = await publishedCourse()
    const run = await createRun(course)
    const roles: Array<[string, SessionActor]> = [["owner", owner]]
    for (const role of ["instructor", "reviewer", "assistant", "analyst"] as const) {
      const profile = await m.profile()
      await assign(course.uuid, profile, role)
      roles.push([role, profile])
    }
    roles.push(["none", stranger])
    const allowedRoles: Record<string, ReadonlyArray<string>> = {
      "learning.runs.update": ["owner", "instructor"],
      "learning.runs.finish": ["owner", "instructor"],
      "learning.runs.archive": ["owner", "instructor"],
      "learning.runs.cancel": ["owner"]
    }
    const statuses = ["draft", "scheduled", "running", "finished", "cancelled", "archived"] as const
    let checked = 0
    for (const status of statuses) {
      for (const [id, allowed] of Object.entries(allowedRoles)) {
        for (const [role, actor] of roles) {
          await m.sql("UPDATE learning_runs SET status = $1, finished_at = NULL, cancelled_at = NULL WHERE uuid = $2", status, run.uuid)
          const [{ revision }] = (await m.sql<{ revision: number }>("SELECT revision FROM learning_runs WHERE uuid = $1", run.uuid)) as [{ revision: number }]
          const answer = await runCommand(id, actor, { uuid: run.uuid, revision }, id === "learning.runs.cancel" ? { reason: "проверка" } : id === "learning.runs.update" ? { title: "Поток" } : {})
          const label = `${id} on ${status} as ${role}`
          const transition = runTransitions[id as keyof typeof runTransitions]
          if (role === "none" && status === "draft") expect(refused(answer), label).toEqual([404, "not_found"])
          else if (!allowed.includes(role)) expect(refused(answer), label).toEqual([403, "forbidden"])
          else if (!(transition.from as ReadonlyArray<string>).includes(status)) expect(refused(answer), label).toEqual([409, "invalid_state"])
          else {
            expect(answer.status, label).toBe(200)
            expect(bodyOf<Run>(answer).status, label).toBe(transition.to ?? status)
          }
          checked++
        }
      }
    }
    expect(checked).toBe(statuses.length * 4 * roles.length)
  })
})

describe("learning schedule plans", () => {
  it("previews without changing the run; applies exactly the plan; refuses a stale (409) and an expired (410) one", async () => {
    const course = await publishedCourse()
    const run = await m.call("learning.runs.create", owner, {
      path: { course: course.uuid },
      payload: command({
        versionNumber: 1,
        title: "Весенний поток",
        pacing: "cohort",
        startsAt: new Date(Date.now() + 86_400_000),
        admission: "open",
        waitlist: false,
        enrollmentWindow: {},
        pausePolicy: { maxDays: 14, maxCount: 2 }
      })
    })
    type Change = InputOf<"learning.schedule.preview">["payload"]["changes"][number]
    const previewInput = (changes: ReadonlyArray<Change>) => ({ path: { run: run.uuid }, payload: command({ changes }) })
    const preview = (changes: ReadonlyArray<Change>) => m.call("learning.schedule.preview", owner, previewInput(changes))
    /** Changes the schema refuses, untyped: what any client may send. */
    const previewRaw = (changes: ReadonlyArray<Record<string, unknown>>) =>
      m.invoke("learning.schedule.preview", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), changes } })
    const applyInput = (plan: string) => ({ path: { preview: plan }, payload: command() })
    const apply = (plan: string) => m.call("learning.schedule.apply", owner, applyInput(plan))
    const applyRefusal = (plan: string) => m.refusalOf("learning.schedule.apply", owner, applyInput(plan))

    const stale = await preview([{ shiftDays: 2 }])
    expect(stale.baseRevisions).toEqual({ run: run.revision })
    expect(stale.items.map((item) => [item.field, item.nodeKey])).toEqual([["startsAt", undefined], ["unlockAt", "s1"], ["unlockAt", "s2"], ["dueAt", "s2"]])
    const unchanged = only((await m.call("learning.runs.list", owner, { path: { course: course.uuid } })).items)
    expect([unchanged.revision, unchanged.startsAt]).toEqual([run.revision, run.startsAt])
    // A concurrent change to the run makes the plan stale.
    const renamed = await m.call("learning.runs.update", owner, {
      path: { run: run.uuid },
      payload: command({ expectedRevision: run.revision, title: "Переименован" })
    })
    expect(await applyRefusal(stale.uuid)).toEqual([409, "plan_stale"])

    const due = new Date(renamed.startsAt.getTime() + 10 * 86_400_000)
    const plan = await preview([{ nodeKey: "s2", dueAt: due }])
    expect(plan.items).toEqual([{ nodeKey: "s2", field: "dueAt", before: expect.any(Date), after: due }])
    const applied = await apply(plan.uuid)
    expect(applied.run.schedule["s2"]?.dueAt).toEqual(due)
    expect(applied.run.revision).toBe(renamed.revision + 1)
    expect(await applyRefusal(plan.uuid)).toEqual([409, "invalid_state"])
    const audit = await m.call("learning.audit.list", owner, { path: { course: course.uuid }, urlParams: { action: "schedule.apply" } })
    expect(audit.items).toHaveLength(1)

    const expired = await preview([{ shiftDays: 1 }])
    await m.sql("UPDATE learning_plans SET expires_at = now() - interval '1 second' WHERE uuid = $1", expired.uuid)
    expect(await applyRefusal(expired.uuid)).toEqual([410, "plan_expired"])

    const blocked = await preview([{ nodeKey: "s2", dueAt: new Date("2000-01-01T00:00:00.000Z") }])
    expect(blocked.blocking.map((problem) => problem.code)).toEqual(["due_before_unlock"])
    expect(await applyRefusal(blocked.uuid)).toEqual([409, "invalid_state"])
    expect(refused(await previewRaw([{ nodeKey: "nope", shiftDays: 1 }]))).toEqual([400, "invalid_request"])
    expect(refused(await previewRaw([{ nodeKey: "s1" }]))).toEqual([400, "invalid_request"])
    expect(refused(await previewRaw([{ dueAt: due.toISOString() }]))).toEqual([400, "invalid_request"])
  })
})

describe("learning admissions preview", () => {
  it("tells what enrolling would do, writing nothing", async () => {
    const course = await publishedCourse()
    const run = await createRun(course, { capacity: 1, waitlist: true })
    expect(refused(await m.invoke("learning.admissions.preview", stranger, { path: { run: run.uuid } }))).toEqual([404, "not_found"])
    ok(await runCommand("learning.runs.update", owner, run, { publish: true }))
    const view = ok<{ mode: string; eligible: boolean; reasons: Array<string>; seatsLeft: number }>(
      await m.invoke("learning.admissions.preview", stranger, { path: { run: run.uuid } })
    )
    expect(view).toEqual({ mode: "open", eligible: true, reasons: [], seatsLeft: 1 })
    const anonymous = ok<{ eligible: boolean; reasons: Array<string> }>(await m.invoke("learning.admissions.preview", { via: "anonymous" }, { path: { run: run.uuid } }))
    expect(anonymous.reasons).toEqual(["sign_in_required"])
    await m.sql("INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status) VALUES ($1, $2, $3, $4, 'active')",
      randomUUID(), run.uuid, course.uuid, owner.profileUuid)
    const full = ok<{ eligible: boolean; seatsLeft: number; waitlistPosition: number }>(await m.invoke("learning.admissions.preview", stranger, { path: { run: run.uuid } }))
    expect([full.eligible, full.seatsLeft, full.waitlistPosition]).toEqual([true, 0, 1])
  })
})

describe("learning library, copy and the catalog", () => {
  it("saves a subtree and inserts a copy with fresh nodeKeys", async () => {
    const source = ok<CourseAuthor>(await update(owner, await create(), { nodes: tree }))
    const item = ok<{ uuid: string; nodes: Array<CourseNode> }>(
      await m.invoke("learning.library.save", owner, { path: { course: source.uuid }, payload: { requestUuid: randomUUID(), nodeKey: "m1", title: "Модуль про SELECT" } })
    )
    expect(item.nodes.map((node) => [node.nodeKey, node.parentKey])).toEqual([["m1", undefined], ["s1", "m1"], ["s2", "m1"]])
    const target = ok<CourseAuthor>(await update(owner, await create(), { nodes: tree }))
    const inserted = ok<CourseAuthor>(await m.invoke("learning.library.insert", owner, {
      path: { course: target.uuid, item: item.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: target.revision, position: 0 }
    }))
    expect(inserted.nodes).toHaveLength(6)
    const keys = inserted.nodes.map((node) => node.nodeKey)
    expect(new Set(keys).size).toBe(6)
    const [root, first, second] = inserted.nodes
    expect(root!.nodeKey).toMatch(/^m1-[0-9a-f]{6}$/)
    expect([root!.parentKey, first!.parentKey, second!.parentKey]).toEqual([undefined, root!.nodeKey, root!.nodeKey])
    expect(inserted.nodes.slice(3)).toEqual(tree)
    const list = ok<{ items: Array<{ uuid: string }> }>(await m.invoke("learning.library.list", owner, { urlParams: { q: "select" } }))
    expect(list.items.map((i) => i.uuid)).toContain(item.uuid)
    expect(refused(await m.invoke("learning.library.insert", stranger, {
      path: { course: target.uuid, item: item.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: inserted.revision }
    }))).toEqual([404, "not_found"])
  })

  it("copies a course into a new one of the caller, who becomes its owner", async () => {
    const course = await publishedCourse()
    const instructor = await m.profile()
    await assign(course.uuid, instructor, "instructor")
    const copy = ok<CourseAuthor>(await m.invoke("learning.courses.copy", instructor, {
      path: { course: course.uuid },
      payload: { requestUuid: randomUUID(), title: "Копия", includeCheckers: false }
    }))
    expect([copy.ownerProfileUuid, copy.status, copy.latestVersion, copy.nodes]).toEqual([instructor.profileUuid, "draft", 0, tree])
    ok(await update(instructor, copy, { title: "Моя копия" }))
  })

  it("lists a course in the catalog only while its training publication is approved and visible", async () => {
    const publication = await m.publication(owner, "training", { title: "Курс по Python для начинающих" })
    await m.sql(`UPDATE publications SET draft = draft || '{"description":"Описание курса","training":{"level":"beginner","format":"online"}}'::jsonb,
      approved = approved || '{"training":{"level":"beginner"}}'::jsonb WHERE uuid = $1`, publication)
    const draft = ok<CourseAuthor>(await m.invoke("learning.courses.from_publication", owner, { payload: { requestUuid: randomUUID(), publicationUuid: publication } }))
    expect([draft.title, draft.publicationUuid, draft.metadata, draft.nodes.map((node) => node.nodeKey)])
      .toEqual(["Курс по Python для начинающих", publication, { level: "beginner", format: "online" }, ["module-1", "description"]])
    expect(refused(await m.invoke("learning.courses.from_publication", owner, { payload: { requestUuid: randomUUID(), publicationUuid: publication } })))
      .toEqual([409, "invalid_state"])
    expect(refused(await m.invoke("learning.courses.from_publication", stranger, { payload: { requestUuid: randomUUID(), publicationUuid: publication } })))
      .toEqual([404, "not_found"])
    const listed = ok<CourseAuthor>(await update(owner, draft, { visibility: "listed" }))
    ok(await publish(owner, listed))
    const catalog = async (q?: string) =>
      ok<{ items: Array<{ uuid: string }> }>(await m.invoke("learning.courses.list", { via: "anonymous" }, { urlParams: { ...(q ? { q } : {}), level: "beginner" } })).items.map((i) => i.uuid)
    expect(await catalog("PYTHON")).toContain(draft.uuid)
    expect(await catalog("кобол")).not.toContain(draft.uuid)
    await m.sql("UPDATE publications SET hidden = true WHERE uuid = $1", publication)
    expect(await catalog()).not.toContain(draft.uuid)
  })

  it("previews a version as a learner at a given time, writing nothing", async () => {
    const course = await publishedCourse()
    const asOf = new Date("2030-01-01T00:00:00.000Z")
    const preview = ok<{ versionNumber: number; nodes: Array<{ nodeKey: string; state: string; dueAt?: string; body?: string }> }>(
      await m.invoke("learning.courses.preview", owner, { path: { course: course.uuid }, payload: { versionNumber: 1, asOf: asOf.toISOString() } })
    )
    expect(preview.versionNumber).toBe(1)
    expect(preview.nodes.map((node) => [node.nodeKey, node.state, node.dueAt])).toEqual([
      ["m1", "available", undefined],
      ["s1", "available", undefined],
      ["s2", "available", "2030-01-08T00:00:00.000Z"]
    ])
    const one = ok<{ nodes: Array<{ nodeKey: string; body?: string }> }>(
      await m.invoke("learning.courses.preview", owner, { path: { course: course.uuid }, payload: { asOf: asOf.toISOString(), nodeKey: "s1" } })
    )
    expect(one.nodes).toEqual([expect.objectContaining({ nodeKey: "s1", body: "Текст шага" })])
    expect(refused(await m.invoke("learning.courses.preview", owner, { path: { course: course.uuid }, payload: { versionNumber: 9, asOf: asOf.toISOString() } })))
      .toEqual([404, "not_found"])
  })
})

describe("learning jobs: exports, imports, analytics", () => {
  type JobBody = { uuid: string; status: string; fileUuid?: string; resultCourseUuid?: string; issues: Array<{ code: string }> }
  const work = () => m.runtime.runPromise(Effect.provide(runLearningJobs(), PostgresBlobStore))
  const job = async (uuid: string, actor: SessionActor = owner) => ok<JobBody>(await m.invoke("learning.exports.get", actor, { path: { export: uuid } }))
  const fileText = async (uuid: string) =>
    only(await m.sql<{ text: string }>("SELECT convert_from(bytes, 'UTF8') AS text FROM file_blobs WHERE key = $1", uuid)).text

  it("exports a course as birzha-course/1 and imports it back into an identical tree", async () => {
    const course = await publishedCourse()
    const queued = ok<JobBody>(await m.invoke("learning.exports.course", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), includeCheckers: false } }))
    expect(queued.status).toBe("queued")
    expect(refused(await m.invoke("learning.exports.get", stranger, { path: { export: queued.uuid } }))).toEqual([404, "not_found"])
    await work()
    const exported = await job(queued.uuid)
    expect(exported.status).toBe("done")
    const pack = JSON.parse(await fileText(exported.fileUuid!)) as { format: string; course: { nodes: unknown }; versions: Array<{ number: number }> }
    expect([pack.format, pack.versions.map((v) => v.number)]).toEqual(["birzha-course/1", [1]])
    const imported = ok<JobBody>(await m.invoke("learning.courses.import", owner, { payload: { requestUuid: randomUUID(), fileUuid: exported.fileUuid, format: "birzha-course/1" } }))
    await work()
    const done = await job(imported.uuid)
    expect(done.status).toBe("done")
    const copy = ok<CourseAuthor>(await authorGet(owner, done.resultCourseUuid!))
    expect([copy.nodes, copy.title, copy.status, copy.ownerProfileUuid]).toEqual([course.nodes, course.title, "draft", owner.profileUuid])
    // Someone else's file is not theirs to import.
    expect(refused(await m.invoke("learning.courses.import", stranger, { payload: { requestUuid: randomUUID(), fileUuid: exported.fileUuid, format: "birzha-course/1" } })))
      .toEqual([404, "not_found"])
  })

  it("fails an import of a package with a broken tree, creating no course", async () => {
    const course = await publishedCourse()
    const queued = ok<JobBody>(await m.invoke("learning.exports.course", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), includeCheckers: true } }))
    await work()
    const fileUuid = (await job(queued.uuid)).fileUuid!
    const pack = JSON.parse(await fileText(fileUuid)) as { course: { nodes: Array<Record<string, unknown>> } }
    pack.course.nodes.push({ ...pack.course.nodes[1], parentKey: "m1" })
    await m.sql("UPDATE file_blobs SET bytes = convert_to($1, 'UTF8') WHERE key = $2", JSON.stringify(pack), fileUuid)
    const before = only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_courses")).n
    const imported = ok<JobBody>(await m.invoke("learning.courses.import", owner, { payload: { requestUuid: randomUUID(), fileUuid, format: "birzha-course/1" } }))
    await work()
    const failed = await job(imported.uuid)
    expect([failed.status, failed.issues.map((issue) => issue.code)]).toEqual(["failed", ["invalid_tree"]])
    expect(only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_courses")).n).toBe(before)
  })

  it("resumes a job whose worker crashed (lease lapsed)", async () => {
    const course = await publishedCourse()
    const queued = ok<JobBody>(await m.invoke("learning.exports.course", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), includeCheckers: false } }))
    await m.sql("UPDATE learning_jobs SET status = 'running', attempts = 1, lease_until = now() + interval '1 hour' WHERE uuid = $1", queued.uuid)
    await work()
    expect((await job(queued.uuid)).status).toBe("running")
    await m.sql("UPDATE learning_jobs SET lease_until = now() - interval '1 second' WHERE uuid = $1", queued.uuid)
    await work()
    expect((await job(queued.uuid)).status).toBe("done")
  })

  it("suppresses cells under 5 learners; an analyst's CSV carries pseudonyms, the owner's names when asked", async () => {
    const course = await publishedCourse()
    const run = await createRun(course)
    const learners = [] as Array<SessionActor>
    for (let i = 0; i < 6; i++) learners.push(await m.profile({ name: `Ученик ${i}` }))
    for (const [i, learner] of learners.entries()) {
      await m.sql("INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status) VALUES ($1, $2, $3, $4, $5)",
        randomUUID(), run.uuid, course.uuid, learner.profileUuid, i < 5 ? "active" : "withdrawn")
    }
    const analyst = await m.profile()
    await assign(course.uuid, analyst, "analyst")
    const analytics = ok<{ funnel: Record<string, { count?: number; suppressed: boolean }> }>(
      await m.invoke("learning.analytics.get", analyst, { path: { course: course.uuid } })
    )
    expect(analytics.funnel).toEqual({
      enrolled: { count: 6, suppressed: false },
      active: { count: 5, suppressed: false },
      completed: { count: 0, suppressed: false },
      withdrawn: { suppressed: true }
    })
    expect(refused(await m.invoke("learning.analytics.get", learners[0]!, { path: { course: course.uuid } }))).toEqual([403, "forbidden"])
    const exportAs = (actor: SessionActor) =>
      m.invoke("learning.analytics.export", actor, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), kind: "progress", pseudonymize: false } })
    const byAnalyst = ok<JobBody>(await exportAs(analyst))
    const byOwner = ok<JobBody>(await exportAs(owner))
    await work()
    const analystCsv = await fileText((await job(byAnalyst.uuid, analyst)).fileUuid!)
    expect(analystCsv.split("\n")[0]).toBe("learner,run,status,started_at")
    expect(analystCsv).toMatch(/^learner-[0-9a-f]{10},/m)
    expect(analystCsv).not.toContain("Ученик")
    const ownerCsv = await fileText((await job(byOwner.uuid)).fileUuid!)
    expect(ownerCsv).toContain("Ученик 0")
    // The learner exports their own data; a stranger may not know the enrollment exists.
    const [enrollment] = await m.sql<{ uuid: string }>("SELECT uuid FROM learning_enrollments WHERE profile_uuid = $1", learners[0]!.profileUuid)
    const own = ok<JobBody>(await m.invoke("learning.exports.enrollment", learners[0]!, { path: { enrollment: enrollment!.uuid }, payload: { requestUuid: randomUUID(), format: "json" } }))
    expect(refused(await m.invoke("learning.exports.enrollment", stranger, { path: { enrollment: enrollment!.uuid }, payload: { requestUuid: randomUUID(), format: "json" } })))
      .toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.exports.enrollment", analyst, { path: { enrollment: enrollment!.uuid }, payload: { requestUuid: randomUUID(), format: "json" } })))
      .toEqual([403, "forbidden"])
    await work()
    const data = JSON.parse(await fileText((await job(own.uuid, learners[0]!)).fileUuid!)) as { enrollment: { status: string } }
    expect(data.enrollment.status).toBe("active")
  })
})

describe("learning in the OpenAPI document", () => {
  it("lists the learning error codes on the operations that use them, and the learning scopes", async () => {
    const { openApiDocument } = await import("../../api/BirzhaApi.js")
    const doc = JSON.parse(JSON.stringify(openApiDocument())) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; "x-scopes": Array<string>; "x-approval": boolean }>>
      "x-scopes": Array<string>
    }
    const codes = (path: string, method: string, status: string) => JSON.stringify(doc.paths[`/api/v1/learning${path}`]![method]!.responses[status] ?? {})
    expect(codes("/schedule-previews/{preview}/apply", "post", "409")).toContain("PlanStaleError")
    expect(codes("/schedule-previews/{preview}/apply", "post", "409")).toContain("GradeFrozenError")
    expect(codes("/schedule-previews/{preview}/apply", "post", "410")).toContain("PlanExpiredError")
    expect(codes("/courses/{course}/publish", "post", "409")).toContain("CourseInvalidError")
    expect(codes("/courses/{course}/bundle", "post", "409")).toContain("NotEligibleError")
    expect(codes("/courses/{course}", "patch", "409")).not.toContain("PlanStaleError")
    expect(doc.paths["/api/v1/learning/courses/{course}/publish"]!["post"]!["x-approval"]).toBe(true)
    expect(doc["x-scopes"]).toEqual(expect.arrayContaining(["learning:read", "learning:write", "learning:study", "learning:teach", "learning:analytics"]))
  })
})

describe("learning course rows: decoded by their schemas", () => {
  it("takes a stored course, version or run whose row does not fit its schema for a defect, never for data", async () => {
    const course = await publishedCourse()
    const run = await createRun(course)
    const load = () =>
      m.runtime.runPromise(Effect.exit(Effect.all([
        loadCourse(course.uuid, { lock: false }),
        loadVersion(course.uuid, 1),
        loadRun(run.uuid, { lock: false })
      ])))
    const fine = await load()
    expect(Exit.isSuccess(fine) && [fine.value[0].nodes.length, fine.value[1]?.nodes.length, Object.keys(fine.value[2].schedule)]).toEqual([3, 3, []])
    const defect = async (statement: string, undo: string) => {
      await m.sql(statement)
      const exit = await load()
      await m.sql(undo)
      return Exit.isFailure(exit) && Cause.isDie(exit.cause)
    }
    expect(await defect(`UPDATE learning_courses SET nodes = '{}'::jsonb WHERE uuid = '${course.uuid}'`,
      `UPDATE learning_courses SET nodes = '[]'::jsonb WHERE uuid = '${course.uuid}'`)).toBe(true)
    expect(await defect(`UPDATE learning_course_versions SET members = '"none"'::jsonb WHERE course_uuid = '${course.uuid}'`,
      `UPDATE learning_course_versions SET members = '[]'::jsonb WHERE course_uuid = '${course.uuid}'`)).toBe(true)
    expect(await defect(`UPDATE learning_runs SET schedule = '[]'::jsonb WHERE uuid = '${run.uuid}'`,
      `UPDATE learning_runs SET schedule = '{}'::jsonb WHERE uuid = '${run.uuid}'`)).toBe(true)
    expect(Exit.isSuccess(await load())).toBe(true)
  })
})
