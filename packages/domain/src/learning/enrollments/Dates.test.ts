import { describe, expect, it } from "vitest"
import { changedNodeKeys, computeStepDates, type DateContext, type OverrideRow } from "./Dates.js"
import type { CourseNode } from "../courses/Model.js"

const day = 86_400_000
const start = new Date("2030-01-01T09:00:00Z")
const nodes: ReadonlyArray<CourseNode> = [
  { nodeKey: "m1", kind: "module", title: "M" },
  { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "S1" },
  { nodeKey: "s2", parentKey: "m1", kind: "step", stepType: "quiz", title: "S2", unlockOffsetDays: 2, dueOffsetDays: 7, grading: { maxPoints: 1 } }
]
const context = (over: Partial<DateContext> = {}): DateContext => ({
  run: { pacing: "cohort", starts_at: start, schedule: {} },
  startedAt: null,
  nodes,
  overrides: [],
  pauses: [],
  pausedAt: null,
  ...over
})
const override = (over: Partial<OverrideRow>): OverrideRow => ({
  uuid: "00000000-0000-4000-8000-000000000001",
  node_key: "s2",
  group_uuid: null,
  unlock_at: null,
  due_at: null,
  lock_at: null,
  extra_attempts: 0,
  origin: "manual",
  reason: "",
  created_at: new Date("2029-12-01T00:00:00Z"),
  ...over
})

describe("computed effective dates", () => {
  it("takes offsets from the run's start (cohort) with provenance; modules have none", () => {
    const dates = computeStepDates(context())
    expect([...dates.keys()]).toEqual(["s1", "s2"])
    expect(dates.get("s1")).toMatchObject({ unlockAt: start, extraAttempts: 0 })
    expect(dates.get("s2")!.dueAt).toEqual(new Date(start.getTime() + 7 * day))
    expect(dates.get("s2")!.provenance.map((p) => [p.field, p.source])).toEqual([["unlockAt", "offset"], ["dueAt", "offset"]])
  })

  it("anchors self-paced offsets at the learner's start; unstarted steps need a start", () => {
    const self = context({ run: { pacing: "self", starts_at: start, schedule: {} } })
    expect(computeStepDates(self).get("s2")).toMatchObject({ startRequired: true })
    const started = new Date("2030-02-01T00:00:00Z")
    expect(computeStepDates({ ...self, startedAt: started }).get("s2")!.dueAt).toEqual(new Date(started.getTime() + 7 * day))
  })

  it("layers schedule → override → extension → pause → incident, explaining each", () => {
    const due = new Date("2030-01-20T00:00:00Z")
    const extended = new Date("2030-01-25T00:00:00Z")
    const dates = computeStepDates(context({
      run: { pacing: "cohort", starts_at: start, schedule: { s2: { lockAt: "2030-02-01T00:00:00.000Z" } } },
      overrides: [override({ due_at: due, extra_attempts: 2 }), override({ uuid: "00000000-0000-4000-8000-000000000002", origin: "extension", due_at: extended })],
      pauses: [{ from: "2030-01-10T00:00:00.000Z", days: 3 }]
    })).get("s2")!
    expect(dates.dueAt).toEqual(new Date(extended.getTime() + 3 * day))
    expect(dates.lockAt).toEqual(new Date("2030-02-04T00:00:00Z"))
    // Unlock (Jan 3) was before the pause began: unmoved.
    expect(dates.unlockAt).toEqual(new Date(start.getTime() + 2 * day))
    expect(dates.extraAttempts).toBe(2)
    expect(dates.provenance.filter((p) => p.field === "dueAt").map((p) => p.source)).toEqual(["offset", "override", "extension", "pause"])
    expect(dates.provenance.find((p) => p.field === "lockAt")!.source).toBe("schedule")
  })

  it("a running pause keeps every date ahead of it from falling due", () => {
    const pausedAt = new Date(start.getTime() + 6 * day)
    const now = new Date(start.getTime() + 10 * day + 1000)
    const dates = computeStepDates(context({ pausedAt }), now).get("s2")!
    expect(dates.dueAt!.getTime()).toBeGreaterThanOrEqual(now.getTime())
    expect(changedNodeKeys(computeStepDates(context()), computeStepDates(context({ pausedAt }), now))).toEqual(["s2"])
  })
})
