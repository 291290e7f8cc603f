import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Schema } from "effect"
import { InvalidRequest, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { rowsDecoder, Timestamp } from "../../store/Rows.js"
import { breakerThreshold, type CaseOutcome, checkerFailedEvent, checkerAllows, finishPreflight, loadChecker, moveChecker } from "./Checkers.js"
import { countCheckerError, resetErrorStreak } from "./CheckerRepository.js"
import { courseFor } from "../courses/Courses.js"
import { type CheckResult, type DeclarativeRule, Verdict } from "./Declarative.js"
import { DiagnosticTry } from "./GradingModel.js"
import { appendDiagnostics, claimGradingJobs, failJob, requeueUnspent, retryJob, succeedJob } from "./GradingJobRepository.js"
import { finishRegradeJob } from "../corrections/Regrades.js"
import { dispatchSubmissions, finishGradeJob, lockJobEnrollments } from "../steps/Submissions.js"

/**
 * The grading worker's domain side:
 * `claimGradingCalls` claims due grade, regrade and preflight jobs with `FOR UPDATE SKIP LOCKED`,
 * never more running jobs per checker than its concurrency (the checker row is claimed with SKIP
 * LOCKED too, so two workers never overfill one checker — `FOR NO KEY UPDATE`, which the key-share
 * locks taken by rows referencing the checker do not block), and only for checkers that dispatch
 * (ready or superseded; preflighting for preflights). `finishGradingCalls` applies each call's outcome
 * once: a verdict grades; a platform error (timeout, network, 5xx, bad body) is retried up to 3
 * tries, a 4xx fails at once, and neither costs an attempt (a failed grade refunds it). Five
 * platform errors in a row suspend the checker (circuit breaker): the job that tripped it goes
 * back to the queue without spending its try and waits for `checkers.resume`. Each call is
 * recorded in the job's diagnostics (no secret; the answer truncated) and in the usage per
 * checker, kind and day.
 */

export const gradingTries = 3
const excerptChars = 2000
const maxAnswerBytes = 256 * 1024

export interface GradingCase {
  /** The Standard Webhooks `webhook-id`: the job uuid (a preflight's cases: `<job uuid>.<index>`). */
  readonly webhookId: string
  readonly body: string
  readonly reply: unknown
  readonly clue: unknown
}

export interface GradingCall {
  readonly jobUuid: string
  /** The learner's enrollment (grades and regrades): the worker applies one enrollment's answers in order, on one connection. */
  readonly enrollmentUuid: string | null
  readonly kind: "grade" | "regrade" | "preflight"
  readonly tries: number
  /** When the job was queued (the worker's metrics time a job from here to its end). */
  readonly queuedAt: Date
  readonly checkerUuid: string
  readonly checkerKind: "declarative" | "http"
  readonly rules: DeclarativeRule | null
  readonly url: string
  readonly timeoutMs: number
  readonly secretSealed: string | null
  readonly cases: ReadonlyArray<GradingCase>
}

/** What one call produced, as the worker host measured it. */
export type CallReport =
  | {
    readonly _tag: "answer"
    readonly statusCode: number
    readonly body: string
    readonly latencyMs: number
    readonly keyId?: string | undefined
  }
  | { readonly _tag: "error"; readonly error: string; readonly latencyMs: number; readonly keyId?: string | undefined }
  /** A declarative checker's rules, evaluated by the worker (nothing called). */
  | { readonly _tag: "evaluated"; readonly result: CheckResult; readonly latencyMs: number }

// Rows read here, each decoded by a decoder compiled once.
const decodeJobEnrollments = rowsDecoder(Schema.Struct({ uuid: Schema.String, enrollment_uuid: Schema.String }))
const decodeDiagnostics = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  kind: Schema.String,
  status: Schema.String,
  checker_uuid: Schema.NullOr(Schema.String),
  submission_uuid: Schema.NullOr(Schema.String),
  tries: Schema.Number,
  verdict: Schema.NullOr(Schema.String),
  platform_error: Schema.NullOr(Schema.String),
  diagnostics: Schema.NullOr(Schema.Struct({ calls: Schema.optional(Schema.Array(DiagnosticTry)) })),
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  finished_at: Schema.NullOr(Timestamp)
}))
const decodeUsage = rowsDecoder(Schema.Struct({
  checker_uuid: Schema.String,
  kind: Schema.String,
  day: Schema.String,
  calls: Schema.Number,
  verdicts: Schema.Number,
  platform_errors: Schema.Number,
  latency_ms_total: Schema.String,
  latency_ms_max: Schema.Number
}))

