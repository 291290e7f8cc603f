export * from "./PublicationComment.js"
