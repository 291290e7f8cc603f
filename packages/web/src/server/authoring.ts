import type { BirzhaClient } from "@birzha/client"
import { Effect, Either, Option } from "effect"
import { authoringCourseOf, checkerOf, headOf, invitationOf, preflightOf, runOf, staffOf } from "../components/authoringViews.js"
import type { PageData } from "../model.js"
import { type Refusal, type ServerApi, unlessRefused } from "./api.js"
import { type Json, plain, uuidPattern } from "../components/json.js"

/** The decoded answer as plain JSON (dates as ISO strings). */

/** The course's checkers, each with its latest preflight (one the service no longer shows leaves its results out). */
const checkersOf = (client: BirzhaClient, course: string) =>
  Effect.flatMap(client["learning.checkers.list"]({ path: { course }, urlParams: { limit: 100 } }), (page) =>
    Effect.forEach(page.items, (checker) =>
      checker.lastPreflightUuid === undefined
        ? Effect.succeed(checkerOf(checker))
        : Effect.map(
          unlessRefused(client["learning.preflights.get"]({ path: { course, job: checker.lastPreflightUuid } })),
          (found) => checkerOf(checker, Option.getOrUndefined(Option.map(found, preflightOf)))
        ), { concurrency: 4 }))

/**
 * The author's signed-in pages: their courses and approved trainings (`/authoring`), a course's
 * editor (`/authoring/courses/{uuid}`), its runs (`…/runs`) and staff (`…/staff`), and an email
 * invitation to a course's staff (`/learning/staff-invitations/{uuid}`, the link the mail carries).
 * `undefined`: not one of these paths.
 */
export const loadAuthoring = (
  api: ServerApi,
  path: string,
  cookie: string
): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  if (path === "/authoring") {
    return run((client) =>
      Effect.all({
        courses: client["learning.courses.author_list"]({ urlParams: { limit: 100 } }),
        trainings: client["learning.list"]({ urlParams: { limit: 100 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ courses, trainings }): PageData => {
          const linked = new Set(courses.items.flatMap((course) => course.publicationUuid === undefined ? [] : [course.publicationUuid]))
          return {
            page: "authoring",
            courses: courses.items.map((course) => {
              const c = plain(course)
              return {
                uuid: c["uuid"], title: c["title"], status: c["status"], latestVersion: c["latestVersion"],
                errors: c["validation"].errors, warnings: c["validation"].warnings, updatedAt: c["updatedAt"]
              }
            }),
            // Only an approved training becomes a course (learning.courses.from_publication), once.
            trainings: (plain(trainings)["items"] as ReadonlyArray<Json>)
              .filter((item) => item["status"] === "approved" && !linked.has(item["uuid"]))
              .map((item) => ({ uuid: item["uuid"], title: String(item["approved"]?.title ?? item["draft"]?.title ?? "") }))
          }
        })
      ))
  }
  const invitation = path.startsWith("/learning/staff-invitations/") ? path.slice("/learning/staff-invitations/".length) : undefined
  if (invitation !== undefined) {
    if (!uuidPattern.test(invitation)) return undefined
    return run((client) =>
      Effect.map(client["learning.staff.email_get"]({ path: { invitation } }), (found): PageData => ({ page: "staffInvitation", invitation: invitationOf(found) })))
  }
  const rest = path.startsWith("/authoring/courses/") ? path.slice("/authoring/courses/".length).split("/") : undefined
  if (rest === undefined || rest.length > 2 || !uuidPattern.test(rest[0] ?? "")) return undefined
  const course = rest[0]!
  if (rest.length === 1) {
    return run((client) =>
      Effect.all({
        found: client["learning.courses.author_get"]({ path: { course } }),
        checkers: checkersOf(client, course),
        versions: client["learning.versions.list"]({ path: { course }, urlParams: { limit: 50 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ found, checkers, versions }): PageData => ({
          page: "courseEditor",
          course: authoringCourseOf(found),
          checkers,
          versions: versions.items.map((version) => {
            const v = plain(version)
            return { number: v["number"], changelog: v["changelog"], publishedAt: v["publishedAt"] }
          })
        }))
      ))
  }
  if (rest[1] === "runs") {
    return run((client) =>
      Effect.all({
        found: client["learning.courses.author_get"]({ path: { course } }),
        runs: client["learning.runs.list"]({ path: { course }, urlParams: { limit: 100 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ found, runs }): PageData => ({
          page: "courseRuns",
          course: headOf(found),
          steps: found.nodes.filter((node) => node.kind === "step").map((node) => ({ nodeKey: node.nodeKey, title: node.title })),
          runs: runs.items.map(runOf)
        }))
      ))
  }
  if (rest[1] === "staff") {
    return run((client) =>
      Effect.all({
        found: client["learning.courses.author_get"]({ path: { course } }),
        staff: client["learning.staff.list"]({ path: { course }, urlParams: { limit: 100 } }),
        invitations: client["learning.staff.email_list"]({ path: { course }, urlParams: { limit: 100 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ found, staff, invitations }): PageData => ({
          page: "courseStaff",
          course: headOf(found),
          staff: staff.items.map(staffOf),
          invitations: invitations.items.map(invitationOf)
        }))
      ))
  }
  return undefined
}
