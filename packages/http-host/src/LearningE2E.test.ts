import { catalog } from "@birzha/domain"
import { advanceRuns } from "@birzha/domain/internal"
import type { SqlClient } from "@effect/sql"
import { ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import type Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { toolNameOf, toolOf } from "./handlers/McpTools.js"
import { type RunningHost } from "./testing.js"
import { Client, StreamableHTTPClientTransport } from "./testMcp.js"
import { type Caller, startTestService, type TestService } from "./testService.js"
import { testPgLayer } from "../../domain/test/pgLayer.js"

/**
 * The hidden learning flow end to end, twice: over HTTP with
 * sessions and a bearer key, and through MCP tools with a key per person, where every
 * approval-flagged operation comes back as a prepared command that its owner approves over HTTP
 * before the agent commits it. An author turns a moderated training publication into a course,
 * publishes it and opens a run, invites an instructor by email (the link arrives by mail), a
 * learner finds the course in the catalog, enrolls, submits work that needs a review, the
 * instructor claims, decides and releases it, the learner appeals (and asks for more time and
 * asks a question), and the instructor sees it all in the appeal queue and on the teaching
 * dashboard (learning.teaching.get/list) with its counts. One real service on its own Postgres
 * database; the run clock (a worker job) is advanced on demand, as the test host runs no workers.
 */

const moderatorEmail = "moderator.learning@example.com"
let service: TestService
let host: RunningHost
let db: Pg.Client
let origin: string
let worker: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
let moderator: SignedIn
const clients: Array<Client> = []
/** The operations the MCP transport ran through the approval flow, in order. */
const approved: Array<string> = []

beforeAll(async () => {
  service = await startTestService("learning_e2e", {
    env: { BIRZHA_SECRET: "learning e2e tests: a server secret of 32+ characters", BIRZHA_MODERATORS: moderatorEmail },
    trustProxy: true
  })
  ;({ host, db, origin } = service)
  worker = ManagedRuntime.make(testPgLayer(service.database.url, 2))
  moderator = await signIn({ url: host.url, origin, db, email: moderatorEmail })
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await worker?.dispose()
  await service?.close()
})

type Body = Record<string, any>

const call = (method: string, path: string, who: Caller, body?: unknown) => service.call<Body>(method, path, who, body)

const entryOf = (id: string) => {
  const entry = catalog.find((candidate) => candidate.id === id)
  if (entry === undefined) throw new Error(`no operation ${id} in the catalog`)
  return entry
}

/** One operation over HTTP at its declared route: path parameters from the arguments, the rest as the query (GET) or the body. */
const httpCall = (who: Caller, id: string, args: Body) => {
  const entry = entryOf(id)
  const rest: Body = { ...args }
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = String(rest[name])
    delete rest[name]
    return encodeURIComponent(value)
  })
  if (entry.method === "GET") {
    const query = new URLSearchParams(Object.entries(rest).map(([name, value]) => [name, String(value)])).toString()
    return call("GET", query === "" ? path : `${path}?${query}`, who)
  }
  return call(entry.method, path, who, { requestUuid: randomUUID(), ...rest })
}

/** Runs one operation as one person and answers its result (the test fails with the answer otherwise). */
type Act = (id: string, args?: Body) => Promise<Body>

/** How the flow reaches the service: a person's way to act. */
interface Transport {
  readonly as: (person: SignedIn, scopes: ReadonlyArray<string>) => Promise<Act>
}

const overHttp = (who: Caller): Act => async (id, args = {}) => {
  const answer = await httpCall(who, id, args)
  expect(answer.status, `${id}: ${JSON.stringify(answer.body)}`).toBe(200)
  return answer.body
}

/** HTTP with the person's session cookie: sessions need no approval. */
const http: Transport = { as: async (person) => overHttp(person) }

