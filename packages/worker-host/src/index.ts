export * from "./ConfigProblem.js"
export * from "./Settings.js"
export * from "./WorkerLoop.js"
