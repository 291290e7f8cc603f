import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { Int8Text, rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import { loadVersion } from "../courses/CourseRepository.js"
import { checkReply, Verdict } from "../grading/Declarative.js"
import { NotEligible } from "../LearningErrors.js"
import type { CourseNode } from "../courses/Model.js"
import { DemoAttempt, Submission } from "./StepModel.js"
import { StepLimitReached, windowCount } from "./StepLimits.js"
import { requireReplySize, stepFor } from "./Steps.js"
import { scoreOf, submitAttempt } from "./Submissions.js"
import { poolIndex } from "./Variants.js"

/**
 * Demo tries: a signed-in profile tries a demo-flagged, declaratively
 * checked step of the course's latest published version without enrolling. The try is graded
 * and kept; it costs nothing (no enrollment, no attempt). `demo.apply` later turns it into a
 * submission of an enrollment on the same version and variant, consuming an attempt there.
 */

/** Demo tries a profile may make per step per day. */
export const demoTriesPerDay = 20

const DemoRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  course_uuid: Schema.String,
  node_key: Schema.String,
  version_number: Schema.Number,
  pool_index: Schema.NullOr(Schema.Number),
  reply: Schema.Unknown,
  verdict: Verdict,
  /** `numeric`: text. */
  points: Int8Text,
  max_points: Schema.Number,
  status: Schema.Literal("recorded", "applied"),
  applied_submission_uuid: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
type DemoRow = typeof DemoRow.Type

const demoColumns = selectList(DemoRow, "d")
const decodeDemos = rowsDecoder(DemoRow)

/** What the profile sees of its try: its dataset (never the clue), reply and result. */
const demoView = (row: DemoRow & { readonly passed: boolean; readonly dataset: unknown }): DemoAttempt => ({
  uuid: row.uuid,
  courseUuid: row.course_uuid,
  nodeKey: row.node_key,
  versionNumber: row.version_number,
  ...(row.dataset !== null && row.dataset !== undefined ? { dataset: row.dataset } : {}),
  reply: row.reply,
  verdict: row.verdict,
  points: Number(row.points),
  maxPoints: row.max_points,
  passed: row.passed,
  status: row.status,
  ...(row.applied_submission_uuid !== null ? { appliedSubmissionUuid: row.applied_submission_uuid } : {}),
  createdAt: row.created_at
})

/** The demo step of the latest version, or 409 not_eligible; 404 when the course is not visible to the caller. */
const demoStep = (actor: Actor, courseUuid: string, nodeKey: string) =>
  Effect.gen(function*() {
    const course = yield* courseFor(actor, "learning.courses.get", courseUuid, { lock: false })
    const version = course.latest_version === 0 ? undefined : yield* loadVersion(courseUuid, course.latest_version)
    const node = version?.nodes.find((candidate) => candidate.nodeKey === nodeKey && candidate.kind === "step")
    if (version === undefined || node === undefined) return yield* new NotFound({ message: `No step ${nodeKey} in the course's published version` })
    if (node.demo !== true) return yield* new NotEligible({ message: "This step is not a demo step" })
    if (node.grading?.check === undefined) return yield* new NotEligible({ message: "Demo tries are for steps with a declarative check" })
    if (node.variants?.mode === "generated") return yield* new NotEligible({ message: "A step with generated variants cannot be tried without enrolling" })
    return { course, version, node, check: node.grading.check }
  })

/** Tries a demo step: graded by its check against the caller's first variant; recorded, nothing consumed. */
export const tryDemo = (actor: Actor, courseUuid: string, nodeKey: string, input: { readonly requestUuid: string; readonly reply: unknown }) =>
  once(actor, "learning.demo.try", input, DemoAttempt, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* requireReplySize(input.reply)
    const { check, node, version } = yield* demoStep(actor, courseUuid, nodeKey)
    // Serialize the caller's tries of this step so the daily limit holds under concurrency.
    yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`demo:${actor.profileUuid}:${courseUuid}:${nodeKey}`}, 0))`
    const recent = yield* windowCount(sql`SELECT created_at FROM learning_demo_attempts
      WHERE profile_uuid = ${actor.profileUuid} AND course_uuid = ${courseUuid} AND node_key = ${nodeKey}
        AND created_at > now() - interval '1 day' ORDER BY created_at`, 86_400)
    if (recent.count >= demoTriesPerDay) {
      return yield* new StepLimitReached({ message: `At most ${demoTriesPerDay} demo tries of a step a day`, retryAfterSeconds: recent.retryAfterSeconds, limit: demoTriesPerDay, windowSeconds: 86_400 })
    }
    const pool = node.variants?.mode === "pool" ? node.variants.pool ?? [] : []
    const index = pool.length > 0 ? poolIndex({ profileUuid: actor.profileUuid, courseUuid, nodeKey, n: 1 }, pool.length) : undefined
    const item = index === undefined ? undefined : pool[index]
    const result = checkReply(check, input.reply, item?.clue)
    const { passed, points } = scoreOf(node, result, false)
    const [row] = yield* Effect.flatMap(
      sql`INSERT INTO learning_demo_attempts AS d (uuid, profile_uuid, course_uuid, node_key,
        version_number, pool_index, reply, verdict, points, max_points)
      VALUES (${crypto.randomUUID()}, ${actor.profileUuid}, ${courseUuid}, ${nodeKey}, ${version.number}, ${index ?? null},
        ${JSON.stringify(input.reply)}::jsonb, ${result.verdict}, ${points}, ${node.grading!.maxPoints})
      RETURNING ${sql.literal(demoColumns)}`,
      decodeDemos
    )
    return demoView({ ...row!, passed, dataset: item?.dataset })
  }))

/** The caller's demo attempts in a course, newest first (at most 200). */
export const demoProgress = (actor: Actor, courseUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.courses.get", courseUuid, { lock: false })
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(demoColumns)} FROM learning_demo_attempts d
      WHERE d.profile_uuid = ${actor.profileUuid} AND d.course_uuid = ${courseUuid} ORDER BY d.created_at DESC, d.uuid DESC LIMIT 200`,
      decodeDemos
    )
    const attempts: Array<DemoAttempt> = []
    const cache = new Map<number, ReadonlyArray<CourseNode>>()
    for (const row of rows) {
      if (!cache.has(row.version_number)) cache.set(row.version_number, yield* loadVersionNodes(courseUuid, row.version_number))
      const node = cache.get(row.version_number)?.find((candidate) => candidate.nodeKey === row.node_key)
      const threshold = node?.grading?.passThreshold ?? row.max_points
      const dataset = row.pool_index === null ? undefined : node?.variants?.pool?.[row.pool_index]?.dataset
      attempts.push(demoView({ ...row, passed: row.verdict !== "invalid_reply" && Number(row.points) >= threshold, dataset }))
    }
    return { attempts }
  })

