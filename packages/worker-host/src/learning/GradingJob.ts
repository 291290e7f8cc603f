import {
  type CallReport,
  checkReply,
  claimGradingCalls,
  finishGradingCalls,
  type GradingCall,
  jobSpan,
  openSecret,
  ServerSecret
} from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Chunk, Duration, Effect, Queue, type Redacted } from "effect"
import { createHash } from "node:crypto"
import type { JobOptions } from "../marketplace/MarketplaceJobs.js"
import { whenReady, withFailureBackoff } from "../webhooks/WebhookDispatcher.js"
import { makeAddressGuard, type Resolver } from "../webhooks/AddressGuard.js"
import { makeWebhookSender, type WebhookSender } from "../webhooks/WebhookSender.js"
import { recordGradingCall, recordGradingOutcome } from "../WorkerMetrics.js"
import type { WorkerJob } from "../WorkerLoop.js"
import { callOnce } from "./CheckerCallsJob.js"

/**
 * The grading worker: drains grade, regrade and preflight jobs. It
 * keeps up to `maxInFlight` calls running and claims more whenever calls are applied or every
 * `pollMs` (so a checker that answers in 5 s never holds back another checker's jobs; per-checker
 * concurrency is enforced by the claim, which claims a batch in one transaction). Answers are
 * applied by `finishers` fibers in batches, one transaction per batch and a savepoint per call, so
 * the commits (and the usage row each checker shares) do not serialise the calls. External calls
 * go through the webhook SSRF guard, signed
 * in the Standard Webhooks scheme (`webhook-id` = the job uuid) within the checker's timeout;
 * declarative checkers are evaluated here (pure rules, no code). The answer excerpt kept for the
 * diagnostics has the checker's secret redacted; the key id is a fingerprint of the secret.
 */

const answerBytes = 256 * 1024 + 1
const pollMs = 25
/** Answered calls applied per transaction at most, and the transactions applying them at once (of the pool's 10 connections). */
const finishBatch = 64
const finishers = 4

interface Answered {
  readonly call: GradingCall
  readonly reports: ReadonlyArray<CallReport>
}

const hashOf = (text: string) => {
  let hash = 0
  for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) >>> 0
  return hash
}

interface Key {
  readonly secret: string
  readonly keyId: string
}

const keyOf = (serverSecret: Redacted.Redacted<string>, call: GradingCall, cache: Map<string, Key | null>): Key | null => {
  const cached = cache.get(call.checkerUuid)
  if (cached !== undefined) return cached
  let key: Key | null = null
  if (call.secretSealed !== null) {
    try {
      const secret = openSecret(serverSecret, call.checkerUuid, call.secretSealed)
      key = { secret, keyId: "key_" + createHash("sha256").update(secret).digest("hex").slice(0, 12) }
    } catch {
      key = null
    }
  }
  if (cache.size > 1000) cache.clear()
  cache.set(call.checkerUuid, key)
  return key
}

const redact = (text: string, secret: string | undefined) => (secret === undefined || secret === "" ? text : text.split(secret).join("[redacted]"))

/** Applies answered calls in one transaction, counting each outcome (WorkerMetrics.ts). */
const finishCounted = (batch: ReadonlyArray<Answered>) =>
  Effect.flatMap(finishGradingCalls(batch), (outcomes) =>
    Effect.sync(() => {
      const now = Date.now()
      outcomes.forEach((outcome, index) => {
        const { call } = batch[index]!
        recordGradingOutcome(call.kind, outcome, call.queuedAt, now)
      })
    }))

/**
 * Applies a batch of answered calls; a batch that fails as a whole (a deadlock with another
 * worker, say) is applied again one call at a time, and a call that still fails is logged (its
 * lease runs out and it is graded again).
 */
const applyBatch = (batch: ReadonlyArray<Answered>) =>
  finishCounted(batch).pipe(
    Effect.catchAllCause(() =>
      Effect.forEach(batch, (one) =>
        finishCounted([one]).pipe(
          Effect.catchAllCause((cause) =>
            Effect.zipRight(Effect.sync(() => recordGradingOutcome(one.call.kind, "error", one.call.queuedAt, Date.now())), Effect.logWarning("learning grading call not applied", cause))
          )
        ), { discard: true })
    )
  )

export const gradeCall = (
  sender: WebhookSender,
  serverSecret: Redacted.Redacted<string>,
  call: GradingCall,
  keys: Map<string, Key | null>
): Effect.Effect<ReadonlyArray<CallReport>> =>
  Effect.forEach(call.cases, (one) =>
    Effect.gen(function*() {
      const started = performance.now()
      if (call.checkerKind === "declarative") {
        const result = call.rules === null
          ? { fraction: 0, verdict: "invalid_reply" as const, feedback: "the checker has no rules" }
          : checkReply(call.rules, one.reply, one.clue ?? undefined)
        return { _tag: "evaluated", result, latencyMs: performance.now() - started } as CallReport
      }
      const key = keyOf(serverSecret, call, keys)
      const outcome = yield* callOnce(sender, serverSecret, {
        jobUuid: one.webhookId,
        checkerUuid: call.checkerUuid,
        url: call.url,
        timeoutMs: call.timeoutMs,
        secretSealed: call.secretSealed,
        body: one.body
      })
      const latencyMs = performance.now() - started
      const keyId = key?.keyId
      return outcome._tag === "error"
        ? { _tag: "error", error: redact(outcome.error, key?.secret), latencyMs, keyId } as CallReport
        : { _tag: "answer", statusCode: outcome.statusCode, body: redact(outcome.body, key?.secret), latencyMs, keyId } as CallReport
    }))

