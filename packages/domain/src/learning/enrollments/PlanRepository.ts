import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"

/**
 * `learning_plans`: the one module that writes it. A plan is a computed change stored for its
 * commit (a run's schedule, `courses/Runs.ts`; a transfer, `Transfers.ts`; an incident's
 * compensation, `corrections/Incidents.ts`); its jsonb columns are each kind's own, typed and read
 * where the kind is.
 */

export const PlanKind = Schema.Literal("schedule", "transfer", "compensation")
export const PlanStatus = Schema.Literal("ready", "applied", "stale", "expired")

/** A stored plan's columns but its kind's jsonb (`base_revisions`, `input`, `result`, `items`, `blocking`). */
export const StoredPlan = Schema.Struct({
  uuid: Schema.String,
  kind: PlanKind,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  created_by: Schema.String,
  status: PlanStatus,
  expires_at: Timestamp,
  created_at: Timestamp
})
export type StoredPlan = typeof StoredPlan.Type

const storedColumns = selectList(StoredPlan)
const decodeStored = rowsDecoder(StoredPlan)

export interface NewPlan<BaseRevisions, Input, Result, Items, Blocking> {
  readonly uuid: string
  readonly kind: typeof PlanKind.Type
  readonly courseUuid: string
  readonly runUuid: string
  readonly createdBy: string
  readonly baseRevisions: BaseRevisions
  readonly input: Input
  readonly result: Result
  readonly items: Items
  readonly blocking: Blocking
  /** How long the plan may be committed. */
  readonly hours: number
}

/**
 * Stores a plan; returns the stored row with the jsonb it was given (as written, not read back),
 * so the caller keeps its own types for them.
 */
export const insertPlan = <BaseRevisions, Input, Result, Items, Blocking>(plan: NewPlan<BaseRevisions, Input, Result, Items, Blocking>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_plans (uuid, kind, course_uuid, run_uuid, created_by, base_revisions, input, result, items, blocking, expires_at)
          VALUES (${plan.uuid}, ${plan.kind}, ${plan.courseUuid}, ${plan.runUuid}, ${plan.createdBy}, ${JSON.stringify(plan.baseRevisions)}::jsonb,
            ${JSON.stringify(plan.input)}::jsonb, ${JSON.stringify(plan.result)}::jsonb, ${JSON.stringify(plan.items)}::jsonb,
            ${JSON.stringify(plan.blocking)}::jsonb, now() + make_interval(hours => ${plan.hours}))
          RETURNING ${sql.literal(storedColumns)}`,
        decodeStored
      ),
      (rows) => ({
        ...rows[0]!,
        base_revisions: plan.baseRevisions,
        input: plan.input,
        result: plan.result,
        items: plan.items,
        blocking: plan.blocking
      })
    ))

/** The plan was committed. */
export const markPlanApplied = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`UPDATE learning_plans SET status = 'applied', applied_at = now() WHERE uuid = ${uuid}`))
