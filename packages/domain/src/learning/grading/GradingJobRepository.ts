import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { DeclarativeRule } from "./Declarative.js"
import { CheckerKind } from "./GradingModel.js"

/**
 * `learning_grading_jobs`: the one module that writes it (docs/layout.md). The queue of the
 * grading worker (grades, regrades, preflights) and of the checker calls (sample runs,
 * generations): what each kind of job means, and when a job moves, stays with its rules
 * (`Grading.ts`, `CheckerCalls.ts`, `Checkers.ts`, `steps/Submissions.ts`, `corrections/*`); here
 * are its statements, unchanged, with their rows decoded. Callers keep their locks: each
 * statement locks what it did where it stood before (docs/decisions.md "Lock order").
 */

export const GradingJobKind = Schema.Literal("grade", "sample_run", "preflight", "regrade", "generate")
export const GradingJobStatus = Schema.Literal("queued", "running", "succeeded", "failed", "cancelled")

/** A job as its learner or author sees it (`CheckerCalls.jobView`). */
export const GradingJobRow = Schema.Struct({
  uuid: Schema.String,
  kind: GradingJobKind,
  status: GradingJobStatus,
  course_uuid: Schema.String,
  enrollment_uuid: Schema.NullOr(Schema.String),
  node_key: Schema.NullOr(Schema.String),
  submission_uuid: Schema.NullOr(Schema.String),
  checker_uuid: Schema.NullOr(Schema.String),
  verdict: Schema.NullOr(Schema.String),
  result: Schema.Unknown,
  platform_error: Schema.NullOr(Schema.String),
  tries: Schema.Number,
  created_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp)
})
export type GradingJobRow = typeof GradingJobRow.Type

export const jobColumns = selectList(GradingJobRow)
export const decodeJobs = rowsDecoder(GradingJobRow)

// ---- queueing ----------------------------------------------------------------------------------------

