import type { SessionActor } from "@birzha/domain"
import { deliverLearningNotifications, PostgresBlobStore, queueLearningNotifications } from "@birzha/domain/internal"
import { appendEvent } from "@birzha/domain/internal"
import { Duration, Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../../testing/progress.js"
import { command, enrollDirectly, publishedCourse, type TestCourse } from "../../../domain/test/learning.js"
import { bodyOf, type Marketplace, okBody as ok, openMarketplace } from "../../../domain/test/marketplace.js"
import { makeSequencerJob, sequencePending } from "../events/Sequencer.js"
import { cleanExpired } from "../Retention.js"
import { sequencerWakes } from "../WorkerHost.js"
import { WorkerJobs, WorkerLoop } from "../WorkerLoop.js"
import { makeLearningNotifierJob } from "./LearningJobs.js"

/**
 * The learning notifier on real Postgres, driven as the worker drives it: the
 * sequencer numbers the events, the notifier job queues and delivers them. Every assertion reads
 * the recipients' inboxes through `learning.notifications.list`.
 */

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learning_notifier")
  owner = await m.profile({ name: "Владелец" })
})
afterAll(async () => {
  await m?.close()
})

type Inbox = { items: Array<{ kind: string; source: string; eventUuid?: string; title: string; body: string; link?: string }> }

const sequence = () => m.runtime.runPromise(sequencePending(1000))
const runNotifier = () => m.runtime.runPromise(Effect.flatMap(makeLearningNotifierJob(), (job) => job.run))
/** The worker's round: events numbered, then the notifier until idle. */
const deliver = async () => {
  await sequence()
  await runNotifier()
}

const inbox = async (profile: SessionActor, kind?: string) => {
  const page = bodyOf<Inbox>(await m.invoke("learning.notifications.list", profile, { urlParams: { source: "learning", limit: "100" } }))
  return kind === undefined ? page.items : page.items.filter((item) => item.kind === kind)
}

/** A staff member that accepted its role; its assignment and revision, to revoke it later. */
const staffMember = async (c: TestCourse, role: string, scope: Record<string, string> = {}) => {
  const profile = await m.profile()
  const invited = ok<{ uuid: string }>(await m.invoke("learning.staff.assign", owner, {
    path: { course: c.uuid },
    payload: command({ profileUuid: profile.profileUuid, role, scope })
  }))
  const accepted = ok<{ uuid: string; revision: number }>(
    await m.invoke("learning.staff.accept", profile, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) })
  )
  return { profile, assignment: accepted.uuid, revision: accepted.revision }
}

const learnerOf = async (c: TestCourse) => {
  const profile = await m.profile()
  return { profile, enrollment: await enrollDirectly(m, c, profile) }
}

const openThread = async (learner: { profile: SessionActor; enrollment: string }) =>
  ok<{ uuid: string; revision: number }>(await m.invoke("learning.community.create", learner.profile, {
    path: { enrollment: learner.enrollment },
    payload: command({ title: "Вопрос", body: "Как сдать задание?", visibility: "private" })
  }))

const decisions = (eventType: string) =>
  m.sql<{ profile_uuid: string; status: string; email_wanted: boolean | null }>(
    "SELECT profile_uuid, status, email_wanted FROM learning_notification_queue WHERE event_type = $1 ORDER BY profile_uuid",
    eventType
  )

