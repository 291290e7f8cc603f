import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp, uuidArray } from "../../store/Rows.js"
import { versionNodes } from "../courses/CourseRepository.js"
import { type EnrollmentRow, PauseRecord } from "./EnrollmentRepository.js"
import { OverrideRow } from "./DateOverrideRepository.js"
import type { CourseNode } from "../courses/Model.js"
import type { RunRow } from "../courses/RunRepository.js"
import { addDays, daysBetween, effectiveDates } from "./Schedule.js"

/**
 * Effective dates are computed, never copied: for each step of an enrollment,
 *
 *   schedule (the run's explicit dates, else offsets from the run's start — cohort — or from the
 *   learner's `startedAt` — self-paced) → group overrides → the learner's overrides → extensions →
 *   pauses → incidents,
 *
 * each layer replacing per field (the newest active override of the layer wins; a run-wide
 * override, without nodeKey, applies to every step), pauses shifting every date still ahead when
 * the pause began by the paused days. Every field carries its provenance, oldest layer first, so
 * the calendar can explain it. Nothing here writes; callers compare before/after in their
 * transaction to emit `learning.deadline.changed` only when a computed date changed.
 */

export type DateField = "unlockAt" | "dueAt" | "lockAt"
export const dateFields: ReadonlyArray<DateField> = ["unlockAt", "dueAt", "lockAt"]

/** Where a value came from: `schedule` (explicit run date), `offset` (days after the start), a layer. */
export type DateSource = "schedule" | "offset" | "group" | "override" | "extension" | "pause" | "incident"

export interface DateProvenance {
  readonly field: DateField | "extraAttempts"
  readonly source: DateSource
  /** The field's value after this layer (absent for extraAttempts). */
  readonly at?: Date
  /** extraAttempts: the attempts this layer adds. */
  readonly attempts?: number
  /** The override (or pause) that set it. */
  readonly overrideUuid?: string
  readonly detail?: string
}

/**
 * One step's effective dates. Absent `unlockAt` with `startRequired: true`: a self-paced
 * enrollment not started yet (offsets have no anchor; the step is locked until `enrollments.start`).
 * `extraAttempts` adds to the node's `grading.attempts`.
 */
export interface StepDates {
  readonly unlockAt?: Date
  readonly dueAt?: Date
  readonly lockAt?: Date
  readonly extraAttempts: number
  readonly provenance: ReadonlyArray<DateProvenance>
  readonly startRequired?: true
}

/** A date override row as the computation reads it (`DateOverrideRepository.ts`). */
export { OverrideRow }

/** Everything the computation needs; `loadDateContext` reads it, tests and benches may build it. */
export interface DateContext {
  readonly run: Pick<RunRow, "pacing" | "starts_at" | "schedule">
  readonly startedAt: Date | null
  readonly nodes: ReadonlyArray<CourseNode>
  /** Active overrides of the enrollment and of its groups, oldest first. */
  readonly overrides: ReadonlyArray<OverrideRow>
  readonly pauses: ReadonlyArray<PauseRecord>
  /** Set while paused: the running pause shifts dates ahead of it by the days paused so far. */
  readonly pausedAt: Date | null
}


/** Whole days a pause from `from` has lasted at `now` (rounded up: a started day counts). */
export const pausedDaysAt = (from: Date, now: Date): number => Math.max(0, daysBetween(from, now))

type Mutable = { -readonly [K in keyof StepDates]: StepDates[K] }

const overrideLayers: ReadonlyArray<{ readonly source: DateSource; readonly matches: (row: OverrideRow) => boolean }> = [
  { source: "group", matches: (row) => row.group_uuid !== null },
  { source: "override", matches: (row) => row.group_uuid === null && row.origin === "manual" },
  { source: "extension", matches: (row) => row.group_uuid === null && row.origin === "extension" }
]
const incidentLayer = { source: "incident" as const, matches: (row: OverrideRow) => row.group_uuid === null && row.origin === "incident" }

const column = { unlockAt: "unlock_at", dueAt: "due_at", lockAt: "lock_at" } as const

const applyLayer = (dates: Mutable, provenance: Array<DateProvenance>, rows: ReadonlyArray<OverrideRow>, source: DateSource) => {
  // Oldest first: a newer override replaces an older one field by field.
  for (const row of rows) {
    for (const field of dateFields) {
      const value = row[column[field]]
      if (value === null) continue
      dates[field] = value
      provenance.push({ field, source, at: value, overrideUuid: row.uuid, ...(row.reason !== "" ? { detail: row.reason } : {}) })
    }
    if (row.extra_attempts > 0) {
      dates.extraAttempts = (dates.extraAttempts ?? 0) + row.extra_attempts
      provenance.push({ field: "extraAttempts", source, attempts: row.extra_attempts, overrideUuid: row.uuid })
    }
  }
}

