// The learning benchmarks' shared setup: a course published with its nodes and a cohort run through
// the host, and learners with active enrollments written in SQL (accounts, profiles and
// enrollments keyed md5('la' | 'lp' | 'le' || n) for n = 1..count).
import { randomUUID } from "node:crypto"

/** PATCHes the course's nodes, publishes version 1 and creates a cohort run started yesterday; returns the run. */
export const publishedRun = async (call, hostUrl, cookie, course, nodes) => {
  const edited = await call(hostUrl, cookie, "PATCH", `/api/v1/learning/courses/${course.uuid}`, { requestUuid: randomUUID(), expectedRevision: course.revision, nodes })
  await call(hostUrl, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/publish`, { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" })
  return call(hostUrl, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/runs`, {
    requestUuid: randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 86_400_000).toISOString(),
    admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
  })
}

/** Sets the run running and writes `count` learners with active enrollments in it. */
export const insertLearners = async (client, { runUuid, courseUuid, count }) => {
  await client.query("UPDATE learning_runs SET status = 'running' WHERE uuid = $1", [runUuid])
  await client.query(`INSERT INTO accounts (uuid, email, current_profile_uuid)
    SELECT md5('la' || g)::uuid, 'learner' || g || '@bench.invalid', md5('lp' || g)::uuid FROM generate_series(1, ${count}) g`)
  await client.query(`INSERT INTO profiles (uuid, id, account_uuid, name, type, is_public)
    SELECT md5('lp' || g)::uuid, 'learner' || g, md5('la' || g)::uuid, 'Ученик ' || g, 'Физлицо', false FROM generate_series(1, ${count}) g`)
  await client.query(`INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status, started_at)
    SELECT md5('le' || g)::uuid, $1, $2, md5('lp' || g)::uuid, 'active', now() FROM generate_series(1, ${count}) g`, [runUuid, courseUuid])
}
