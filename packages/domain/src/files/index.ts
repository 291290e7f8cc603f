export * from "./File.js"
export * from "./FileErrors.js"
