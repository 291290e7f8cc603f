import type { BirzhaClient } from "@birzha/client"
import { Effect, Either, Option } from "effect"
import { submissionOf } from "../components/learning.js"
import type {
  PageData,
  RegradePlanView,
  ReplyView,
  ReviewAssignmentView,
  ReviewWorkspaceView,
  TeachingCourseItem,
  TeachingHead
} from "../model.js"
import { type Refusal, type ServerApi, unlessRefused } from "./api.js"
import { type Json, plain, optional, uuidPattern } from "../components/json.js"

/**
 * A learner as the teaching pages show them: a short label from their profile's uuid, the same on
 * every page. Names are personal data (`pii_read`, docs/web.md "Teaching pages"), and a
 * read of each learner's profile would cost a call per row.
 */
export const unnamed = (profileUuid: string) => `#${profileUuid.slice(0, 8)}`

export const courseItemOf = (course: unknown): TeachingCourseItem => {
  const c = plain(course)
  return {
    courseUuid: c["courseUuid"], courseTitle: c["courseTitle"], courseStatus: c["courseStatus"],
    roles: c["roles"], rights: c["rights"] ?? [], counts: c["counts"], todo: c["todo"]
  }
}

export const headOf = (course: TeachingCourseItem): TeachingHead =>
  ({ courseUuid: course.courseUuid, courseTitle: course.courseTitle, roles: course.roles, rights: course.rights })

/** How the pages name the profiles `uuids`: staff by the names the staff list gives (`known`), learners by their label. */
const namesOf = (uuids: Iterable<string>, known: ReadonlyMap<string, string> = new Map()): ReadonlyMap<string, string> =>
  new Map([...new Set(uuids)].map((uuid) => [uuid, known.get(uuid) ?? unnamed(uuid)] as const))

/** The course's staff by profile, with the names the staff list gives its members (staff are named to each other). */
const staffOf = (client: BirzhaClient, course: string) =>
  unlessRefused(client["learning.staff.list"]({ path: { course }, urlParams: { limit: 100 } })).pipe(
    Effect.map((found) => Option.match(found, { onNone: () => [], onSome: (page) => page.items.filter((s) => s.status === "active") }))
  )
const staffNames = (staff: ReadonlyArray<{ readonly profileUuid: string; readonly profileName: string }>) =>
  new Map(staff.map((s) => [s.profileUuid, s.profileName]))

/** Step titles of the course's published outline; a course not yet published answers none (the keys show). */
const stepTitles = (client: BirzhaClient, course: string) =>
  unlessRefused(client["learning.courses.get"]({ path: { course } })).pipe(
    Effect.map((found) => Option.match(found, {
      onNone: () => ({ titles: new Map<string, string>(), steps: [] as ReadonlyArray<{ readonly nodeKey: string; readonly title: string; readonly stepType?: string }> }),
      onSome: (c) => {
        const steps = c.outline.filter((node) => node.kind === "step").map((node) => ({ nodeKey: node.nodeKey, title: node.title, ...optional("stepType", node.stepType) }))
        return { titles: new Map(steps.map((step) => [step.nodeKey, step.title])), steps }
      }
    }))
  )

/** A reply as a reviewer reads it: text as is, an object's `text` and the files it names, anything else as JSON. */
export const replyOf = (reply: unknown): ReplyView => {
  if (typeof reply === "string") return { text: reply, files: [] }
  if (typeof reply === "object" && reply !== null && !Array.isArray(reply)) {
    const r = reply as Json
    const files = Array.isArray(r["files"]) ? (r["files"] as ReadonlyArray<unknown>).flatMap((file) => {
      if (typeof file === "string") return [{ name: file }]
      if (typeof file !== "object" || file === null) return []
      const f = file as Json
      const name = typeof f["name"] === "string" ? f["name"] : typeof f["uuid"] === "string" ? f["uuid"] : ""
      const url = typeof f["url"] === "string" && /^(https:|\/)/.test(f["url"]) ? f["url"] : undefined
      return name === "" ? [] : [{ name, ...optional("url", url) }]
    }) : []
    const { files: _files, text, ...rest } = r
    const shown = typeof text === "string" ? text : Object.keys(rest).length === 0 ? "" : JSON.stringify(rest)
    return { text: shown, files }
  }
  return { text: reply === undefined || reply === null ? "" : JSON.stringify(reply), files: [] }
}

