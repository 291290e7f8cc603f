export * from "./EventCatalog.js"
export * from "./EventEnvelope.js"
export * from "./EventType.js"
export * from "./TypePattern.js"
