import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { only } from "../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../test/marketplace.js"
import { anonymous } from "../kernel/Authentication.js"
import { PostgresBlobStore } from "../files/BlobStore.js"
import { assignStaff } from "../learning/staff/Staff.js"
import { seedDemoData } from "./DemoData.js"

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("demo_learning")
})
afterAll(async () => {
  await m?.close()
})

const seed = (reset = false) =>
  m.runtime.runPromise(Effect.provide(seedDemoData({ publications: 120, seed: 3, profilesPerType: 4, reset }), PostgresBlobStore))

describe("the demo learning data", () => {
  it("publishes two Russian courses made from training publications, listed in the catalog, each with a scheduled and a running run; reset removes and refills them", async () => {
    const summary = await seed()
    expect(summary.learning).toEqual({ courses: 2, runs: 4 })
    const catalog = await m.call("learning.courses.list", anonymous, {})
    expect(catalog.items).toHaveLength(2)
    for (const card of catalog.items) {
      expect(card.title).toMatch(/[А-Яа-яЁё]/)
      const publication = only(await m.sql<{ kind: string; demo: boolean }>("SELECT kind, demo FROM publications WHERE uuid = $1", card.publicationUuid))
      expect(publication).toEqual({ kind: "training", demo: true })
      const course = await m.call("learning.courses.get", anonymous, { path: { course: card.uuid } })
      expect(course.versionNumber).toBe(1)
      expect(course.outline.every((node) => /[А-Яа-яЁё]/.test(node.title))).toBe(true)
      expect(course.runs.map((run) => run.status).sort()).toEqual(["running", "scheduled"])
    }
    // An audited change to a demo course does not stop the reset.
    const owner = only(await m.sql<{ owner: string }>("SELECT owner_profile_uuid AS owner FROM learning_courses LIMIT 1"))
    const other = only(await m.sql<{ uuid: string }>("SELECT uuid FROM profiles WHERE uuid <> $1 LIMIT 1", owner.owner))
    await m.runtime.runPromise(assignStaff({ courseUuid: catalog.items[0]!.uuid, profileUuid: other.uuid, role: "analyst", byProfileUuid: owner.owner }))
    // A learner's progress, overrides and reminders on a demo course do not stop it either.
    const run = only(await m.sql<{ uuid: string; course_uuid: string }>("SELECT uuid, course_uuid FROM learning_runs WHERE status = 'running' LIMIT 1"))
    const enrollment = only(await m.sql<{ uuid: string }>(
      "INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status) VALUES (gen_random_uuid(), $1, $2, $3, 'active') RETURNING uuid",
      run.uuid, run.course_uuid, other.uuid))
    await m.sql("INSERT INTO learning_step_states (enrollment_uuid, node_key, status) VALUES ($1, 'any', 'completed')", enrollment.uuid)
    await m.sql("INSERT INTO learning_deadline_reminders (enrollment_uuid, node_key, due_at, hours) VALUES ($1, 'any', now(), 24)", enrollment.uuid)
    await m.sql("INSERT INTO learning_date_overrides (uuid, run_uuid, enrollment_uuid, extra_attempts, origin) VALUES (gen_random_uuid(), $1, $2, 1, 'manual')",
      run.uuid, enrollment.uuid)
    // Nor do threads, course reviews, drafts, submissions with their score layers, or checkers.
    const thread = only(await m.sql<{ uuid: string }>(
      `INSERT INTO learning_threads (uuid, course_uuid, run_uuid, enrollment_uuid, learner_profile_uuid, author_profile_uuid, author_role,
         visibility, title, last_author_role) VALUES (gen_random_uuid(), $1, $2, $3, $4, $4, 'learner', 'private', 'Вопрос', 'learner') RETURNING uuid`,
      run.course_uuid, run.uuid, enrollment.uuid, other.uuid))
    await m.sql("INSERT INTO learning_thread_messages (uuid, thread_uuid, author_profile_uuid, author_role, body) VALUES (gen_random_uuid(), $1, $2, 'learner', 'Текст')",
      thread.uuid, other.uuid)
    await m.sql("INSERT INTO learning_course_reviews (uuid, course_uuid, profile_uuid, enrollment_uuid, rating) VALUES (gen_random_uuid(), $1, $2, $3, 5)",
      run.course_uuid, other.uuid, enrollment.uuid)
    await m.sql("INSERT INTO learning_drafts (enrollment_uuid, node_key, reply) VALUES ($1, 'any', '{}')", enrollment.uuid)
    const checker = only(await m.sql<{ uuid: string }>(
      "INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind) VALUES (gen_random_uuid(), $1, gen_random_uuid(), 'declarative') RETURNING uuid",
      run.course_uuid))
    const submission = only(await m.sql<{ uuid: string }>(
      `INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, checker_uuid, attempt_no,
         reply, status) VALUES (gen_random_uuid(), $1, $2, $3, $4, 'any', 1, $5, 1, '{}', 'graded') RETURNING uuid`,
      enrollment.uuid, run.course_uuid, run.uuid, other.uuid, checker.uuid))
    await m.sql("INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed) VALUES (gen_random_uuid(), $1, 'auto', 1, 1, 'ok', true)",
      submission.uuid)
    await m.sql("INSERT INTO learning_grading_jobs (uuid, kind, course_uuid, submission_uuid, checker_uuid) VALUES (gen_random_uuid(), 'grade', $1, $2, $3)",
      run.course_uuid, submission.uuid, checker.uuid)
    await m.sql(`INSERT INTO learning_appeals (uuid, submission_uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, reason, initial_points)
      VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, 'any', 'r', 0)`, submission.uuid, run.course_uuid, run.uuid, enrollment.uuid, other.uuid)
    // Nor do groups with a member, a group-scoped assignment and a group date override.
    const group = only(await m.sql<{ uuid: string }>(
      `INSERT INTO learning_groups (uuid, course_uuid, run_uuid, name, kind, visibility, assignment, member_count, created_by)
         VALUES (gen_random_uuid(), $1, $2, 'Группа', 'team', 'separate', 'manual', 1, $3) RETURNING uuid`,
      run.course_uuid, run.uuid, owner.owner))
    await m.sql("INSERT INTO learning_group_members (group_uuid, enrollment_uuid) VALUES ($1, $2)", group.uuid, enrollment.uuid)
    await m.sql("INSERT INTO learning_date_overrides (uuid, run_uuid, group_uuid, extra_attempts, origin) VALUES (gen_random_uuid(), $1, $2, 1, 'group')",
      run.uuid, group.uuid)
    const third = only(await m.sql<{ uuid: string }>("SELECT uuid FROM profiles WHERE uuid NOT IN ($1, $2) LIMIT 1", owner.owner, other.uuid))
    await m.runtime.runPromise(assignStaff({
      courseUuid: run.course_uuid, profileUuid: third.uuid, role: "assistant", runUuid: run.uuid, groupUuid: group.uuid, byProfileUuid: owner.owner
    }))
    const again = await seed(true)
    expect(again.learning).toEqual({ courses: 2, runs: 4 })
    const counts = only(await m.sql<{ courses: number; audit: number; submissions: number; threads: number; groups: number }>(
      `SELECT (SELECT count(*)::int FROM learning_courses) AS courses, (SELECT count(*)::int FROM learning_audit_events) AS audit,
        (SELECT count(*)::int FROM learning_submissions) AS submissions, (SELECT count(*)::int FROM learning_threads) AS threads,
        (SELECT count(*)::int FROM learning_groups) AS groups`
    ))
    expect(counts).toEqual({ courses: 2, audit: 0, submissions: 0, threads: 0, groups: 0 })
  })
})
