import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import { createHash, createHmac } from "node:crypto"
import { Forbidden, InvalidRequest, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { BlobStore } from "../../files/BlobStore.js"
import { deleteFiles, insertReadyFile } from "../../files/FileRepository.js"
import { JsonObject, rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { unsafeValueProblem } from "../../operations/InputSafety.js"
import { normalizeWebhookUrl } from "../../webhooks/WebhookUrl.js"
import { checkersInUse, insertCheckerDrafts, renameCheckers } from "../grading/CheckerDrafts.js"
import { courseFor, insertOwned, requireCheckersManage } from "./Courses.js"
import { once } from "../Commands.js"
import { DeclarativeRule, ruleProblem } from "../grading/Declarative.js"
import { CheckerKind, maxReferenceCases, maxSampleCases, ReferenceCase } from "../grading/GradingModel.js"
import { completionOf } from "../enrollments/Completion.js"
import { loadCourse, loadCourseHead, loadVersion, VersionRow } from "./CourseRepository.js"
import { stepDatesOf } from "../enrollments/Dates.js"
import { loadEnrollment } from "../enrollments/EnrollmentRepository.js"
import { loadRun } from "./RunRepository.js"
import { decodeSubmissions, layersOf, submissionColumns, submissionView } from "../steps/SubmissionViews.js"
import { type LearnerGrade, learnerGrades } from "../enrollments/Grades.js"
import {
  BundleMember,
  CompletionPolicy,
  CourseKind,
  CourseNodes,
  Job,
  JobIssue,
  JobKind,
  maxNodes,
  Metadata,
  packageFormat,
  Visibility
} from "./Model.js"
import { pinnedNodes } from "../enrollments/EnrollmentAccess.js"
import { holdsAtom, inGroups, standingOn } from "../Permissions.js"
import { treeProblem } from "./Tree.js"

/**
 * One job mechanism for exports, imports and analytics exports: an operation queues a job in its transaction; the worker claims due jobs with
 * `FOR UPDATE SKIP LOCKED` and a lease (a running job whose lease lapsed — its worker crashed — is
 * claimed again, so jobs resume), does the work, and finishes it once (`running → done/failed`
 * guarded). Results are ready JSON or CSV files of the requester, kept 7 days.
 */

const JobRow = Schema.Struct({
  uuid: Schema.String,
  kind: JobKind,
  requester_profile_uuid: Schema.String,
  course_uuid: Schema.NullOr(Schema.String),
  enrollment_uuid: Schema.NullOr(Schema.String),
  input: JsonObject,
  status: Job.fields.status,
  file_uuid: Schema.NullOr(Schema.String),
  result_course_uuid: Schema.NullOr(Schema.String),
  issues: Schema.Array(JobIssue),
  created_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp),
  expires_at: Schema.NullOr(Timestamp)
})
type JobRow = typeof JobRow.Type

const columns = selectList(JobRow)
const decodeJobs = rowsDecoder(JobRow)
/** A claimed job, with the claim's attempt (what finishing it checks). */
const ClaimedJobRow = Schema.Struct({ ...JobRow.fields, attempts: Schema.Number })
const claimedColumns = selectList(ClaimedJobRow)
const decodeClaimed = rowsDecoder(ClaimedJobRow)

const decodeNumbers = rowsDecoder(VersionRow.pick("number"))
const decodeEnrollmentScope = rowsDecoder(Schema.Struct({ course_uuid: Schema.String, run_uuid: Schema.String, profile_uuid: Schema.String }))
const decodeGroupScope = rowsDecoder(Schema.Struct({ uuid: Schema.String, run_uuid: Schema.String }))
const decodeFunnel = rowsDecoder(Schema.Struct({ enrolled: Schema.Number, active: Schema.Number, completed: Schema.Number, withdrawn: Schema.Number }))
const decodeProgress = rowsDecoder(Schema.Struct({ node_key: Schema.String, started: Schema.Number, completed: Schema.Number }))
const decodeLoad = rowsDecoder(Schema.Struct({ reviewer: Schema.String, pending: Schema.Number, decided: Schema.Number }))
const decodeReviews = rowsDecoder(Schema.Struct({ submission_uuid: Schema.String, kind: Schema.String, status: Schema.String, released_at: Schema.NullOr(Timestamp) }))
/** What a course export carries of each version. */
const ExportedVersion = VersionRow.pick("number", "title", "summary", "nodes", "members", "changelog", "published_at")
const exportedVersionColumns = selectList(ExportedVersion)
const decodeExportedVersions = rowsDecoder(ExportedVersion)
/** The enrollment as its export names it (the document's `enrollment`, in this order). */
const decodeExportedEnrollment = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  status: Schema.String,
  startedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  runUuid: Schema.String,
  runTitle: Schema.String,
  versionNumber: Schema.Number,
  courseUuid: Schema.String,
  courseTitle: Schema.String
}))
const decodeLearners = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  name: Schema.String,
  status: Schema.String,
  run_title: Schema.String,
  started_at: Schema.NullOr(Timestamp),
  updated_at: Timestamp
}))
const decodeDetached = rowsDecoder(Schema.Struct({ file_uuid: Schema.String }))
const decodeMoment = rowsDecoder(Schema.Struct({ at: Schema.NullOr(Timestamp) }))

