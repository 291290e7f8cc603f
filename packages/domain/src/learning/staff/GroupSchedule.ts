import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { CourseNode, ScheduleChange } from "../courses/Model.js"
import type { RunRow } from "../courses/RunRepository.js"
import { computeStepDates, loadGroupOverrides, type StepDates } from "../enrollments/Dates.js"
import { addDays } from "../enrollments/Schedule.js"
import { rowsDecoder } from "../../store/Rows.js"
import { insertGroupOverride } from "../enrollments/DateOverrideRepository.js"

/**
 * Group schedules (date overrides of origin `group`, planned by `learning.schedule.apply`): a schedule change
 * naming a group does not touch the run's schedule; it plans date overrides of that group (origin
 * `group`), which its members' effective dates take between the schedule and their own overrides.
 * A shift moves the group's current dates (the planned run schedule under the group's active
 * overrides); in a self-paced run only explicit dates can move for a group (offsets have no
 * common anchor).
 */

type Field = "unlockAt" | "dueAt" | "lockAt"
const fields: ReadonlyArray<Field> = ["unlockAt", "dueAt", "lockAt"]
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))

/** One planned group override, as the plan stores it (ISO dates). */
export interface GroupOverridePlan {
  readonly groupUuid: string
  readonly nodeKey: string
  readonly unlockAt?: string
  readonly dueAt?: string
  readonly lockAt?: string
}

export interface GroupPlanItem {
  readonly groupUuid: string
  readonly nodeKey: string
  readonly field: Field
  readonly before?: Date
  readonly after?: Date
}

/** 404 naming the first change whose group is not an active group of the run. */
export const requireRunGroups = (runUuid: string, changes: ReadonlyArray<ScheduleChange>) =>
  Effect.gen(function*() {
    const named = changes.flatMap((change) => (change.groupUuid !== undefined ? [change.groupUuid] : []))
    if (named.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(sql`SELECT uuid FROM learning_groups WHERE uuid IN ${sql.in([...new Set(named)])}
      AND run_uuid = ${runUuid} AND status = 'active'`, decodeUuids)
    const known = new Set(rows.map((row) => row.uuid.toLowerCase()))
    const i = changes.findIndex((change) => change.groupUuid !== undefined && !known.has(change.groupUuid.toLowerCase()))
    if (i >= 0) return yield* new NotFound({ message: `changes.${i}.groupUuid: no active group ${changes[i]!.groupUuid} in this run` })
  })

/**
 * Plans the group changes over the planned run (its start and schedule after the run-wide
 * changes): the overrides to write and the items (each group's dates before → after).
 */
export const planGroupChanges = (
  run: Pick<RunRow, "pacing">,
  nodes: ReadonlyArray<CourseNode>,
  planned: { readonly startsAt: Date; readonly schedule: RunRow["schedule"] },
  changes: ReadonlyArray<ScheduleChange>
) =>
  Effect.gen(function*() {
    const groupChanges = changes.filter((change) => change.groupUuid !== undefined)
    if (groupChanges.length === 0) return { overrides: [] as ReadonlyArray<GroupOverridePlan>, items: [] as ReadonlyArray<GroupPlanItem> }
    const existing = yield* loadGroupOverrides([...new Set(groupChanges.map((change) => change.groupUuid!))])
    const steps = nodes.filter((node) => node.kind === "step")
    // A group's dates now (before this plan's group changes): the planned run's schedule under the
    // group's active overrides, computed as a member's are (`computeStepDates`) without a
    // learner's own layers; in a self-paced run only explicit dates (no learner's start).
    const groupDates = new Map<string, ReadonlyMap<string, StepDates>>()
    const current = (groupUuid: string, node: CourseNode): Partial<Record<Field, Date>> => {
      let dates = groupDates.get(groupUuid)
      if (dates === undefined) {
        dates = computeStepDates({
          run: { pacing: run.pacing, starts_at: planned.startsAt, schedule: planned.schedule },
          startedAt: null,
          nodes,
          overrides: existing.get(groupUuid.toLowerCase()) ?? [],
          pauses: [],
          pausedAt: null
        })
        groupDates.set(groupUuid, dates)
      }
      const step = dates.get(node.nodeKey)
      return Object.fromEntries(fields.flatMap((field) => (step?.[field] !== undefined ? [[field, step[field]]] : [])))
    }
    const before = new Map<string, Partial<Record<Field, Date>>>()
    const after = new Map<string, Partial<Record<Field, Date>>>()
    const key = (groupUuid: string, nodeKey: string) => `${groupUuid}/${nodeKey}`
    for (const change of groupChanges) {
      const targets = change.nodeKey !== undefined ? steps.filter((node) => node.nodeKey === change.nodeKey) : steps
      for (const node of targets) {
        const k = key(change.groupUuid!, node.nodeKey)
        if (!before.has(k)) before.set(k, current(change.groupUuid!, node))
        const next = { ...(after.get(k) ?? before.get(k)!) }
        for (const field of fields) {
          const value = change.shiftDays !== undefined
            ? next[field] !== undefined ? addDays(next[field]!, change.shiftDays) : undefined
            : change[field]
          if (value !== undefined) next[field] = value
        }
        after.set(k, next)
      }
    }
    const overrides: Array<GroupOverridePlan> = []
    const items: Array<GroupPlanItem> = []
    for (const [k, next] of after) {
      const [groupUuid, nodeKey] = k.split("/") as [string, string]
      const was = before.get(k)!
      const moved = fields.filter((field) => (was[field]?.getTime() ?? null) !== (next[field]?.getTime() ?? null))
      if (moved.length === 0) continue
      overrides.push({ groupUuid, nodeKey, ...Object.fromEntries(moved.map((field) => [field, next[field]!.toISOString()])) })
      for (const field of moved) {
        items.push({ groupUuid, nodeKey, field, ...(was[field] !== undefined ? { before: was[field] } : {}), after: next[field]! })
      }
    }
    return { overrides, items }
  })

/** Writes a plan's group overrides (schedule.apply); a group archived since the preview refuses the plan (409). */
export const writeGroupOverrides = (runUuid: string, overrides: ReadonlyArray<GroupOverridePlan>, byProfileUuid: string, reason: string) =>
  Effect.gen(function*() {
    if (overrides.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const groups = [...new Set(overrides.map((o) => o.groupUuid))]
    const active = yield* Effect.flatMap(sql`SELECT uuid FROM learning_groups WHERE uuid IN ${sql.in(groups)} AND status = 'active' FOR SHARE`, decodeUuids)
    if (active.length !== groups.length) return yield* new InvalidState({ message: "A group of the plan was archived since the preview; preview again" })
    for (const o of overrides) {
      yield* insertGroupOverride({
        runUuid,
        groupUuid: o.groupUuid,
        nodeKey: o.nodeKey,
        unlockAt: o.unlockAt ?? null,
        dueAt: o.dueAt ?? null,
        lockAt: o.lockAt ?? null,
        reason,
        by: byProfileUuid
      })
    }
  })