/** Claims up to `limit` due jobs within each checker's free concurrency; grade jobs' submissions move to `checking`. */
export const claimGradingCalls = (limit: number): Effect.Effect<ReadonlyArray<GradingCall>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const rows = yield* claimGradingJobs(limit)
      yield* dispatchSubmissions(rows.flatMap((row) => (row.kind === "grade" && row.submission_uuid !== null ? [row.submission_uuid] : [])))
      return rows.map((row): GradingCall => {
        const base = { jobUuid: row.uuid, kind: row.kind, courseUuid: row.course_uuid, nodeKey: row.node_key }
        const cases = row.kind === "preflight"
          ? (row.input.cases ?? []).map((one, index) => ({
            webhookId: `${row.uuid}.${index}`,
            reply: one.reply,
            clue: one.clue ?? null,
            body: JSON.stringify({ ...base, caseIndex: index, reply: one.reply ?? null, clue: one.clue ?? null })
          }))
          : [{
            webhookId: row.uuid,
            reply: row.reply,
            clue: row.clue ?? null,
            body: JSON.stringify({ ...base, submissionUuid: row.submission_uuid, attemptNo: row.attempt_no, reply: row.reply ?? null, clue: row.clue ?? null })
          }]
        return {
          jobUuid: row.uuid,
          enrollmentUuid: row.enrollment_uuid,
          kind: row.kind,
          tries: row.tries,
          queuedAt: row.created_at,
          checkerUuid: row.checker_uuid,
          checkerKind: row.checker_kind,
          rules: row.rules,
          url: row.url ?? "",
          timeoutMs: row.timeout_ms,
          secretSealed: row.secret_sealed,
          cases
        }
      })
    })))

/** What an external grader must answer: a verdict, the fraction of the points (0–1), optional feedback for the learner. */
const GraderAnswer = Schema.Struct({
  verdict: Verdict,
  score: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  feedback: Schema.optional(Schema.String.pipe(Schema.maxLength(10_000)))
})

type Classified =
  | { readonly _tag: "verdict"; readonly result: CheckResult }
  | { readonly _tag: "platform_error"; readonly error: string; readonly retry: boolean }

/** Keeps verdicts apart from platform errors. */
export const classify = (report: CallReport): Classified => {
  if (report._tag === "evaluated") return { _tag: "verdict", result: report.result }
  if (report._tag === "error") return { _tag: "platform_error", error: report.error, retry: true }
  const status = report.statusCode
  if (status >= 400 && status < 500) return { _tag: "platform_error", error: `the grader answered ${status}`, retry: false }
  if (status < 200 || status >= 300) return { _tag: "platform_error", error: `the grader answered ${status}`, retry: true }
  if (Buffer.byteLength(report.body) > maxAnswerBytes) return { _tag: "platform_error", error: "the grader's answer is larger than 256 KiB", retry: true }
  let parsed: unknown
  try {
    parsed = JSON.parse(report.body)
  } catch {
    return { _tag: "platform_error", error: "the grader's answer is not JSON", retry: true }
  }
  const answer = Schema.decodeUnknownEither(GraderAnswer)(parsed)
  if (Either.isLeft(answer)) return { _tag: "platform_error", error: "the grader's answer has no valid verdict and score", retry: true }
  const { feedback, score, verdict } = answer.right
  return { _tag: "verdict", result: { verdict, fraction: score ?? (verdict === "accepted" ? 1 : 0), ...(feedback !== undefined ? { feedback } : {}) } }
}

const diagnosticOf = (tries: number, report: CallReport, classified: Classified): DiagnosticTry => ({
  try: tries,
  at: new Date().toISOString(),
  latencyMs: Math.round(report.latencyMs),
  ...(report._tag === "answer" ? { httpStatus: report.statusCode, response: report.body.slice(0, excerptChars) } : {}),
  ...(report._tag !== "evaluated" && report.keyId !== undefined ? { keyId: report.keyId } : {}),
  ...(report._tag === "error" ? { error: report.error } : {}),
  mapping: classified._tag === "verdict"
    ? `verdict ${classified.result.verdict}, score ${classified.result.fraction}`
    : `platform error: ${classified.error}${classified.retry ? "" : " (no retry)"}`
})

