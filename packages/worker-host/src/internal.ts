/**
 * `@birzha/worker-host/internal`: the workers' parts, for this repository's own packages and tests. NO
 * COMPATIBILITY PROMISE: any release may change or remove any of it.
 */
export * from "./index.js"
export * from "./WorkerHost.js"
export * from "./WorkerLoop.js"
export * from "./events/Sequencer.js"
export * from "./webhooks/AddressGuard.js"
export * from "./webhooks/RetrySchedule.js"
export * from "./webhooks/WebhookDispatcher.js"
export * from "./webhooks/WebhookPayload.js"
export * from "./Retention.js"
export * from "./webhooks/WebhookSender.js"