const applyPause = (dates: Mutable, provenance: Array<DateProvenance>, from: Date, days: number, detail: string) => {
  if (days === 0) return
  for (const field of dateFields) {
    const value = dates[field]
    if (value === undefined || value.getTime() < from.getTime()) continue
    const shifted = addDays(value, days)
    dates[field] = shifted
    provenance.push({ field, source: "pause", at: shifted, detail })
  }
}

/** The effective dates of every step of the tree, computed from the context at `now` (pure). */
export const computeStepDates = (context: DateContext, now: Date = new Date()): ReadonlyMap<string, StepDates> => {
  const anchor = context.run.pacing === "cohort" ? context.run.starts_at : context.startedAt ?? undefined
  const result = new Map<string, StepDates>()
  const byNode = new Map<string | null, Array<OverrideRow>>()
  for (const row of context.overrides) {
    const list = byNode.get(row.node_key) ?? []
    list.push(row)
    byNode.set(row.node_key, list)
  }
  const runWide = byNode.get(null) ?? []
  for (const node of context.nodes) {
    if (node.kind !== "step") continue
    const explicit = context.run.schedule[node.nodeKey]
    const dates: Mutable = { extraAttempts: 0, provenance: [] }
    const provenance: Array<DateProvenance> = []
    if (anchor !== undefined) {
      const base = effectiveDates(node, explicit, anchor)
      for (const field of dateFields) {
        const value = base[field]
        if (value === undefined) continue
        dates[field] = value
        const isExplicit = explicit?.[field] !== undefined
        // `offset`: days after the run's start (cohort) or the learner's start (self-paced).
        provenance.push({ field, source: isExplicit ? "schedule" : "offset", at: value })
      }
    } else {
      for (const field of dateFields) {
        const value = explicit?.[field]
        if (value === undefined) continue
        dates[field] = new Date(value)
        provenance.push({ field, source: "schedule", at: dates[field] })
      }
      if (dates.unlockAt === undefined) dates.startRequired = true
    }
    const applying = [...runWide, ...(byNode.get(node.nodeKey) ?? [])].sort((a, b) => a.created_at.getTime() - b.created_at.getTime())
    for (const layer of overrideLayers) applyLayer(dates, provenance, applying.filter(layer.matches), layer.source)
    for (const pause of context.pauses) applyPause(dates, provenance, new Date(pause.from), pause.days, `paused ${pause.days} day(s) from ${pause.from}`)
    if (context.pausedAt !== null) {
      const days = pausedDaysAt(context.pausedAt, now)
      applyPause(dates, provenance, context.pausedAt, days, `paused since ${context.pausedAt.toISOString()} (${days} day(s) so far)`)
    }
    applyLayer(dates, provenance, applying.filter(incidentLayer.matches), incidentLayer.source)
    if (dates.startRequired === true && dates.unlockAt !== undefined) delete dates.startRequired
    result.set(node.nodeKey, { ...dates, provenance })
  }
  return result
}

const overrideColumns = selectList(OverrideRow)
const decodeOverrides = rowsDecoder(OverrideRow)
const EnrollmentOverride = Schema.Struct({ for_enrollment: Schema.String, ...OverrideRow.fields })
const decodeEnrollmentOverrides = rowsDecoder(EnrollmentOverride)

/**
 * The active overrides applying to an enrollment, oldest first: its own and those of the groups it
 * is a member of (an archived group's dates stay with its members, as its memberships do).
 */
export const loadOverrides = (enrollmentUuid: string): Effect.Effect<ReadonlyArray<OverrideRow>, SqlError, SqlClient.SqlClient> =>
  Effect.map(loadOverridesOf([enrollmentUuid]), (byEnrollment) => byEnrollment.get(enrollmentUuid.toLowerCase()) ?? [])

/** `loadOverrides` of several enrollments in one statement, by enrollment uuid (lower case, as Postgres writes it). */
export const loadOverridesOf = (
  enrollmentUuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<OverrideRow>>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const wanted = [...new Set(enrollmentUuids.map((uuid) => uuid.toLowerCase()))]
    if (wanted.length === 0) return new Map()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(sql`SELECT e.uuid::text AS for_enrollment, o.*
      FROM unnest(${uuidArray(sql, wanted)}) AS e(uuid)
        CROSS JOIN LATERAL (SELECT ${sql.literal(overrideColumns)} FROM learning_date_overrides
          WHERE (enrollment_uuid = e.uuid OR group_uuid IN (SELECT group_uuid FROM learning_group_members WHERE enrollment_uuid = e.uuid))
            AND status = 'active') o
      ORDER BY e.uuid, o.created_at, o.uuid`, decodeEnrollmentOverrides)
    const byEnrollment = new Map<string, Array<OverrideRow>>()
    for (const { for_enrollment, ...row } of rows) {
      const list = byEnrollment.get(for_enrollment) ?? []
      list.push(row)
      byEnrollment.set(for_enrollment, list)
    }
    return byEnrollment
  })

