import type { BirzhaClient } from "@birzha/client"
import { Effect, Either, Option } from "effect"
import type {
  CalendarEntry,
  CourseView,
  EnrollmentView,
  ExtensionView,
  LearningItem,
  PageData,
  StepData
} from "../model.js"
import { appealable, completionOf, stepDataOf, treeWithProgress } from "../components/learning.js"
import { type Refusal, type ServerApi, unlessRefused } from "./api.js"
import { type Json, plain, optional, uuidPattern } from "../components/json.js"

const enrollmentOf = (enrollment: unknown): EnrollmentView => {
  const e = plain(enrollment)
  return {
    uuid: e["uuid"], revision: e["revision"], status: e["status"], courseUuid: e["courseUuid"], runUuid: e["runUuid"],
    ...optional("startedAt", e["startedAt"]), ...optional("completedAt", e["completedAt"]),
    ...optional("restoreUntil", e["withdrawal"]?.restoreUntil)
  }
}

export const extensionOf = (extension: unknown): ExtensionView => {
  const x = plain(extension)
  return {
    uuid: x["uuid"], status: x["status"], originalDueAt: x["originalDueAt"], requestedDueAt: x["requestedDueAt"], reason: x["reason"], comment: x["comment"],
    ...optional("nodeKey", x["nodeKey"]), ...optional("grantedDueAt", x["grantedDueAt"])
  }
}

const courseOf = (course: unknown): CourseView => {
  const c = plain(course)
  return {
    uuid: c["uuid"], title: c["title"], summary: c["summary"], metadata: c["metadata"] ?? {}, versionNumber: c["versionNumber"],
    outline: (c["outline"] as ReadonlyArray<Json>).map((node) => ({
      nodeKey: node["nodeKey"], kind: node["kind"], title: node["title"], ...optional("parentKey", node["parentKey"]), ...optional("stepType", node["stepType"])
    })),
    runs: (c["runs"] as ReadonlyArray<Json>).map((run) => ({
      uuid: run["uuid"], title: run["title"], pacing: run["pacing"], admission: run["admission"], status: run["status"], startsAt: run["startsAt"],
      ...optional("endsAt", run["endsAt"]), ...optional("capacity", run["capacity"])
    }))
  }
}

const calendarOf = (calendar: unknown): ReadonlyArray<CalendarEntry> =>
  (plain(calendar)["items"] as ReadonlyArray<Json>).map((item) => ({
    nodeKey: item["nodeKey"], title: item["title"], status: item["status"],
    ...optional("unlockAt", item["unlockAt"]), ...optional("dueAt", item["dueAt"]),
    sources: (item["provenance"] as ReadonlyArray<Json>)
      .filter((p) => p["field"] === "dueAt" || p["field"] === "unlockAt")
      .map((p) => ({ field: p["field"], source: p["source"], ...optional("at", p["at"]), ...optional("detail", p["detail"]) }))
  }))

/** The first step not yet done, in the calendar's (the course's) order: what "My learning" calls next. */
const nextOf = (entries: ReadonlyArray<CalendarEntry>) => {
  const next = entries.find((entry) => entry.status !== "completed" && entry.status !== "locked") ?? entries.find((entry) => entry.status !== "completed")
  return next === undefined ? undefined : { nodeKey: next.nodeKey, title: next.title, ...optional("dueAt", next.dueAt) }
}

/** The enrollment's step `node`: its view and its submissions, newest first. */
const stepOf = (client: BirzhaClient, enrollment: string, node: string) =>
  Effect.all({
    step: client["learning.steps.get"]({ path: { enrollment, node } }),
    history: client["learning.submissions.history"]({ path: { enrollment, node }, urlParams: { limit: 20 } })
  }, { concurrency: "unbounded" }).pipe(
    // The latest attempt's appeals, when it has a reviewer's grade to appeal (refused: left out, not the step).
    Effect.flatMap(({ step, history }) => {
      const latest = history.items[0]
      return (latest === undefined || !appealable(latest) ? Effect.succeed(Option.none()) : unlessRefused(client["learning.appeals.list_for_submission"]({ path: { submission: latest.uuid } })))
        .pipe(Effect.map((appeals) => ({ step, history, appeals })))
    }),
    Effect.map(({ step, history, appeals }): StepData => stepDataOf(step, history.items, Option.getOrUndefined(appeals)))
  )

