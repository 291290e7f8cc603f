/**
 * Server-side services of the domain (Node only: hashing, SQL). Kept out of the package root so
 * `@birzha/client`, which imports the root for the API schemas, stays free of Node built-ins.
 */
export * from "./auth/ServerSecret.js"
