/**
 * `@birzha/worker-host`: the service's background work as one layer, `WorkerHostLive` (event
 * sequencing, webhook delivery, automations, learning jobs, time-driven transitions, retention),
 * on the database of `@birzha/infrastructure` (`Database`), with the server secret and mail from
 * the settings; `work` runs it alone until SIGTERM (`birzha worker`). Pinned by
 * `packages/worker-host/api/worker-host.api.md`.
 */
export { work, WorkerHostLive } from "./WorkerHost.js"
