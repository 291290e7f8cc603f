export * from "./Thread.js"
