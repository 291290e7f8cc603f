// The package root is what `@birzha/client` reads: the learning error classes only. Server-side
// services (run clock, jobs, staff assignments) are exported from `server.ts`.
export * from "./LearningErrors.js"
