/**
 * `@birzha/http-host`: the service over HTTP. `ServiceLive` serves it on a listener of its own
 * (`birzha serve`); `ServiceHandlerLive` and `HttpHandlerLive` give it as handlers to mount in
 * another server: `node` for any Node server (Express, Fastify, `createServer`), `fetch` for a
 * web-standard one; `startHandler` builds one for a program not written with Effect. Pinned by
 * `packages/http-host/api/http-host.api.md`; the repository's own tests use
 * `@birzha/http-host/internal`.
 */
export { type ConnectionLimits, ConnectionLimitsConfig, defaultConnectionLimits } from "./ConnectionLimits.js"
export { type FetchHandler, toFetchHandler } from "./FetchHandler.js"
export {
  BirzhaHandler,
  type BirzhaHandlerService,
  type HandlerSettings,
  HttpHandlerLive,
  type RunningHandler,
  startHandler
} from "./HttpHandler.js"
export { HttpConfig, type HttpSettings } from "./HttpConfig.js"
export { type DatabaseLayer, ServiceHandlerLive, ServiceLive } from "./Serve.js"
