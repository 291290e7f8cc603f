export * from "./Favorite.js"