export const makeLearningGradingJob = (
  options: JobOptions & { readonly allowHttpLoopback: boolean; readonly resolver?: Resolver; readonly maxInFlight?: number }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const serverSecret = yield* ServerSecret
    const maxInFlight = options.maxInFlight ?? 64
    const guard = makeAddressGuard({ allowLoopback: options.allowHttpLoopback, ...(options.resolver ? { resolver: options.resolver } : {}) })
    const sender = makeWebhookSender({ guard, allowHttpLoopback: options.allowHttpLoopback, timeoutMs: 30_000, socketsPerDestination: maxInFlight, answerBytes })
    yield* Effect.addFinalizer(() => sender.close)
    const keys = new Map<string, Key | null>()
    const drain = Effect.scoped(Effect.gen(function*() {
      // Calls answered, waiting to be applied: `finishers` fibers apply them in batches (one commit per batch). An
      // enrollment's answers always go to the same finisher, so two batches never lock one learner's rows in opposite orders.
      // The worker loop runs this uninterruptibly: only the finishers' wait (and the main loop's) may be interrupted, so the
      // scope closes once everything is applied and a batch is never cut short.
      const answered: Array<Queue.Queue<Answered>> = []
      const applied = yield* Queue.unbounded<number>()
      // Added before the fibers, so it runs after they stopped (a scope closes in reverse): answers
      // that came back while the finishers were stopping are applied now, not graded again by
      // another worker once their leases lapse.
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          const left = (yield* Effect.forEach(answered, (queue) => Queue.takeAll(queue))).flatMap((chunk) => Chunk.toReadonlyArray(chunk))
          for (let start = 0; start < left.length; start += finishBatch) yield* applyBatch(left.slice(start, start + finishBatch))
        }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("learning grading calls not applied at shutdown", cause))))
      for (let i = 0; i < finishers; i++) {
        const queue = yield* Queue.unbounded<Answered>()
        answered.push(queue)
        yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
          const batch = Chunk.toReadonlyArray(yield* Effect.interruptible(Queue.takeBetween(queue, 1, finishBatch)))
          yield* applyBatch(batch).pipe(Effect.ensuring(Queue.offer(applied, batch.length)))
        })))
      }
      const finisherOf = (call: GradingCall) => answered[hashOf(call.enrollmentUuid ?? call.jobUuid) % finishers]!
      let inFlight = 0
      let total = 0
      for (;;) {
        const calls = inFlight < maxInFlight ? yield* claimGradingCalls(maxInFlight - inFlight) : []
        for (const call of calls) {
          inFlight++
          yield* Effect.forkScoped(
            Effect.suspend(() => {
              const started = performance.now()
              return Effect.tap(gradeCall(sender, serverSecret, call, keys), () => Effect.sync(() => recordGradingCall(call.checkerKind, performance.now() - started)))
            }).pipe(
              jobSpan("learning.grading.call", {
                attributes: {
                  "birzha.grading.job_uuid": call.jobUuid,
                  "birzha.checker.uuid": call.checkerUuid,
                  "birzha.checker.kind": call.checkerKind,
                  "birzha.grading.cases": call.cases.length
                }
              }),
              Effect.flatMap((reports) => Queue.offer(finisherOf(call), { call, reports })),
              Effect.catchAllCause((cause) => Effect.zipRight(Effect.logWarning("learning grading call failed", cause), Queue.offer(applied, 1)))
            )
          )
        }
        total += calls.length
        if (inFlight === 0 && calls.length === 0) break
        if (calls.length === 0 || inFlight >= maxInFlight) {
          // Wait for calls to be applied, but claim again soon: new jobs of other checkers must not wait for a slow one.
          const finished = yield* Effect.interruptible(Queue.take(applied)).pipe(Effect.timeoutOption(Duration.millis(pollMs)))
          if (finished._tag === "Some") inFlight -= finished.value
        }
        for (const count of yield* Queue.takeAll(applied)) inFlight -= count
      }
      if (total > 0) yield* Effect.logInfo("learning grading calls made").pipe(Effect.annotateLogs({ learning_grading_calls: total }))
      return total > 0
    })).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    const job: WorkerJob = {
      name: "learning_grading",
      every: options.every ?? Duration.seconds(1),
      run: whenReady(options.ready, withFailureBackoff("learning grading", drain))
    }
    return job
  })