/** Queues a sample run or a generation of a learner's step and returns it. */
export const insertCheckerCallJob = (job: {
  readonly kind: "sample_run" | "generate"
  readonly courseUuid: string
  readonly enrollmentUuid: string
  readonly nodeKey: string
  readonly checkerUuid: string
  readonly requesterProfileUuid: string
  readonly input: unknown
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_grading_jobs (uuid, kind, course_uuid, enrollment_uuid, node_key, checker_uuid, requester_profile_uuid, input)
        VALUES (${crypto.randomUUID()}, ${job.kind}, ${job.courseUuid}, ${job.enrollmentUuid}, ${job.nodeKey}, ${job.checkerUuid},
          ${job.requesterProfileUuid}, ${JSON.stringify(job.input)}::jsonb)
        RETURNING ${sql.literal(jobColumns)}`,
        decodeJobs
      ),
      (rows) => rows[0]!
    ))

/** Queues a checker's preflight over reference cases. */
export const insertPreflightJob = (job: {
  readonly uuid: string
  readonly courseUuid: string
  readonly checkerUuid: string
  readonly requesterProfileUuid: string
  readonly cases: ReadonlyArray<unknown>
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_grading_jobs (uuid, kind, course_uuid, checker_uuid, requester_profile_uuid, input)
      VALUES (${job.uuid}, 'preflight', ${job.courseUuid}, ${job.checkerUuid}, ${job.requesterProfileUuid}, ${JSON.stringify({ cases: job.cases })}::jsonb)`)

/** Queues the grade of a submission by a checker (a submit, an incident's requeue, a regrade of a failed check). */
export const insertGradeJob = (job: {
  readonly courseUuid: string
  readonly enrollmentUuid: string
  readonly nodeKey: string
  readonly submissionUuid: string
  readonly checkerUuid: string | null
  readonly requesterProfileUuid: string
  readonly input: unknown
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_grading_jobs (uuid, kind, course_uuid, enrollment_uuid, node_key, submission_uuid, checker_uuid,
          requester_profile_uuid, input)
        VALUES (${crypto.randomUUID()}, 'grade', ${job.courseUuid}, ${job.enrollmentUuid}, ${job.nodeKey}, ${job.submissionUuid},
          ${job.checkerUuid}, ${job.requesterProfileUuid}, ${JSON.stringify(job.input)}::jsonb)`)

/** Queues the regrade of a submission (an item of a regrade). */
export const insertRegradeJob = (job: {
  readonly uuid: string
  readonly courseUuid: string
  readonly enrollmentUuid: string
  readonly nodeKey: string
  readonly submissionUuid: string
  readonly checkerUuid: string
  readonly requesterProfileUuid: string
  readonly regradeUuid: string
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_grading_jobs (uuid, kind, course_uuid, enrollment_uuid, node_key, submission_uuid, checker_uuid,
          requester_profile_uuid, regrade_uuid)
        VALUES (${job.uuid}, 'regrade', ${job.courseUuid}, ${job.enrollmentUuid}, ${job.nodeKey}, ${job.submissionUuid}, ${job.checkerUuid},
          ${job.requesterProfileUuid}, ${job.regradeUuid})`)

// ---- claiming ----------------------------------------------------------------------------------------

const CheckerCallClaim = Schema.Struct({
  uuid: Schema.String,
  kind: Schema.Literal("sample_run", "generate"),
  tries: Schema.Number,
  course_uuid: Schema.String,
  node_key: Schema.String,
  input: Schema.Struct({ reply: Schema.optional(Schema.Unknown) }),
  checker_uuid: Schema.String,
  url: Schema.NullOr(Schema.String),
  generator_url: Schema.NullOr(Schema.String),
  timeout_ms: Schema.Number,
  secret_sealed: Schema.NullOr(Schema.String),
  sample_cases: Schema.Unknown
})
const decodeCheckerCallClaims = rowsDecoder(CheckerCallClaim)

/**
 * Claims due sample-run and generation jobs (queued and due, or running with a lapsed lease) with
 * SKIP LOCKED, each with its checker's endpoint. Run it in a transaction of its own.
 */
export const claimCheckerCallJobs = (limit: number, leaseSeconds: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`WITH due AS (
        SELECT uuid FROM learning_grading_jobs
        WHERE kind IN ('sample_run', 'generate')
          AND ((status = 'queued' AND next_try_at <= now()) OR (status = 'running' AND lease_until < now()))
        ORDER BY next_try_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE learning_grading_jobs j SET status = 'running', tries = tries + 1, updated_at = now(),
          lease_until = now() + make_interval(secs => ${leaseSeconds})
        FROM due WHERE j.uuid = due.uuid
        RETURNING j.uuid, j.kind, j.tries, j.course_uuid, j.node_key, j.input, j.checker_uuid
      )
      SELECT claimed.*, c.url, c.generator_url, c.timeout_ms, c.secret_sealed, c.sample_cases
      FROM claimed JOIN learning_checkers c ON c.uuid = claimed.checker_uuid`,
      decodeCheckerCallClaims
    ))

const GradingClaim = Schema.Struct({
  uuid: Schema.String,
  kind: Schema.Literal("grade", "regrade", "preflight"),
  tries: Schema.Number,
  course_uuid: Schema.String,
  node_key: Schema.NullOr(Schema.String),
  submission_uuid: Schema.NullOr(Schema.String),
  enrollment_uuid: Schema.NullOr(Schema.String),
  input: Schema.Struct({
    cases: Schema.optional(Schema.Array(Schema.Struct({ reply: Schema.optional(Schema.Unknown), clue: Schema.optional(Schema.Unknown) })))
  }),
  checker_uuid: Schema.String,
  checker_kind: CheckerKind,
  rules: Schema.NullOr(DeclarativeRule),
  url: Schema.NullOr(Schema.String),
  timeout_ms: Schema.Number,
  secret_sealed: Schema.NullOr(Schema.String),
  reply: Schema.Unknown,
  clue: Schema.Unknown,
  attempt_no: Schema.NullOr(Schema.Number),
  created_at: Timestamp
})
const decodeGradingClaims = rowsDecoder(GradingClaim)

const graded = ["grade", "regrade", "preflight"] as const

/**
 * Claims up to `limit` due grade, regrade and preflight jobs within each checker's free
 * concurrency, with what a call needs (the checker, the submission's reply, the variant's clue).
 * The checker rows are claimed with SKIP LOCKED too (`Grading.claimGradingCalls` says why).
 */
export const claimGradingJobs = (limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`WITH cap AS (
          SELECT c.uuid, c.status, c.timeout_ms, c.concurrency - (SELECT count(*)::int FROM learning_grading_jobs r
            WHERE r.checker_uuid = c.uuid AND r.status = 'running' AND r.lease_until >= now() AND r.kind IN ${sql.in(graded)}) AS free
          FROM learning_checkers c
          WHERE c.status IN ('ready', 'superseded', 'preflighting') AND EXISTS (SELECT 1 FROM learning_grading_jobs q
            WHERE q.checker_uuid = c.uuid AND q.kind IN ${sql.in(graded)}
              AND ((q.status = 'queued' AND q.next_try_at <= now()) OR (q.status = 'running' AND q.lease_until < now())))
          FOR NO KEY UPDATE OF c SKIP LOCKED
        ), due AS (
          SELECT j.uuid, cap.timeout_ms FROM cap CROSS JOIN LATERAL (
            SELECT q.uuid FROM learning_grading_jobs q
            WHERE q.checker_uuid = cap.uuid AND q.kind IN ${sql.in(graded)} AND (q.kind = 'preflight') = (cap.status = 'preflighting')
              AND ((q.status = 'queued' AND q.next_try_at <= now()) OR (q.status = 'running' AND q.lease_until < now()))
            ORDER BY q.next_try_at LIMIT greatest(cap.free, 0) FOR UPDATE OF q SKIP LOCKED
          ) j LIMIT ${limit}
        ), claimed AS (
          UPDATE learning_grading_jobs j SET status = 'running', tries = j.tries + 1, updated_at = now(), started_at = coalesce(j.started_at, now()),
            lease_until = now() + make_interval(secs => 60 + ceil(due.timeout_ms / 1000.0) * greatest(1, coalesce(jsonb_array_length(j.input->'cases'), 1)))
          FROM due WHERE j.uuid = due.uuid
          RETURNING j.uuid, j.kind, j.tries, j.course_uuid, j.node_key, j.submission_uuid, j.enrollment_uuid, j.input, j.checker_uuid, j.created_at
        )
        SELECT claimed.*, c.kind AS checker_kind, c.rules, c.url, c.timeout_ms, c.secret_sealed, s.reply, v.clue, s.attempt_no
        FROM claimed JOIN learning_checkers c ON c.uuid = claimed.checker_uuid
          LEFT JOIN learning_submissions s ON s.uuid = claimed.submission_uuid
          LEFT JOIN learning_variants v ON v.uuid = s.variant_uuid`,
      decodeGradingClaims
    ))

