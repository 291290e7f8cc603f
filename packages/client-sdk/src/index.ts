export * from "./BirzhaClient.js"
export * from "./PromiseClient.js"
export * from "./EventFeed.js"
export * from "./WebhookVerification.js"
