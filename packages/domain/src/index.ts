export * from "./api/index.js"
export * from "./events/index.js"
export * as Store from "./store/index.js"
