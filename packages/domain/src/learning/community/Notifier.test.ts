import { describe, expect, it } from "vitest"
import { eventTypes } from "../../events/EventType.js"
import { preferenceKinds } from "../../notifications/Notification.js"
import { channelsFor, notifiedBy, quietUntil } from "./Notifier.js"

/** The notifier's pure rules; its delivery runs on Postgres in worker-host (LearningNotifier.test.ts). */
describe("the learning notifier's rules", () => {
  it("decides every learning event type and every preference kind, and no other type", () => {
    const learning = eventTypes.filter((type) => type.startsWith("learning."))
    expect(Object.keys(notifiedBy).sort()).toEqual([...learning].sort())
    expect([...preferenceKinds].sort()).toEqual([...learning].sort())
    // Every type reaches someone: a learner rule or a staff atom.
    for (const [type, rule] of Object.entries(notifiedBy)) expect(rule.learner !== "none" || rule.staff !== undefined, type).toBe(true)
  })

  it("reads channels: an unnamed kind is the inbox only; a named one as saved", () => {
    expect(channelsFor(null, "learning.step.available")).toEqual({ inApp: true, email: false, digest: false })
    expect(channelsFor({ "learning.step.available": { inApp: false, email: true, digest: true } }, "learning.step.available"))
      .toEqual({ inApp: false, email: true, digest: true })
    expect(channelsFor({ "learning.step.available": { inApp: false, email: true, digest: true } }, "learning.run.cancelled"))
      .toEqual({ inApp: true, email: false, digest: false })
  })

  it("holds quiet hours from `from` (inside) to `to` (outside), wrapping past midnight, none for equal ends", () => {
    const at = (iso: string) => new Date(iso)
    const day = { from: "09:00", to: "17:30" }
    expect(quietUntil(day, at("2030-01-01T08:59:59Z"))).toBeUndefined()
    expect(quietUntil(day, at("2030-01-01T09:00:00Z"))?.toISOString()).toBe("2030-01-01T17:30:00.000Z")
    expect(quietUntil(day, at("2030-01-01T17:29:59Z"))?.toISOString()).toBe("2030-01-01T17:30:00.000Z")
    expect(quietUntil(day, at("2030-01-01T17:30:00Z"))).toBeUndefined()
    const night = { from: "22:00", to: "07:30" }
    expect(quietUntil(night, at("2030-12-31T21:59:00Z"))).toBeUndefined()
    expect(quietUntil(night, at("2030-12-31T22:00:00Z"))?.toISOString()).toBe("2031-01-01T07:30:00.000Z")
    expect(quietUntil(night, at("2031-01-01T03:00:00Z"))?.toISOString()).toBe("2031-01-01T07:30:00.000Z")
    expect(quietUntil(night, at("2031-01-01T07:30:00Z"))).toBeUndefined()
    expect(quietUntil({ from: "10:00", to: "10:00" }, at("2030-01-01T10:00:00Z"))).toBeUndefined()
    expect(quietUntil(null, at("2030-01-01T10:00:00Z"))).toBeUndefined()
  })
})