/** The active overrides of groups themselves (origin `group`), oldest first, by group uuid. */
export const loadGroupOverrides = (
  groupUuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<OverrideRow>>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (groupUuids.length === 0) return new Map()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(overrideColumns)} FROM learning_date_overrides
        WHERE group_uuid = ANY(${uuidArray(sql, groupUuids)}) AND status = 'active' ORDER BY created_at, uuid`,
      decodeOverrides
    )
    // By the group uuid as Postgres writes it (lower case).
    const byGroup = new Map<string, Array<OverrideRow>>()
    for (const row of rows) byGroup.set(row.group_uuid!, [...(byGroup.get(row.group_uuid!) ?? []), row])
    return byGroup
  })

/** A run's explicit dates by nodeKey, as ISO strings (jsonb). */
const RunSchedule = Schema.Record({
  key: Schema.String,
  value: Schema.Struct({
    unlockAt: Schema.optionalWith(Schema.String, { exact: true }),
    dueAt: Schema.optionalWith(Schema.String, { exact: true }),
    lockAt: Schema.optionalWith(Schema.String, { exact: true })
  })
})

const ContextRow = Schema.Struct({
  course_uuid: Schema.String,
  version_number: Schema.Number,
  pacing: Schema.Literal("cohort", "self"),
  starts_at: Timestamp,
  schedule: RunSchedule,
  started_at: Schema.NullOr(Timestamp),
  pauses: Schema.Array(PauseRecord),
  paused_at: Schema.NullOr(Timestamp),
  content_hash: Schema.String,
  published_at: Timestamp
})
const decodeContext = rowsDecoder(ContextRow)

/** Reads what `computeStepDates` needs for one enrollment (its run, pinned tree, overrides, pauses). */
export const loadDateContext = (enrollmentUuid: string): Effect.Effect<DateContext | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(sql`SELECT r.course_uuid, r.version_number, r.pacing, r.starts_at, r.schedule, e.started_at, e.pauses, e.paused_at,
        v.content_hash, v.published_at
      FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid
        JOIN learning_course_versions v ON v.course_uuid = r.course_uuid AND v.number = r.version_number
      WHERE e.uuid = ${enrollmentUuid}`, decodeContext)
    if (row === undefined) return undefined
    const nodes = yield* versionNodes(row)
    const overrides = yield* loadOverrides(enrollmentUuid)
    return {
      run: { pacing: row.pacing, starts_at: row.starts_at, schedule: row.schedule },
      startedAt: row.started_at,
      nodes,
      overrides,
      pauses: row.pauses,
      pausedAt: row.paused_at
    }
  })

/**
 * The effective dates of every step of an enrollment (keyed by nodeKey; modules have none), as of
 * now. Reads within the caller's transaction, so a command sees its own uncommitted changes: call
 * it before and after a change to compare (`changedNodeKeys`). An unknown enrollment gives an
 * empty map.
 */
export const stepDates = (enrollmentUuid: string): Effect.Effect<ReadonlyMap<string, StepDates>, SqlError, SqlClient.SqlClient> =>
  Effect.map(loadDateContext(enrollmentUuid), (context) => (context === undefined ? new Map() : computeStepDates(context)))

/**
 * `stepDates` from an enrollment, its run and pinned tree already read in this transaction
 * (`enrollmentFor`): only the overrides are read.
 */
export const stepDatesOf = (
  enrollment: Pick<EnrollmentRow, "uuid" | "started_at" | "pauses" | "paused_at">,
  run: DateContext["run"],
  nodes: ReadonlyArray<CourseNode>
): Effect.Effect<ReadonlyMap<string, StepDates>, SqlError, SqlClient.SqlClient> =>
  Effect.map(loadOverrides(enrollment.uuid), (overrides) => stepDatesWith(enrollment, run, nodes, overrides))

/** `stepDatesOf` with the overrides already read (`loadOverridesOf`). */
export const stepDatesWith = (
  enrollment: Pick<EnrollmentRow, "uuid" | "started_at" | "pauses" | "paused_at">,
  run: DateContext["run"],
  nodes: ReadonlyArray<CourseNode>,
  overrides: ReadonlyArray<OverrideRow>
): ReadonlyMap<string, StepDates> =>
  computeStepDates({ run, startedAt: enrollment.started_at, nodes, overrides, pauses: enrollment.pauses, pausedAt: enrollment.paused_at })

const same = (a: Date | undefined, b: Date | undefined) => (a?.getTime() ?? null) === (b?.getTime() ?? null)

/** nodeKeys whose computed dates or extra attempts differ between two computations. */
export const changedNodeKeys = (before: ReadonlyMap<string, StepDates>, after: ReadonlyMap<string, StepDates>): ReadonlyArray<string> => {
  const keys = new Set([...before.keys(), ...after.keys()])
  return [...keys].filter((key) => {
    const a = before.get(key)
    const b = after.get(key)
    return a === undefined || b === undefined || dateFields.some((field) => !same(a[field], b[field])) || a.extraAttempts !== b.extraAttempts
  })
}
