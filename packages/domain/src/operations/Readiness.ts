import { Context, type Effect } from "effect"

/** What readyz asks: does the database answer, and is the latest migration applied. Never fails. */
export class Readiness extends Context.Tag("@birzha/domain/Readiness")<Readiness, {
  readonly check: Effect.Effect<{ readonly database: boolean; readonly migrations: boolean }>
}>() {}