/** How long a result file is kept, and how long a claimed job may run before another worker takes it over. */
export const jobFileDays = 7
export const jobLeaseSeconds = 300
/** Cells of fewer learners than this (and more than none) are suppressed in analytics. */
export const minCell = 5

const jobView = (row: JobRow): Job => ({
  uuid: row.uuid,
  kind: row.kind,
  status: row.status,
  ...(row.course_uuid !== null ? { courseUuid: row.course_uuid } : {}),
  ...(row.enrollment_uuid !== null ? { enrollmentUuid: row.enrollment_uuid } : {}),
  ...(row.file_uuid !== null ? { fileUuid: row.file_uuid } : {}),
  ...(row.result_course_uuid !== null ? { resultCourseUuid: row.result_course_uuid } : {}),
  issues: row.issues,
  createdAt: row.created_at,
  ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {}),
  ...(row.expires_at !== null ? { expiresAt: row.expires_at } : {})
})

const enqueue = (actor: Actor, kind: Job["kind"], target: { readonly courseUuid?: string; readonly enrollmentUuid?: string }, input: unknown) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`INSERT INTO learning_jobs (uuid, kind, requester_profile_uuid, course_uuid, enrollment_uuid, input)
      VALUES (${crypto.randomUUID()}, ${kind}, ${actor.profileUuid}, ${target.courseUuid ?? null}, ${target.enrollmentUuid ?? null},
        ${JSON.stringify(input)}::jsonb)
      RETURNING ${sql.literal(columns)}`,
      decodeJobs
    )
    return jobView(row!)
  })

// ---- operations -------------------------------------------------------------------------------

export const requestCourseExport = (
  actor: Actor,
  courseUuid: string,
  input: { readonly requestUuid: string; readonly versions?: ReadonlyArray<number> | undefined; readonly includeCheckers: boolean }
) =>
  once(actor, "learning.exports.course", input, Job, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.exports.course", courseUuid, { lock: false })
    if (input.includeCheckers) yield* requireCheckersManage(actor, courseUuid)
    if (input.versions !== undefined && input.versions.length > 0) {
      const found = yield* Effect.flatMap(
        sql`SELECT number FROM learning_course_versions
        WHERE course_uuid = ${courseUuid} AND number IN ${sql.in([...input.versions])}`,
        decodeNumbers
      )
      const missing = input.versions.find((number) => !found.some((row) => row.number === number))
      if (missing !== undefined) return yield* new InvalidRequest({ message: `versions: the course has no version ${missing}` })
    }
    return yield* enqueue(actor, "export_course", { courseUuid }, input)
  }))

/** The learner's own data, or a staff member's with `pii_read` in the run's scope. */
export const requestEnrollmentExport = (actor: Actor, enrollmentUuid: string, input: { readonly requestUuid: string; readonly format: "json" }) =>
  once(actor, "learning.exports.enrollment", input, Job, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [enrollment] = yield* Effect.flatMap(
      sql`SELECT course_uuid, run_uuid, profile_uuid FROM learning_enrollments WHERE uuid = ${enrollmentUuid}`,
      decodeEnrollmentScope
    )
    if (enrollment === undefined) return yield* new NotFound({ message: `No enrollment ${enrollmentUuid}` })
    if (enrollment.profile_uuid !== actor.profileUuid) {
      const standing = yield* standingOn(actor, enrollment.course_uuid)
      if (standing.assignments.length === 0) return yield* new NotFound({ message: `No enrollment ${enrollmentUuid}` })
      if (!holdsAtom(standing.assignments, "pii_read", { runUuid: enrollment.run_uuid })) {
        return yield* new Forbidden({ message: "Exporting a learner's data needs the pii_read permission" })
      }
    }
    return yield* enqueue(actor, "export_enrollment", { courseUuid: enrollment.course_uuid, enrollmentUuid }, input)
  }))