/** The public course pages: the learning catalog and a course's page (the visitor's enrollment read with their session). */
export const loadCourses = (
  api: ServerApi,
  path: string,
  search: URLSearchParams,
  cookie: string | undefined
): Promise<Either.Either<PageData, Refusal>> | undefined => {
  if (path === "/courses") {
    const q = search.get("q") ?? ""
    const level = search.get("level") ?? ""
    const cursor = search.get("cursor") ?? ""
    return api.run((client) =>
      client["learning.courses.list"]({
        urlParams: {
          limit: 20,
          ...(q.trim() === "" ? {} : { q: q.trim() }),
          ...(level === "" ? {} : { level: level as "beginner" }),
          ...(cursor === "" ? {} : { cursor })
        }
      }).pipe(
        Effect.map((page): PageData => ({
          page: "courses", q, level, cursor,
          items: page.items.map((card) => {
            const c = plain(card)
            return {
              uuid: c["uuid"], title: c["title"], summary: c["summary"],
              ...optional("level", c["metadata"]?.level), ...optional("format", c["metadata"]?.format), ...optional("durationHours", c["metadata"]?.durationHours)
            }
          }),
          ...optional("nextCursor", page.nextCursor)
        }))
      ))
  }
  const rest = path.startsWith("/courses/") ? path.slice("/courses/".length) : undefined
  if (rest === undefined || rest.includes("/")) return undefined
  const course = rest
  return api.run((client) =>
    Effect.gen(function*() {
      const found = yield* client["learning.courses.get"]({ path: { course } })
      // The author: the training publication's owner (public); a failed read leaves it out.
      const author = found.publicationUuid === undefined ? Option.none() : yield* Effect.option(
        client.getPublication({ path: { uuid: found.publicationUuid } }).pipe(
          Effect.flatMap((publication) => client.getProfile({ path: { uuid: publication.ownerUuid } }))
        )
      )
      const reviews = yield* client["learning.course_reviews.list"]({ path: { course }, urlParams: { limit: 20 } })
      return { found, author, reviews }
    })
  ).then(async (result): Promise<Either.Either<PageData, Refusal>> => {
    if (Either.isLeft(result)) return Either.left(result.left)
    const { found, author, reviews } = result.right
    // Signed in: the visitor's enrollment in this course, and then the course's staff (learners see their names and roles).
    type Mine = { readonly enrollment?: { readonly uuid: string; readonly status: string }; readonly staff: ReadonlyArray<{ readonly name: string; readonly role: string }> }
    const mine = cookie === undefined ? undefined : await api.run((client) =>
      Effect.gen(function*() {
        const page = yield* client["learning.enrollments.list"]({ urlParams: { limit: 100 } })
        const enrollment = page.items.find((e) => e.courseUuid === course && !["withdrawn", "declined", "expired", "rejected", "cancelled"].includes(e.status))
        if (enrollment === undefined) return { staff: [] } satisfies Mine as Mine
        const staff = yield* unlessRefused(client["learning.staff.list"]({ path: { course }, urlParams: { limit: 100 } }))
        return {
          enrollment: { uuid: enrollment.uuid, status: enrollment.status },
          staff: Option.match(staff, {
            onNone: () => [],
            onSome: (found) => found.items.filter((s) => s.status === "active").map((s) => ({ name: s.profileName, role: s.role }))
          })
        } satisfies Mine as Mine
      }), cookie)
    const own = mine !== undefined && Either.isRight(mine) ? mine.right : undefined
    const r = plain(reviews)
    return Either.right<PageData>({
      page: "course",
      course: courseOf(found),
      ...optional("author", Option.isSome(author) ? { uuid: author.value.uuid, name: author.value.name } : undefined),
      staff: own?.staff ?? [],
      reviews: {
        count: r["summary"].count, ...optional("average", r["summary"].average),
        items: (r["items"] as ReadonlyArray<Json>).map((item) => ({
          uuid: item["uuid"], rating: item["rating"], text: item["text"], createdAt: item["createdAt"], ...optional("authorName", item["authorName"])
        }))
      },
      ...optional("enrollment", own?.enrollment)
    })
  })
}

/**
 * The learner's signed-in pages: "My learning" (`/learning`), the course player
 * (`/learning/{enrollment}`, `?step=` the open step) and the calendar (`/learning/{enrollment}/calendar`).
 * `undefined`: not one of these paths.
 */
