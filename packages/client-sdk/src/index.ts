export * from "./BirzhaClient.js"
export * from "./PromiseClient.js"