/** Imports a `birzha-course/1` package the caller uploaded (a ready JSON file of theirs) as a new draft. */
export const requestImport = (actor: Actor, input: { readonly requestUuid: string; readonly fileUuid: string; readonly format: typeof packageFormat }) =>
  once(actor, "learning.courses.import", input, Job, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const file = yield* sql`SELECT 1 FROM files WHERE uuid = ${input.fileUuid} AND profile_uuid = ${actor.profileUuid}
      AND status = 'ready' AND mime_type = 'application/json'`
    if (file.length === 0) return yield* new NotFound({ message: `No ready JSON file ${input.fileUuid} of the acting profile` })
    return yield* enqueue(actor, "import", {}, input)
  }))

export const getJob = (actor: Actor, uuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM learning_jobs WHERE uuid = ${uuid} AND requester_profile_uuid = ${actor.profileUuid}`,
      decodeJobs
    )
    return row === undefined ? yield* new NotFound({ message: `No export or import ${uuid} of the acting profile` }) : jobView(row)
  })

const cell = (count: number) => (count > 0 && count < minCell ? { suppressed: true } : { count, suppressed: false })

/** The score buckets of analytics, by course grade percentage (`Grades.ts`). */
export const scoreBuckets = [[0, 20, "0-19"], [20, 40, "20-39"], [40, 60, "40-59"], [60, 80, "60-79"], [80, 101, "80-100"]] as const

/**
 * Funnel, steps, scores and grader load of a course, or of one run or one group (its members), of
 * the learners enrolled within `from`–`to`; cells of 1 to 4 learners suppressed. Steps are those
 * of the course's latest version (a run's or group's: of its pinned version): started (worked on:
 * in progress, completed or failed) and completed, difficulty being 1 − completed/started; scores
 * the learners' course grades (`learnerGrades`) in buckets of 20 points; grader load each staff
 * reviewer's claimed (pending) and decided reviews of those learners (a reviewer of 1 to 4 of them
 * left out). A group-scoped analyst names its group.
 */
export const courseAnalytics = (
  actor: Actor,
  courseUuid: string,
  query: { readonly runUuid?: string | undefined; readonly groupUuid?: string | undefined; readonly from?: Date | undefined; readonly to?: Date | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The group's run is what its staff are scoped to; whether it exists is told only to who may read.
    const [group] = query.groupUuid === undefined ? [] : yield* Effect.flatMap(
      sql`SELECT uuid::text AS uuid,
        run_uuid::text AS run_uuid FROM learning_groups WHERE uuid = ${query.groupUuid} AND course_uuid = ${courseUuid}`,
      decodeGroupScope
    )
    const runUuid = group?.run_uuid ?? query.runUuid?.toLowerCase()
    const course = yield* courseFor(actor, "learning.analytics.get", courseUuid, {
      lock: false,
      ...(runUuid !== undefined ? { runUuid } : {}),
      ...(group !== undefined ? { groupUuids: [group.uuid] } : {})
    })
    if (query.groupUuid !== undefined && (group === undefined || query.runUuid !== undefined && group.run_uuid !== query.runUuid.toLowerCase())) {
      return yield* new NotFound({ message: `No group ${query.groupUuid} in this ${query.runUuid !== undefined ? "run" : "course"}` })
    }
    const learners = sql.and([
      sql`e.course_uuid = ${courseUuid}`,
      ...(runUuid !== undefined ? [sql`e.run_uuid = ${runUuid}`] : []),
      ...(query.groupUuid !== undefined ? [inGroups(sql, sql`e.uuid`, [query.groupUuid])] : []),
      ...(query.from !== undefined ? [sql`e.created_at >= ${query.from}`] : []),
      ...(query.to !== undefined ? [sql`e.created_at < ${query.to}`] : [])
    ])
    const [counts] = yield* Effect.flatMap(sql`SELECT
        count(*) FILTER (WHERE status NOT IN ('invited', 'requested', 'waitlisted', 'offered', 'declined', 'expired', 'rejected'))::int AS enrolled,
        count(*) FILTER (WHERE status IN ('active', 'paused', 'withdrawal_requested'))::int AS active,
        count(*) FILTER (WHERE status = 'completed')::int AS completed,
        count(*) FILTER (WHERE status = 'withdrawn')::int AS withdrawn
      FROM learning_enrollments e WHERE ${learners}`, decodeFunnel)
    const progress = new Map((yield* Effect.flatMap(sql`SELECT st.node_key,
        count(*) FILTER (WHERE st.status IN ('in_progress', 'completed', 'failed'))::int AS started,
        count(*) FILTER (WHERE st.status = 'completed')::int AS completed
      FROM learning_step_states st JOIN learning_enrollments e ON e.uuid = st.enrollment_uuid
      WHERE ${learners} GROUP BY st.node_key`, decodeProgress)).map((row) => [row.node_key, row]))
    // A run's (or group's) steps are those of its pinned version; the course's, those of its latest.
    const nodes = runUuid !== undefined
      ? yield* pinnedNodes(runUuid)
      : course.latest_version > 0 ? (yield* loadVersion(courseUuid, course.latest_version))?.nodes ?? [] : []
    const grades = [...(yield* learnerGrades(learners)).values()]
    // A reviewer's counts are about the learners behind them: a reviewer whose reviews concern 1 to
    // 4 of them is left out, as a cell of so few is suppressed (the row has no suppressed form).
    const load = yield* Effect.flatMap(sql`SELECT a.reviewer_profile_uuid::text AS reviewer,
        count(*) FILTER (WHERE a.status = 'claimed')::int AS pending,
        count(*) FILTER (WHERE a.status IN ('decided', 'released'))::int AS decided
      FROM learning_review_assignments a JOIN learning_submissions s ON s.uuid = a.submission_uuid
        JOIN learning_enrollments e ON e.uuid = s.enrollment_uuid
      WHERE ${learners} AND a.kind = 'staff' AND a.reviewer_profile_uuid IS NOT NULL AND a.status IN ('claimed', 'decided', 'released')
      GROUP BY a.reviewer_profile_uuid HAVING count(DISTINCT e.uuid) >= ${minCell} ORDER BY a.reviewer_profile_uuid`, decodeLoad)
    return {
      courseUuid,
      ...(runUuid !== undefined ? { runUuid } : {}),
      minCell,
      funnel: {
        enrolled: cell(counts?.enrolled ?? 0),
        active: cell(counts?.active ?? 0),
        completed: cell(counts?.completed ?? 0),
        withdrawn: cell(counts?.withdrawn ?? 0)
      },
      steps: nodes.filter((node) => node.kind === "step").map((node) => ({
        nodeKey: node.nodeKey,
        started: cell(progress.get(node.nodeKey)?.started ?? 0),
        completed: cell(progress.get(node.nodeKey)?.completed ?? 0)
      })),
      scores: scoreBuckets.map(([low, high, bucket]) => ({
        bucket,
        learners: cell(grades.filter((grade) => grade.percent >= low && grade.percent < high).length)
      })),
      graderLoad: load.map((row) => ({ reviewerUuid: row.reviewer, pending: row.pending, decided: row.decided }))
    }
  })

/** A CSV per learner; pseudonymized unless the requester holds `pii_read` and asks for names. */
export const requestAnalyticsExport = (
  actor: Actor,
  courseUuid: string,
  input: { readonly requestUuid: string; readonly runUuid?: string | undefined; readonly kind: "grades" | "progress" | "activity"; readonly pseudonymize: boolean }
) =>
  once(actor, "learning.analytics.export", input, Job, Effect.gen(function*() {
    yield* courseFor(actor, "learning.analytics.export", courseUuid, { lock: false, ...(input.runUuid !== undefined ? { runUuid: input.runUuid } : {}) })
    const standing = yield* standingOn(actor, courseUuid)
    const names = !input.pseudonymize && holdsAtom(standing.assignments, "pii_read", { runUuid: input.runUuid })
    return yield* enqueue(actor, "analytics_export", { courseUuid }, { ...input, names })
  }))

// ---- the worker -------------------------------------------------------------------------------

/** The package of `birzha-course/1` as an import reads it (unknown fields of the course are refused). */
const PackageCourse = Schema.Struct({
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(160)),
  summary: Schema.String.pipe(Schema.maxLength(2000)),
  kind: CourseKind,
  visibility: Visibility,
  nodes: CourseNodes,
  members: Schema.Array(BundleMember).pipe(Schema.maxItems(20)),
  completionPolicy: CompletionPolicy,
  freezeAfterDays: Schema.Int.pipe(Schema.between(0, 3650)),
  metadata: Metadata
}).annotations({ parseOptions: { onExcessProperty: "error" } })
/** A checker's specification in a package (`CheckerDrafts.ts`): what `checkers.create` takes, less the secret. */
const PackageChecker = Schema.Struct({
  uuid: Schema.UUID,
  // Checkers made before they had names carry "".
  name: Schema.String.pipe(Schema.maxLength(120)),
  kind: CheckerKind,
  rules: Schema.optional(Schema.NullOr(DeclarativeRule)),
  url: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000)))),
  generatorUrl: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000)))),
  timeoutMs: Schema.optional(Schema.Int.pipe(Schema.between(100, 30_000))),
  concurrency: Schema.optional(Schema.Int.pipe(Schema.between(1, 64))),
  sampleCases: Schema.optional(Schema.Array(Schema.Unknown).pipe(Schema.maxItems(maxSampleCases))),
  referenceCases: Schema.Array(ReferenceCase).pipe(Schema.maxItems(maxReferenceCases))
}).annotations({ parseOptions: { onExcessProperty: "error" } })
const Package = Schema.Struct({
  format: Schema.Literal(packageFormat),
  course: PackageCourse,
  versions: Schema.Array(Schema.Unknown),
  checkers: Schema.optional(Schema.Array(PackageChecker).pipe(Schema.maxItems(50)))
})

/**
 * A package's checker as `checkers.create` would take it (rules; a public HTTPS URL whatever
 * loopback this service allows, stored as normalized) and its uuid once in the package: the
 * checker with its URLs, or its path and why it is refused.
 */
const packageChecker = (
  checker: typeof PackageChecker.Type,
  i: number,
  all: ReadonlyArray<typeof PackageChecker.Type>
): Either.Either<{ readonly checker: typeof PackageChecker.Type; readonly url: string | null; readonly generatorUrl: string | null }, string> => {
  const at = `checkers.${i}`
  if (all.findIndex((other) => other.uuid.toLowerCase() === checker.uuid.toLowerCase()) !== i) return Either.left(`${at}.uuid: ${checker.uuid} is in the package twice`)
  if (checker.kind === "declarative") {
    if (checker.rules == null) return Either.left(`${at}.rules: a declarative checker needs its rules`)
    if (checker.url != null || checker.generatorUrl != null) return Either.left(`${at}.url: only an http checker has one`)
    const problem = ruleProblem(checker.rules, "rules")
    return problem === undefined ? Either.right({ checker, url: null, generatorUrl: null }) : Either.left(`${at}.${problem}`)
  }
  if (checker.rules != null) return Either.left(`${at}.rules: an http checker has no declarative rules`)
  if (checker.url == null) return Either.left(`${at}.url: an http checker needs its grader's HTTPS endpoint`)
  const url = normalizeWebhookUrl(checker.url, { allowHttpLoopback: false })
  if (Either.isLeft(url)) return Either.left(`${at}.url: not a public HTTPS URL`)
  const generator = checker.generatorUrl == null ? Either.right(null) : normalizeWebhookUrl(checker.generatorUrl, { allowHttpLoopback: false })
  if (Either.isLeft(generator)) return Either.left(`${at}.generatorUrl: not a public HTTPS URL`)
  return Either.right({ checker, url: url.right, generatorUrl: generator.right })
}
const decodePackage = Schema.decodeUnknownEither(Package)

