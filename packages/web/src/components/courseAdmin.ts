import type { LearningJobView, LibraryItemView, OwnershipView } from "../model.js"
import { type Json, optional, plain } from "./json.js"

/**
 * The course administration pages' views of the API's answers (server/courseAdmin.ts reads them;
 * the pages map their commands' answers with the same functions): plain JSON, dates as ISO strings.
 */

export const libraryItemOf = (item: unknown): LibraryItemView => {
  const i = plain(item)
  const nodes = i["nodes"] as ReadonlyArray<Json>
  return {
    uuid: i["uuid"], title: i["title"], createdAt: i["createdAt"],
    modules: nodes.filter((node) => node["kind"] === "module").length, steps: nodes.filter((node) => node["kind"] === "step").length
  }
}

export const ownershipOf = (invitation: unknown): OwnershipView => {
  const o = plain(invitation)
  return {
    uuid: o["uuid"], courseUuid: o["courseUuid"], courseTitle: o["courseTitle"], toProfileName: o["toProfileName"],
    previousOwnerRole: o["previousOwnerRole"], message: o["message"], status: o["status"], expiresAt: o["expiresAt"]
  }
}

export const jobOf = (job: unknown): LearningJobView => {
  const j = plain(job)
  return {
    uuid: j["uuid"], kind: j["kind"], status: j["status"], createdAt: j["createdAt"],
    issues: (j["issues"] as ReadonlyArray<Json>).map((issue) => ({ code: issue["code"], message: issue["message"] })),
    ...optional("courseUuid", j["courseUuid"]), ...optional("enrollmentUuid", j["enrollmentUuid"]), ...optional("fileUuid", j["fileUuid"]),
    ...optional("resultCourseUuid", j["resultCourseUuid"]), ...optional("finishedAt", j["finishedAt"]), ...optional("expiresAt", j["expiresAt"])
  }
}

/** The page that follows a job (export, import, analytics export) until its file or course is ready. */
export const jobPath = (job: string) => `/learning/jobs/${job}`
