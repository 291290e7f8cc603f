export * from "./EventType.js"