const loadVersionNodes = (courseUuid: string, number: number) => Effect.map(loadVersion(courseUuid, number), (version) => version?.nodes ?? [])

/** Applies the caller's demo attempt to this enrollment's step: same course, step, version and variant; an attempt is consumed. */
export const applyDemo = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: { readonly requestUuid: string; readonly demoAttemptUuid: string }) =>
  once(actor, "learning.demo.apply", input, Submission, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const step = yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: true })
    const [demo] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(demoColumns)} FROM learning_demo_attempts d
      WHERE d.uuid = ${input.demoAttemptUuid} AND d.profile_uuid = ${actor.profileUuid} FOR UPDATE`,
      decodeDemos
    )
    if (demo === undefined) return yield* new NotFound({ message: `No demo attempt ${input.demoAttemptUuid} of the acting profile` })
    if (demo.status === "applied") return yield* new InvalidState({ message: "The demo attempt was applied already" })
    if (demo.course_uuid !== step.course.uuid || demo.node_key !== nodeKey) {
      return yield* new InvalidState({ message: "The demo attempt was made on another step" })
    }
    if (demo.version_number !== step.run.version_number) {
      return yield* new InvalidState({ message: `The demo attempt was made on version ${demo.version_number}; this run is on version ${step.run.version_number}` })
    }
    const submission = yield* submitAttempt(step, {
      reply: demo.reply,
      demoAttemptUuid: demo.uuid,
      requireVariant: (variant) =>
        (variant?.pool_index ?? null) === demo.pool_index
          ? Effect.void
          : Effect.fail(new InvalidState({ message: "The demo attempt was made on another variant than this enrollment's" }))
    })
    yield* sql`UPDATE learning_demo_attempts SET status = 'applied', applied_submission_uuid = ${submission.uuid} WHERE uuid = ${demo.uuid}`
    return submission
  }))