export const loadLearning = (
  api: ServerApi,
  path: string,
  search: URLSearchParams,
  cookie: string
): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  if (path === "/learning") {
    return run((client) =>
      client["learning.enrollments.list"]({ urlParams: { limit: 50 } }).pipe(
        Effect.flatMap((page) =>
          Effect.forEach(page.items, (enrollment) =>
            Effect.all({
              course: unlessRefused(client["learning.courses.get"]({ path: { course: enrollment.courseUuid } })),
              completion: unlessRefused(client["learning.completion.get"]({ path: { enrollment: enrollment.uuid } })),
              calendar: unlessRefused(client["learning.calendar.get"]({ path: { enrollment: enrollment.uuid }, urlParams: {} }))
            }, { concurrency: "unbounded" }).pipe(
              Effect.map(({ course, completion, calendar }): LearningItem => {
                const entries = Option.match(calendar, { onNone: () => [], onSome: calendarOf })
                const done = entries.filter((entry) => entry.status === "completed").length
                const next = nextOf(entries)
                const e = plain(enrollment)
                return {
                  enrollmentUuid: enrollment.uuid, courseUuid: enrollment.courseUuid, status: enrollment.status,
                  courseTitle: Option.match(course, { onNone: () => "", onSome: (c) => c.title }),
                  completedSteps: done, totalSteps: entries.length,
                  percent: Option.match(completion, { onNone: () => 0, onSome: (c) => c.percent }),
                  ...optional("completedAt", e["completedAt"]),
                  ...optional("next", enrollment.status === "completed" ? undefined : next)
                }
              })
            ), { concurrency: 4 }),
        ),
        Effect.map((items): PageData => ({ page: "myLearning", items }))
      ))
  }
  const rest = path.startsWith("/learning/") ? path.slice("/learning/".length).split("/") : undefined
  if (rest === undefined || rest.length > 2 || !uuidPattern.test(rest[0] ?? "")) return undefined
  const enrollment = rest[0]!
  if (rest.length === 2) {
    if (rest[1] !== "calendar") return undefined
    return run((client) =>
      Effect.gen(function*() {
        const found = yield* client["learning.enrollments.get"]({ path: { enrollment } })
        const [course, calendar, extensions] = yield* Effect.all([
          client["learning.courses.get"]({ path: { course: found.courseUuid } }),
          client["learning.calendar.get"]({ path: { enrollment }, urlParams: {} }),
          client["learning.extensions.list"]({ path: { enrollment } })
        ], { concurrency: "unbounded" })
        return {
          page: "learningCalendar",
          enrollment: enrollmentOf(found),
          courseTitle: course.title,
          entries: calendarOf(calendar),
          extensions: extensions.map(extensionOf)
        } satisfies PageData
      }))
  }
  return run((client) =>
    Effect.gen(function*() {
      const found = yield* client["learning.enrollments.get"]({ path: { enrollment } })
      const [course, calendar, completion, review] = yield* Effect.all([
        client["learning.courses.get"]({ path: { course: found.courseUuid } }),
        client["learning.calendar.get"]({ path: { enrollment }, urlParams: {} }),
        client["learning.completion.get"]({ path: { enrollment } }),
        unlessRefused(client["learning.course_reviews.own"]({ path: { enrollment } }))
      ], { concurrency: "unbounded" })
      const tree = treeWithProgress(courseOf(course).outline, calendar)
      const steps = tree.filter((node) => node.kind === "step")
      const asked = search.get("step") ?? ""
      const open = steps.find((node) => node.nodeKey === asked) ?? steps.find((node) => node.status !== "completed" && node.status !== "locked") ?? steps[0]
      const step = open === undefined ? undefined : yield* stepOf(client, enrollment, open.nodeKey)
      const own = Option.map(review, plain)
      return {
        page: "player",
        enrollment: enrollmentOf(found),
        courseTitle: course.title,
        tree,
        completion: completionOf(completion),
        ...optional("step", step),
        review: Option.match(own, {
          onNone: () => ({ eligible: false }),
          onSome: (o) => ({
            eligible: o["eligible"],
            ...optional("rating", o["review"]?.rating), ...optional("text", o["review"]?.text), ...optional("revision", o["review"]?.revision)
          })
        })
      } satisfies PageData
    }))
}
