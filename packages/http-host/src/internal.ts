/**
 * `@birzha/http-host/internal`: what this repository's other packages and tests use of the host
 * beyond its public entry (test services, the server layer's parts). NO COMPATIBILITY PROMISE:
 * any release may change or remove any of it.
 */
export * from "./index.js"
export * from "./ConnectionLimits.js"
export * from "./DocsPage.js"
export * from "./HttpHost.js"
export * from "./Readiness.js"
export * from "./testing.js"
