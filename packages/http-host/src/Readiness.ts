/** readyz's question lives with the health operations in the domain; hosts provide it. */
export { Readiness } from "@birzha/domain/internal"