/** The call's tries in the job's diagnostics; `latencyMs`: the slowest case of the latest try (near-timeout candidates compare it with the checker's timeout). */
const recordDiagnostics = (call: Pick<GradingCall, "jobUuid" | "tries">, reports: ReadonlyArray<CallReport>, classified: ReadonlyArray<Classified>) => {
  const entries = reports.map((report, index) => diagnosticOf(call.tries, report, classified[index]!))
  const slowest = reports.reduce((max, report) => Math.max(max, Math.round(report.latencyMs)), 0)
  return appendDiagnostics(call, entries, slowest)
}

interface Usage {
  readonly checkerUuid: string
  readonly kind: string
  calls: number
  verdicts: number
  latencyTotal: number
  latencyMax: number
}

/** Usage per checker, kind and day: one upsert per checker and kind of a batch (not one per call on the same row). */
const recordUsage = (usage: ReadonlyArray<Usage>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(usage, (u) =>
      sql`INSERT INTO learning_grading_usage AS u (checker_uuid, kind, day, calls, verdicts, platform_errors, latency_ms_total, latency_ms_max)
        VALUES (${u.checkerUuid}, ${u.kind}, (now() AT TIME ZONE 'UTC')::date, ${u.calls}, ${u.verdicts}, ${u.calls - u.verdicts}, ${u.latencyTotal}, ${u.latencyMax})
        ON CONFLICT (checker_uuid, kind, day) DO UPDATE SET calls = u.calls + excluded.calls, verdicts = u.verdicts + excluded.verdicts,
          platform_errors = u.platform_errors + excluded.platform_errors, latency_ms_total = u.latency_ms_total + excluded.latency_ms_total,
          latency_ms_max = greatest(u.latency_ms_max, excluded.latency_ms_max)`, { discard: true }))

const usageOf = (call: Pick<GradingCall, "checkerUuid" | "kind">, reports: ReadonlyArray<CallReport>, classified: ReadonlyArray<Classified>): Usage => ({
  checkerUuid: call.checkerUuid,
  kind: call.kind,
  calls: reports.length,
  verdicts: classified.filter((one) => one._tag === "verdict").length,
  latencyTotal: reports.reduce((sum, report) => sum + Math.round(report.latencyMs), 0),
  latencyMax: reports.reduce((max, report) => Math.max(max, Math.round(report.latencyMs)), 0)
})

const mergeUsage = (usage: Map<string, Usage>, entry: Usage | undefined) => {
  if (entry === undefined) return
  const key = `${entry.checkerUuid}:${entry.kind}`
  const held = usage.get(key)
  if (held === undefined) {
    usage.set(key, { ...entry })
    return
  }
  held.calls += entry.calls
  held.verdicts += entry.verdicts
  held.latencyTotal += entry.latencyTotal
  held.latencyMax = Math.max(held.latencyMax, entry.latencyMax)
}

/**
 * The circuit breaker: one more platform error of the checker; at the threshold a ready checker is
 * suspended (`auto_suspend` in the control history, `learning.checker.failed`). Returns whether the
 * checker is suspended now.
 */
const countPlatformError = (checkerUuid: string, error: string, jobUuid: string) =>
  Effect.gen(function*() {
    const counted = yield* countCheckerError(checkerUuid)
    const checker = yield* Effect.orDie(loadChecker(counted.course_uuid, checkerUuid, { lock: true }))
    if (checker.status === "suspended") return true
    if (counted.error_streak < breakerThreshold || !checkerAllows("breaker.open", checker.status)) return false
    const suspended = yield* moveChecker(checker, "breaker.open", {
      action: "auto_suspend",
      actorUuid: null,
      reason: `${counted.error_streak} platform errors in a row; the last: ${error}`
    })
    yield* checkerFailedEvent(suspended, { jobUuid })
    return true
  })

export type FinishOutcome = "graded" | "queued" | "failed" | "suspended" | "superseded" | "preflighted"

type FinishedCall = Pick<GradingCall, "jobUuid" | "kind" | "checkerUuid" | "tries">