const assignmentOf = (assignment: unknown, names: ReadonlyMap<string, string>): ReviewAssignmentView => {
  const a = plain(assignment)
  const decision = a["decision"] as Json | undefined
  const issue = a["issue"] as Json | undefined
  const name = (uuid: unknown) => typeof uuid === "string" ? names.get(uuid) ?? unnamed(uuid) : undefined
  return {
    uuid: a["uuid"], revision: a["revision"] ?? 1, kind: a["kind"], status: a["status"],
    ...optional("reviewerProfileUuid", a["reviewerProfileUuid"]), ...optional("reviewerName", name(a["reviewerProfileUuid"])),
    ...optional("dueAt", a["dueAt"]),
    ...optional("issue", issue === undefined ? undefined : { kind: issue["kind"], note: issue["note"] }),
    ...optional("decision", decision === undefined ? undefined : {
      outcome: decision["outcome"], points: decision["points"], comment: decision["comment"], final: decision["final"], rubric: decision["rubric"]
    }),
    history: ((a["history"] ?? []) as ReadonlyArray<Json>).map((entry) => ({
      at: entry["at"], action: entry["action"],
      ...optional("by", name(entry["byProfileUuid"])), ...optional("to", name(entry["toProfileUuid"])), ...optional("reason", entry["reason"])
    }))
  }
}

const workspaceOf = (workspace: unknown): ReviewWorkspaceView => {
  const w = plain(workspace)
  const draft = w["draft"] as Json | undefined
  return {
    reply: replyOf(w["submission"]["reply"]),
    attemptNo: w["submission"]["attemptNo"],
    submittedAt: w["submission"]["submittedAt"],
    ...optional("checkerOutput", w["checkerOutput"]),
    ...optional("draft", draft === undefined ? undefined : {
      revision: draft["revision"], comment: draft["comment"], rubric: draft["rubric"], savedAt: draft["savedAt"], ...optional("points", draft["points"])
    }),
    earlierAttempts: (w["earlierAttempts"] as ReadonlyArray<Json>).map((attempt) => ({
      uuid: attempt["uuid"], attemptNo: attempt["attemptNo"], submittedAt: attempt["submittedAt"], status: attempt["status"],
      reply: replyOf(attempt["reply"]), ...optional("points", attempt["points"])
    }))
  }
}

const ruleOf = (rule: Json): RegradePlanView["rule"] => {
  const value = rule["maxPoints"] ?? rule["answer"] ?? rule["penaltyPercent"]
  return { kind: rule["kind"], ...optional("value", value === undefined ? undefined : String(value)) }
}

/**
 * A regrade plan with each item's learner: the items name submissions, so each is read
 * (`learning.submissions.get`, its enrollment) and then each enrollment (its learner).
 */
const planOf = (client: BirzhaClient, course: string, planUuid: string, titles: ReadonlyMap<string, string>) =>
  Effect.gen(function*() {
    const plan = plain(yield* client["learning.regrade_plans.get"]({ path: { course, plan: planUuid }, urlParams: { limit: 100 } }))
    const items = plan["items"] as ReadonlyArray<Json>
    const submissions = yield* Effect.forEach(items, (item) =>
      unlessRefused(client["learning.submissions.get"]({ path: { submission: item["submissionUuid"] } })), { concurrency: 8 })
    const enrollments = [...new Set(submissions.flatMap((found) => Option.match(found, { onNone: () => [], onSome: (s) => [s.enrollmentUuid] })))]
    const learners = yield* Effect.forEach(enrollments, (enrollment) =>
      unlessRefused(client["learning.enrollments.get"]({ path: { enrollment } })), { concurrency: 8 })
    const learnerOf = new Map(learners.flatMap((found) => Option.match(found, { onNone: () => [], onSome: (e) => [[e.uuid, e.profileUuid] as const] })))
    const names = namesOf(learnerOf.values())
    const view: RegradePlanView = {
      uuid: plan["uuid"], status: plan["status"], nodeKey: plan["nodeKey"], stepTitle: titles.get(plan["nodeKey"]) ?? plan["nodeKey"],
      rule: ruleOf(plan["rule"]), policy: plan["policy"], itemCount: plan["itemCount"], progress: plan["progress"], skipped: plan["skipped"],
      items: items.map((item, index) => {
        const submission = Option.getOrUndefined(submissions[index] ?? Option.none())
        const profile = submission === undefined ? undefined : learnerOf.get(submission.enrollmentUuid)
        return {
          n: item["n"], learner: profile === undefined ? unnamed(item["submissionUuid"]) : names.get(profile) ?? unnamed(profile),
          ...optional("attemptNo", submission?.attemptNo), ...optional("old", item["old"]), ...optional("new", item["new"]),
          maxPoints: item["maxPoints"], ...optional("skipped", item["skipped"]), applied: item["appliedLayerUuid"] !== undefined
        }
      }),
      expiresAt: plan["expiresAt"], ...optional("committedAt", plan["committedAt"])
    }
    return view
  })

