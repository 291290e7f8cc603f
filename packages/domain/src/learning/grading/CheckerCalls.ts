import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Schema } from "effect"
import { InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { AnyJson } from "../../kernel/Common.js"
import { once } from "../Commands.js"
import { enrollmentFor } from "../enrollments/EnrollmentAccess.js"
import { CheckerNotReady } from "../LearningErrors.js"
import { type GenerationState, GradingJob } from "../steps/StepModel.js"
import { generationsPerDay, sampleRunsPerHour, StepLimitReached, windowCount } from "../steps/StepLimits.js"
import { recordStepProgress } from "../steps/StepStates.js"
import { requireReplySize, requireWorkable, type StepContext, stepFor } from "../steps/Steps.js"
import { insertVariant } from "../steps/VariantRepository.js"
import { rowsDecoder } from "../../store/Rows.js"
import {
  claimCheckerCallJobs,
  decodeJobs,
  failJob,
  GradingJobRow,
  GradingJobStatus,
  insertCheckerCallJob,
  jobColumns,
  retryJob,
  succeedJob
} from "./GradingJobRepository.js"

const decodeReadyChecker = rowsDecoder(Schema.Struct({
  uuid: Schema.String,
  status: Schema.String,
  url: Schema.NullOr(Schema.String),
  generator_url: Schema.NullOr(Schema.String)
}))
const decodeGenerationJob = rowsDecoder(Schema.Struct({ uuid: Schema.String, status: GradingJobStatus }))
const decodeRunningCall = rowsDecoder(Schema.Struct({
  kind: Schema.Literal("sample_run", "generate"),
  enrollment_uuid: Schema.String,
  node_key: Schema.String
}))

/**
 * Calls to a step's external checker that are not grades: sample runs
 * (the reply on the checker's public cases; no score, no attempt) and variant generation (the
 * generator answers `{dataset, clue}`; the clue is stored server-only, the learner sees the
 * dataset). Each is a grading job: the operation queues it; the worker host claims it
 * (`claimCheckerCalls`, SKIP LOCKED with a lease), makes the signed HTTPS call through the SSRF
 * guard, and hands the outcome to `finishCheckerCall`, which applies it once. Platform errors
 * (timeout, 5xx, bad body) are retried 3 times; a 4xx fails at once.
 */

/** A job as its learner sees it: the result holds a sample run's public cases or a generation's dataset, never a clue. */
export const jobView = (row: GradingJobRow): GradingJob => ({
  uuid: row.uuid,
  kind: row.kind,
  status: row.status,
  courseUuid: row.course_uuid,
  ...(row.enrollment_uuid !== null ? { enrollmentUuid: row.enrollment_uuid } : {}),
  ...(row.node_key !== null ? { nodeKey: row.node_key } : {}),
  ...(row.submission_uuid !== null ? { submissionUuid: row.submission_uuid } : {}),
  ...(row.verdict !== null ? { verdict: row.verdict } : {}),
  ...(row.result !== null && row.result !== undefined ? { result: row.result } : {}),
  ...(row.platform_error !== null ? { platformError: row.platform_error } : {}),
  tries: row.tries,
  createdAt: row.created_at,
  ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {})
})

/** The step's external checker when it is ready (and has what `need` asks for); else 409 checker_not_ready. */
const readyChecker = (step: StepContext, need: "url" | "generator_url") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const uuid = step.node.grading?.checkerUuid
    const [checker] = uuid === undefined ? [] : yield* Effect.flatMap(
      sql`
      SELECT uuid, status, url, generator_url FROM learning_checkers WHERE uuid = ${uuid} AND course_uuid = ${step.course.uuid}`,
      decodeReadyChecker
    )
    if (checker === undefined) return yield* new CheckerNotReady({ message: "This step has no external checker" })
    if (checker.status !== "ready") return yield* new CheckerNotReady({ message: `The step's checker is ${checker.status}` })
    if (checker[need] === null) {
      return yield* new CheckerNotReady({ message: need === "url" ? "The step's checker has no endpoint" : "The step's checker has no generator" })
    }
    return checker
  })

const queueJob = (step: StepContext, kind: "sample_run" | "generate", checkerUuid: string, input: unknown) =>
  Effect.map(
    insertCheckerCallJob({
      kind,
      courseUuid: step.course.uuid,
      enrollmentUuid: step.enrollment.uuid,
      nodeKey: step.node.nodeKey,
      checkerUuid,
      requesterProfileUuid: step.enrollment.profile_uuid,
      input
    }),
    jobView
  )