class JobFailure {
  constructor(readonly code: string, readonly message: string) {}
}

/** A ready file of the requester, written by the worker (same storage and download path as uploads). */
const writeFile = (profileUuid: string, name: string, mimeType: "application/json" | "text/csv", text: string) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    const bytes = new TextEncoder().encode(text)
    const uuid = crypto.randomUUID()
    yield* insertReadyFile({
      uuid,
      profileUuid,
      name,
      mimeType,
      size: Math.max(1, bytes.length),
      sha256: createHash("sha256").update(bytes).digest("hex")
    })
    yield* blobs.put(uuid, bytes)
    return uuid
  })

const csvCell = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, "\"\"")}"` : value)

/** A stable pseudonym of a learner within one course (the same learner reads the same in every export). */
export const pseudonym = (courseUuid: string, profileUuid: string) => `learner-${createHmac("sha256", courseUuid).update(profileUuid).digest("hex").slice(0, 10)}`

/**
 * What an enrollment export holds besides the enrollment: every submission with its reply and
 * score layers, the review of each (kind and status, never the reviewer), the course grade
 * (`learnerGrades`) and the completion (`completionOf`). Exported by its learner, it is what the
 * learner may see (released layers only); by staff holding `pii_read`, what staff see.
 */
const enrollmentRecord = (enrollmentUuid: string, requester: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const enrollment = yield* Effect.orDie(loadEnrollment(enrollmentUuid, { lock: false }))
    const learner = enrollment.profile_uuid === requester
    const [run, course, nodes] = yield* Effect.all([
      Effect.orDie(loadRun(enrollment.run_uuid, { lock: false })),
      Effect.orDie(loadCourseHead(enrollment.course_uuid)),
      pinnedNodes(enrollment.run_uuid)
    ])
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(submissionColumns)} FROM learning_submissions s
      WHERE s.enrollment_uuid = ${enrollment.uuid} ORDER BY s.submitted_at, s.uuid`,
      decodeSubmissions
    )
    const layers = yield* layersOf(rows.map((row) => row.uuid))
    const dates = yield* stepDatesOf(enrollment, run, nodes)
    const reviews = rows.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT submission_uuid::text AS submission_uuid, kind, status, released_at FROM learning_review_assignments
      WHERE submission_uuid IN ${sql.in(rows.map((row) => row.uuid))} AND status <> 'cancelled' ORDER BY created_at, uuid`,
      decodeReviews
    )
    const grade = (yield* learnerGrades(sql`e.uuid = ${enrollment.uuid}`, { learner })).get(enrollment.uuid)
    return {
      submissions: rows.map((row) => submissionView(row, layers.get(row.uuid) ?? [], { learner, dates: dates.get(row.node_key) })),
      scores: grade === undefined ? [] : [{ points: grade.points, maxPoints: grade.maxPoints, percent: grade.percent, scoredSteps: grade.scoredSteps }],
      reviews: reviews.map((review) => ({
        submissionUuid: review.submission_uuid,
        kind: review.kind,
        status: review.status,
        ...(review.released_at !== null ? { releasedAt: review.released_at } : {})
      })),
      completion: yield* completionOf({ course, enrollment, nodes })
    }
  })

