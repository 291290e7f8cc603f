export * from "./Relation.js"
export * from "./RelationErrors.js"
export * from "./RelationFields.js"
export { allowedActions, relationKinds, statusesOf, transitions, type Transition, type TransitionOperation } from "./Transitions.js"