/** Serializes a learner's jobs of one kind on one step so a window limit holds under concurrency. */
const lockWindow = (step: StepContext, kind: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${kind}:${step.enrollment.uuid}:${step.node.nodeKey}`}, 0))`)

const recentJobs = (step: StepContext, kind: "sample_run" | "generate", seconds: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    windowCount(
      sql`SELECT created_at FROM learning_grading_jobs WHERE enrollment_uuid = ${step.enrollment.uuid} AND node_key = ${step.node.nodeKey}
        AND kind = ${kind} AND created_at > now() - make_interval(secs => ${seconds}) ORDER BY created_at`,
      seconds
    ))

export const createSampleRun = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: { readonly requestUuid: string; readonly reply: unknown }) =>
  once(actor, "learning.sample_runs.create", input, GradingJob, Effect.gen(function*() {
    yield* requireReplySize(input.reply)
    const step = yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: true })
    yield* requireWorkable(step)
    const checker = yield* readyChecker(step, "url")
    yield* lockWindow(step, "sample_run")
    const recent = yield* recentJobs(step, "sample_run", 3600)
    if (recent.count >= sampleRunsPerHour) {
      return yield* new StepLimitReached({ message: `At most ${sampleRunsPerHour} sample runs of a step an hour`, retryAfterSeconds: recent.retryAfterSeconds, limit: sampleRunsPerHour, windowSeconds: 3600 })
    }
    return yield* queueJob(step, "sample_run", checker.uuid, { reply: input.reply })
  }))