const work = (job: JobRow) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    switch (job.kind) {
      case "export_course": {
        const course = yield* loadCourse(job.course_uuid!, { lock: false }).pipe(Effect.catchTag("NotFound", () => Effect.fail(new JobFailure("not_found", "The course is gone"))))
        const wanted = (job.input["versions"] as ReadonlyArray<number> | undefined) ?? []
        const versions = yield* Effect.flatMap(
          sql`SELECT ${sql.literal(exportedVersionColumns)} FROM learning_course_versions
          WHERE course_uuid = ${course.uuid} ${wanted.length > 0 ? sql`AND number IN ${sql.in([...wanted])}` : sql``} ORDER BY number`,
          decodeExportedVersions
        )
        // With includeCheckers: the specifications of the checkers in use (no secret, no state),
        // the draft's steps naming them (a step naming a superseded version, its lineage's current one).
        const { specs, standingFor } = job.input["includeCheckers"] === true
          ? yield* checkersInUse(course.uuid, course.nodes)
          : { specs: [], standingFor: new Map<string, string>() }
        const pack = {
          format: packageFormat,
          ...(specs.length > 0 ? { checkers: specs } : {}),
          course: {
            title: course.title,
            summary: course.summary,
            kind: course.kind,
            visibility: course.visibility,
            nodes: renameCheckers(course.nodes, standingFor),
            members: course.members,
            completionPolicy: course.completion_policy,
            freezeAfterDays: course.freeze_after_days,
            metadata: course.metadata
          },
          versions: versions.map((v) => ({ number: v.number, title: v.title, summary: v.summary, nodes: v.nodes, members: v.members, changelog: v.changelog, publishedAt: v.published_at }))
        }
        return { fileUuid: yield* writeFile(job.requester_profile_uuid, `course-${course.uuid}.json`, "application/json", JSON.stringify(pack)) }
      }
      case "export_enrollment": {
        const [data] = yield* Effect.flatMap(sql`SELECT e.uuid, e.status, e.started_at AS "startedAt", e.created_at AS "createdAt",
            r.uuid AS "runUuid", r.title AS "runTitle", r.version_number AS "versionNumber", c.uuid AS "courseUuid", c.title AS "courseTitle"
          FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid JOIN learning_courses c ON c.uuid = e.course_uuid
          WHERE e.uuid = ${job.enrollment_uuid}`, decodeExportedEnrollment)
        if (data === undefined) return yield* Effect.fail(new JobFailure("not_found", "The enrollment is gone"))
        const document = { format: "birzha-enrollment/1", enrollment: data, ...yield* enrollmentRecord(job.enrollment_uuid!, job.requester_profile_uuid) }
        return { fileUuid: yield* writeFile(job.requester_profile_uuid, `enrollment-${job.enrollment_uuid}.json`, "application/json", JSON.stringify(document)) }
      }
      case "import": {
        const blobs = yield* BlobStore
        const bytes = yield* blobs.get(String(job.input["fileUuid"]))
        if (Option.isNone(bytes)) return yield* Effect.fail(new JobFailure("file_missing", "The uploaded file has no content"))
        let parsed: unknown
        try {
          parsed = JSON.parse(new TextDecoder().decode(bytes.value))
        } catch {
          return yield* Effect.fail(new JobFailure("invalid_json", "The file is not JSON"))
        }
        // What no input may hold (NUL, which Postgres refuses, other controls, lone surrogates, deep nesting), as for any operation.
        const unsafe = unsafeValueProblem(parsed)
        if (unsafe !== undefined) return yield* Effect.fail(new JobFailure("invalid_package", `${unsafe.path.join(".") || "package"}: ${unsafe.message}`))
        const decoded = decodePackage(parsed)
        if (Either.isLeft(decoded)) {
          const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
          return yield* Effect.fail(new JobFailure("invalid_package", `${issue?.path.join(".") ?? "package"}: ${issue?.message ?? "not a birzha-course/1 package"}`))
        }
        const course = decoded.right.course
        const problem = course.nodes.length > maxNodes ? `course.nodes: at most ${maxNodes}` : treeProblem(course.nodes)
        if (problem !== undefined) return yield* Effect.fail(new JobFailure("invalid_tree", `course.${problem}`))
        const checkers = decoded.right.checkers ?? []
        const checked = checkers.map((checker, i) => packageChecker(checker, i, checkers))
        const refused = checked.find(Either.isLeft)
        if (refused !== undefined) return yield* Effect.fail(new JobFailure("invalid_package", refused.left))
        // The package's checkers become drafts of the new course; its steps name them.
        const imported = new Map(checkers.map((checker) => [checker.uuid.toLowerCase(), crypto.randomUUID()]))
        const made = yield* insertOwned(job.requester_profile_uuid, undefined, {
          title: course.title,
          summary: course.summary,
          kind: course.kind,
          nodes: renameCheckers(course.nodes, imported),
          members: course.members,
          completionPolicy: course.completionPolicy,
          freezeAfterDays: course.freezeAfterDays,
          metadata: course.metadata
        })
        yield* insertCheckerDrafts(made.uuid, job.requester_profile_uuid, checked.flatMap((one) => (Either.isRight(one) ? [one.right] : [])).map(({ checker, generatorUrl, url }) => ({
          uuid: imported.get(checker.uuid.toLowerCase())!,
          name: checker.name,
          kind: checker.kind,
          rules: checker.rules ?? null,
          url,
          generatorUrl,
          timeoutMs: checker.timeoutMs ?? 10_000,
          concurrency: checker.concurrency ?? 8,
          sampleCases: checker.sampleCases ?? [],
          referenceCases: checker.referenceCases,
          source: { importedFrom: checker.uuid }
        })))
        return { resultCourseUuid: made.uuid }
      }
      case "analytics_export": {
        const runUuid = job.input["runUuid"] as string | undefined
        const names = job.input["names"] === true
        const learners = sql.and([sql`e.course_uuid = ${job.course_uuid}`, ...(runUuid !== undefined ? [sql`e.run_uuid = ${runUuid}`] : [])])
        const rows = yield* Effect.flatMap(
          sql`SELECT e.uuid::text AS uuid, e.profile_uuid, p.name, e.status, r.title AS run_title, e.started_at, e.updated_at
          FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid JOIN profiles p ON p.uuid = e.profile_uuid
          WHERE ${learners} ORDER BY e.created_at, e.uuid`,
          decodeLearners
        )
        const kind = String(job.input["kind"])
        // The course grade in percent (`learnerGrades`); empty for a learner with no score yet.
        const grades = kind === "grades" ? yield* learnerGrades(learners) : new Map<string, LearnerGrade>()
        const header = kind === "grades" ? ["learner", "run", "status", "score"] : kind === "progress" ? ["learner", "run", "status", "started_at"] : ["learner", "run", "status", "last_activity"]
        const lines = rows.map((row) => {
          const learner = names ? row.name : pseudonym(job.course_uuid!, row.profile_uuid)
          const last = kind === "grades"
            ? grades.get(row.uuid)?.percent.toFixed(2) ?? ""
            : kind === "progress" ? row.started_at?.toISOString() ?? "" : row.updated_at.toISOString()
          return [learner, row.run_title, row.status, last].map(csvCell).join(",")
        })
        const text = [header.join(","), ...lines].join("\n") + "\n"
        return { fileUuid: yield* writeFile(job.requester_profile_uuid, `analytics-${kind}-${job.course_uuid}.csv`, "text/csv", text) }
      }
    }
  })