const decodeGradeClaims = rowsDecoder(Schema.Struct({ uuid: Schema.String, submission_uuid: Schema.String }))

/** Claims up to `limit` queued grade jobs, oldest first, with a 5-minute lease (`Submissions.claimGradeJobs`). */
export const claimQueuedGradeJobs = (limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE learning_grading_jobs SET status = 'running', tries = tries + 1,
        lease_until = now() + interval '5 minutes', updated_at = now()
      WHERE uuid IN (SELECT uuid FROM learning_grading_jobs WHERE kind = 'grade' AND status = 'queued' ORDER BY created_at
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING uuid, submission_uuid`,
      decodeGradeClaims
    ))

// ---- finishing ---------------------------------------------------------------------------------------

/**
 * Adds a claimed call's tries to the job's diagnostics, only while the claim still holds the job
 * (`running` at these tries): whether it did.
 */
export const appendDiagnostics = (call: { readonly jobUuid: string; readonly tries: number }, entries: ReadonlyArray<unknown>, latencyMs: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`UPDATE learning_grading_jobs SET diagnostics = jsonb_build_object('calls',
          coalesce(diagnostics->'calls', '[]'::jsonb) || ${JSON.stringify(entries)}::jsonb, 'latencyMs', ${latencyMs}::int)
        WHERE uuid = ${call.jobUuid} AND status = 'running' AND tries = ${call.tries} RETURNING uuid`,
      (rows) => rows.length > 0
    ))

/** A platform error to retry: the job goes back to the queue, due after `afterSeconds`. */
export const retryJob = (uuid: string, error: string, afterSeconds: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_grading_jobs SET status = 'queued', lease_until = NULL, platform_error = ${error}, updated_at = now(),
      next_try_at = now() + make_interval(secs => ${afterSeconds}) WHERE uuid = ${uuid}`)

/** The checker was suspended by this call's error: the job waits for `checkers.resume`, its try not spent. */
export const requeueUnspent = (uuid: string, error: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_grading_jobs SET status = 'queued', tries = tries - 1, lease_until = NULL, platform_error = ${error},
      next_try_at = now(), updated_at = now() WHERE uuid = ${uuid}`)

/** A job that failed for good (a platform error past its tries, or one not retried). */
export const failJob = (uuid: string, error: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_grading_jobs SET status = 'failed', lease_until = NULL, platform_error = ${error}, finished_at = now(),
      updated_at = now() WHERE uuid = ${uuid}`)

/** A job that succeeded with its result (and verdict, where it has one). */
export const succeedJob = (uuid: string, outcome: { readonly verdict?: string; readonly result: unknown }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_grading_jobs SET status = 'succeeded', lease_until = NULL, platform_error = NULL, finished_at = now(), updated_at = now(),
      ${outcome.verdict !== undefined ? sql`verdict = ${outcome.verdict},` : sql``} result = ${JSON.stringify(outcome.result)}::jsonb
      WHERE uuid = ${uuid}`)

/** A preflight judged: `passed` or `failed`, with its per-case results. */
export const succeedPreflightJob = (uuid: string, verdict: "passed" | "failed", result: unknown) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_grading_jobs SET status = 'succeeded', verdict = ${verdict}, lease_until = NULL,
      result = ${JSON.stringify(result)}::jsonb, finished_at = now(), updated_at = now() WHERE uuid = ${uuid}`)

const decodeFinishedGrade = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  submission_uuid: Schema.String,
  checker_uuid: Schema.NullOr(Schema.String),
  course_uuid: Schema.String
}))