/** Asks the generator for a variant; while one is pending it is returned instead of a second. */
export const createGeneration = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.generated_variants.create", input, GradingJob, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const step = yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: true })
    yield* requireWorkable(step)
    if (step.node.variants?.mode !== "generated") return yield* new InvalidState({ message: "This step's variants are not generated" })
    const checker = yield* readyChecker(step, "generator_url")
    const [pending] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(jobColumns)} FROM learning_grading_jobs
      WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey} AND kind = 'generate' AND status IN ('queued', 'running')`,
      decodeJobs
    )
    if (pending !== undefined) return jobView(pending)
    yield* lockWindow(step, "generate")
    const recent = yield* recentJobs(step, "generate", 86_400)
    if (recent.count >= generationsPerDay) {
      return yield* new StepLimitReached({ message: `At most ${generationsPerDay} generated variants of a step a day`, retryAfterSeconds: recent.retryAfterSeconds, limit: generationsPerDay, windowSeconds: 86_400 })
    }
    yield* recordStepProgress(enrollmentUuid, nodeKey, "in_progress")
    return yield* queueJob(step, "generate", checker.uuid, {})
  }))

export const generationState = (actor: Actor, enrollmentUuid: string, nodeKey: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: false })
    const [job] = yield* Effect.flatMap(
      sql`SELECT uuid, status FROM learning_grading_jobs
      WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey} AND kind = 'generate' ORDER BY created_at DESC LIMIT 1`,
      decodeGenerationJob
    )
    const state: GenerationState = job === undefined
      ? { status: "none" }
      : { status: job.status === "succeeded" ? "ready" : job.status === "queued" || job.status === "running" ? "pending" : "failed", jobUuid: job.uuid }
    return state
  })

/** A sample run or generation job of the caller (its enrollment's learner); 404 to anyone else. */
export const getCheckerJob = (actor: Actor, kind: "sample_run" | "generate", uuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [job] = yield* Effect.flatMap(sql`SELECT ${sql.literal(jobColumns)} FROM learning_grading_jobs WHERE uuid = ${uuid} AND kind = ${kind}`, decodeJobs)
    const missing = new NotFound({ message: `No ${kind === "generate" ? "generation" : "sample run"} ${uuid}` })
    if (job === undefined || job.enrollment_uuid === null) return yield* missing
    yield* enrollmentFor(actor, job.enrollment_uuid, { lock: false })
      .pipe(Effect.catchTag("NotFound", () => Effect.fail(missing)))
    return jobView(job)
  })

// ---- the worker's side ------------------------------------------------------------------------------

/** Tries of a call before a platform error fails it; the lease a claimed call holds. */
export const checkerCallTries = 3
export const checkerCallLeaseSeconds = 120

/** A claimed call: where to send what, and the sealed secret to sign it with (opened by the worker host). */
export interface CheckerCall {
  readonly jobUuid: string
  readonly kind: "sample_run" | "generate"
  readonly tries: number
  readonly checkerUuid: string
  readonly url: string
  readonly timeoutMs: number
  readonly secretSealed: string | null
  /** The JSON body: job, kind, course, node, and for a sample run the reply and the public cases. */
  readonly body: string
}

/** Claims due sample-run and generation jobs (queued and due, or running with a lapsed lease) with SKIP LOCKED. */
export const claimCheckerCalls = (limit: number): Effect.Effect<ReadonlyArray<CheckerCall>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.withTransaction(claimCheckerCallJobs(limit, checkerCallLeaseSeconds))
    return rows.map((row) => ({
      jobUuid: row.uuid,
      kind: row.kind,
      tries: row.tries,
      checkerUuid: row.checker_uuid,
      url: (row.kind === "generate" ? row.generator_url : row.url) ?? "",
      timeoutMs: row.timeout_ms,
      secretSealed: row.secret_sealed,
      body: JSON.stringify({
        jobUuid: row.uuid,
        kind: row.kind,
        courseUuid: row.course_uuid,
        nodeKey: row.node_key,
        ...(row.kind === "sample_run" ? { reply: row.input.reply ?? null, cases: row.sample_cases } : {})
      })
    }))
  })

/** What a generator must answer: the dataset shown to the learner and the clue kept for its checker. */
const GeneratorAnswer = Schema.Struct({ dataset: AnyJson, clue: Schema.optional(AnyJson) })
/** What a sample run answers: a verdict and per-case results shown to the learner. */
const SampleAnswer = Schema.Struct({
  verdict: Schema.Literal("accepted", "wrong", "partial", "compile_error", "runtime_error", "time_limit", "invalid_reply"),
  cases: Schema.optional(Schema.Array(AnyJson).pipe(Schema.maxItems(100)))
})

export type CallOutcome =
  | { readonly _tag: "answer"; readonly statusCode: number; readonly body: string }
  | { readonly _tag: "error"; readonly error: string }

const maxAnswerBytes = 256 * 1024

/**
 * Applies a call's outcome once (only while the claim still holds the job: `running` at these
 * tries). 2xx with a valid body: the job succeeds (a generation issues the variant). 4xx: fails
 * without retry. Timeouts, network errors, 5xx and bad bodies are platform errors: retried with
 * backoff up to `checkerCallTries`, then failed. Returns the job's status afterwards.
 */
export const finishCheckerCall = (call: Pick<CheckerCall, "jobUuid" | "tries">, outcome: CallOutcome) =>
  sqlTransaction(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [job] = yield* Effect.flatMap(
      sql`SELECT kind, enrollment_uuid, node_key
      FROM learning_grading_jobs WHERE uuid = ${call.jobUuid} AND status = 'running' AND tries = ${call.tries} FOR UPDATE`,
      decodeRunningCall
    )
    if (job === undefined) return "superseded" as const
    const fail = (error: string, retry: boolean) =>
      Effect.gen(function*() {
        if (retry && call.tries < checkerCallTries) {
          yield* retryJob(call.jobUuid, error, 5 * 2 ** (call.tries - 1))
          return "queued" as const
        }
        yield* failJob(call.jobUuid, error)
        return "failed" as const
      })
    if (outcome._tag === "error") return yield* fail(outcome.error, true)
    if (outcome.statusCode >= 400 && outcome.statusCode < 500) return yield* fail(`the checker answered ${outcome.statusCode}`, false)
    if (outcome.statusCode < 200 || outcome.statusCode >= 300) return yield* fail(`the checker answered ${outcome.statusCode}`, true)
    if (Buffer.byteLength(outcome.body) > maxAnswerBytes) return yield* fail("the checker's answer is larger than 256 KiB", true)
    let parsed: unknown
    try {
      parsed = JSON.parse(outcome.body)
    } catch {
      return yield* fail("the checker's answer is not JSON", true)
    }
    if (job.kind === "generate") {
      const answer = Schema.decodeUnknownEither(GeneratorAnswer)(parsed)
      if (Either.isLeft(answer)) return yield* fail("the generator's answer has no dataset", true)
      const variant = yield* insertVariant(job.enrollment_uuid, job.node_key, {
        source: "generated",
        dataset: answer.right.dataset,
        clue: answer.right.clue,
        jobUuid: call.jobUuid
      })
      yield* succeedJob(call.jobUuid, { result: { variantUuid: variant.uuid, dataset: answer.right.dataset ?? null } })
      return "succeeded" as const
    }
    const answer = Schema.decodeUnknownEither(SampleAnswer)(parsed)
    if (Either.isLeft(answer)) return yield* fail("the sample run's answer has no valid verdict", true)
    yield* succeedJob(call.jobUuid, { verdict: answer.right.verdict, result: { cases: answer.right.cases ?? [] } })
    return "succeeded" as const
  }))

const sqlTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect))