/** Applies a claimed call's reports once (the job still `running` at the claim's tries); usage is the caller's to record. */
const finishOne = (call: FinishedCall, reports: ReadonlyArray<CallReport>, onUsage: (usage: Usage) => void) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      // The learner's enrollment before the job, the submission and the step states (docs/decisions.md "Lock order").
      if (call.kind === "grade") yield* lockJobEnrollments([call.jobUuid])
      const classified = reports.map(classify)
      // The diagnostics are written only while the claim still holds the job (`running` at its tries): the guard and the lock in one.
      if (!(yield* recordDiagnostics(call, reports, classified))) return "superseded" as const
      onUsage(usageOf(call, reports, classified))
      if (call.kind === "preflight") {
        // A preflight is judged as a whole: a platform error fails its case (no retry; the author preflights again).
        yield* finishPreflight(call.jobUuid, classified.map((one): CaseOutcome =>
          one._tag === "verdict" ? { verdict: one.result.verdict } : { platformError: one.error }))
        return "preflighted" as const
      }
      const outcome = classified[0]!
      if (outcome._tag === "verdict") {
        yield* resetErrorStreak(call.checkerUuid)
        if (call.kind === "grade") {
          yield* finishGradeJob(call.jobUuid, { _tag: "verdict", result: outcome.result })
        } else {
          yield* succeedJob(call.jobUuid, { verdict: outcome.result.verdict, result: outcome.result })
          yield* finishRegradeJob(call.jobUuid, { _tag: "verdict", result: outcome.result })
        }
        return "graded" as const
      }
      const suspended = yield* countPlatformError(call.checkerUuid, outcome.error, call.jobUuid)
      if (suspended) {
        // The outage is the checker's: this try is not spent; the job waits for checkers.resume.
        yield* requeueUnspent(call.jobUuid, outcome.error)
        return "suspended" as const
      }
      if (outcome.retry && call.tries < gradingTries) {
        yield* retryJob(call.jobUuid, outcome.error, 5 * 2 ** (call.tries - 1))
        return "queued" as const
      }
      if (call.kind === "grade") {
        yield* finishGradeJob(call.jobUuid, { _tag: "platform_error", error: outcome.error })
      } else {
        yield* failJob(call.jobUuid, outcome.error)
        yield* finishRegradeJob(call.jobUuid, { _tag: "platform_error", error: outcome.error })
      }
      return "failed" as const
    })))

/**
 * Locks, in uuid order, the checkers whose error streak a batch changes: those with a platform
 * error in it, and those with a verdict whose streak is not zero (a verdict resets it).
 */
