export * from "./Idempotency.js"
export * from "./Migrations.js"
export * from "./Outbox.js"
export * from "./Revision.js"