const makeKey = async (person: SignedIn, scopes: ReadonlyArray<string>, channel: { readonly httpEnabled: boolean; readonly mcpEnabled: boolean }) => {
  const made = await call("POST", "/api/v1/keys", person, { requestUuid: randomUUID(), name: "agent", scopes, ...channel })
  expect(made.status, JSON.stringify(made.body)).toBe(200)
  return made.body.secret as string
}

/**
 * The owner decides a prepared command over HTTP with their session: the approval page shows it,
 * and the decision goes through the operation the page itself calls (integrationCommands.decide).
 */
const approve = async (owner: SignedIn, prepared: Body) => {
  const path = new URL(prepared.approvalUrl).pathname
  const page = await fetch(`${host.url}${path}?lang=en`, { headers: { cookie: owner.cookie } })
  expect(page.status).toBe(200)
  expect(await page.text()).toContain(prepared.operationId)
  const decided = await fetch(`${host.url}/api/v1/integration-commands/${prepared.uuid}/decide`, {
    method: "POST",
    headers: { "content-type": "application/json", origin, cookie: owner.cookie },
    body: JSON.stringify({ decision: "approve" })
  })
  expect(decided.status, await decided.clone().text()).toBe(200)
  expect(((await decided.json()) as Body).command.state).toBe("approved")
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  JSON.parse((result.content as ReadonlyArray<{ text?: string }>)[0]?.text ?? "null") as Body

/**
 * MCP with a key of the person's (MCP only, the flow's scopes): a tool the catalog flags for
 * approval answers a pending prepared command that cannot commit yet; the person approves it over
 * HTTP, then `integrationCommands.commit` runs it and answers the operation's result.
 */
const outputs = new AjvJsonSchemaValidator()

const mcp: Transport = {
  as: async (person, scopes) => {
    const secret = await makeKey(person, scopes, { httpEnabled: false, mcpEnabled: true })
    const client = new Client({ name: "learning-e2e", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }))
    clients.push(client)
    const commit = (uuid: string) => client.callTool({ name: toolNameOf("integrationCommands.commit"), arguments: { uuid } })
    return async (id, args = {}) => {
      const entry = entryOf(id)
      const answer = await client.callTool({ name: toolNameOf(id), arguments: entry.method === "GET" ? args : { requestUuid: randomUUID(), ...args } })
      expect(answer.isError ?? false, `${id}: ${JSON.stringify(answer.content)}`).toBe(false)
      // Every structured answer of the flow fits its tool's outputSchema (the client checks only tools it listed).
      const output = toolOf(entry).outputSchema
      if (output !== undefined) {
        const checked = outputs.getValidator(output as never)(answer.structuredContent)
        expect(checked.valid, `${id}: ${checked.errorMessage ?? ""}`).toBe(true)
      }
      if (!entry.approval) return textOf(answer)
      const prepared = textOf(answer).command
      expect(prepared).toMatchObject({ operationId: id, state: "pending" })
      const early = await commit(prepared.uuid)
      expect([early.isError, textOf(early).error.code]).toEqual([true, "approval_pending"])
      await approve(person, prepared)
      const committed = await commit(prepared.uuid)
      expect(committed.isError ?? false, `${id}: ${JSON.stringify(committed.content)}`).toBe(false)
      const command = textOf(committed).command
      expect([command.state, command.result.status], `${id}: ${JSON.stringify(command.result)}`).toEqual(["committed", 200])
      approved.push(id)
      return command.result.body as Body
    }
  }
}

const scopes = {
  author: ["learning:read", "learning:write", "learning:submit", "learning:staff"],
  instructor: ["learning:read", "learning:staff", "learning:grade"],
  learner: ["learning:read", "learning:study"]
}

const day = 86_400_000
/** An assignment a staff member reviews and releases by hand. */
const reviewedStep = (nodeKey: string, title: string, dueOffsetDays?: number) => ({
  nodeKey,
  parentKey: "module-1",
  kind: "step",
  stepType: "assignment",
  title,
  body: "Опишите решение своими словами",
  grading: { maxPoints: 10, passThreshold: 6, review: { mode: "staff", release: "manual" } },
  ...(dueOffsetDays === undefined ? {} : { dueOffsetDays })
})

