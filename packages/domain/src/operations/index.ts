export * from "./Implementation.js"
export * from "./Operations.js"
export * from "./PublicOrigin.js"
export * from "./Readiness.js"
