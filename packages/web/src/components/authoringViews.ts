import type {
  AuthoringCourse,
  AuthoringCourseHead,
  AuthoringRun,
  CheckerView,
  EmailInvitationView,
  IssueView,
  PreflightView,
  StaffView
} from "../model.js"
import { type Json, plain, optional } from "./json.js"

/**
 * The author's pages' views of the API's answers (server/authoring.ts reads them, the pages map
 * the answers of their commands with the same functions): plain JSON, dates as ISO strings.
 */

/** A reply or rule value as the editor shows it: text as is, anything else as JSON. */
const textOf = (value: unknown): string => typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value)

export const authoringCourseOf = (course: unknown): AuthoringCourse => {
  const c = plain(course)
  return {
    uuid: c["uuid"], revision: c["revision"], title: c["title"], summary: c["summary"], visibility: c["visibility"], status: c["status"],
    latestVersion: c["latestVersion"], nodes: c["nodes"], validation: c["validation"], diff: c["diff"]
  }
}

export const headOf = (course: unknown): AuthoringCourseHead => {
  const c = plain(course)
  return { uuid: c["uuid"], title: c["title"], status: c["status"], latestVersion: c["latestVersion"] }
}

export const preflightOf = (result: unknown): PreflightView => {
  const r = plain(result)
  return {
    jobUuid: r["jobUuid"], status: r["status"], ...optional("passed", r["passed"]),
    cases: (r["cases"] as ReadonlyArray<Json>).map((c) => ({
      index: c["index"], expected: c["expected"], passed: c["passed"],
      ...optional("name", c["name"]), ...optional("verdict", c["verdict"]), ...optional("platformError", c["platformError"])
    }))
  }
}

export const checkerOf = (checker: unknown, preflight?: PreflightView): CheckerView => {
  const c = plain(checker)
  return {
    uuid: c["uuid"], revision: c["revision"], name: c["name"], kind: c["kind"], status: c["status"], version: c["version"],
    ...optional("rules", c["rules"]), ...optional("url", c["url"]),
    referenceCases: (c["referenceCases"] as ReadonlyArray<Json>).map((x) => ({ reply: textOf(x["reply"]), expected: String(x["expected"]), ...optional("name", x["name"]) })),
    ...optional("preflight", preflight)
  }
}

export const issuesOf = (validation: unknown): ReadonlyArray<IssueView> =>
  (plain(validation)["issues"] as ReadonlyArray<Json>).map((i) => ({ severity: i["severity"], code: i["code"], message: i["message"], ...optional("nodeKey", i["nodeKey"]) }))

export const runOf = (run: unknown): AuthoringRun => {
  const r = plain(run)
  return {
    uuid: r["uuid"], revision: r["revision"], title: r["title"], versionNumber: r["versionNumber"], status: r["status"], pacing: r["pacing"],
    admission: r["admission"], startsAt: r["startsAt"], ...optional("endsAt", r["endsAt"]), ...optional("capacity", r["capacity"])
  }
}

export const staffOf = (assignment: unknown): StaffView => {
  const s = plain(assignment)
  return { uuid: s["uuid"], revision: s["revision"], profileName: s["profileName"], role: s["role"], status: s["status"], grants: s["grants"] ?? [], denies: s["denies"] ?? [] }
}

export const invitationOf = (invitation: unknown): EmailInvitationView => {
  const i = plain(invitation)
  return {
    uuid: i["uuid"], courseUuid: i["courseUuid"], courseTitle: i["courseTitle"], emailHint: i["emailHint"], role: i["role"], message: i["message"],
    status: i["status"], expiresAt: i["expiresAt"]
  }
}

