export * from "./api/index.js"
export * from "./events/index.js"
export * from "./mail/index.js"
export * from "./profiles/index.js"
