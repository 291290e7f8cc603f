export * from "./Notification.js"
