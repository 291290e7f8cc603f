import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { JsonObject, rowsDecoder } from "../store/Rows.js"
import type { CourseNode } from "../learning/courses/Model.js"
import { contentHash, outlineOf, treeProblem, validationIssues } from "../learning/courses/Tree.js"

/**
 * Demo learning data: two published courses in Russian, made from the first two
 * demo training publications (linked, so they are listed in the catalog while the publication is
 * approved), each with its owner, version 1, a scheduled cohort run and a running self-paced run.
 * Seeded like the rest of the demo data, not commanded: no events, no audit rows.
 */

const courses: ReadonlyArray<{ readonly summary: string; readonly modules: ReadonlyArray<{ readonly title: string; readonly steps: ReadonlyArray<readonly [string, "text" | "quiz" | "assignment"]> }> }> = [
  {
    summary: "Короткий практический курс: от первых запросов до отчётов.",
    modules: [
      { title: "Знакомство", steps: [["Как устроен курс", "text"], ["Что такое таблица", "text"], ["Проверка: основные понятия", "quiz"]] },
      { title: "Запросы", steps: [["SELECT и WHERE", "text"], ["Сортировка и группировка", "text"], ["Практика: отчёт по продажам", "assignment"]] }
    ]
  },
  {
    summary: "Курс для тех, кто начинает работать с клиентами: письма, встречи, договорённости.",
    modules: [
      { title: "Первое письмо", steps: [["Тон и структура", "text"], ["Разбор примеров", "text"], ["Тест: хорошее письмо", "quiz"]] },
      { title: "Встреча", steps: [["Подготовка к встрече", "text"], ["Задание: план встречи", "assignment"]] }
    ]
  }
]

/** The node tree of a demo course: modules `m1…`, steps `m1-s1…`, graded quiz and assignment steps. */
export const demoCourseNodes = (index: number): ReadonlyArray<CourseNode> =>
  courses[index % courses.length]!.modules.flatMap((module, m) => [
    { nodeKey: `m${m + 1}`, kind: "module" as const, title: module.title },
    ...module.steps.map(([title, stepType], s): CourseNode => ({
      nodeKey: `m${m + 1}-s${s + 1}`,
      parentKey: `m${m + 1}`,
      kind: "step",
      title,
      stepType,
      ...(stepType === "text"
        ? { body: `${title}. Прочитайте материал и переходите к следующему шагу.` }
        : { grading: { maxPoints: 10, passThreshold: 6, attempts: 3 }, dueOffsetDays: 7 * (m + 1) }),
      unlockOffsetDays: 7 * m
    }))
  ])

export interface DemoLearningCounts {
  readonly courses: number
  readonly runs: number
}

/** Removes the learning rows of demo profiles' courses (before their publications and profiles go). */
export const removeDemoLearning = (demoProfiles: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const doomed = `SELECT uuid FROM learning_courses WHERE owner_profile_uuid IN (${demoProfiles})`
    // The audit log refuses deletes except for a purge the transaction declares.
    yield* sql`SELECT set_config('birzha.audit_purge', 'on', true)`
    // Corrections name plans, layers, overrides and submissions: they go first.
    yield* sql`DELETE FROM learning_regrade_plan_items WHERE plan_uuid IN (SELECT uuid FROM learning_regrade_plans WHERE course_uuid IN (${sql.literal(doomed)}))`
    yield* sql`DELETE FROM learning_regrade_items WHERE regrade_uuid IN (SELECT uuid FROM learning_regrades WHERE course_uuid IN (${sql.literal(doomed)}))`
    for (const table of ["learning_regrade_plans", "learning_appeals", "learning_incidents", "learning_extension_requests"]) {
      yield* sql`DELETE FROM ${sql(table)} WHERE course_uuid IN (${sql.literal(doomed)})`
    }
    for (const table of ["learning_audit_events", "learning_jobs", "learning_plans"]) {
      yield* sql`DELETE FROM ${sql(table)} WHERE course_uuid IN (${sql.literal(doomed)})`
    }
    yield* sql`DELETE FROM learning_library_items WHERE owner_profile_uuid IN (${sql.literal(demoProfiles)}) OR source_course_uuid IN (${sql.literal(doomed)})`
    // Community threads, course reviews and invitations, then grading:
    // score layers, demo attempts and jobs before the submissions they name, checkers last.
    yield* sql`DELETE FROM learning_thread_messages WHERE thread_uuid IN (SELECT uuid FROM learning_threads WHERE course_uuid IN (${sql.literal(doomed)}))`
    // Reviews and automatic overrides name score layers: they go first.
    for (const table of ["learning_review_assignments", "learning_automatic_overrides"]) {
      yield* sql`DELETE FROM ${sql(table)} WHERE course_uuid IN (${sql.literal(doomed)})`
    }
    yield* sql`DELETE FROM learning_score_layers WHERE submission_uuid IN (SELECT uuid FROM learning_submissions WHERE course_uuid IN (${sql.literal(doomed)}))`
    for (
      const table of [
        "learning_threads",
        "learning_course_reviews",
        "learning_email_invitations",
        "learning_ownership_invitations",
        "learning_demo_attempts",
        "learning_grading_jobs",
        "learning_regrades",
        "learning_submissions"
      ]
    ) {
      yield* sql`DELETE FROM ${sql(table)} WHERE course_uuid IN (${sql.literal(doomed)})`
    }
    // What hangs off the enrollments and runs goes first.
    const enrollments = `SELECT uuid FROM learning_enrollments WHERE course_uuid IN (${doomed})`
    for (const table of ["learning_variants", "learning_drafts", "learning_deadline_reminders", "learning_step_states", "learning_date_overrides"]) {
      yield* sql`DELETE FROM ${sql(table)} WHERE enrollment_uuid IN (${sql.literal(enrollments)})`
    }
    yield* sql`DELETE FROM learning_date_overrides WHERE run_uuid IN (SELECT uuid FROM learning_runs WHERE course_uuid IN (${sql.literal(doomed)}))`
    // Groups: members name enrollments; staff, invitations and overrides name groups (all gone above or below first).
    yield* sql`DELETE FROM learning_group_members WHERE group_uuid IN (SELECT uuid FROM learning_groups WHERE course_uuid IN (${sql.literal(doomed)}))`
    for (const table of ["learning_checker_controls", "learning_grading_usage"]) {
      yield* sql`DELETE FROM ${sql(table)} WHERE checker_uuid IN (SELECT uuid FROM learning_checkers WHERE course_uuid IN (${sql.literal(doomed)}))`
    }
    for (const table of ["learning_checkers", "learning_enrollments", "learning_staff", "learning_groups", "learning_runs", "learning_course_versions"]) {
      yield* sql`DELETE FROM ${sql(table)} WHERE course_uuid IN (${sql.literal(doomed)})`
    }
    yield* sql`DELETE FROM learning_courses WHERE uuid IN (${sql.literal(doomed)})`
    yield* sql`SELECT set_config('birzha.audit_purge', 'off', true)`
  })

