import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { ServerSecret } from "../../auth/ServerSecret.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder, Timestamp } from "../../store/Rows.js"
import { appendEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { openSecret, sealSecret } from "../../webhooks/SigningSecret.js"
import { normalizeWebhookUrl } from "../../webhooks/WebhookUrl.js"
import { WebhookSettings } from "../../webhooks/WebhookSettings.js"
import { appendAudit } from "../Audit.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import { checkReply, type CheckResult, ruleProblem } from "./Declarative.js"
import { Checker, type CheckerCreate, type CheckerStatus, ControlEvent, PreflightCase, PreflightResult, ReferenceCase, unpreflightedCheckerStatuses } from "./GradingModel.js"
import { CheckerNotReady } from "../LearningErrors.js"
import type { CourseOperation } from "../Permissions.js"
import { GradingJob } from "../steps/StepModel.js"
import { jobView } from "./CheckerCalls.js"
import { CheckerRow, checkerColumns, findChecker, insertChecker, setPreflightJob, setSupersededBy, updateCheckerStatus } from "./CheckerRepository.js"
import { decodeJobs, insertPreflightJob, jobColumns, succeedPreflightJob, wakeCheckerJobs } from "./GradingJobRepository.js"

/**
 * Checkers: declarative rules or an external
 * HTTPS grader. Versions are immutable: `checkers.create` with `replaces` makes the next version
 * of the lineage, and the old version becomes `superseded` once the new one passes its preflight
 * (submissions keep the version that graded them). A preflight runs the reference cases (a
 * `correct` case must be accepted, a `wrong` one must not); declarative ones inline, external
 * ones through the grading worker's signed calls. Suspend, resume and the circuit breaker's
 * automatic suspension are logged in the control history and the audit log.
 */

/** The checker state machine as data: each trigger, the states it starts from, where it leads. */
export const checkerTransitions = {
  "learning.checkers.preflight": { from: ["draft", "preflight_failed"], to: "preflighting" },
  "preflight.passed": { from: ["preflighting"], to: "ready" },
  "preflight.failed": { from: ["preflighting"], to: "preflight_failed" },
  "learning.checkers.suspend": { from: ["ready"], to: "suspended" },
  "breaker.open": { from: ["ready"], to: "suspended" },
  "learning.checkers.resume": { from: ["suspended"], to: "ready" },
  "lineage.replaced": { from: ["ready", "suspended"], to: "superseded" }
} as const satisfies Readonly<Record<string, { readonly from: ReadonlyArray<CheckerStatus>; readonly to: CheckerStatus }>>
export type CheckerTrigger = keyof typeof checkerTransitions

export const checkerAllows = (trigger: CheckerTrigger, status: CheckerStatus): boolean =>
  (checkerTransitions[trigger].from as ReadonlyArray<string>).includes(status)

/** Consecutive platform errors after which the circuit breaker suspends an external checker. */
export const breakerThreshold = 5

// Rows read here, each decoded by a decoder compiled once.
const decodeLatest = rowsDecoder(Schema.Struct({ v: Schema.NullOr(Schema.Number) }))
const decodeCheckerPage = rowsDecoder(Schema.Struct({ ...CheckerRow.fields, position: Schema.String }))
const PreflightInput = Schema.Struct({ cases: Schema.Array(ReferenceCase) })
const decodePreflightJob = rowsDecoder(Schema.Struct({ checker_uuid: Schema.String, course_uuid: Schema.String, input: PreflightInput }))
const decodePreflightView = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  checker_uuid: Schema.String,
  status: PreflightResult.fields.status,
  input: PreflightInput,
  result: Schema.NullOr(Schema.Struct({ passed: Schema.Boolean, cases: Schema.Array(PreflightCase) })),
  created_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp)
}))
const decodeControls = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  checker_uuid: Schema.String,
  action: ControlEvent.fields.action,
  from_status: Schema.String,
  to_status: Schema.String,
  actor_profile_uuid: Schema.NullOr(Schema.String),
  reason: Schema.String,
  created_at: Timestamp,
  position: Schema.String
}))