/** Finishes a running grade job (a verdict, or a platform failure after the retries): the job, or undefined when it was not running. */
export const finishRunningGradeJob = (
  uuid: string,
  outcome: { readonly status: "succeeded" | "failed"; readonly verdict: string | null; readonly platformError: string | null }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`
      UPDATE learning_grading_jobs SET status = ${outcome.status},
        verdict = ${outcome.verdict},
        platform_error = ${outcome.platformError},
        finished_at = now(), updated_at = now(), lease_until = NULL
      WHERE uuid = ${uuid} AND kind = 'grade' AND status = 'running' RETURNING uuid, submission_uuid, checker_uuid, course_uuid`,
        decodeFinishedGrade
      ),
      (rows) => rows[0]
    ))

/** A cancelled submission: its queued or running jobs are cancelled. */
export const cancelSubmissionJobs = (submissionUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_grading_jobs SET status = 'cancelled', finished_at = now(), updated_at = now(), lease_until = NULL
      WHERE submission_uuid = ${submissionUuid} AND status IN ('queued', 'running')`)

/** A resumed checker: its queued grade and regrade jobs are due at once. */
export const wakeCheckerJobs = (checkerUuid: string): Effect.Effect<unknown, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_grading_jobs SET next_try_at = now(), updated_at = now()
      WHERE checker_uuid = ${checkerUuid} AND status = 'queued' AND kind IN ('grade', 'regrade')`)