const decodeTrainings = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  owner: Schema.String,
  title: Schema.NullOr(Schema.String),
  training: Schema.NullOr(JsonObject)
}))

/** Seeds the demo courses over the first two demo training publications; `uuidOf` names rows deterministically. */
export const seedDemoLearning = (uuidOf: (name: string) => string, now = Date.now()): Effect.Effect<DemoLearningCounts, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const publications = yield* Effect.flatMap(
      sql`
      SELECT uuid, owner_profile_uuid AS owner, approved ->> 'title' AS title, approved -> 'training' AS training
      FROM publications WHERE demo AND kind = 'training' AND approved IS NOT NULL ORDER BY id LIMIT ${courses.length}`,
      decodeTrainings
    )
    let runs = 0
    for (const [i, publication] of publications.entries()) {
      const uuid = uuidOf(`learning-course:${publication.uuid}`)
      const nodes = demoCourseNodes(i)
      // Valid by check, as the other demo data: a broken tree stops the run before anything is committed.
      const problem = treeProblem(nodes) ?? validationIssues({ kind: "single", nodes, requiredNodeKeys: [], members: [] })[0]?.message
      if (problem !== undefined) return yield* Effect.die(new Error(`demo course ${i}: ${problem}`))
      const title = (publication.title ?? "Курс").slice(0, 160)
      const summary = courses[i % courses.length]!.summary
      const training = publication.training ?? {}
      const metadata = Object.fromEntries(["level", "format", "durationHours", "outcomes", "certificate"].filter((key) => training[key] !== undefined).map((key) => [key, training[key]]))
      const publishedAt = new Date(now - (10 + i) * 86_400_000)
      yield* sql`INSERT INTO learning_courses (uuid, owner_profile_uuid, title, summary, kind, visibility, status, publication_uuid, nodes,
          metadata, latest_version, published_at, revision, created_at, updated_at)
        VALUES (${uuid}, ${publication.owner}, ${title}, ${summary}, 'single', 'listed', 'published', ${publication.uuid},
          ${JSON.stringify(nodes)}::jsonb, ${JSON.stringify(metadata)}::jsonb, 1, ${publishedAt}, 3, ${publishedAt}, ${publishedAt})`
      yield* sql`INSERT INTO learning_staff (uuid, course_uuid, profile_uuid, role, status)
        VALUES (${uuidOf(`learning-owner:${uuid}`)}, ${uuid}, ${publication.owner}, 'owner', 'active')`
      yield* sql`INSERT INTO learning_course_versions (course_uuid, number, content_hash, title, summary, nodes, outline, changelog, published_by,
          published_at)
        VALUES (${uuid}, 1, ${contentHash({ title, summary, nodes, members: [] })}, ${title}, ${summary}, ${JSON.stringify(nodes)}::jsonb,
          ${JSON.stringify(outlineOf(nodes))}::jsonb,
          'Первая версия', ${publication.owner}, ${publishedAt})`
      const cohortStart = new Date(now + 7 * 86_400_000)
      yield* sql`INSERT INTO learning_runs (uuid, course_uuid, version_number, title, pacing, starts_at, ends_at, admission, capacity, waitlist,
          pause_policy, status, revision)
        VALUES (${uuidOf(`learning-run:${uuid}:cohort`)}, ${uuid}, 1, 'Весенний поток', 'cohort', ${cohortStart},
          ${new Date(cohortStart.getTime() + 42 * 86_400_000)}, 'open', 30, true, '{"maxDays":14,"maxCount":2}'::jsonb, 'scheduled', 2)`
      yield* sql`INSERT INTO learning_runs (uuid, course_uuid, version_number, title, pacing, starts_at, admission, waitlist, pause_policy, status, revision)
        VALUES (${uuidOf(`learning-run:${uuid}:self`)}, ${uuid}, 1, 'В своём темпе', 'self', ${publishedAt}, 'open', false,
          '{"maxDays":30,"maxCount":3}'::jsonb, 'running', 3)`
      runs += 2
    }
    return { courses: publications.length, runs }
  })
