import type { BirzhaClient } from "@birzha/client"
import { Effect, Either, Option } from "effect"
import { headOf as authoringHeadOf } from "../components/authoringViews.js"
import { jobOf, libraryItemOf, ownershipOf } from "../components/courseAdmin.js"
import { type Json, optional, plain, uuidPattern } from "../components/json.js"
import type { PageData } from "../model.js"
import { type Refusal, type ServerApi, unlessRefused } from "./api.js"
import { courseItemOf, headOf, unnamed } from "./teaching.js"

/**
 * The course administration pages: a course's administration (`/authoring/courses/{uuid}/admin`:
 * copy, package export, bundle, library, ownership transfer), the author's library with package
 * import and the ownership offered to them (`/authoring/library`), a run's groups
 * (`/teaching/{course}/groups`), the teachers' exports (`/teaching/{course}/exports`) and one
 * export or import job (`/learning/jobs/{uuid}`). `undefined`: not one of these paths.
 */
export const loadCourseAdmin = (
  api: ServerApi,
  path: string,
  cookie: string
): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  const segments = path.split("/").slice(1)
  if (path === "/authoring/library") {
    return run((client) =>
      Effect.all({
        library: client["learning.library.list"]({ urlParams: { limit: 100 } }),
        offers: client["learning.ownership.invitations"]({ urlParams: { direction: "in", limit: 50 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ library, offers }): PageData => ({
          page: "authorLibrary",
          items: library.items.map(libraryItemOf),
          offers: offers.items.map(ownershipOf)
        }))
      ))
  }
  if (segments.length === 3 && segments[0] === "learning" && segments[1] === "jobs" && uuidPattern.test(segments[2]!)) {
    return run((client) =>
      Effect.map(client["learning.exports.get"]({ path: { export: segments[2]! } }), (job): PageData => ({ page: "learningJob", job: jobOf(job) })))
  }
  if (segments.length === 4 && segments[0] === "authoring" && segments[1] === "courses" && segments[3] === "admin" && uuidPattern.test(segments[2]!)) {
    const course = segments[2]!
    return run((client) =>
      Effect.all({
        found: client["learning.courses.author_get"]({ path: { course } }),
        library: client["learning.library.list"]({ urlParams: { limit: 100 } }),
        mine: client["learning.courses.author_list"]({ urlParams: { limit: 100 } }),
        // Only the owner reads who may take the course over; anyone else is offered no transfer.
        candidates: unlessRefused(client["learning.ownership.candidates"]({ path: { course }, urlParams: { limit: 50 } })),
        transfers: client["learning.ownership.invitations"]({ urlParams: { direction: "out", limit: 50 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ found, library, mine, candidates, transfers }): PageData => {
          const c = plain(found)
          return {
            page: "courseAdmin",
            course: { ...authoringHeadOf(found), revision: c["revision"], kind: c["kind"], owner: Option.isSome(candidates) },
            nodes: (c["nodes"] as ReadonlyArray<Json>).map((node) => ({ nodeKey: node["nodeKey"], title: node["title"], kind: node["kind"] })),
            library: library.items.map(libraryItemOf),
            bundleable: mine.items.filter((other) => other.uuid !== course && other.status === "published" && other.kind === "single")
              .map((other) => ({ uuid: other.uuid, title: other.title })),
            members: (c["members"] as ReadonlyArray<Json>).map((member) => ({ courseUuid: member["courseUuid"], required: member["required"] === true })),
            candidates: Option.match(candidates, {
              onNone: () => [],
              onSome: (page) => page.items.map((candidate) => ({ profileUuid: candidate.profileUuid, name: candidate.name, source: candidate.source }))
            }),
            transfers: transfers.items.filter((invitation) => invitation.courseUuid === course).map(ownershipOf)
          }
        })
      ))
  }
  if (segments.length === 3 && segments[0] === "teaching" && uuidPattern.test(segments[1]!) && (segments[2] === "groups" || segments[2] === "exports")) {
    const course = segments[1]!
    const head = (client: BirzhaClient) => Effect.map(client["learning.teaching.get"]({ path: { course } }), (item) => headOf(courseItemOf(item)))
    const runsOf = (client: BirzhaClient) =>
      Effect.map(client["learning.runs.list"]({ path: { course }, urlParams: { limit: 100 } }), (runs) =>
        (plain(runs)["items"] as ReadonlyArray<Json>).map((r) => ({ uuid: r["uuid"] as string, title: r["title"] as string })))
    if (segments[2] === "exports") {
      return run((client) =>
        Effect.all({ item: head(client), runs: runsOf(client) }, { concurrency: "unbounded" }).pipe(
          Effect.map(({ item, runs }): PageData => ({ page: "teachingExports", course: item, runs }))
        ))
    }
    return run((client) =>
      Effect.all({
        item: head(client),
        runs: runsOf(client),
        groups: client["learning.groups.list"]({ path: { course }, urlParams: { limit: 100 } }),
        enrollments: client["learning.enrollments.course_list"]({ path: { course }, urlParams: { limit: 100, status: "active" } }),
        staff: unlessRefused(client["learning.staff.list"]({ path: { course }, urlParams: { limit: 100 } }))
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ item, runs, groups, enrollments, staff }): PageData => {
          const people = Option.match(staff, { onNone: () => [], onSome: (page) => page.items.filter((s) => s.status === "active" && s.role !== "owner") })
          const scopeOf = (assignment: unknown) => plain(assignment)["scope"]?.["groupUuid"] as string | undefined
          // A group's members as the learners' enrollments name their groups (the list carries only a count).
          return {
            page: "teachingGroups",
            course: item,
            runs,
            groups: groups.items.map((group) => {
              const g = plain(group)
              return {
                uuid: g["uuid"], revision: g["revision"], runUuid: g["runUuid"], name: g["name"], kind: g["kind"], visibility: g["visibility"],
                assignment: g["assignment"], status: g["status"], memberCount: g["memberCount"], ...optional("capacity", g["capacity"]),
                members: enrollments.items.filter((e) => e.groups.some((joined) => joined.uuid === group.uuid))
                  .map((e) => ({ enrollmentUuid: e.uuid, learner: unnamed(e.profileUuid) })),
                staff: people.filter((s) => scopeOf(s) === group.uuid).map((s) => ({ assignmentUuid: s.uuid, name: s.profileName, role: s.role }))
              }
            }),
            learners: enrollments.items.map((e) => ({ enrollmentUuid: e.uuid, runUuid: e.runUuid, learner: unnamed(e.profileUuid) })),
            staff: people.map((s) => ({ assignmentUuid: s.uuid, name: s.profileName, role: s.role }))
          }
        })
      ))
  }
  return undefined
}
