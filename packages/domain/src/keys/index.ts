export * from "./Key.js"
export * from "./KeyAccess.js"
export * from "./KeyErrors.js"
export * from "./Scopes.js"