const statusParam = <A extends string>(search: URLSearchParams, allowed: ReadonlyArray<A>): A | "" => {
  const status = search.get("status") ?? ""
  return (allowed as ReadonlyArray<string>).includes(status) ? status as A : ""
}

/**
 * The teaching pages (signed in): the dashboard of every course the caller teaches (`/teaching`),
 * one course's dashboard (`/teaching/{course}`) and its lists: the review queue and a submission's
 * review workspace (`/reviews`, `/reviews/{submission}`), appeals, extension requests, the roster
 * and regrade plans (`/regrades`, `?plan=` one plan's difference). Each reads the caller's rights
 * on the course first (learning.teaching.get) so the page offers only what the API allows.
 * `undefined`: not one of these paths.
 */
export const loadTeaching = (
  api: ServerApi,
  path: string,
  search: URLSearchParams,
  cookie: string
): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  if (path === "/teaching") {
    return run((client) =>
      client["learning.teaching.list"]({ urlParams: { limit: 50 } }).pipe(
        Effect.map((page): PageData => ({ page: "teaching", courses: page.items.map(courseItemOf) }))
      ))
  }
  const rest = path.startsWith("/teaching/") ? path.slice("/teaching/".length).split("/") : undefined
  if (rest === undefined || rest.length > 3 || !uuidPattern.test(rest[0] ?? "")) return undefined
  const course = rest[0]!
  const section = rest[1]
  const head = (client: BirzhaClient) => Effect.map(client["learning.teaching.get"]({ path: { course } }), courseItemOf)
  if (section === undefined) {
    return run((client) => Effect.map(head(client), (item): PageData => ({ page: "teachingCourse", course: item })))
  }
  if (section === "reviews" && rest.length === 2) {
    const status = statusParam(search, ["pooled", "claimed", "overdue", "issue"] as const)
    const mine = search.get("mine") === "true"
    const cursor = search.get("cursor") ?? ""
    return run((client) =>
      Effect.gen(function*() {
        const [item, queue, { titles }, staff] = yield* Effect.all([
          head(client),
          client["learning.reviews.assignment_list"]({
            path: { course },
            urlParams: { limit: 50, ...(status === "" ? {} : { status }), ...(mine ? { mine: "true" as const } : {}), ...(cursor === "" ? {} : { cursor }) }
          }),
          stepTitles(client, course),
          staffOf(client, course)
        ], { concurrency: "unbounded" })
        const items = queue.items.map(plain)
        const names = namesOf(items.flatMap((a) => [a["learnerProfileUuid"], a["reviewerProfileUuid"]].filter((u): u is string => typeof u === "string")), staffNames(staff))
        return {
          page: "teachingReviews",
          course: headOf(item),
          status: mine ? "mine" : status,
          items: items.map((a) => ({
            uuid: a["uuid"], submissionUuid: a["submissionUuid"], nodeKey: a["nodeKey"] ?? "", stepTitle: titles.get(a["nodeKey"]) ?? a["nodeKey"] ?? "",
            kind: a["kind"], status: a["status"],
            learner: typeof a["learnerProfileUuid"] === "string" ? names.get(a["learnerProfileUuid"])! : a["pseudonym"] ?? "",
            ...optional("reviewerName", typeof a["reviewerProfileUuid"] === "string" ? names.get(a["reviewerProfileUuid"]) : undefined),
            ...optional("reviewerProfileUuid", a["reviewerProfileUuid"]), ...optional("dueAt", a["dueAt"]), overdue: a["overdue"] === true,
            ...optional("issue", a["issue"]?.kind)
          })),
          ...optional("nextCursor", queue.nextCursor)
        } satisfies PageData
      }))
  }
  if (section === "reviews" && rest.length === 3 && uuidPattern.test(rest[2] ?? "")) {
    const submission = rest[2]!
    return run((client) =>
      Effect.gen(function*() {
        const [item, found, assignments, workspace, staff, { titles }] = yield* Effect.all([
          head(client),
          client["learning.submissions.get"]({ path: { submission } }),
          client["learning.reviews.assignment"]({ path: { submission } }),
          // The workspace opens to the holder and to owners and instructors; before a claim the page shows the submission only.
          // Only a refusal means that: a failed read fails the page, or the form would start empty and save over the draft.
          unlessRefused(client["learning.reviews.workspace"]({ path: { submission } })),
          staffOf(client, course),
          stepTitles(client, course)
        ], { concurrency: "unbounded" })
        const w = Option.map(workspace, plain)
        const enrollment = yield* unlessRefused(client["learning.enrollments.get"]({ path: { enrollment: found.enrollmentUuid } }))
        const learnerUuid = Option.match(w, { onNone: () => undefined, onSome: (ws) => ws["learner"]?.profileUuid as string | undefined }) ??
          Option.getOrUndefined(Option.map(enrollment, (e) => e.profileUuid))
        const people = assignments.flatMap((a) => [a.reviewerProfileUuid, ...(a.history ?? []).flatMap((h) => [h.byProfileUuid, h.toProfileUuid])])
          .filter((u): u is string => u !== undefined)
        const names = namesOf([...people, ...(learnerUuid === undefined ? [] : [learnerUuid])], staffNames(staff))
        const step = Option.match(w, {
          onNone: () => ({ nodeKey: found.nodeKey, title: titles.get(found.nodeKey) ?? found.nodeKey, ...optional("maxPoints", found.score?.maxPoints) }),
          onSome: (ws) => ({
            nodeKey: ws["step"]["nodeKey"], title: ws["step"]["title"], ...optional("body", ws["step"]["body"]),
            maxPoints: ws["step"]["maxPoints"], ...optional("passThreshold", ws["step"]["passThreshold"])
          })
        })
        const reviewers = staff.filter((s) => s.role !== "analyst" && s.role !== "assistant").map((s) => ({ profileUuid: s.profileUuid, name: s.profileName }))
        return {
          page: "reviewWorkspace",
          course: headOf(item),
          submissionUuid: submission,
          learner: learnerUuid === undefined ? Option.match(w, { onNone: () => "", onSome: (ws) => ws["learner"]["pseudonym"] }) : names.get(learnerUuid)!,
          step,
          submission: submissionOf(found),
          assignments: assignments.map((a) => assignmentOf(a, names)),
          ...optional("workspace", Option.getOrUndefined(Option.map(workspace, workspaceOf))),
          reviewers: [...new Map(reviewers.map((r) => [r.profileUuid, r])).values()]
        } satisfies PageData
      }))
  }
  if (section === "appeals" && rest.length === 2) {
    const status = statusParam(search, ["open", "resolved", "escalated", "closed"] as const)
    return run((client) =>
      Effect.gen(function*() {
        const [item, appeals, { titles }] = yield* Effect.all([
          head(client),
          client["learning.appeals.list"]({ path: { course }, urlParams: { limit: 50, ...(status === "" ? {} : { status }) } }),
          stepTitles(client, course)
        ], { concurrency: "unbounded" })
        const found = appeals.items.map(plain)
        const [options, enrollments] = yield* Effect.all([
          Effect.forEach(found, (appeal) => appeal["status"] === "open" || appeal["status"] === "escalated"
            ? unlessRefused(client["learning.appeals.replacements"]({ path: { appeal: appeal["uuid"] } }))
            : Effect.succeedNone, { concurrency: 8 }),
          Effect.forEach(found, (appeal) => unlessRefused(client["learning.enrollments.get"]({ path: { enrollment: appeal["enrollmentUuid"] } })), { concurrency: 8 })
        ])
        const profiles = enrollments.map((e) => Option.getOrUndefined(Option.map(e, (x) => x.profileUuid)))
        const names = namesOf(profiles.filter((u): u is string => u !== undefined))
        return {
          page: "teachingAppeals",
          course: headOf(item),
          status,
          items: found.map((a, index) => ({
            uuid: a["uuid"], revision: a["revision"], submissionUuid: a["submissionUuid"], status: a["status"],
            stepTitle: titles.get(a["nodeKey"]) ?? a["nodeKey"],
            learner: profiles[index] === undefined ? unnamed(a["enrollmentUuid"]) : names.get(profiles[index]!)!,
            reason: a["reason"], initialPoints: a["initialPoints"], comment: a["comment"], createdAt: a["createdAt"],
            ...optional("requestedPoints", a["requestedPoints"]), ...optional("resolvedPoints", a["resolvedPoints"] ?? a["closedPoints"]),
            ...optional("outcome", a["outcome"]),
            options: Option.match(options[index] ?? Option.none(), { onNone: () => [], onSome: (o) => plain(o)["options"] })
          }))
        } satisfies PageData
      }))
  }
  if (section === "extensions" && rest.length === 2) {
    const status = statusParam(search, ["requested", "approved", "denied", "expired"] as const)
    return run((client) =>
      Effect.gen(function*() {
        const [item, page, { titles }] = yield* Effect.all([
          head(client),
          client["learning.extensions.course_list"]({ path: { course }, urlParams: { limit: 50, ...(status === "" ? {} : { status }) } }),
          stepTitles(client, course)
        ], { concurrency: "unbounded" })
        const found = page.items.map(plain)
        const names = namesOf(found.map((x) => x["profileUuid"] as string))
        return {
          page: "teachingExtensions",
          course: headOf(item),
          status,
          items: found.map((x) => ({
            uuid: x["uuid"], revision: x["revision"], status: x["status"], learner: names.get(x["profileUuid"])!,
            ...optional("stepTitle", x["nodeKey"] === undefined ? undefined : titles.get(x["nodeKey"]) ?? x["nodeKey"]),
            originalDueAt: x["originalDueAt"], requestedDueAt: x["requestedDueAt"], ...optional("grantedDueAt", x["grantedDueAt"]),
            reason: x["reason"], comment: x["comment"], autoApproved: x["autoApproved"]
          }))
        } satisfies PageData
      }))
  }
  if (section === "roster" && rest.length === 2) {
    const status = statusParam(search, ["invited", "requested", "waitlisted", "offered", "active", "paused", "completed", "withdrawn", "rejected"] as const)
    return run((client) =>
      Effect.gen(function*() {
        const [item, page, runs] = yield* Effect.all([
          head(client),
          client["learning.enrollments.course_list"]({ path: { course }, urlParams: { limit: 100, ...(status === "" ? {} : { status: status as "active" }) } }),
          unlessRefused(client["learning.runs.list"]({ path: { course } }))
        ], { concurrency: "unbounded" })
        const titles = new Map(Option.match(runs, { onNone: () => [], onSome: (r) => plain(r)["items"] as ReadonlyArray<Json> }).map((r) => [r["uuid"] as string, r["title"] as string]))
        const names = namesOf(page.items.map((e) => e.profileUuid))
        // The application's answers of those waiting for a decision (roster_manage).
        const applications = yield* Effect.forEach(page.items, (e) => e.status === "requested" || e.status === "waitlisted"
          ? unlessRefused(client["learning.applications.get"]({ path: { enrollment: e.uuid } }))
          : Effect.succeedNone, { concurrency: 8 })
        return {
          page: "teachingRoster",
          course: headOf(item),
          status,
          items: page.items.map((e, index) => {
            const application = Option.getOrUndefined(applications[index] ?? Option.none())
            return {
              uuid: e.uuid, revision: e.revision, status: e.status, learner: names.get(e.profileUuid)!, runTitle: titles.get(e.runUuid) ?? "",
              ...optional("completedSteps", e.progress?.completedSteps), ...optional("totalSteps", e.progress?.totalSteps),
              ...optional("waitlistPosition", e.waitlistPosition),
              ...optional("application", application === undefined ? undefined : Object.entries(application.answers).map(([question, answer]) => ({ question, answer })))
            }
          })
        } satisfies PageData
      }))
  }
  if (section === "incidents" && rest.length === 2) {
    return run((client) =>
      Effect.gen(function*() {
        const [item, runs, { titles, steps }] = yield* Effect.all([
          head(client),
          client["learning.runs.list"]({ path: { course }, urlParams: {} }),
          stepTitles(client, course)
        ], { concurrency: "unbounded" })
        const runList = (plain(runs)["items"] as ReadonlyArray<Json>).map((r) => ({ uuid: r["uuid"] as string, title: r["title"] as string }))
        const runTitle = new Map(runList.map((r) => [r.uuid, r.title]))
        const pages = yield* Effect.forEach(runList, (r) => client["learning.incidents.list"]({ path: { run: r.uuid }, urlParams: { limit: 20 } }), { concurrency: 4 })
        const listed = pages.flatMap((page) => page.items).sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime())
        // The list leaves the compensation plan out: an open incident with one is read whole.
        const incidents = yield* Effect.forEach(listed, (incident) =>
          incident.status === "open" && incident.planUuid !== undefined
            ? Effect.map(client["learning.incidents.get"]({ path: { incident: incident.uuid } }), plain)
            : Effect.succeed(plain(incident)), { concurrency: 4 })
        const title = (key: string) => titles.get(key) ?? key
        return {
          page: "teachingIncidents",
          course: headOf(item),
          runs: runList,
          steps: steps.map((step) => ({ nodeKey: step.nodeKey, title: step.title })),
          items: incidents.map((x) => {
            const affected = x["affected"] as ReadonlyArray<Json>
            const learnerOf = new Map(affected.map((a) => [a["enrollmentUuid"] as string, unnamed(a["profileUuid"])]))
            const plan = x["plan"] as Json | undefined
            return {
              uuid: x["uuid"], runTitle: runTitle.get(x["runUuid"]) ?? "", kind: x["kind"], status: x["status"],
              from: x["window"]["from"], to: x["window"]["to"], description: x["description"],
              steps: (x["nodeKeys"] as ReadonlyArray<string>).map(title),
              affected: affected.map((a) => ({ learner: unnamed(a["profileUuid"]), steps: (a["nodeKeys"] as ReadonlyArray<string>).map(title) })),
              ...optional("plan", plan === undefined ? undefined : {
                uuid: plan["uuid"], status: plan["status"], expiresAt: plan["expiresAt"],
                items: (plan["items"] as ReadonlyArray<Json>).map((i) => ({
                  kind: i["kind"], learner: learnerOf.get(i["enrollmentUuid"]) ?? unnamed(i["enrollmentUuid"]), step: title(i["nodeKey"]),
                  ...optional("dueBefore", i["dueBefore"]), ...optional("dueAfter", i["dueAfter"]), ...optional("attempts", i["attempts"])
                })),
                blocking: (plan["blocking"] as ReadonlyArray<Json>).map((b) => b["code"] as string)
              })
            }
          })
        } satisfies PageData
      }))
  }
  if (section === "analytics" && rest.length === 2) {
    return run((client) =>
      Effect.gen(function*() {
        const [item, found, { titles }, staff] = yield* Effect.all([
          head(client),
          client["learning.analytics.get"]({ path: { course }, urlParams: {} }),
          stepTitles(client, course),
          staffOf(client, course)
        ], { concurrency: "unbounded" })
        const a = plain(found)
        const cell = (c: Json) => ({ suppressed: c["suppressed"] === true, ...optional("count", c["count"]) })
        const names = namesOf((a["graderLoad"] as ReadonlyArray<Json>).map((g) => g["reviewerUuid"] as string), staffNames(staff))
        return {
          page: "teachingAnalytics",
          course: headOf(item),
          analytics: {
            minCell: a["minCell"],
            funnel: (["enrolled", "active", "completed", "withdrawn"] as const).map((stage) => ({ stage, cell: cell(a["funnel"][stage]) })),
            steps: (a["steps"] as ReadonlyArray<Json>).map((s) => ({ title: titles.get(s["nodeKey"]) ?? s["nodeKey"], started: cell(s["started"]), completed: cell(s["completed"]) })),
            scores: (a["scores"] as ReadonlyArray<Json>).map((s) => ({ bucket: s["bucket"], learners: cell(s["learners"]) })),
            graderLoad: (a["graderLoad"] as ReadonlyArray<Json>).map((g) => ({ name: names.get(g["reviewerUuid"])!, pending: g["pending"], decided: g["decided"] }))
          }
        } satisfies PageData
      }))
  }
  if (section === "regrades" && rest.length === 2) {
    const planUuid = search.get("plan") ?? ""
    return run((client) =>
      Effect.gen(function*() {
        const [item, { titles, steps }] = yield* Effect.all([head(client), stepTitles(client, course)], { concurrency: "unbounded" })
        const plan = uuidPattern.test(planUuid) ? yield* planOf(client, course, planUuid, titles) : undefined
        return {
          page: "teachingRegrade",
          course: headOf(item),
          steps: steps.filter((step) => step.stepType !== "text" && step.stepType !== "video").map((step) => ({ nodeKey: step.nodeKey, title: step.title })),
          ...optional("plan", plan)
        } satisfies PageData
      }))
  }
  return undefined
}