/**
 * One pass of the job worker: claims up to `limit` due jobs (queued, or running with a lapsed
 * lease) with `SKIP LOCKED`, then runs each in its own transaction and finishes it once. Returns
 * how many jobs it finished.
 */
export const runLearningJobs = (limit = 10): Effect.Effect<number, SqlError, SqlClient.SqlClient | BlobStore> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const claimed = yield* sql.withTransaction(Effect.flatMap(sql`UPDATE learning_jobs SET status = 'running', attempts = attempts + 1,
        lease_until = now() + make_interval(secs => ${jobLeaseSeconds}), updated_at = now()
      WHERE uuid IN (SELECT uuid FROM learning_jobs
        WHERE status = 'queued' OR (status = 'running' AND lease_until < now())
        ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING ${sql.literal(claimedColumns)}`, decodeClaimed))
    let finished = 0
    for (const job of claimed) {
      const outcome = yield* sql.withTransaction(Effect.gen(function*() {
        const result = yield* work(job)
        // Applied once: only the claim that still holds the job finishes it.
        const done = yield* sql`UPDATE learning_jobs SET status = 'done', file_uuid = ${"fileUuid" in result ? result.fileUuid : null},
            result_course_uuid = ${"resultCourseUuid" in result ? result.resultCourseUuid : null}, finished_at = now(), updated_at = now(),
            expires_at = now() + make_interval(days => ${jobFileDays}), lease_until = NULL
          WHERE uuid = ${job.uuid} AND status = 'running' AND attempts = ${job.attempts} RETURNING uuid`
        if (done.length === 0) return yield* Effect.fail(new JobFailure("superseded", "another worker took the job over"))
        return true
      })).pipe(Effect.either)
      if (Either.isRight(outcome)) {
        finished++
        continue
      }
      const failure = outcome.left
      if (failure instanceof JobFailure && failure.code === "superseded") continue
      const issue = failure instanceof JobFailure ? { code: failure.code, message: failure.message } : { code: "internal", message: "The job failed" }
      if (!(failure instanceof JobFailure)) yield* Effect.logWarning("a learning job failed", failure)
      yield* sql`UPDATE learning_jobs SET status = 'failed', issues = ${JSON.stringify([issue])}::jsonb, finished_at = now(), updated_at = now(),
          lease_until = NULL WHERE uuid = ${job.uuid} AND status = 'running' AND attempts = ${job.attempts}`
      finished++
    }
    return finished
  })

