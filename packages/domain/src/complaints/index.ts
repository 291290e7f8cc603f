export * from "./Complaint.js"
