/**
 * Server-side services of the domain (Node only: hashing, SQL). Kept out of the package root so
 * `@birzha/client`, which imports the root for the API schemas, stays free of Node built-ins.
 */
export * from "./auth/ServerSecret.js"
export * from "./auth/Accounts.js"
export * from "./auth/RateLimit.js"
export * from "./auth/Sessions.js"
export * from "./auth/SignIn.js"
export * from "./auth/SignInSettings.js"
export * from "./profiles/Profiles.js"
export * from "./auth/SignInEmail.js"