/** A checker as staff see it: the secret is never part of it. */
export const checkerView = (row: CheckerRow): Checker => ({
  uuid: row.uuid,
  courseUuid: row.course_uuid,
  lineageUuid: row.lineage_uuid,
  version: row.version,
  name: row.name,
  kind: row.kind,
  status: row.status,
  ...(row.rules !== null ? { rules: row.rules } : {}),
  ...(row.url !== null ? { url: row.url } : {}),
  ...(row.generator_url !== null ? { generatorUrl: row.generator_url } : {}),
  timeoutMs: row.timeout_ms,
  hasSecret: row.secret_sealed !== null,
  referenceCases: row.reference_cases,
  sampleCases: row.sample_cases,
  concurrency: row.concurrency,
  errorStreak: row.error_streak,
  ...(row.replaces_uuid !== null ? { replaces: row.replaces_uuid } : {}),
  ...(row.superseded_by_uuid !== null ? { supersededBy: row.superseded_by_uuid } : {}),
  ...(row.preflight_job_uuid !== null ? { lastPreflightUuid: row.preflight_job_uuid } : {}),
  revision: row.revision,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export const loadChecker = (courseUuid: string, uuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const row = yield* findChecker(courseUuid, uuid, options)
    if (row === undefined) return yield* new NotFound({ message: `No checker ${uuid} in this course` })
    return row
  })

/** Authorizes the operation on the course, then loads its checker (404 for a checker of another course). */
export const checkerFor = (actor: Actor, operation: CourseOperation, courseUuid: string, uuid: string, options: { readonly lock: boolean }) =>
  Effect.zipRight(courseFor(actor, operation, courseUuid, { lock: false }), loadChecker(courseUuid, uuid, options))

/** Moves a checker by a trigger of the table, logging the control event (and the audit row when a person acts). */
export const moveChecker = (
  row: CheckerRow,
  trigger: CheckerTrigger,
  log: { readonly action: string; readonly actorUuid: string | null; readonly reason: string; readonly requestUuid?: string | undefined; readonly set?: string }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const to = checkerTransitions[trigger].to
    const moved = yield* updateCheckerStatus(row.uuid, to, { resetStreak: trigger === "learning.checkers.resume" })
    yield* sql`INSERT INTO learning_checker_controls (uuid, checker_uuid, action, from_status, to_status, actor_profile_uuid, reason)
      VALUES (${crypto.randomUUID()}, ${row.uuid}, ${log.action}, ${row.status}, ${to}, ${log.actorUuid}, ${log.reason})`
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: log.actorUuid,
      action: `checker.${log.action}`,
      subjectKind: "checker",
      subjectUuid: row.uuid,
      before: { status: row.status },
      after: { status: to },
      reason: log.reason,
      requestUuid: log.requestUuid
    })
    return moved
  })

/** `learning.checker.failed` for a checker (failed preflight, circuit breaker, failed grade job). */
export const checkerFailedEvent = (row: Pick<CheckerRow, "uuid" | "course_uuid" | "revision">, context: Record<string, string> = {}) =>
  appendEvent({
    type: "learning.checker.failed",
    aggregate: { kind: "learning_checker", uuid: row.uuid, revision: row.revision },
    data: { objectUuid: row.uuid, status: "failed" },
    context: { courseUuid: row.course_uuid, ...context }
  })

const invalid = (message: string) => new InvalidRequest({ message })

const checkedUrl = (value: string | undefined, field: string, allowHttpLoopback: boolean) =>
  value === undefined
    ? Effect.succeed(null)
    : Either.match(normalizeWebhookUrl(value, { allowHttpLoopback }), {
      onLeft: (problem) => Effect.fail(invalid(`${field}${problem.slice(problem.indexOf(":"))}`.replace("webhooks go to", "graders are"))),
      onRight: (url) => Effect.succeed(url)
    })