const lockStreakCheckers = (finished: ReadonlyArray<{ readonly call: FinishedCall; readonly reports: ReadonlyArray<CallReport> }>) =>
  Effect.gen(function*() {
    const erring = new Set<string>()
    const answering = new Set<string>()
    for (const { call, reports } of finished) {
      if (call.kind === "preflight" || reports.length === 0) continue
      ;(classify(reports[0]!)._tag === "verdict" ? answering : erring).add(call.checkerUuid)
    }
    if (erring.size + answering.size === 0) return
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT 1 FROM learning_checkers
      WHERE uuid IN ${sql.in([...erring, ...answering])} AND (error_streak > 0 OR uuid IN ${sql.in([...erring, "00000000-0000-0000-0000-000000000000"])})
      ORDER BY uuid FOR NO KEY UPDATE`
  })

/**
 * Applies the reports of many finished calls in one transaction (one commit for the batch), each
 * call in its own savepoint: a call whose statements fail is rolled back alone (its job stays
 * `running` and is claimed again when its lease lapses) and the rest commit. Usage is written once
 * per checker and kind of the batch. Returns each call's outcome (`error` for one rolled back).
 *
 * The calls are applied in the lock order (docs/decisions.md "Lock order"), not in the batch's:
 * the checkers whose error streak changes are locked first, in uuid order; then the grade calls
 * in the uuid order of their enrollments (each locks its enrollment first), then the others. Two
 * workers' batches over the same learners or checkers then wait for each other, never crosswise,
 * and an enrollment is held only from its own call on.
 */
export const finishGradingCalls = (
  finished: ReadonlyArray<{ readonly call: FinishedCall; readonly reports: ReadonlyArray<CallReport> }>
): Effect.Effect<ReadonlyArray<FinishOutcome | "error">, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* lockStreakCheckers(finished)
      // Grade jobs only: a regrade's answer changes no learner row.
      const grades = finished.filter(({ call }) => call.kind === "grade").map(({ call }) => call.jobUuid)
      const enrollmentOf = new Map((grades.length === 0 ? [] : yield* Effect.flatMap(
        sql`
        SELECT uuid, enrollment_uuid FROM learning_grading_jobs WHERE uuid IN ${sql.in(grades)}`,
        decodeJobEnrollments
      )).map((row) => [row.uuid, row.enrollment_uuid]))
      const rank = (index: number) => {
        const { call } = finished[index]!
        return call.kind === "grade" ? `0${enrollmentOf.get(call.jobUuid) ?? ""}` : "1"
      }
      // Code-unit order: Postgres's uuid order for lower-case uuids (localeCompare may differ).
      const order = finished.map((_, index) => index).sort((a, b) => rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : a - b)
      const usage = new Map<string, Usage>()
      const outcomes: Array<FinishOutcome | "error"> = new Array(finished.length)
      for (const index of order) {
        const { call, reports } = finished[index]!
        // The call's usage counts only when its savepoint commits.
        let own: Usage | undefined
        const outcome = yield* finishOne(call, reports, (entry) => (own = entry)).pipe(
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("learning grading call not applied", cause), "error" as const))
        )
        if (outcome !== "error") mergeUsage(usage, own)
        outcomes[index] = outcome
      }
      // In key order (code units, as above), so two batches never wait for each other's usage rows.
      yield* recordUsage([...usage.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, entry]) => entry))
      return outcomes
    })))

// ---- staff reads ------------------------------------------------------------------------------------

export const gradingDiagnostics = (actor: Actor, courseUuid: string, jobUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.grading.diagnostics", courseUuid, { lock: false })
    const [job] = yield* Effect.flatMap(
      sql`SELECT uuid, kind, status, checker_uuid, submission_uuid, tries, verdict, platform_error, diagnostics, created_at, started_at, finished_at
      FROM learning_grading_jobs WHERE uuid = ${jobUuid} AND course_uuid = ${courseUuid}`,
      decodeDiagnostics
    )
    if (job === undefined) return yield* new NotFound({ message: `No grading job ${jobUuid} in this course` })
    return {
      jobUuid: job.uuid,
      kind: job.kind,
      status: job.status,
      ...(job.checker_uuid !== null ? { checkerUuid: job.checker_uuid } : {}),
      ...(job.submission_uuid !== null ? { submissionUuid: job.submission_uuid } : {}),
      tries: job.tries,
      ...(job.verdict !== null ? { verdict: job.verdict } : {}),
      ...(job.platform_error !== null ? { platformError: job.platform_error } : {}),
      calls: job.diagnostics?.calls ?? [],
      createdAt: job.created_at,
      ...(job.started_at !== null ? { startedAt: job.started_at } : {}),
      ...(job.finished_at !== null ? { finishedAt: job.finished_at } : {})
    }
  })

/** Usage over at most 366 days. */
export const maxUsageDays = 366

export const gradingUsage = (actor: Actor, courseUuid: string, query: { readonly from: Date; readonly to: Date; readonly checkerUuid?: string | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.grading.usage", courseUuid, { lock: false })
    if (query.to.getTime() < query.from.getTime()) return yield* new InvalidRequest({ message: "to: must not be before from" })
    if (query.to.getTime() - query.from.getTime() > maxUsageDays * 86_400_000) {
      return yield* new InvalidRequest({ message: `to: at most ${maxUsageDays} days after from` })
    }
    const rows = yield* Effect.flatMap(
      sql`SELECT u.checker_uuid, u.kind, u.day::text AS day, u.calls, u.verdicts, u.platform_errors, u.latency_ms_total::text, u.latency_ms_max
      FROM learning_grading_usage u JOIN learning_checkers c ON c.uuid = u.checker_uuid
      WHERE c.course_uuid = ${courseUuid} AND u.day BETWEEN (${query.from} AT TIME ZONE 'UTC')::date AND (${query.to} AT TIME ZONE 'UTC')::date
        ${query.checkerUuid === undefined ? sql`` : sql`AND u.checker_uuid = ${query.checkerUuid}`}
      ORDER BY u.day, u.checker_uuid, u.kind`,
      decodeUsage
    )
    return {
      from: query.from,
      to: query.to,
      items: rows.map((row) => ({
        checkerUuid: row.checker_uuid,
        kind: row.kind,
        day: row.day,
        calls: row.calls,
        verdicts: row.verdicts,
        platformErrors: row.platform_errors,
        errorRate: row.calls === 0 ? 0 : Math.round((row.platform_errors / row.calls) * 10_000) / 10_000,
        latencyMsAvg: row.calls === 0 ? 0 : Math.round(Number(row.latency_ms_total) / row.calls),
        latencyMsMax: row.latency_ms_max
      }))
    }
  })