describe("the learning notifier", () => {
  it("gives every entitled recipient exactly one notification, none to the actor, and none again when run again or after a lost cursor", async () => {
    const c = await publishedCourse(m, owner)
    const assistant = await staffMember(c, "assistant", { runUuid: c.run })
    const analyst = await staffMember(c, "analyst")
    const learner = await learnerOf(c)
    const other = await learnerOf(c)
    const thread = await openThread(learner)
    await deliver()

    // The owner (course-wide community staff) and the run's assistant; not the learner who wrote it,
    // not the analyst (no community right), not another learner of the private thread.
    const created = "learning.community.created"
    for (const who of [owner, assistant.profile]) {
      const items = await inbox(who, created)
      expect(items.length).toBe(1)
      expect(items[0]).toMatchObject({ source: "learning", title: "A question or discussion thread was opened", body: "Курс команды: A question or discussion thread was opened", link: "learning.community.get" })
    }
    for (const who of [learner.profile, analyst.profile, other.profile]) expect(await inbox(who, created)).toEqual([])

    // The staff reply notifies the learner (and the owner), not the replying assistant.
    ok(await m.invoke("learning.community.reply", assistant.profile, { path: { thread: thread.uuid }, payload: command({ body: "Ответ" }) }))
    await deliver()
    expect((await inbox(learner.profile, "learning.community.replied")).length).toBe(1)
    expect((await inbox(owner, "learning.community.replied")).length).toBe(1)
    expect(await inbox(assistant.profile, "learning.community.replied")).toEqual([])

    // Again: nothing new. A worker killed after delivering but before its cursor moved — the
    // cursor set back and the queue rows pending again — writes nothing twice.
    const count = async () => (await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM notifications WHERE source = 'learning'"))[0]!.n
    const before = await count()
    await deliver()
    expect(await count()).toBe(before)
    await m.sql("UPDATE learning_notifier_cursor SET position = 0")
    await m.sql("UPDATE learning_notification_queue SET status = 'pending', due_at = now() - interval '1 second'")
    await deliver()
    expect(await count()).toBe(before)
    expect((await inbox(owner, created)).length).toBe(1)
    expect((await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_notification_queue WHERE status = 'pending'"))[0]!.n).toBe(0)
  })

  it("gives nothing to a staff member revoked between the event and its delivery", async () => {
    const c = await publishedCourse(m, owner)
    const assistant = await staffMember(c, "assistant")
    const kept = await staffMember(c, "assistant")
    const learner = await learnerOf(c)
    await openThread(learner)
    await sequence()
    // Queued while the assistant still held the role: its audience names it.
    await m.runtime.runPromise(queueLearningNotifications)
    expect((await decisions("learning.community.created")).map((d) => d.profile_uuid)).toContain(assistant.profile.profileUuid)
    ok(await m.invoke("learning.staff.revoke", owner, {
      path: { course: c.uuid },
      payload: command({ assignmentUuid: assistant.assignment, expectedRevision: assistant.revision, reason: "Ушёл" })
    }))
    await deliver()
    expect(await inbox(assistant.profile)).toEqual([])
    expect((await inbox(kept.profile, "learning.community.created")).length).toBe(1)
    const decided = await m.sql<{ status: string }>(
      "SELECT status FROM learning_notification_queue WHERE profile_uuid = $1",
      assistant.profile.profileUuid
    )
    expect(decided.map((d) => d.status)).toEqual(["no_right"])
  })

  it("notifies group-scoped staff of their group's learners only, and not once the learner left the group", async () => {
    const c = await publishedCourse(m, owner)
    const group = ok<{ uuid: string; revision: number }>(await m.invoke("learning.groups.create", owner, {
      path: { run: c.run },
      payload: command({ name: "Команда", kind: "team", visibility: "separate", assignment: "manual" })
    }))
    const tutor = await staffMember(c, "assistant", { groupUuid: group.uuid })
    const [inside, leaving, outside] = [await learnerOf(c), await learnerOf(c), await learnerOf(c)]
    ok(await m.invoke("learning.groups.members", owner, {
      path: { group: group.uuid },
      payload: command({ expectedRevision: group.revision, add: [inside.enrollment, leaving.enrollment], remove: [] })
    }))
    const a = await openThread(inside)
    await openThread(leaving)
    await openThread(outside)
    await sequence()
    await m.runtime.runPromise(queueLearningNotifications)
    // The learner leaves the group between the event and its delivery: the tutor's right to hear of it goes with them.
    ok(await m.invoke("learning.groups.members", owner, {
      path: { group: group.uuid },
      payload: command({ expectedRevision: group.revision, add: [], remove: [leaving.enrollment] })
    }))
    await deliver()
    const heard = await m.sql<{ aggregate_uuid: string }>(
      `SELECT e.aggregate_uuid FROM notifications n JOIN outbox_events e ON e.uuid = n.event_uuid
        WHERE n.profile_uuid = $1 AND n.source = 'learning'`,
      tutor.profile.profileUuid
    )
    expect(heard.map((row) => row.aggregate_uuid)).toEqual([a.uuid])
  })

  it("honours inApp off for the kind, records the email wish, and keeps other kinds on", async () => {
    const c = await publishedCourse(m, owner)
    const reviewer = await staffMember(c, "reviewer")
    ok(await m.invoke("learning.notification_preferences.update", reviewer.profile, {
      payload: { expectedRevision: 0, kinds: { "learning.community.created": { inApp: false, email: true, digest: false } } }
    }))
    const learner = await learnerOf(c)
    const thread = await openThread(learner)
    await deliver()
    expect(await inbox(reviewer.profile, "learning.community.created")).toEqual([])
    const mine = (await decisions("learning.community.created")).filter((d) => d.profile_uuid === reviewer.profile.profileUuid)
    expect(mine.map((d) => [d.status, d.email_wanted])).toEqual([["preference_off", true]])
    // A kind the preferences do not name stays in the inbox.
    ok(await m.invoke("learning.community.reply", learner.profile, { path: { thread: thread.uuid }, payload: command({ body: "Ещё вопрос" }) }))
    await deliver()
    expect((await inbox(reviewer.profile, "learning.community.replied")).length).toBe(1)
  })

  it("never gives the learner a staff-only event, nor anything once the learner left the course", async () => {
    const c = await publishedCourse(m, owner)
    const reviewer = await staffMember(c, "reviewer", { runUuid: c.run })
    const learner = await learnerOf(c)
    // learning.review.requested is staff-only; an audience naming the learner by mistake still reaches only the reviewer.
    const emit = (type: "learning.review.requested" | "learning.deadline.changed", audience: ReadonlyArray<string>) =>
      m.runtime.runPromise(appendEvent({
        type,
        aggregate: { kind: type === "learning.review.requested" ? "learning_review" : "learning_enrollment", uuid: learner.enrollment, revision: 1 },
        data: { objectUuid: learner.enrollment, status: type === "learning.review.requested" ? "requested" : "changed" },
        context: { audience, courseUuid: c.uuid, runUuid: c.run, enrollmentUuid: learner.enrollment }
      }))
    await emit("learning.review.requested", [learner.profile.profileUuid, reviewer.profile.profileUuid])
    await deliver()
    expect(await inbox(learner.profile)).toEqual([])
    expect((await inbox(reviewer.profile, "learning.review.requested")).length).toBe(1)

    // A deadline change reaches an enrolled learner; after the enrollment is withdrawn, it reaches nobody.
    await emit("learning.deadline.changed", [learner.profile.profileUuid])
    await deliver()
    expect((await inbox(learner.profile, "learning.deadline.changed")).length).toBe(1)
    await emit("learning.deadline.changed", [learner.profile.profileUuid])
    await sequence()
    await m.runtime.runPromise(queueLearningNotifications)
    await m.sql("UPDATE learning_enrollments SET status = 'withdrawn' WHERE uuid = $1", learner.enrollment)
    await runNotifier()
    expect((await inbox(learner.profile, "learning.deadline.changed")).length).toBe(1)
  })

  it("queues an audience entry only when it is a profile's uuid as text: another spelling or a stray value matches nobody and fails nothing", async () => {
    const c = await publishedCourse(m, owner)
    const learner = await learnerOf(c)
    const emit = (audience: ReadonlyArray<string>) =>
      m.runtime.runPromise(appendEvent({
        type: "learning.deadline.changed",
        aggregate: { kind: "learning_enrollment", uuid: learner.enrollment, revision: 1 },
        data: { objectUuid: learner.enrollment, status: "changed" },
        context: { audience, courseUuid: c.uuid, runUuid: c.run, enrollmentUuid: learner.enrollment }
      }))
    const stray = await emit([learner.profile.profileUuid.toUpperCase(), `{${learner.profile.profileUuid}}`, "not-a-uuid", "42", ""])
    const named = await emit(["not-a-uuid", learner.profile.profileUuid])
    await deliver()
    const queued = await m.sql<{ event_uuid: string }>(
      "SELECT event_uuid FROM learning_notification_queue WHERE event_uuid IN ($1, $2)",
      stray,
      named
    )
    expect(queued.map((row) => row.event_uuid)).toEqual([named])
    expect((await inbox(learner.profile, "learning.deadline.changed")).map((item) => item.eventUuid)).toEqual([named])
  })

  it("holds a notification through the recipient's quiet hours and delivers it at their end", async () => {
    const c = await publishedCourse(m, owner)
    const quiet = await staffMember(c, "assistant")
    ok(await m.invoke("learning.notification_preferences.update", quiet.profile, {
      payload: { expectedRevision: 0, kinds: {}, quietHours: { from: "22:00", to: "07:30" } }
    }))
    await openThread(await learnerOf(c))
    await sequence()
    await m.runtime.runPromise(queueLearningNotifications)
    const night = new Date("2030-01-01T23:15:00Z")
    await m.runtime.runPromise(deliverLearningNotifications(100, night))
    expect(await inbox(quiet.profile)).toEqual([])
    const [held] = await m.sql<{ status: string; due_at: Date }>(
      "SELECT status, due_at FROM learning_notification_queue WHERE profile_uuid = $1",
      quiet.profile.profileUuid
    )
    expect([held!.status, held!.due_at.toISOString()]).toEqual(["pending", "2030-01-02T07:30:00.000Z"])
    // Before the end it stays held; at the end it is delivered, once.
    expect(await m.runtime.runPromise(deliverLearningNotifications(100, new Date("2030-01-02T07:29:00Z")))).toBe(0)
    await m.runtime.runPromise(deliverLearningNotifications(100, new Date("2030-01-02T07:30:00Z")))
    expect((await inbox(quiet.profile, "learning.community.created")).length).toBe(1)
  })

  it("is woken by the sequencer: an hourly notifier delivers within moments of the event", async () => {
    const c = await publishedCourse(m, owner)
    const jobs = await m.runtime.runPromise(Effect.all([
      Effect.map(makeSequencerJob({ every: Duration.millis(20) }), (job) => ({ ...job, wakes: sequencerWakes })),
      makeLearningNotifierJob({ every: Duration.hours(1) })
    ]))
    const worker = m.runtime.runFork(Layer.launch(WorkerLoop.pipe(Layer.provide(Layer.succeed(WorkerJobs, jobs)))))
    try {
      // Both jobs ran once at start; the notifier's next tick is an hour away.
      await new Promise((resolve) => setTimeout(resolve, 300))
      await openThread(await learnerOf(c))
      // Well before the hourly tick: whatever the bound, it is the event that woke the notifier.
      const notified = await eventually(() => inbox(owner, "learning.community.created"), (items) => items.length >= 1, "the owner's notification")
      expect(notified.length).toBeGreaterThanOrEqual(1)
    } finally {
      await m.runtime.runPromise(Fiber.interrupt(worker))
    }
  })

  it("forgets decisions after 90 days and keeps pending rows", async () => {
    const c = await publishedCourse(m, owner)
    const quiet = await staffMember(c, "assistant")
    await openThread(await learnerOf(c))
    await sequence()
    await m.runtime.runPromise(queueLearningNotifications)
    await m.sql("UPDATE learning_notification_queue SET due_at = now() + interval '1 hour' WHERE profile_uuid = $1", quiet.profile.profileUuid)
    await runNotifier()
    const rows = async () => (await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_notification_queue"))[0]!.n
    const all = await rows()
    await m.sql("UPDATE learning_notification_queue SET decided_at = now() - interval '89 days' WHERE status <> 'pending'")
    await m.runtime.runPromise(Effect.provide(cleanExpired, PostgresBlobStore))
    expect(await rows()).toBe(all)
    await m.sql("UPDATE learning_notification_queue SET decided_at = now() - interval '91 days' WHERE status <> 'pending'")
    const removed = await m.runtime.runPromise(Effect.provide(cleanExpired, PostgresBlobStore))
    expect(removed["notifierDecisions"]).toBe(all - 1)
    expect(await m.sql("SELECT status FROM learning_notification_queue")).toEqual([{ status: "pending" }])
  })
})
