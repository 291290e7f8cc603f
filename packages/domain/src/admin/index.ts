export * from "./Admin.js"
export * from "./AdminApi.js"
