/**
 * `@birzha/domain/server`: running the catalog inside a Node program. `DomainLive` gives the one
 * entry, `Operations`, on the program's own `SqlClient` and `Mailer`; `callOperation` runs an
 * operation for a caller with its input and answer typed from the catalog; `runMigrations` brings
 * a database up to date. The database and mail layers for a `pg` pool, a `DATABASE_URL` or the
 * embedded PGlite are `@birzha/infrastructure`'s, the background jobs `@birzha/worker-host`'s
 * (docs/embedding.md). Pinned by `packages/domain/api/server.api.md`.
 */
export {
  type Answer,
  callOperation,
  type CallOptions,
  type ErrorOf,
  type InputOf,
  type OperationId,
  Operations,
  type OperationsService,
  type RawInput,
  runOperation,
  type SuccessOf
} from "./operations/Operations.js"
export { actorForVerifiedEmail, DomainLive, type DomainSettings, migrationReadiness } from "./operations/DomainLive.js"
export { OperationsLive } from "./operations/ServiceOperations.js"
export { PublicOrigin } from "./operations/PublicOrigin.js"
export { Readiness } from "./operations/Readiness.js"
export { ServerSecret } from "./auth/ServerSecret.js"
export { SignInConfig, type SignInSettings } from "./auth/SignInSettings.js"
export { Mailer, type MailMessage, MailNotAccepted } from "./mail/Mailer.js"
export { WebhookSettings, type WebhookSettingsShape } from "./webhooks/WebhookSettings.js"
export { BlobStore, type BlobStoreService, PostgresBlobStore } from "./files/BlobStore.js"
export { PooledReads, pooledReadsOf } from "./store/PooledReads.js"
export { latestMigrationId, runMigrations } from "./store/Migrations.js"
