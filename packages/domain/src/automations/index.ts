export * from "./AutomationErrors.js"
export * from "./Condition.js"
export * from "./Rule.js"
