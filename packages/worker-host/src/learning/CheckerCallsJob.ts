import {
  type CallOutcome,
  type CheckerCall,
  claimCheckerCalls,
  finishCheckerCall,
  openSecret,
  ServerSecret,
  signatureHeader,
  signingKey
} from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, type Redacted } from "effect"
import type { JobOptions } from "../marketplace/MarketplaceJobs.js"
import { whenReady, withFailureBackoff } from "../webhooks/WebhookDispatcher.js"
import { makeAddressGuard, type Resolver } from "../webhooks/AddressGuard.js"
import { type AttemptResult, makeWebhookSender, type WebhookSender } from "../webhooks/WebhookSender.js"
import type { WorkerJob } from "../WorkerLoop.js"

/**
 * Learning's calls to external checkers that are not grades: sample runs and
 * variant generation. Each claimed job is POSTed as JSON to the checker's endpoint (sample runs)
 * or generator, signed in the Standard Webhooks scheme with the checker's secret (`webhook-id` =
 * the job's uuid, which the checker uses as its idempotency key), through the same SSRF guard and
 * pinned connection as webhook deliveries, within the checker's timeout (≤ 30 s). The outcome goes
 * to `finishCheckerCall`, which applies it once and decides retries.
 */

/** Calls in flight at once per worker; one slow checker holds only its own. */
const concurrency = 8
/** An answer is read up to just past the 256 KiB a checker may send, so a larger one is recognised as too large. */
const answerBytes = 256 * 1024 + 1

export const callOnce = (
  sender: WebhookSender,
  serverSecret: Redacted.Redacted<string>,
  call: Pick<CheckerCall, "jobUuid" | "checkerUuid" | "url" | "timeoutMs" | "secretSealed" | "body">
) =>
  Effect.gen(function*() {
    if (call.secretSealed === null) return { _tag: "error", error: "the checker has no signing secret" } satisfies CallOutcome
    let secret: string
    try {
      secret = openSecret(serverSecret, call.checkerUuid, call.secretSealed)
    } catch {
      return { _tag: "error", error: "the checker's signing secret cannot be opened" } satisfies CallOutcome
    }
    const timestamp = Math.floor(Date.now() / 1000)
    const result = yield* sender.send({
      url: call.url,
      body: call.body,
      headers: {
        "content-type": "application/json",
        "user-agent": "Birzha-Learning/1",
        "webhook-id": call.jobUuid,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signatureHeader([signingKey(secret)], call.jobUuid, timestamp, call.body)
      }
    }).pipe(Effect.timeoutTo({
      duration: Duration.millis(call.timeoutMs),
      onSuccess: (answer) => answer,
      onTimeout: (): AttemptResult => ({ excerpt: "", error: `no answer within ${call.timeoutMs} ms`, durationMs: call.timeoutMs })
    }))
    return result.statusCode === undefined
      ? { _tag: "error", error: result.error ?? "no answer" } satisfies CallOutcome
      : { _tag: "answer", statusCode: result.statusCode, body: result.excerpt } satisfies CallOutcome
  })

export const makeLearningCheckerCallsJob = (options: JobOptions & { readonly allowHttpLoopback: boolean; readonly resolver?: Resolver }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const serverSecret = yield* ServerSecret
    const guard = makeAddressGuard({ allowLoopback: options.allowHttpLoopback, ...(options.resolver ? { resolver: options.resolver } : {}) })
    const sender = makeWebhookSender({ guard, allowHttpLoopback: options.allowHttpLoopback, timeoutMs: 30_000, socketsPerDestination: concurrency, answerBytes })
    yield* Effect.addFinalizer(() => sender.close)
    const drain = Effect.gen(function*() {
      let total = 0
      for (;;) {
        const calls = yield* claimCheckerCalls(concurrency * 4)
        yield* Effect.forEach(calls, (call) => Effect.flatMap(callOnce(sender, serverSecret, call), (outcome) => finishCheckerCall(call, outcome)), {
          concurrency,
          discard: true
        })
        total += calls.length
        if (calls.length < concurrency * 4) break
      }
      if (total > 0) yield* Effect.logInfo("learning checker calls made").pipe(Effect.annotateLogs({ learning_checker_calls: total }))
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    const job: WorkerJob = {
      name: "learning_checker_calls",
      every: options.every ?? Duration.seconds(1),
      run: whenReady(options.ready, withFailureBackoff("learning sample runs and generations", drain))
    }
    return job
  })
