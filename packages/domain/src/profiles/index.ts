export * from "./Profile.js"
