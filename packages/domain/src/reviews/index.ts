export * from "./Review.js"
