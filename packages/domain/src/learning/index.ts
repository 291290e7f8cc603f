export { advanceRuns, runTransitions } from "./Runs.js"
export { assignStaff } from "./Staff.js"
export { LearningOperations } from "./LearningOperations.js"
export * from "./LearningErrors.js"