/**
 * Export files whose `jobFileDays` are over (retention, hourly): the job keeps its record, without
 * its file (`exports.get` then shows the past `expiresAt` and no `fileUuid`); the file row and its
 * bytes go. An import's uploaded package is the uploader's file, not the job's, and stays.
 * Returns how many files went.
 */
export const cleanExpiredJobFiles: Effect.Effect<number, SqlError, SqlClient.SqlClient | BlobStore> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const blobs = yield* BlobStore
  let total = 0
  for (;;) {
    const removed = yield* sql.withTransaction(Effect.gen(function*() {
      const detached = yield* Effect.flatMap(sql`WITH expired AS (
          SELECT uuid, file_uuid FROM learning_jobs
          WHERE file_uuid IS NOT NULL AND kind <> 'import' AND expires_at < now()
          LIMIT 500 FOR UPDATE SKIP LOCKED
        )
        UPDATE learning_jobs j SET file_uuid = NULL, updated_at = now() FROM expired WHERE j.uuid = expired.uuid
        RETURNING expired.file_uuid`, decodeDetached)
      const files = detached.map((row) => row.file_uuid)
      if (files.length > 0) yield* deleteFiles(files)
      yield* Effect.forEach(files, (uuid) => blobs.delete(uuid), { discard: true })
      return files.length
    }))
    total += removed
    if (removed < 500) return total
  }
})

/**
 * When `cleanExpiredJobFiles` next has a file to remove (the `expiresAt` an export's reader sees;
 * index `learning_jobs_file_expiry`, migration 0030); `undefined`: none.
 */
export const nextExpiredJobFileMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT min(expires_at) AS at FROM learning_jobs WHERE file_uuid IS NOT NULL AND kind <> 'import'`.pipe(
    Effect.flatMap(decodeMoment),
    Effect.map(([row]) => row?.at ?? undefined)
  ))
