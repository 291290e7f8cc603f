import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { command, enrollDirectly, publishedCourse, type TestCourse } from "../../test/learning.js"
import { type Marketplace, okBody as ok, openMarketplace, refusal as refused } from "../../test/marketplace.js"
import type { SessionActor } from "../api/Authentication.js"
import type { StaffAssignment } from "./StaffModel.js"
import type { TeachingCourse } from "./TeachingModel.js"

/**
 * Teaching dashboards (issue 19 point 7) through `Operations.invoke` on real Postgres: the courses
 * where the caller is active staff, and one course's to-do counts, each narrowed to what the
 * caller's role and scope may act on.
 */

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learnteaching")
  owner = await m.profile({ name: "Владелец" })
})
afterAll(async () => {
  await m?.close()
})

type Page<T> = { items: Array<T>; nextCursor?: string }

/** A profile that accepted a staff role on the course. */
const staffMember = async (c: TestCourse, role: string, scope: Record<string, string> = {}, extra: Record<string, unknown> = {}) => {
  const profile = await m.profile()
  const invited = ok<StaffAssignment>(await m.invoke("learning.staff.assign", owner, {
    path: { course: c.uuid },
    payload: command({ profileUuid: profile.profileUuid, role, scope, ...extra })
  }))
  ok(await m.invoke("learning.staff.accept", profile, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) }))
  return profile
}

const dashboard = (actor: SessionActor, c: { readonly uuid: string }) => m.invoke("learning.teaching.get", actor, { path: { course: c.uuid } })

describe("learning teaching: who sees a dashboard", () => {
  it("answers the owner with every count; 404 to a stranger on a private course, 403 to its learner", async () => {
    const c = await publishedCourse(m, owner)
    const view = ok<TeachingCourse>(await dashboard(owner, c))
    expect([view.courseUuid, view.roles, view.todo]).toEqual([c.uuid, ["owner"], 0])
    expect(Object.keys(view.counts).sort()).toEqual([
      "appealsOpen", "checkersFailing", "checkersSuspended", "extensionsPending", "incidentsOpen", "reviewsClaimed", "reviewsToClaim", "threadsUnanswered"
    ])
    expect(refused(await dashboard(await m.profile(), c))).toEqual([404, "not_found"])
    const learner = await m.profile()
    await enrollDirectly(m, c, learner)
    expect(refused(await dashboard(learner, c))).toEqual([403, "forbidden"])
    const list = ok<Page<TeachingCourse>>(await m.invoke("learning.teaching.list", owner, { urlParams: {} }))
    expect(list.items.map((item) => item.courseUuid)).toContain(c.uuid)
    void staffMember
  })
})