export const createChecker = (actor: Actor, courseUuid: string, input: CheckerCreate) =>
  once(actor, "learning.checkers.create", input, Checker, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.checkers.create", courseUuid, { lock: true })
    const settings = yield* WebhookSettings
    const serverSecret = yield* ServerSecret
    const uuid = crypto.randomUUID()
    let secretSealed: string | null = null
    if (input.kind === "declarative") {
      if (input.rules === undefined) return yield* invalid("rules: a declarative checker needs its rules")
      for (const field of ["url", "secret", "generatorUrl"] as const) {
        if (input[field] !== undefined) return yield* invalid(`${field}: only an http checker has one`)
      }
      const problem = ruleProblem(input.rules, "rules")
      if (problem !== undefined) return yield* invalid(problem)
    } else {
      if (input.rules !== undefined) return yield* invalid("rules: an http checker has no declarative rules")
      if (input.url === undefined) return yield* invalid("url: an http checker needs its grader's HTTPS endpoint")
    }
    const url = yield* checkedUrl(input.url, "url", settings.allowHttpLoopback)
    const generatorUrl = yield* checkedUrl(input.generatorUrl, "generatorUrl", settings.allowHttpLoopback)
    let lineage: string = uuid
    let version = 1
    let replaces: CheckerRow | undefined
    if (input.replaces !== undefined) {
      replaces = yield* loadChecker(courseUuid, input.replaces, { lock: true })
        .pipe(Effect.catchTag("NotFound", () => Effect.fail(invalid(`replaces: no checker ${input.replaces} in this course`))))
      if (replaces.status === "superseded") return yield* invalid(`replaces: checker ${replaces.uuid} is already superseded`)
      lineage = replaces.lineage_uuid
      yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`checker-lineage:${lineage}`}, 0))`
      const [latest] = yield* Effect.flatMap(sql`SELECT max(version)::int AS v FROM learning_checkers WHERE lineage_uuid = ${lineage}`, decodeLatest)
      version = (latest?.v ?? 0) + 1
    }
    if (input.kind === "http") {
      if (input.secret !== undefined) secretSealed = sealSecret(serverSecret, uuid, input.secret)
      else if (replaces?.secret_sealed != null) secretSealed = sealSecret(serverSecret, uuid, openSecret(serverSecret, replaces.uuid, replaces.secret_sealed))
      else return yield* invalid("secret: an http checker needs the secret its grader verifies signatures with")
    }
    const row = yield* insertChecker({
      uuid,
      courseUuid,
      lineageUuid: lineage,
      version,
      name: input.name,
      kind: input.kind,
      rules: input.rules,
      url,
      generatorUrl,
      timeoutMs: input.timeoutMs ?? 10_000,
      secretSealed,
      sampleCases: input.sampleCases ?? [],
      referenceCases: input.referenceCases,
      concurrency: input.concurrency ?? 8,
      replacesUuid: replaces?.uuid ?? null,
      createdBy: actor.profileUuid
    })
    yield* appendAudit({
      courseUuid,
      actorProfileUuid: actor.profileUuid,
      action: "checker.create",
      subjectKind: "checker",
      subjectUuid: uuid,
      after: { lineageUuid: lineage, version, kind: input.kind, replaces: replaces?.uuid ?? null },
      requestUuid: input.requestUuid
    })
    return checkerView(row)
  }))

export const listCheckers = (actor: Actor, courseUuid: string, query: { readonly status?: CheckerStatus | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.checkers.list", courseUuid, { lock: false })
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(checkerColumns)}, created_at::text AS position FROM learning_checkers
      WHERE course_uuid = ${courseUuid} ${query.status === undefined ? sql`` : sql`AND status = ${query.status}`}
        ${position._tag === "Some" ? sql`AND (created_at, uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY created_at DESC, uuid DESC LIMIT ${limit + 1}`,
      decodeCheckerPage
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), checkerView)
  })

export const getChecker = (actor: Actor, courseUuid: string, uuid: string) =>
  Effect.map(checkerFor(actor, "learning.checkers.get", courseUuid, uuid, { lock: false }), checkerView)

/** Whether a case's verdict is what the case expects. */
const casePassed = (expected: ReferenceCase["expected"], verdict: string | undefined) =>
  verdict !== undefined && (expected === "correct" ? verdict === "accepted" : verdict !== "accepted")

export interface CaseOutcome {
  readonly verdict?: string | undefined
  readonly platformError?: string | undefined
}

/**
 * Applies a preflight's case outcomes once (the job still `running`/`queued` and the checker
 * `preflighting`): the job succeeds with per-case results; the checker becomes ready (and the
 * version it replaces superseded) when every case passed, else preflight_failed with
 * `learning.checker.failed`.
 */
export const finishPreflight = (jobUuid: string, outcomes: ReadonlyArray<CaseOutcome>): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [job] = yield* Effect.flatMap(
      sql`
      SELECT checker_uuid, course_uuid, input FROM learning_grading_jobs WHERE uuid = ${jobUuid} AND kind = 'preflight'
        AND status IN ('queued', 'running') FOR UPDATE`,
      decodePreflightJob
    )
    if (job === undefined) return false
    const checker = yield* Effect.orDie(loadChecker(job.course_uuid, job.checker_uuid, { lock: true }))
    const cases: Array<PreflightCase> = job.input.cases.map((reference, index) => {
      const outcome = outcomes[index] ?? { platformError: "no answer" }
      return {
        index,
        ...(reference.name !== undefined ? { name: reference.name } : {}),
        expected: reference.expected,
        ...(outcome.verdict !== undefined ? { verdict: outcome.verdict as NonNullable<PreflightCase["verdict"]> } : {}),
        ...(outcome.platformError !== undefined ? { platformError: outcome.platformError } : {}),
        passed: outcome.platformError === undefined && casePassed(reference.expected, outcome.verdict)
      }
    })
    const passed = cases.every((one) => one.passed)
    yield* succeedPreflightJob(jobUuid, passed ? "passed" : "failed", { passed, cases })
    if (checker.status !== "preflighting" || checker.preflight_job_uuid !== jobUuid) return true
    if (!passed) {
      const failed = yield* moveChecker(checker, "preflight.failed", { action: "preflight_failed", actorUuid: null, reason: `${cases.filter((c) => !c.passed).length} of ${cases.length} cases failed` })
      yield* checkerFailedEvent(failed, { jobUuid })
      return true
    }
    yield* moveChecker(checker, "preflight.passed", { action: "preflight_passed", actorUuid: null, reason: `${cases.length} cases passed` })
    if (checker.replaces_uuid !== null) {
      const old = yield* Effect.orDie(loadChecker(checker.course_uuid, checker.replaces_uuid, { lock: true }))
      if (checkerAllows("lineage.replaced", old.status)) {
        yield* moveChecker(old, "lineage.replaced", { action: "superseded", actorUuid: null, reason: `version ${checker.version} is ready` })
        yield* setSupersededBy(old.uuid, checker.uuid)
      }
    }
    return true
  })

export const preflightChecker = (actor: Actor, courseUuid: string, uuid: string, input: { readonly requestUuid: string; readonly cases?: ReadonlyArray<ReferenceCase> | undefined }) =>
  once(actor, "learning.checkers.preflight", input, GradingJob, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const checker = yield* checkerFor(actor, "learning.checkers.preflight", courseUuid, uuid, { lock: true })
    if (!checkerAllows("learning.checkers.preflight", checker.status)) {
      return yield* new InvalidState({ message: `learning.checkers.preflight is not allowed on a ${checker.status} checker` })
    }
    const cases = input.cases ?? checker.reference_cases
    if (cases.length === 0) return yield* invalid("cases: a preflight needs reference cases (the checker has none)")
    const jobUuid = crypto.randomUUID()
    yield* insertPreflightJob({ uuid: jobUuid, courseUuid, checkerUuid: uuid, requesterProfileUuid: actor.profileUuid, cases })
    yield* moveChecker(checker, "learning.checkers.preflight", { action: "preflight", actorUuid: actor.profileUuid, reason: `${cases.length} cases`, requestUuid: input.requestUuid })
    yield* setPreflightJob(uuid, jobUuid)
    if (checker.kind === "declarative") {
      // Pure rules: evaluated here, in this transaction (no code runs, nothing is called).
      const outcomes = cases.map((reference): CaseOutcome => {
        const result: CheckResult = checkReply(checker.rules!, reference.reply, reference.clue)
        return { verdict: result.verdict }
      })
      yield* finishPreflight(jobUuid, outcomes)
    }
    const [job] = yield* Effect.flatMap(sql`SELECT ${sql.literal(jobColumns)} FROM learning_grading_jobs WHERE uuid = ${jobUuid}`, decodeJobs)
    return jobView(job!)
  }))

export const getPreflight = (actor: Actor, courseUuid: string, jobUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.preflights.get", courseUuid, { lock: false })
    const [job] = yield* Effect.flatMap(
      sql`SELECT uuid, checker_uuid, status, input, result, created_at, finished_at FROM learning_grading_jobs
      WHERE uuid = ${jobUuid} AND course_uuid = ${courseUuid} AND kind = 'preflight'`,
      decodePreflightView
    )
    if (job === undefined) return yield* new NotFound({ message: `No preflight ${jobUuid} in this course` })
    const result: typeof PreflightResult.Type = {
      jobUuid: job.uuid,
      checkerUuid: job.checker_uuid,
      status: job.status,
      ...(job.result !== null ? { passed: job.result.passed } : {}),
      cases: job.result?.cases ?? job.input.cases.map((reference, index) => ({
        index,
        ...(reference.name !== undefined ? { name: reference.name } : {}),
        expected: reference.expected,
        passed: false
      })),
      createdAt: job.created_at,
      ...(job.finished_at !== null ? { finishedAt: job.finished_at } : {})
    }
    return result
  })

type ControlInput = { readonly requestUuid: string; readonly expectedRevision: number; readonly reason: string }

export const suspendChecker = (actor: Actor, courseUuid: string, uuid: string, input: ControlInput) =>
  once(actor, "learning.checkers.suspend", input, Checker, Effect.gen(function*() {
    const checker = yield* checkerFor(actor, "learning.checkers.suspend", courseUuid, uuid, { lock: true })
    yield* requireRevision("checker", checker.revision, input.expectedRevision)
    if (!checkerAllows("learning.checkers.suspend", checker.status)) {
      return yield* new InvalidState({ message: `learning.checkers.suspend is not allowed on a ${checker.status} checker` })
    }
    return checkerView(yield* moveChecker(checker, "learning.checkers.suspend", { action: "suspend", actorUuid: actor.profileUuid, reason: input.reason, requestUuid: input.requestUuid }))
  }))

/** Resume: dispatch goes on; the queued jobs of the checker are due at once and the breaker's streak starts over. */
export const resumeChecker = (actor: Actor, courseUuid: string, uuid: string, input: ControlInput) =>
  once(actor, "learning.checkers.resume", input, Checker, Effect.gen(function*() {
    const checker = yield* checkerFor(actor, "learning.checkers.resume", courseUuid, uuid, { lock: true })
    yield* requireRevision("checker", checker.revision, input.expectedRevision)
    if (!checkerAllows("learning.checkers.resume", checker.status)) {
      return yield* (unpreflightedCheckerStatuses.includes(checker.status)
        ? new CheckerNotReady({ message: `The checker is ${checker.status}; it becomes ready by passing its preflight` })
        : new InvalidState({ message: `learning.checkers.resume is not allowed on a ${checker.status} checker` }))
    }
    const resumed = yield* moveChecker(checker, "learning.checkers.resume", { action: "resume", actorUuid: actor.profileUuid, reason: input.reason, requestUuid: input.requestUuid })
    yield* wakeCheckerJobs(uuid)
    return checkerView(resumed)
  }))

export const controlHistory = (actor: Actor, courseUuid: string, uuid: string, query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* checkerFor(actor, "learning.checkers.control_history", courseUuid, uuid, { lock: false })
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT uuid, checker_uuid, action, from_status, to_status, actor_profile_uuid, reason, created_at, created_at::text AS position
      FROM learning_checker_controls WHERE checker_uuid = ${uuid}
        ${position._tag === "Some" ? sql`AND (created_at, uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY created_at DESC, uuid DESC LIMIT ${limit + 1}`,
      decodeControls
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => ({
      uuid: row.uuid,
      checkerUuid: row.checker_uuid,
      action: row.action,
      fromStatus: row.from_status,
      toStatus: row.to_status,
      ...(row.actor_profile_uuid !== null ? { actorUuid: row.actor_profile_uuid } : {}),
      reason: row.reason,
      createdAt: row.created_at
    }))
  })
