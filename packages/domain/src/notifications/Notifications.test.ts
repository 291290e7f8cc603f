import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, codeOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import type { Notification, NotificationPreferences } from "./Notification.js"

let m: Marketplace

beforeAll(async () => {
  m = await openMarketplace("notifications")
})
afterAll(async () => {
  await m?.close()
})

const note = (profileUuid: string, source: string, title: string) =>
  m.sql(
    `INSERT INTO notifications (profile_uuid, source, kind, title, body, created_at) VALUES ($1, $2, $3, $4, 'текст', now() - make_interval(secs => $5))`,
    profileUuid, source, source === "automation" ? "automation.rule" : "learning.step.available", title, Math.random() * 100
  )

type Page = { items: Array<Notification>; nextCursor?: string }

describe("the notification inbox", () => {
  it("lists every source newest first in pages, filters by source and unread, and marks one read", async () => {
    const a = await m.profile()
    const b = await m.profile()
    for (let i = 0; i < 3; i++) await note(a.profileUuid, "automation", `a${i}`)
    for (let i = 0; i < 2; i++) await note(a.profileUuid, "learning", `l${i}`)
    await note(b.profileUuid, "automation", "чужое")
    const first = bodyOf<Page>(await m.invoke("learning.notifications.list", a, { urlParams: { limit: "3" } }))
    expect(first.items).toHaveLength(3)
    const rest = bodyOf<Page>(await m.invoke("learning.notifications.list", a, { urlParams: { limit: "3", cursor: first.nextCursor! } }))
    expect([rest.items.length, rest.nextCursor]).toEqual([2, undefined])
    const all = [...first.items, ...rest.items]
    expect(all.map((n) => n.createdAt.valueOf())).toEqual(all.map((n) => n.createdAt.valueOf()).sort((x, y) => y - x))
    expect(new Set(all.map((n) => n.title))).toEqual(new Set(["a0", "a1", "a2", "l0", "l1"]))
    const learning = bodyOf<Page>(await m.invoke("learning.notifications.list", a, { urlParams: { source: "learning" } }))
    expect(learning.items.map((n) => n.source)).toEqual(["learning", "learning"])
    const read = await m.invoke("learning.notifications.read", a, { path: { notification: all[0]!.uuid } })
    expect(bodyOf<Notification>(read).read).toBe(true)
    const again = bodyOf<Notification>(await m.invoke("learning.notifications.read", a, { path: { notification: all[0]!.uuid } }))
    expect(again.readAt).toEqual(bodyOf<Notification>(read).readAt)
    const unread = bodyOf<Page>(await m.invoke("learning.notifications.list", a, { urlParams: { unread: "true" } }))
    expect(unread.items.map((n) => n.uuid)).not.toContain(all[0]!.uuid)
    expect(unread.items).toHaveLength(4)
    expect(codeOf(await m.invoke("learning.notifications.read", b, { path: { notification: all[1]!.uuid } }))).toBe("not_found")
    expect(codeOf(await m.invoke("learning.notifications.read", a, { path: { notification: randomUUID() } }))).toBe("not_found")
    expect(codeOf(await m.invoke("learning.notifications.list", a, { urlParams: { source: "mail" } }))).toBe("invalid_request")
    expect(codeOf(await m.invoke("learning.notifications.list", a, { urlParams: { limit: "101" } }))).toBe("invalid_request")
  })

  it("preferences: revision 0 until the first save, replaced at expectedRevision, learning kinds only", async () => {
    const a = await m.profile()
    expect(bodyOf<NotificationPreferences>(await m.invoke("learning.notification_preferences.get", a))).toEqual({ revision: 0, kinds: {} })
    const put = (payload: unknown) => m.invoke("learning.notification_preferences.update", a, { payload })
    const kinds = { "learning.step.available": { inApp: true, email: false, digest: true } }
    const saved = bodyOf<NotificationPreferences>(await put({ expectedRevision: 0, kinds, quietHours: { from: "22:00", to: "07:30" } }))
    expect([saved.revision, saved.kinds, saved.quietHours]).toEqual([1, kinds, { from: "22:00", to: "07:30" }])
    expect(codeOf(await put({ expectedRevision: 0, kinds }))).toBe("revision_conflict")
    expect(codeOf(await put({ expectedRevision: 1, kinds: { "deal.started": { inApp: true, email: true, digest: true } } }))).toBe("invalid_request")
    expect(codeOf(await put({ expectedRevision: 1, kinds, quietHours: { from: "25:00", to: "07:00" } }))).toBe("invalid_request")
    expect(codeOf(await put({ expectedRevision: 1, kinds, other: 1 }))).toBe("invalid_request")
    const second = bodyOf<NotificationPreferences>(await put({ expectedRevision: 1, kinds: {} }))
    expect([second.revision, second.kinds, second.quietHours]).toEqual([2, {}, undefined])
    expect(bodyOf<NotificationPreferences>(await m.invoke("learning.notification_preferences.get", a)).revision).toBe(2)
  })
})
