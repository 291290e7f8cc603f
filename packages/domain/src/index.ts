/**
 * `@birzha/domain`: the catalog of operations, the schemas of what they take and answer, and their
 * typed errors. Nothing here needs Node or a database, so `@birzha/client` bundles it for browsers.
 * Running operations (the registry, its services, migrations) is `@birzha/domain/server`; what the
 * other packages of this repository share beyond that is `@birzha/domain/internal`, with no
 * compatibility promise. The surface is pinned by `packages/domain/api/*.api.md`
 * (`node scripts/api-report.mjs`).
 */
export * from "./admin/index.js"
export * from "./api/index.js"
export * from "./automations/index.js"
export * from "./comments/index.js"
export * from "./complaints/index.js"
export * from "./commands/index.js"
export * from "./events/index.js"
export * from "./favorites/index.js"
export * from "./files/index.js"
export * from "./keys/Key.js"
export * from "./keys/KeyErrors.js"
export * from "./keys/Scopes.js"
export * from "./notifications/index.js"
export * from "./profiles/index.js"
export * from "./publications/index.js"
export * from "./relations/index.js"
export * from "./reviews/index.js"
export * from "./threads/index.js"
export * from "./webhooks/WebhookEndpoint.js"
export * from "./learning/index.js"
