import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { command, ok, only, refused, step } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { loadEnrollment } from "../enrollments/EnrollmentRepository.js"
import { appendScoreLayer, effectiveScore, revokeScoreLayer } from "../grading/Layers.js"
import type { CourseAuthor, CourseNode, Run } from "../courses/Model.js"
import { announceOverdueReviews, type AssignmentActor, assignmentAllows, assignmentTransitions, type AssignmentTrigger } from "./ReviewAssignments.js"
import type { AutomaticOverride, ReviewAssignment, ReviewWorkspace } from "./ReviewModel.js"
import { advanceRuns } from "../courses/Runs.js"
import { eventually } from "../../../../../testing/progress.js"
import type { Submission } from "../steps/StepModel.js"
import { claimGradeJobs, finishGradeJob } from "../steps/Submissions.js"
import { loadSubmission } from "../steps/SubmissionViews.js"

/**
 * Reviews, score layers and automatic overrides (learning L3, 4 and 6) through
 * `Operations.invoke` on real Postgres: the staff review path with moderated and manual release,
 * peer review with pseudonyms and conflict of interest, a revoked reviewer's claims returning to
 * the pool, overdue detection, the layer sequence review → override → revoke with its audit log,
 * the freeze, candidates, and the assignment state machine generated from its table × roles.
 */

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learning_reviews")
  owner = await m.profile({ name: "Автор" })
})
afterAll(async () => {
  await m?.close()
})

const day = 86_400_000

const tree = (checkerUuid: string): ReadonlyArray<CourseNode> => [
  { nodeKey: "m1", kind: "module", title: "Модуль" },
  // A staff review, published by hand.
  step("essay", "m1", { stepType: "assignment", grading: { maxPoints: 10, passThreshold: 6, review: { mode: "staff", release: "manual" } } }),
  // A checked reply that a person reviews as well: the automatic layer comes first.
  step("checked", "m1", {
    stepType: "quiz",
    grading: { maxPoints: 10, passThreshold: 6, check: { kind: "exact", answers: ["42"] }, review: { mode: "staff" } }
  }),
  step("peer", "m1", { stepType: "assignment", grading: { maxPoints: 10, passThreshold: 5, review: { mode: "peer", count: 1 } } }),
  step("moderated", "m1", { stepType: "assignment", grading: { maxPoints: 10, passThreshold: 5, review: { mode: "staff", moderated: true } } }),
  step("self", "m1", { stepType: "assignment", grading: { maxPoints: 10, passThreshold: 5, review: { mode: "self" } } }),
  step("quiz", "m1", { stepType: "quiz", grading: { maxPoints: 10, passThreshold: 10, check: { kind: "exact", answers: ["42"] } } }),
  step("code", "m1", { stepType: "code", grading: { maxPoints: 10, checkerUuid } })
].map((node) => JSON.parse(JSON.stringify(node)))

