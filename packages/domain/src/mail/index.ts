export * from "./Mailer.js"