/** The mailed staff invitation to `email`: its link's invitation uuid and token (the only copy of the token). */
const invitationMail = async (email: string) => {
  const { rows } = await db.query<{ text_body: string }>("SELECT text_body FROM development_mailbox WHERE to_address = $1", [email])
  expect(rows).toHaveLength(1)
  const link = /\/learning\/staff-invitations\/([0-9a-f-]{36})#token=([A-Za-z0-9_-]+)/.exec(rows[0]!.text_body)
  expect(link, rows[0]!.text_body).not.toBeNull()
  return { uuid: link![1]!, token: link![2]! }
}

/**
 * The flow, the same for both transports. `acceptWithToken`: the instructor accepts with the
 * mailed token (as from the link), or by the verified address alone, finding the invitation in
 * their list (the way an agent does, which should not carry the token into a prepared command).
 */
const learningFlow = async (transport: Transport, acceptWithToken: boolean) => {
  const people = { url: host.url, origin, db }
  const authorSignedIn = await signIn(people)
  const author = await transport.as(authorSignedIn, scopes.author)
  const title = `Python с нуля ${randomUUID().slice(0, 8)}`

  // The author's training publication, approved by moderation, becomes a draft course.
  const publication = await author("learning.save", {
    data: { title, description: "Переменные, циклы и функции на коротких задачах", training: { level: "beginner", format: "online" } }
  })
  const submitted = await author("learning.submit", { publicationUuid: publication.uuid, expectedRevision: publication.revision })
  expect(submitted.status).toBe("pending")
  const moderated = await call("POST", "/api/v1/moderation/decisions", moderator, {
    requestUuid: randomUUID(), publicationUuid: publication.uuid, expectedRevision: submitted.revision, decision: "approve"
  })
  expect(moderated.status, JSON.stringify(moderated.body)).toBe(200)
  const draft = await author("learning.courses.from_publication", { publicationUuid: publication.uuid })
  expect([draft.title, draft.publicationUuid, draft.metadata, draft.status]).toEqual([title, publication.uuid, { level: "beginner", format: "online" }, "draft"])
  expect(draft.nodes.map((node: { nodeKey: string }) => node.nodeKey)).toEqual(["module-1", "description"])

  // Two reviewed assignments after the publication's text; listed, published as version 1, a running run.
  const course = draft.uuid as string
  const edited = await author("learning.courses.update", {
    course,
    expectedRevision: draft.revision,
    visibility: "listed",
    nodes: [...draft.nodes, reviewedStep("essay", "Эссе о циклах"), reviewedStep("project", "Мини-проект", 14)]
  })
  const version = await author("learning.courses.publish", { course, expectedRevision: edited.revision, changelog: "Первый выпуск" })
  expect([version.courseUuid, version.number]).toEqual([course, 1])
  const created = await author("learning.runs.create", {
    course,
    versionNumber: 1,
    title: "Весенний поток",
    pacing: "cohort",
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    endsAt: new Date(Date.now() + 30 * day).toISOString(),
    admission: "open",
    waitlist: false,
    enrollmentWindow: {},
    pausePolicy: { maxDays: 0, maxCount: 0 }
  })
  const run = created.uuid as string
  expect((await author("learning.runs.update", { run, expectedRevision: created.revision, publish: true })).status).toBe("scheduled")
  // The run clock (the worker's learning_runs job) starts it.
  expect(await worker.runPromise(advanceRuns(new Date()))).toBeGreaterThanOrEqual(1)

  // The instructor: invited by email; the token arrives only by mail; they sign in with that address and accept.
  const instructorEmail = `instructor.${randomUUID()}@example.com`
  const invited = await author("learning.staff.email_invite", { course, email: instructorEmail, role: "instructor", scope: {}, message: "Поведёте поток?" })
  expect([invited.status, invited.role, invited.emailHint]).toEqual(["pending", "instructor", "i***@example.com"])
  const mailed = await invitationMail(instructorEmail)
  expect(mailed.uuid).toBe(invited.uuid)
  expect(JSON.stringify(invited)).not.toContain(mailed.token)
  const instructorSignedIn = await signIn({ ...people, email: instructorEmail })
  const instructor = await transport.as(instructorSignedIn, scopes.instructor)
  const addressed = await instructor("learning.staff.email_invitations")
  expect(addressed.items.map((item: { uuid: string; status: string }) => [item.uuid, item.status])).toEqual([[invited.uuid, "pending"]])
  const assignment = await instructor("learning.staff.email_accept", { invitation: addressed.items[0].uuid, ...(acceptWithToken ? { token: mailed.token } : {}) })
  expect([assignment.role, assignment.status, assignment.profileUuid, assignment.courseUuid])
    .toEqual(["instructor", "active", instructorSignedIn.profileUuid, course])
  const staff = await author("learning.staff.list", { course })
  expect(staff.items.map((item: { role: string; profileUuid: string }) => [item.role, item.profileUuid]))
    .toContainEqual(["instructor", instructorSignedIn.profileUuid])

  // The learner finds the course in the catalog, enrolls in its open run, starts and opens the first assignment.
  const learnerSignedIn = await signIn(people)
  const learner = await transport.as(learnerSignedIn, scopes.learner)
  const found = await learner("learning.courses.list", { q: title })
  expect(found.items.map((card: { uuid: string }) => card.uuid)).toEqual([course])
  const shown = await learner("learning.courses.get", { course })
  expect(shown.runs.map((r: { uuid: string; status: string }) => [r.uuid, r.status])).toEqual([[run, "running"]])
  const enrolled = await learner("learning.enrollments.enroll", { run })
  const started = await learner("learning.enrollments.start", { enrollment: enrolled.uuid, expectedRevision: enrolled.revision })
  expect(started.status).toBe("active")
  const enrollment = started.uuid as string
  const opened = await learner("learning.steps.get", { enrollment, node: "essay" })
  expect([opened.nodeKey, opened.title, opened.attemptsLeft === undefined || opened.attemptsLeft > 0]).toEqual(["essay", "Эссе о циклах", true])

  // Both assignments submitted: each waits for a review.
  const essay = await learner("learning.submissions.create", { enrollment, node: "essay", reply: "Цикл for проходит по коллекции, while — пока условие истинно" })
  const project = await learner("learning.submissions.create", { enrollment, node: "project", reply: "Ссылка на репозиторий с калькулятором" })
  expect([essay.status, project.status]).toEqual(["awaiting_review", "awaiting_review"])
  const pooled = await instructor("learning.reviews.assignment_list", { course, status: "pooled" })
  expect(pooled.items.map((a: { submissionUuid: string }) => a.submissionUuid).sort()).toEqual([essay.uuid, project.uuid].sort())

  // The instructor claims the essay, decides it, and releases the decision.
  const claimed = await instructor("learning.reviews.claim", { submission: essay.uuid })
  expect([claimed.status, claimed.reviewerProfileUuid]).toEqual(["claimed", instructorSignedIn.profileUuid])
  const decided = await instructor("learning.reviews.decide", {
    submission: essay.uuid,
    expectedRevision: claimed.revision,
    outcome: "accept",
    points: 7,
    rubric: [{ criterion: "Полнота", points: 7 }],
    comment: "Верно, но без примеров кода"
  })
  expect([decided.status, decided.points]).toEqual(["decided", 7])
  // Not released yet: the learner sees no score.
  expect((await learner("learning.submissions.get", { submission: essay.uuid })).score).toBeUndefined()
  const [held] = (await instructor("learning.reviews.assignment", { submission: essay.uuid })) as unknown as Array<Body>
  const released = await instructor("learning.reviews.release", { submission: essay.uuid, expectedRevision: held!.revision })
  expect([released.status, released.score.points]).toEqual(["accepted", 7])

  // The learner reads the released score and appeals it.
  const graded = await learner("learning.submissions.get", { submission: essay.uuid })
  expect([graded.score.points, graded.score.feedback]).toEqual([7, "Верно, но без примеров кода"])
  const appeal = await learner("learning.appeals.create", { submission: essay.uuid, reason: "Пример кода есть во втором абзаце", requestedPoints: 9 })
  expect([appeal.status, appeal.initialPoints, appeal.requestedPoints]).toEqual(["open", 7, 9])

  // The learner asks for more time on the project than the run approves at once, and asks a question.
  const extension = await learner("learning.extensions.create", { enrollment, nodeKey: "project", days: 5, reason: "Болею, нужна ещё неделя" })
  expect([extension.status, extension.autoApproved]).toEqual(["requested", false])
  const question = await learner("learning.community.create", {
    enrollment, title: "Можно ли использовать рекурсию?", body: "В эссе хочу сравнить циклы с рекурсией", nodeKey: "essay", visibility: "private"
  })
  expect(question.awaitingStaff).toBe(true)

  // The instructor sees the appeal in the course's queue, and all of it on the teaching dashboard.
  const appeals = await instructor("learning.appeals.list", { course })
  expect(appeals.items.map((a: { uuid: string; status: string; submissionUuid: string }) => [a.uuid, a.status, a.submissionUuid]))
    .toEqual([[appeal.uuid, "open", essay.uuid]])
  const dashboard = await instructor("learning.teaching.get", { course })
  expect([dashboard.courseUuid, dashboard.courseTitle, dashboard.courseStatus, dashboard.roles, dashboard.assignments.map((a: { uuid: string }) => a.uuid)])
    .toEqual([course, title, "published", ["instructor"], [assignment.uuid]])
  // The project waits in the pool; the essay was claimed, decided and released; one appeal, one question, one extension request.
  expect(dashboard.counts).toEqual({
    reviewsToClaim: 1,
    reviewsClaimed: 0,
    appealsOpen: 1,
    threadsUnanswered: 1,
    extensionsPending: 1,
    incidentsOpen: 0,
    checkersSuspended: 0,
    checkersFailing: 0
  })
  expect(dashboard.todo).toBe(4)
  const teaching = await instructor("learning.teaching.list")
  expect(teaching.items).toEqual([dashboard])
  return { course, run, enrollment, instructor, instructorSignedIn, essay, project, appeal }
}