/** A published course with staff reviewers and a running open cohort run. */
const setup = async () => {
  const draft = ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: command({ title: "Курс рецензий", kind: "single" }) }))
  const checkerUuid = randomUUID()
  await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, url, status, timeout_ms)
    VALUES ($1, $2, $1, 'http', 'https://grader.example/check', 'ready', 10000)`, checkerUuid, draft.uuid)
  const edited = ok<CourseAuthor>(await m.invoke("learning.courses.update", owner, {
    path: { course: draft.uuid },
    payload: command({ expectedRevision: draft.revision, nodes: tree(checkerUuid) })
  }))
  ok(await m.invoke("learning.courses.publish", owner, { path: { course: draft.uuid }, payload: command({ expectedRevision: edited.revision, changelog: "" }) }))
  const run = ok<Run>(await m.invoke("learning.runs.create", owner, {
    path: { course: draft.uuid },
    payload: command({
      versionNumber: 1,
      title: "Поток",
      pacing: "cohort",
      startsAt: new Date(Date.now() - day).toISOString(),
      admission: "open",
      waitlist: false,
      enrollmentWindow: {},
      pausePolicy: { maxDays: 14, maxCount: 2 }
    })
  }))
  ok(await m.invoke("learning.runs.update", owner, { path: { run: run.uuid }, payload: command({ expectedRevision: run.revision, publish: true }) }))
  await m.runtime.runPromise(advanceRuns(new Date()))
  return { courseUuid: draft.uuid, runUuid: run.uuid, checkerUuid }
}

/** A profile with an active staff role on the course (assigned by the owner, accepted). */
const staffMember = async (courseUuid: string, role: "reviewer" | "instructor" | "assistant", name = "Рецензент") => {
  const profile = await m.profile({ name })
  const assigned = ok<{ uuid: string }>(await m.invoke("learning.staff.assign", owner, {
    path: { course: courseUuid },
    payload: command({ profileUuid: profile.profileUuid, role, scope: {} })
  }))
  const active = ok<{ uuid: string; revision: number }>(await m.invoke("learning.staff.accept", profile, {
    path: { assignment: assigned.uuid },
    payload: command({ expectedRevision: 1 })
  }))
  return { profile, assignment: active }
}

const learnerIn = async (runUuid: string, name = "Ученик") => {
  const learner = await m.profile({ name })
  const enrollment = ok<{ uuid: string; revision: number }>(await m.invoke("learning.enrollments.enroll", learner, { path: { run: runUuid }, payload: command() }))
  const started = ok<{ uuid: string }>(await m.invoke("learning.enrollments.start", learner, {
    path: { enrollment: enrollment.uuid },
    payload: command({ expectedRevision: enrollment.revision })
  }))
  return { learner, enrollment: started.uuid }
}

const submit = (learner: SessionActor, enrollment: string, node: string, reply: unknown) =>
  m.invoke("learning.submissions.create", learner, { path: { enrollment, node }, payload: command({ reply }) })

const assignmentsOf = (actor: SessionActor, submission: string) => m.call("learning.reviews.assignment", actor, { path: { submission } })

/** The outbox events of one aggregate, in order (same transaction: by type). */
const events = (uuid: string) =>
  m.sql<{ type: string; data: unknown }>("SELECT type, data FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY occurred_at, type", uuid)

const revisionOf = async (assignment: string) =>
  only(await m.sql<{ revision: number }>("SELECT revision FROM learning_review_assignments WHERE uuid = $1", assignment)).revision

const audit = async (submission: string) =>
  (await m.sql<{ action: string; before: { points: number; kind: string } | null; after: { points: number; kind: string; changedLayerKind: string } }>(
    "SELECT action, before, after FROM learning_audit_events WHERE subject_uuid = $1 ORDER BY created_at, uuid",
    submission
  )).map((row) => [row.action, row.before?.points ?? null, row.before?.kind ?? null, row.after.points, row.after.kind])

describe("staff review: claim, draft, decide, release", () => {
  it("pools a submission needing review, lets one reviewer claim it, keeps the decision from the learner until release", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const second = await staffMember(course.courseUuid, "reviewer", "Второй")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "essay", "Моё эссе"))
    expect(submission.status).toBe("awaiting_review")
    const pooled = only(await assignmentsOf(owner, submission.uuid))
    expect([pooled.status, pooled.kind, pooled.learnerProfileUuid]).toEqual(["pooled", "staff", learner.profileUuid])
    expect((await events(pooled.uuid)).map((event) => event.type)).toEqual(["learning.review.requested"])
    // The learner sees the status of the assignment, nothing else.
    expect(await assignmentsOf(learner, submission.uuid)).toEqual([{ uuid: pooled.uuid, submissionUuid: submission.uuid, kind: "staff", status: "pooled" }])

    const claimed = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: submission.uuid }, payload: command() })
    expect([claimed.status, claimed.reviewerProfileUuid, claimed.dueAt !== undefined]).toEqual(["claimed", reviewer.profile.profileUuid, true])
    expect(refused(await m.invoke("learning.reviews.claim", second.profile, { path: { submission: submission.uuid }, payload: command() })))
      .toEqual([409, "already_claimed"])
    // The learner cannot claim their own work.
    expect(refused(await m.invoke("learning.reviews.claim", learner, { path: { submission: submission.uuid }, payload: command() })))
      .toEqual([403, "conflict_of_interest"])

    // Draft: first save without a revision, then with it; a stale one is refused.
    const draft = ok<{ revision: number }>(await m.invoke("learning.reviews.draft", reviewer.profile, {
      path: { submission: submission.uuid },
      payload: command({ rubric: [{ criterion: "Ясность", points: 4 }], comment: "Черновик" })
    }))
    expect(draft.revision).toBe(1)
    expect(refused(await m.invoke("learning.reviews.draft", reviewer.profile, {
      path: { submission: submission.uuid },
      payload: command({ rubric: [], comment: "старый" })
    }))).toEqual([409, "revision_conflict"])
    expect(refused(await m.invoke("learning.reviews.draft", second.profile, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: 1, rubric: [], comment: "не мой" })
    }))).toEqual([403, "forbidden"])
    const workspace = await m.call("learning.reviews.workspace", reviewer.profile, { path: { submission: submission.uuid } })
    expect([workspace.submission.reply, workspace.step.nodeKey, workspace.draft?.comment, workspace.learner.profileUuid])
      .toEqual(["Моё эссе", "essay", "Черновик", learner.profileUuid])

    // Bounds: an accepted review carries at least the pass threshold; at most the step's points.
    const decide = (points: number, outcome = "accept") =>
      m.invoke("learning.reviews.decide", reviewer.profile, {
        path: { submission: submission.uuid },
        payload: command({ expectedRevision: claimed.revision!, outcome, points, rubric: [{ criterion: "Ясность", points }], comment: "Хорошо" })
      })
    expect(refused(await decide(11))).toEqual([400, "invalid_request"])
    expect(refused(await decide(5))).toEqual([400, "invalid_request"])
    const decided = ok<{ status: string; final: boolean; points: number }>(await decide(8))
    expect([decided.status, decided.final, decided.points]).toEqual(["decided", true, 8])
    // Unreleased: the learner sees no score and no layer; no graded event yet.
    const hidden = await m.call("learning.submissions.get", learner, { path: { submission: submission.uuid } })
    expect([hidden.status, hidden.score, hidden.layers]).toEqual(["awaiting_review", undefined, []])
    expect(JSON.stringify(await m.invoke("learning.reviews.assignment", learner, { path: { submission: submission.uuid } }))).not.toContain("Хорошо")

    const listed = ok<{ items: Array<{ status: string; points: number }> }>(await m.invoke("learning.reviews.list", owner, { path: { course: course.courseUuid } }))
    expect(listed.items.map((review) => [review.status, review.points])).toEqual([["decided", 8]])
    // A reviewer lists their own reviews only.
    expect(ok<{ items: Array<unknown> }>(await m.invoke("learning.reviews.list", second.profile, { path: { course: course.courseUuid } })).items).toEqual([])

    // Release: an assistant may not; a reviewer (grades_release) may.
    const assistant = await staffMember(course.courseUuid, "assistant", "Ассистент")
    const assignmentRevision = await revisionOf(claimed.uuid)
    expect(refused(await m.invoke("learning.reviews.release", assistant.profile, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: assignmentRevision })
    }))).toEqual([403, "forbidden"])
    const released = ok<Submission>(await m.invoke("learning.reviews.release", reviewer.profile, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: assignmentRevision })
    }))
    expect([released.status, released.score?.points, released.score?.passed, released.layers.map((layer) => layer.kind)])
      .toEqual(["accepted", 8, true, ["review"]])
    const seen = await m.call("learning.submissions.get", learner, { path: { submission: submission.uuid } })
    expect([seen.score?.points, seen.score?.feedback]).toEqual([8, "Хорошо"])
    expect((await events(submission.uuid)).map((event) => event.type)).toEqual(["learning.submission.accepted", "learning.submission.graded"])
    expect((await assignmentsOf(owner, submission.uuid)).map((a) => a.status)).toEqual(["released"])
  })

  it("moderated grading: the reviewer's decision is provisional; the instructor's final one is released", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const instructor = await staffMember(course.courseUuid, "instructor", "Преподаватель")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "moderated", "Работа"))
    const claimed = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: submission.uuid }, payload: command() })
    const body = (extra: Record<string, unknown>) => command({ expectedRevision: claimed.revision!, outcome: "revise", points: 3, rubric: [], comment: "Доработать", ...extra })
    expect(refused(await m.invoke("learning.reviews.decide", reviewer.profile, { path: { submission: submission.uuid }, payload: body({ final: true }) })))
      .toEqual([403, "forbidden"])
    const provisional = ok<{ final: boolean; status: string; revision: number }>(
      await m.invoke("learning.reviews.decide", reviewer.profile, { path: { submission: submission.uuid }, payload: body({}) })
    )
    expect([provisional.final, provisional.status]).toEqual([false, "decided"])
    expect(refused(await m.invoke("learning.reviews.release", owner, { path: { submission: submission.uuid }, payload: command({ expectedRevision: provisional.revision }) })))
      .toEqual([409, "invalid_state"])
    const final = ok<{ final: boolean; status: string }>(await m.invoke("learning.reviews.decide", instructor.profile, {
      path: { submission: submission.uuid },
      payload: body({ expectedRevision: provisional.revision, final: true })
    }))
    // Released at once (the node's release is auto): the learner is asked for a revision.
    expect([final.final, final.status]).toEqual([true, "released"])
    const seen = await m.call("learning.submissions.get", learner, { path: { submission: submission.uuid } })
    expect([seen.status, seen.score?.points, seen.score?.verdict]).toEqual(["revision_requested", 3, "revision_requested"])
    expect((await events(submission.uuid)).map((event) => event.type)).toEqual(["learning.revision.requested", "learning.submission.graded"])
  })

  it("reassigns to another reviewer or the pool (history kept, review requested), and reports an issue that pauses the due clock", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const second = await staffMember(course.courseUuid, "reviewer", "Второй")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "essay", "Текст"))
    const claimed = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: submission.uuid }, payload: command() })
    // The holder may only give it back to the pool.
    expect(refused(await m.invoke("learning.reviews.reassign", reviewer.profile, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision, toProfileUuid: second.profile.profileUuid, reason: "занят" })
    }))).toEqual([403, "forbidden"])
    // Never to the learner themself; never both or neither target.
    expect(refused(await m.invoke("learning.reviews.reassign", owner, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision, toProfileUuid: learner.profileUuid, reason: "x" })
    }))).toEqual([403, "conflict_of_interest"])
    expect(refused(await m.invoke("learning.reviews.reassign", owner, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision, reason: "x" })
    }))).toEqual([400, "invalid_request"])
    const moved = ok<ReviewAssignment>(await m.invoke("learning.reviews.reassign", owner, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision, toProfileUuid: second.profile.profileUuid, reason: "нагрузка" })
    }))
    expect([moved.status, moved.reviewerProfileUuid, moved.history?.map((entry) => entry.action)])
      .toEqual(["claimed", second.profile.profileUuid, ["request", "claim", "reassign"]])
    const flagged = ok<ReviewAssignment>(await m.invoke("learning.reviews.report_issue", second.profile, {
      path: { submission: submission.uuid },
      payload: command({ kind: "unreadable", note: "Файл не открывается" })
    }))
    expect(flagged.issue?.kind).toBe("unreadable")
    const notified = await m.sql<{ kind: string }>("SELECT kind FROM notifications WHERE profile_uuid = $1", owner.profileUuid)
    expect(notified.map((row) => row.kind)).toContain("review.issue")
    // Past due with an issue: not overdue (the clock is paused).
    await m.sql("UPDATE learning_review_assignments SET due_at = now() - interval '1 hour' WHERE uuid = $1", claimed.uuid)
    const queue = (status: string) =>
      m.invoke("learning.reviews.assignment_list", owner, { path: { course: course.courseUuid }, urlParams: { status } })
    expect(ok<{ items: Array<{ uuid: string }> }>(await queue("overdue")).items).toEqual([])
    expect(ok<{ items: Array<{ uuid: string }> }>(await queue("issue")).items.map((a) => a.uuid)).toEqual([claimed.uuid])
    const pooled = ok<ReviewAssignment>(await m.invoke("learning.reviews.reassign", second.profile, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: flagged.revision, pool: true, reason: "не могу" })
    }))
    expect([pooled.status, pooled.reviewerProfileUuid, pooled.issue]).toEqual(["pooled", undefined, undefined])
    expect((await events(claimed.uuid)).map((event) => event.type)).toEqual(Array(3).fill("learning.review.requested"))
  })

  it("announces an overdue claim once per due time (worker), and lists it as overdue", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "essay", "Текст"))
    const claimed = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: submission.uuid }, payload: command() })
    const announce = () => m.runtime.runPromise(announceOverdueReviews(new Date()))
    await announce()
    expect((await events(claimed.uuid)).map((event) => event.type)).not.toContain("learning.review.overdue")
    await m.sql("UPDATE learning_review_assignments SET due_at = now() - interval '1 minute' WHERE uuid = $1", claimed.uuid)
    expect(await announce()).toBeGreaterThanOrEqual(1)
    await announce()
    const overdue = (await events(claimed.uuid)).filter((event) => event.type === "learning.review.overdue")
    expect(overdue.map((event) => event.data)).toEqual([{ objectUuid: claimed.uuid, status: "overdue" }])
    const listed = ok<{ items: Array<ReviewAssignment> }>(await m.invoke("learning.reviews.assignment_list", reviewer.profile, {
      path: { course: course.courseUuid },
      urlParams: { status: "overdue", mine: "true" }
    }))
    expect(listed.items.map((a) => [a.uuid, a.overdue])).toEqual([[claimed.uuid, true]])
  })

  it("a release while the learner's command holds the enrollment and then the submission: the enrollment first for both, no deadlock", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "essay", "Эссе"))
    const claimed = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: submission.uuid }, payload: command() })
    ok(await m.invoke("learning.reviews.decide", reviewer.profile, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision!, outcome: "accept", points: 8, rubric: [{ criterion: "Ясность", points: 8 }], comment: "Хорошо" })
    }))
    const assignmentRevision = await revisionOf(claimed.uuid)
    const waiting = async () =>
      only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).n
    const outcome = await m.runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const held = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      // The learner's command (a cancel's order): the enrollment, then (after the release started) the submission.
      const learnerSide = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* loadEnrollment(enrollment, { lock: true })
        yield* Deferred.succeed(held, undefined)
        yield* Deferred.await(go)
        return yield* loadSubmission(submission.uuid, { lock: true })
      })))
      yield* Deferred.await(held)
      const release = yield* Effect.fork(Effect.promise(() =>
        m.invoke("learning.reviews.release", reviewer.profile, { path: { submission: submission.uuid }, payload: command({ expectedRevision: assignmentRevision }) })))
      yield* Effect.promise(() => eventually(waiting, (n) => n >= 1, "the release waiting for the learner", { everyMs: 20 }))
      yield* Deferred.succeed(go, undefined)
      return { learner: yield* Fiber.await(learnerSide), release: yield* Fiber.join(release) }
    }))
    // Before, the release held the submission and waited for the enrollment (completion): Postgres broke the cycle (503).
    expect(Exit.isSuccess(outcome.learner)).toBe(true)
    const released = ok<Submission>(outcome.release)
    expect([released.status, released.score?.points]).toEqual(["accepted", 8])
  })
})

describe("group-scoped review staff", () => {
  it("a group-scoped reviewer's queue and reviews, and a group-scoped instructor's reviews, hold the group's learners only", async () => {
    const course = await setup()
    const inside = await learnerIn(course.runUuid, "В группе")
    const outside = await learnerIn(course.runUuid, "Вне группы")
    const group = ok<{ uuid: string; revision: number }>(await m.invoke("learning.groups.create", owner, {
      path: { run: course.runUuid },
      payload: command({ name: "Секция 1", kind: "section", visibility: "separate", assignment: "manual" })
    }))
    ok(await m.invoke("learning.groups.members", owner, {
      path: { group: group.uuid },
      payload: command({ expectedRevision: group.revision, add: [inside.enrollment], remove: [] })
    }))
    const scoped = async (role: "reviewer" | "instructor", name: string) => {
      const profile = await m.profile({ name })
      const assigned = ok<{ uuid: string }>(await m.invoke("learning.staff.assign", owner, {
        path: { course: course.courseUuid },
        payload: command({ profileUuid: profile.profileUuid, role, scope: { groupUuid: group.uuid } })
      }))
      ok(await m.invoke("learning.staff.accept", profile, { path: { assignment: assigned.uuid }, payload: command({ expectedRevision: 1 }) }))
      return profile
    }
    const reviewer = await scoped("reviewer", "Рецензент секции")
    const instructor = await scoped("instructor", "Преподаватель секции")
    const mine = ok<Submission>(await submit(inside.learner, inside.enrollment, "essay", "Эссе из группы"))
    const theirs = ok<Submission>(await submit(outside.learner, outside.enrollment, "essay", "Эссе не из группы"))
    const queue = async (actor: SessionActor) =>
      ok<{ items: Array<ReviewAssignment> }>(await m.invoke("learning.reviews.assignment_list", actor, { path: { course: course.courseUuid } }))
        .items.map((a) => a.submissionUuid)
    expect(await queue(reviewer)).toEqual([mine.uuid])
    expect((await queue(owner)).sort()).toEqual([mine.uuid, theirs.uuid].sort())
    // Decided reviews: the reviewer sees its own; the group's instructor every review of the group's learners.
    const claimed = await m.call("learning.reviews.claim", reviewer, { path: { submission: mine.uuid }, payload: command() })
    ok(await m.invoke("learning.reviews.decide", reviewer, {
      path: { submission: mine.uuid },
      payload: command({ expectedRevision: claimed.revision, outcome: "accept", points: 8, rubric: [{ criterion: "Ясность", points: 8 }], comment: "Хорошо" })
    }))
    // Another learner's submission is not the group reviewer's to see.
    expect(refused(await m.invoke("learning.reviews.claim", reviewer, { path: { submission: theirs.uuid }, payload: command() }))).toEqual([404, "not_found"])
    const other = await m.call("learning.reviews.claim", owner, { path: { submission: theirs.uuid }, payload: command() })
    ok(await m.invoke("learning.reviews.decide", owner, {
      path: { submission: theirs.uuid },
      payload: command({ expectedRevision: other.revision, outcome: "accept", points: 7, rubric: [{ criterion: "Ясность", points: 7 }], comment: "Неплохо" })
    }))
    const reviews = async (actor: SessionActor) =>
      ok<{ items: Array<{ submissionUuid: string }> }>(await m.invoke("learning.reviews.list", actor, { path: { course: course.courseUuid } }))
        .items.map((r) => r.submissionUuid)
    expect(await reviews(reviewer)).toEqual([mine.uuid])
    expect(await reviews(instructor)).toEqual([mine.uuid])
    expect((await reviews(owner)).sort()).toEqual([mine.uuid, theirs.uuid].sort())
  })
})

describe("peer review", () => {
  it("shows pseudonyms only; a learner cannot claim their own submission; peers review once they submitted", async () => {
    const course = await setup()
    const author = await learnerIn(course.runUuid, "Автор работы")
    const peer = await learnerIn(course.runUuid, "Сокурсник")
    const submission = ok<Submission>(await submit(author.learner, author.enrollment, "peer", "Решение автора"))
    expect(refused(await m.invoke("learning.reviews.claim", author.learner, { path: { submission: submission.uuid }, payload: command() })))
      .toEqual([403, "conflict_of_interest"])
    expect(refused(await m.invoke("learning.reviews.claim", peer.learner, { path: { submission: submission.uuid }, payload: command() })))
      .toEqual([409, "not_eligible"])
    ok(await submit(peer.learner, peer.enrollment, "peer", "Решение сокурсника"))
    // The peer's queue: the author's pooled assignment, pseudonymized; never their own.
    const queue = ok<{ items: Array<ReviewAssignment> }>(await m.invoke("learning.reviews.assignment_list", peer.learner, { path: { course: course.courseUuid } }))
    expect(queue.items.map((a) => a.submissionUuid)).toEqual([submission.uuid])
    const claimed = await m.call("learning.reviews.claim", peer.learner, { path: { submission: submission.uuid }, payload: command() })
    expect([claimed.kind, claimed.status, claimed.learnerProfileUuid, claimed.pseudonym?.startsWith("learner-")]).toEqual(["peer", "claimed", undefined, true])
    const workspace = await m.invoke("learning.reviews.workspace", peer.learner, { path: { submission: submission.uuid } })
    const body = ok<ReviewWorkspace>(workspace)
    expect([body.learner, body.submission.reply]).toEqual([{ pseudonym: claimed.pseudonym }, "Решение автора"])
    // Nothing the peer reads names the author.
    for (const answer of [workspace, await m.invoke("learning.reviews.assignment", peer.learner, { path: { submission: submission.uuid } })]) {
      const text = JSON.stringify(answer.body)
      expect(text).not.toContain(author.learner.profileUuid)
      expect(text).not.toContain(author.enrollment)
      expect(text).not.toContain("Автор работы")
    }
    // A peer's decision is provisional: final is refused; the submission stays with the learner unchanged.
    expect(refused(await m.invoke("learning.reviews.decide", peer.learner, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision, outcome: "accept", points: 9, rubric: [], comment: "ok", final: true })
    }))).toEqual([403, "forbidden"])
    const provisional = ok<{ final: boolean }>(await m.invoke("learning.reviews.decide", peer.learner, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision, outcome: "accept", points: 9, rubric: [], comment: "ok" })
    }))
    expect(provisional.final).toBe(false)
    expect(ok<Submission>(await m.invoke("learning.submissions.get", author.learner, { path: { submission: submission.uuid } })).score).toBeUndefined()
    // A stranger to the run does not learn the submission exists.
    const stranger = await m.profile()
    expect(refused(await m.invoke("learning.reviews.claim", stranger, { path: { submission: submission.uuid }, payload: command() }))).toEqual([404, "not_found"])
  })
})

describe("self review and bounds", () => {
  it("gives a self review to its learner (provisional only); refuses a rubric over 50 items and unknown query fields", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "self", "Самооценка"))
    const own = only(await assignmentsOf(owner, submission.uuid))
    expect([own.kind, own.status, own.reviewerProfileUuid]).toEqual(["self", "claimed", learner.profileUuid])
    const rubric = (n: number) => Array.from({ length: n }, (_, i) => ({ criterion: `Критерий ${i + 1}`, points: 0 }))
    expect(refused(await m.invoke("learning.reviews.draft", learner, { path: { submission: submission.uuid }, payload: command({ rubric: rubric(51), comment: "" }) })))
      .toEqual([400, "invalid_request"])
    expect(ok<{ revision: number }>(await m.invoke("learning.reviews.draft", learner, {
      path: { submission: submission.uuid },
      payload: command({ rubric: rubric(50), comment: "" })
    })).revision).toBe(1)
    const decide = (extra: Record<string, unknown>) =>
      m.invoke("learning.reviews.decide", learner, {
        path: { submission: submission.uuid },
        payload: command({ expectedRevision: own.revision, outcome: "accept", points: 6, rubric: [], comment: "Я справился", ...extra })
      })
    expect(refused(await decide({ final: true }))).toEqual([403, "forbidden"])
    expect(ok<{ final: boolean; status: string }>(await decide({}))).toMatchObject({ final: false, status: "decided" })
    // The learner releases nothing (no grades_release), and sees no score.
    expect(refused(await m.invoke("learning.reviews.release", learner, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: own.revision! + 1 })
    }))).toEqual([403, "conflict_of_interest"])
    expect(ok<Submission>(await m.invoke("learning.submissions.get", learner, { path: { submission: submission.uuid } })).score).toBeUndefined()
    const unknown = await m.invoke("learning.reviews.assignment_list", owner, { path: { course: course.courseUuid }, urlParams: { sort: "x" } })
    expect(refused(unknown)).toEqual([400, "invalid_request"])
    expect(JSON.stringify(unknown.body)).toContain("sort")
  })
})

describe("Layers.ts (the contract other L3 parts write through)", () => {
  it("applies only-if-higher layers as a maximum, hides unreleased layers from the learner, never revokes the first layer", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "quiz", "41"))
    const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => m.runtime.runPromise(effect)
    const append = (extra: Partial<Parameters<typeof appendScoreLayer>[0]>) =>
      run(appendScoreLayer({ submissionUuid: submission.uuid, kind: "regrade", points: 0, verdict: "wrong", reason: "test", byProfileUuid: owner.profileUuid, ...extra }))
    const staffView = () => run(effectiveScore(submission.uuid))
    const learnerView = () => run(effectiveScore(submission.uuid, { learner: true }))
    expect(await staffView()).toMatchObject({ kind: "auto", points: 0 })
    const higher = await append({ points: 6, verdict: "partial", onlyIfHigher: true })
    expect(await staffView()).toMatchObject({ kind: "regrade", points: 6 })
    // Lower than the layer below: an only-if-higher layer does not count.
    await append({ points: 3, verdict: "partial", onlyIfHigher: true })
    expect(await staffView()).toMatchObject({ kind: "regrade", points: 6 })
    // An unreleased layer: staff see it, the learner does not (and no event is emitted for it).
    const graded = async () => (await events(submission.uuid)).filter((event) => event.type === "learning.submission.graded").length
    const before = await graded()
    await append({ kind: "plan", points: 9, verdict: "partial", released: false })
    expect([await staffView(), await learnerView()]).toMatchObject([{ kind: "plan", points: 9 }, { kind: "regrade", points: 6 }])
    expect(await graded()).toBe(before)
    await expect(append({ points: 11 })).rejects.toThrow(/between 0/)
    const first = only(await m.sql<{ uuid: string }>("SELECT uuid FROM learning_score_layers WHERE submission_uuid = $1 AND kind = 'auto'", submission.uuid))
    await expect(run(revokeScoreLayer(first.uuid, { byProfileUuid: owner.profileUuid, reason: "x" }))).rejects.toThrow(/never revoked/)
    await run(revokeScoreLayer(higher.layer.uuid, { byProfileUuid: owner.profileUuid, reason: "x" }))
    expect(await learnerView()).toMatchObject({ kind: "regrade", points: 3 })
  })
})

describe("staff revocation", () => {
  it("returns a revoked reviewer's claimed submissions to the pool", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const first = ok<Submission>(await submit(learner, enrollment, "essay", "Первая"))
    const second = ok<Submission>(await submit(learner, enrollment, "essay", "Вторая"))
    const a = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: first.uuid }, payload: command() })
    const b = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: second.uuid }, payload: command() })
    ok(await m.invoke("learning.staff.revoke", owner, {
      path: { course: course.courseUuid },
      payload: command({ assignmentUuid: reviewer.assignment.uuid, expectedRevision: reviewer.assignment.revision, reason: "уходит" })
    }))
    for (const [assignment, submission] of [[a, first], [b, second]] as const) {
      const row = only(await assignmentsOf(owner, submission.uuid))
      expect([row.uuid, row.status, row.reviewerProfileUuid, row.history?.at(-1)?.action]).toEqual([assignment.uuid, "pooled", undefined, "returned_to_pool"])
      expect((await events(assignment.uuid)).map((event) => event.type)).toEqual(["learning.review.requested", "learning.review.requested"])
    }
    // The revoked reviewer no longer reaches them; another reviewer claims from the pool.
    expect(refused(await m.invoke("learning.reviews.claim", reviewer.profile, { path: { submission: first.uuid }, payload: command() }))).toEqual([404, "not_found"])
    const other = await staffMember(course.courseUuid, "reviewer", "Новый")
    expect(ok<ReviewAssignment>(await m.invoke("learning.reviews.claim", other.profile, { path: { submission: first.uuid }, payload: command() })).status).toBe("claimed")
  })
})

describe("score layers and automatic overrides", () => {
  it("review, then override, then revoking the override: effective score and audit log right at each step, the first layer unchanged", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const submission = ok<Submission>(await submit(learner, enrollment, "checked", "41"))
    expect([submission.status, submission.layers.map((layer) => [layer.kind, layer.points])]).toEqual(["awaiting_review", [["auto", 0]]])
    const first = only(await m.sql<Record<string, unknown>>("SELECT * FROM learning_score_layers WHERE submission_uuid = $1 AND kind = 'auto'", submission.uuid))
    const effective = () => m.runtime.runPromise(effectiveScore(submission.uuid))

    // 1. The review (released at once): 7 points over the automatic 0.
    const claimed = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: submission.uuid }, payload: command() })
    ok(await m.invoke("learning.reviews.decide", reviewer.profile, {
      path: { submission: submission.uuid },
      payload: command({ expectedRevision: claimed.revision, outcome: "accept", points: 7, rubric: [], comment: "Верно по сути" })
    }))
    expect([(await effective())?.kind, (await effective())?.points]).toEqual(["review", 7])
    expect(await audit(submission.uuid)).toEqual([["score.review", 0, "auto", 7, "review"]])

    // 2. A reviewer may not override; the owner overrides to 10.
    expect(refused(await m.invoke("learning.automatic_overrides.create", reviewer.profile, {
      path: { submission: submission.uuid },
      payload: command({ points: 10, reason: "x" })
    }))).toEqual([403, "forbidden"])
    expect(refused(await m.invoke("learning.automatic_overrides.create", owner, {
      path: { submission: submission.uuid },
      payload: command({ reason: "ни баллов, ни вердикта" })
    }))).toEqual([400, "invalid_request"])
    const override = ok<AutomaticOverride>(await m.invoke("learning.automatic_overrides.create", owner, {
      path: { submission: submission.uuid },
      payload: command({ points: 10, reason: "Ответ 41 тоже верен по условию" })
    }))
    expect([override.status, override.points, override.verdict]).toEqual(["active", 10, "accepted"])
    expect([(await effective())?.kind, (await effective())?.points]).toEqual(["override", 10])
    const seen = await m.call("learning.submissions.get", learner, { path: { submission: submission.uuid } })
    expect([seen.score?.points, seen.layers.map((layer) => layer.kind)]).toEqual([10, ["auto", "review", "override"]])
    // The learner sees the active override and its reason, not who made it.
    const mine = ok<Array<AutomaticOverride>>(await m.invoke("learning.automatic_overrides.list", learner, { path: { submission: submission.uuid } }))
    expect(mine.map((o) => [o.reason, o.createdBy, o.layerUuid])).toEqual([["Ответ 41 тоже верен по условию", undefined, undefined]])
    expect(await audit(submission.uuid)).toEqual([["score.review", 0, "auto", 7, "review"], ["score.override", 7, "review", 10, "override"]])

    // 3. Revoking the override reveals the review again.
    expect(refused(await m.invoke("learning.automatic_overrides.revoke", owner, {
      path: { submission: submission.uuid, override: override.uuid },
      payload: command({ expectedRevision: override.revision + 1, reason: "ошибка" })
    }))).toEqual([409, "revision_conflict"])
    const revoked = ok<AutomaticOverride>(await m.invoke("learning.automatic_overrides.revoke", owner, {
      path: { submission: submission.uuid, override: override.uuid },
      payload: command({ expectedRevision: override.revision, reason: "Условие однозначно" })
    }))
    expect([revoked.status, revoked.revokeReason]).toEqual(["revoked", "Условие однозначно"])
    expect([(await effective())?.kind, (await effective())?.points]).toEqual(["review", 7])
    expect(await audit(submission.uuid)).toEqual([
      ["score.review", 0, "auto", 7, "review"],
      ["score.override", 7, "review", 10, "override"],
      ["score.revoke", 10, "override", 7, "review"]
    ])
    expect(ok<Array<AutomaticOverride>>(await m.invoke("learning.automatic_overrides.list", learner, { path: { submission: submission.uuid } }))).toEqual([])
    expect(ok<Array<AutomaticOverride>>(await m.invoke("learning.automatic_overrides.list", owner, { path: { submission: submission.uuid } })).map((o) => o.status))
      .toEqual(["revoked"])
    expect(refused(await m.invoke("learning.automatic_overrides.revoke", owner, {
      path: { submission: submission.uuid, override: override.uuid },
      payload: command({ expectedRevision: revoked.revision, reason: "ещё раз" })
    }))).toEqual([409, "invalid_state"])
    // The first layer is exactly as it was; the store refuses to change it.
    expect((await m.sql<Record<string, unknown>>("SELECT * FROM learning_score_layers WHERE uuid = $1", first["uuid"]))[0]).toEqual(first)
    await expect(m.sql("UPDATE learning_score_layers SET revoked_at = now() WHERE uuid = $1", first["uuid"])).rejects.toThrow()
  })

  it("answers grade_frozen to every score write once the run's grades are frozen", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const quiz = ok<Submission>(await submit(learner, enrollment, "quiz", "41"))
    const essay = ok<Submission>(await submit(learner, enrollment, "essay", "Эссе"))
    const claimed = await m.call("learning.reviews.claim", reviewer.profile, { path: { submission: essay.uuid }, payload: command() })
    const decided = ok<{ revision: number }>(await m.invoke("learning.reviews.decide", reviewer.profile, {
      path: { submission: essay.uuid },
      payload: command({ expectedRevision: claimed.revision, outcome: "accept", points: 9, rubric: [], comment: "" })
    }))
    const override = ok<AutomaticOverride>(await m.invoke("learning.automatic_overrides.create", owner, {
      path: { submission: quiz.uuid },
      payload: command({ verdict: "accepted", reason: "до заморозки" })
    }))
    expect(override.points).toBe(10)
    // Finished 30 days ago (the course freezes 30 days after): frozen now.
    await m.sql("UPDATE learning_runs SET status = 'finished', finished_at = now() - interval '30 days 1 minute' WHERE uuid = $1", course.runUuid)
    expect(refused(await m.invoke("learning.automatic_overrides.create", owner, {
      path: { submission: quiz.uuid },
      payload: command({ points: 5, reason: "после" })
    }))).toEqual([409, "grade_frozen"])
    expect(refused(await m.invoke("learning.automatic_overrides.revoke", owner, {
      path: { submission: quiz.uuid, override: override.uuid },
      payload: command({ expectedRevision: override.revision, reason: "после" })
    }))).toEqual([409, "grade_frozen"])
    expect(refused(await m.invoke("learning.reviews.release", reviewer.profile, {
      path: { submission: essay.uuid },
      payload: command({ expectedRevision: decided.revision })
    }))).toEqual([409, "grade_frozen"])
    // One minute before the freeze, writes pass again.
    await m.sql("UPDATE learning_runs SET finished_at = now() - interval '30 days' + interval '1 minute' WHERE uuid = $1", course.runUuid)
    ok(await m.invoke("learning.reviews.release", reviewer.profile, { path: { submission: essay.uuid }, payload: command({ expectedRevision: decided.revision }) }))
    expect(await m.runtime.runPromise(effectiveScore(quiz.uuid))).toMatchObject({ kind: "override", points: 10 })
  })

  it("lists candidates: check_failed, near-timeout and newer-checker submissions, each once, for grades_adjust only", async () => {
    const course = await setup()
    const reviewer = await staffMember(course.courseUuid, "reviewer")
    const learners = await Promise.all([learnerIn(course.runUuid, "А"), learnerIn(course.runUuid, "Б")])
    const failed = ok<Submission>(await submit(learners[0].learner, learners[0].enrollment, "code", "print(1)"))
    const slow = ok<Submission>(await submit(learners[1].learner, learners[1].enrollment, "code", "print(2)"))
    const jobs = await m.runtime.runPromise(claimGradeJobs(10))
    const jobOf = (submission: string) => jobs.find((job) => job.submission_uuid === submission)!.uuid
    await m.runtime.runPromise(finishGradeJob(jobOf(failed.uuid), { _tag: "platform_error", error: "timeout" }))
    await m.runtime.runPromise(finishGradeJob(jobOf(slow.uuid), { _tag: "verdict", result: { verdict: "accepted", fraction: 1 } }))
    await m.sql(`UPDATE learning_grading_jobs SET diagnostics = '{"latencyMs": 9500}'::jsonb WHERE uuid = $1`, jobOf(slow.uuid))
    const candidates = (query: Record<string, string> = {}, actor = owner) =>
      m.invoke("learning.automatic_overrides.candidates", actor, { path: { course: course.courseUuid }, urlParams: query })
    const items = ok<{ items: Array<{ submissionUuid: string; reason: string }> }>(await candidates()).items
    expect(items.map((c) => [c.submissionUuid, c.reason])).toEqual([[slow.uuid, "near_timeout"], [failed.uuid, "check_failed"]])
    expect(ok<{ items: Array<{ submissionUuid: string }> }>(await candidates({ reason: "check_failed" })).items.map((c) => c.submissionUuid)).toEqual([failed.uuid])
    const page = ok<{ items: Array<{ submissionUuid: string }>; nextCursor?: string }>(await candidates({ limit: "1" }))
    expect(page.items.length).toBe(1)
    const rest = ok<{ items: Array<{ submissionUuid: string }>; nextCursor?: string }>(await candidates({ limit: "1", cursor: page.nextCursor! }))
    expect([...page.items, ...rest.items].map((c) => c.submissionUuid)).toEqual([slow.uuid, failed.uuid])
    expect(refused(await candidates({ limit: "101" }))).toEqual([400, "invalid_request"])
    expect(ok<{ items: Array<unknown> }>(await candidates({ limit: "100" })).items.length).toBe(2)
    // A superseded checker version: its graded submissions disagree with the newer one's rules.
    await m.sql("UPDATE learning_checkers SET status = 'superseded' WHERE uuid = $1", course.checkerUuid)
    await m.sql(`UPDATE learning_grading_jobs SET diagnostics = '{"latencyMs": 100}'::jsonb WHERE uuid = $1`, jobOf(slow.uuid))
    expect(ok<{ items: Array<{ reason: string }> }>(await candidates()).items.map((c) => c.reason)).toEqual(["newer_checker", "check_failed"])
    expect(refused(await candidates({}, reviewer.profile))).toEqual([403, "forbidden"])
    expect(refused(await candidates({}, learners[0].learner))).toEqual([404, "not_found"])
    // Reading candidates wrote nothing.
    expect(await m.sql("SELECT 1 FROM learning_audit_events WHERE course_uuid = $1 AND action LIKE 'score.%'", course.courseUuid)).toEqual([])
  })
})

// ---- the assignment state machine, generated from its table ------------------------------------

const states = ["pooled", "claimed", "decided", "released", "cancelled"] as const
type State = typeof states[number]
const persons = ["owner", "holder", "reviewer", "assistant", "author"] as const
type Person = typeof persons[number]
const triggers = [
  "learning.reviews.claim",
  "learning.reviews.decide",
  "learning.reviews.release",
  "learning.reviews.reassign.pool",
  "learning.reviews.reassign.profile",
  "learning.reviews.report_issue",
  "learning.reviews.draft"
] as const satisfies ReadonlyArray<AssignmentTrigger>

/** The table's actors each person plays (the holder holds the assignment in the states that have one). */
const actorsOf = (person: Person, state: State): ReadonlyArray<AssignmentActor> => {
  switch (person) {
    case "owner":
      return ["instructor", "releaser", "reviewer"]
    case "holder":
      return state === "claimed" || state === "decided" || state === "released" ? ["holder", "releaser", "reviewer"] : ["releaser", "reviewer"]
    case "reviewer":
      return ["releaser", "reviewer"]
    case "assistant":
    case "author":
      return []
  }
}

describe("the review assignment state machine (generated from its table × roles)", () => {
  it("is the assignment machine: pooled → claimed → decided → released; claimed → pooled; → cancelled", () => {
    expect(Object.fromEntries(Object.entries(assignmentTransitions).map(([trigger, t]) => [trigger, `${t.from.join("|")} → ${t.to} by ${t.who.join("|")}`])))
      .toEqual({
        "request": "none → pooled by system",
        "learning.reviews.claim": "pooled → claimed by reviewer|peer|instructor",
        "learning.reviews.decide": "claimed|decided → decided by holder|instructor",
        "learning.reviews.release": "decided → released by releaser|instructor",
        "learning.reviews.reassign.pool": "claimed → pooled by holder|instructor|system",
        "learning.reviews.reassign.profile": "pooled|claimed → claimed by instructor",
        "learning.reviews.report_issue": "claimed → claimed by holder",
        "learning.reviews.draft": "claimed → claimed by holder",
        "cancel": "pooled|claimed|decided → cancelled by system"
      })
  })

  it("allows exactly the table's moves to the table's actors; refuses the rest with 403 or 409", async () => {
    const course = await setup()
    const holder = await staffMember(course.courseUuid, "reviewer", "Держатель")
    const reviewer = await staffMember(course.courseUuid, "reviewer", "Другой")
    const target = await staffMember(course.courseUuid, "reviewer", "Третий")
    const assistant = await staffMember(course.courseUuid, "assistant", "Ассистент")
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const actorFor: Record<Person, SessionActor> = { owner, holder: holder.profile, reviewer: reviewer.profile, assistant: assistant.profile, author: learner }
    const decision = JSON.stringify({ outcome: "accept", points: 8, rubric: [], comment: "", final: true, decidedBy: holder.profile.profileUuid, decidedAt: new Date().toISOString() })
    const force = async (assignment: string, state: State) => {
      if (state === "pooled") return
      if (state === "cancelled") return void await m.sql("UPDATE learning_review_assignments SET status = 'cancelled' WHERE uuid = $1", assignment)
      await m.sql(`UPDATE learning_review_assignments SET status = $2, reviewer_profile_uuid = $3, claimed_at = now(), due_at = now() + interval '1 day',
          decision = CASE WHEN $2 IN ('decided', 'released') THEN $4::jsonb END, released_at = CASE WHEN $2 = 'released' THEN now() END
        WHERE uuid = $1`, assignment, state, holder.profile.profileUuid, decision)
    }
    const payloadOf = (trigger: typeof triggers[number], assignment: string, revision: number) => {
      switch (trigger) {
        case "learning.reviews.claim":
          return command()
        case "learning.reviews.decide":
          return command({ expectedRevision: revision, outcome: "accept", points: 8, rubric: [], comment: "" })
        case "learning.reviews.release":
          return command({ expectedRevision: revision })
        case "learning.reviews.reassign.pool":
          return command({ expectedRevision: revision, assignmentUuid: assignment, pool: true, reason: "r" })
        case "learning.reviews.reassign.profile":
          return command({ expectedRevision: revision, assignmentUuid: assignment, toProfileUuid: target.profile.profileUuid, reason: "r" })
        case "learning.reviews.report_issue":
          return command({ kind: "other", note: "n" })
        case "learning.reviews.draft":
          return command({ rubric: [], comment: "c" })
      }
    }
    const operationOf = (trigger: typeof triggers[number]) => trigger.startsWith("learning.reviews.reassign") ? "learning.reviews.reassign" : trigger
    const mismatches: Array<string> = []
    let cases = 0
    for (const trigger of triggers) {
      for (const state of states) {
        for (const person of persons) {
          const submission = ok<Submission>(await submit(learner, enrollment, "essay", `${trigger} ${state} ${person}`))
          const assignment = only(await assignmentsOf(owner, submission.uuid))
          await force(assignment.uuid, state)
          const answer = await m.invoke(operationOf(trigger), actorFor[person], {
            path: { submission: submission.uuid },
            payload: payloadOf(trigger, assignment.uuid, await revisionOf(assignment.uuid))
          })
          const allowedActor = actorsOf(person, state).some((actor) => (assignmentTransitions[trigger].who as ReadonlyArray<string>).includes(actor))
          const expected = !allowedActor ? 403 : assignmentAllows(trigger, state) ? 200 : 409
          cases++
          if (answer.status !== expected) mismatches.push(`${trigger} ${state} ${person}: ${answer.status} ${JSON.stringify(answer.body)} (expected ${expected})`)
          if (answer.status === 200 && trigger !== "learning.reviews.draft" && trigger !== "learning.reviews.report_issue") {
            const after = only(await assignmentsOf(owner, submission.uuid))
            const to = assignmentTransitions[trigger].to
            // decide releases at once only on auto-release nodes; the essay step releases by hand.
            if (after.status !== to) mismatches.push(`${trigger} ${state} ${person}: reached ${after.status}, table says ${to}`)
          }
        }
      }
    }
    expect(mismatches).toEqual([])
    expect(cases).toBe(triggers.length * states.length * persons.length)
  })
})