describe("the learning flow end to end", () => {
  it("over HTTP: publication → course → run → emailed instructor → enrollment → review → appeal, seen by the instructor", async () => {
    const flow = await learningFlow(http, true)
    // The instructor's bearer key (HTTP, read only) reads the same queue; without the scope it is refused.
    const reader = await makeKey(flow.instructorSignedIn, ["learning:read"], { httpEnabled: true, mcpEnabled: false })
    const byKey = await overHttp({ bearer: reader })("learning.appeals.list", { course: flow.course })
    expect(byKey.items.map((a: { uuid: string }) => a.uuid)).toEqual([flow.appeal.uuid])
    const unscoped = await makeKey(flow.instructorSignedIn, ["responses:read"], { httpEnabled: true, mcpEnabled: false })
    const refused = await httpCall({ bearer: unscoped }, "learning.appeals.list", { course: flow.course })
    expect([refused.status, refused.body.error.code]).toEqual([403, "insufficient_scope"])
  })

  it("through MCP tools with a key per person: approval-flagged steps are prepared, approved by their owner over HTTP, committed", async () => {
    await learningFlow(mcp, false)
    // Exactly the catalog's approval-flagged operations of the flow went through the owner.
    expect(approved).toEqual([
      "learning.submit",
      "learning.courses.publish",
      "learning.staff.email_invite",
      "learning.staff.email_accept",
      "learning.submissions.create",
      "learning.submissions.create",
      "learning.reviews.decide",
      "learning.reviews.release",
      "learning.appeals.create"
    ])
  })
})
