import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { NotFound } from "../../kernel/ApiError.js"
import { revisedColumns } from "../../store/Revision.js"
import { rowsDecoder, selectList, Timestamp, uuidArray } from "../../store/Rows.js"
import { type EnrollmentPolicyInput, type ExtensionPolicy, type NodeDates, type Run, RunStatus } from "./Model.js"
import { storedObject } from "./StoredJson.js"

/** `learning_runs`: its rows, read and written only here. */
export const RunRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  version_number: Schema.Number,
  title: Schema.String,
  pacing: Schema.Literal("cohort", "self"),
  starts_at: Timestamp,
  ends_at: Schema.NullOr(Timestamp),
  admission: Schema.Literal("open", "approval", "invite"),
  capacity: Schema.NullOr(Schema.Number),
  waitlist: Schema.Boolean,
  enrollment_opens_at: Schema.NullOr(Timestamp),
  enrollment_closes_at: Schema.NullOr(Timestamp),
  pause_policy: storedObject<{ readonly maxDays: number; readonly maxCount: number }>("StoredPausePolicy"),
  /** Enrollment policies (migration 20). */
  seat_offer_hours: Schema.Number,
  withdraw_grace_hours: Schema.Number,
  restore_days: Schema.Number,
  reminder_hours: Schema.Array(Schema.Number),
  complete_on_criteria: Schema.Boolean,
  application_form: Schema.Unknown,
  /** Extension requests (migration 27). */
  extension_policy: storedObject<ExtensionPolicy>("StoredExtensionPolicy"),
  /** nodeKey → dates as ISO strings (jsonb). */
  schedule: storedObject<Readonly<Record<string, { readonly unlockAt?: string; readonly dueAt?: string; readonly lockAt?: string }>>>(
    "StoredRunSchedule"
  ),
  status: RunStatus,
  finished_at: Schema.NullOr(Timestamp),
  cancelled_at: Schema.NullOr(Timestamp),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp,
  /** From the course: grades freeze this many days after the run finished. */
  freeze_after_days: Schema.Number
})
export type RunRow = typeof RunRow.Type

const freezeAfterDays = "(SELECT c.freeze_after_days FROM learning_courses c WHERE c.uuid = r.course_uuid)"
export const runColumns = selectList(RunRow, "r", { freeze_after_days: freezeAfterDays })
export const decodeRuns = rowsDecoder(RunRow)

/** A run with its keyset position (`created_at::text`, exact to the microsecond). */
const PositionedRunRow = Schema.Struct({ ...RunRow.fields, position: Schema.String })
const positionedColumns = selectList(PositionedRunRow, "r", { freeze_after_days: freezeAfterDays, position: "r.created_at::text" })
const decodePositioned = rowsDecoder(PositionedRunRow)

const dayMs = 86_400_000

/** When a finished run's grades freeze; undefined while it has not finished. */
export const gradesFrozenAt = (row: Pick<RunRow, "finished_at" | "freeze_after_days">): Date | undefined =>
  row.finished_at === null ? undefined : new Date(row.finished_at.getTime() + row.freeze_after_days * dayMs)

const dates = (value: { readonly unlockAt?: string; readonly dueAt?: string; readonly lockAt?: string }): NodeDates => ({
  ...(value.unlockAt !== undefined ? { unlockAt: new Date(value.unlockAt) } : {}),
  ...(value.dueAt !== undefined ? { dueAt: new Date(value.dueAt) } : {}),
  ...(value.lockAt !== undefined ? { lockAt: new Date(value.lockAt) } : {})
})

export const runView = (row: RunRow): Run => {
  const frozen = gradesFrozenAt(row)
  return {
    uuid: row.uuid,
    courseUuid: row.course_uuid,
    versionNumber: row.version_number,
    title: row.title,
    pacing: row.pacing,
    startsAt: row.starts_at,
    ...(row.ends_at !== null ? { endsAt: row.ends_at } : {}),
    admission: row.admission,
    ...(row.capacity !== null ? { capacity: row.capacity } : {}),
    waitlist: row.waitlist,
    enrollmentWindow: {
      ...(row.enrollment_opens_at !== null ? { opensAt: row.enrollment_opens_at } : {}),
      ...(row.enrollment_closes_at !== null ? { closesAt: row.enrollment_closes_at } : {})
    },
    pausePolicy: row.pause_policy,
    enrollmentPolicy: {
      seatOfferHours: row.seat_offer_hours,
      withdrawGraceHours: row.withdraw_grace_hours,
      restoreDays: row.restore_days,
      reminderHours: row.reminder_hours,
      completeOnCriteria: row.complete_on_criteria
    },
    extensionPolicy: row.extension_policy,
    schedule: Object.fromEntries(Object.entries(row.schedule).map(([key, value]) => [key, dates(value)])),
    status: row.status,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {}),
    ...(row.cancelled_at !== null ? { cancelledAt: row.cancelled_at } : {}),
    ...(frozen !== undefined ? { gradesFrozenAt: frozen } : {})
  }
}

export const loadRun = (uuid: string, options: { readonly lock: boolean }) =>
  Effect.flatMap(loadRuns([uuid], options), (rows) =>
    rows[0] === undefined ? Effect.fail(new NotFound({ message: `No run ${uuid}` })) : Effect.succeed(rows[0]))

/** Runs by uuid, in uuid order (locked in that order when asked); unknown uuids are left out. */
export const loadRuns = (uuids: ReadonlyArray<string>, options: { readonly lock: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    uuids.length === 0 ? Effect.succeed([]) : Effect.flatMap(
      sql`SELECT ${sql.literal(runColumns)} FROM learning_runs r WHERE r.uuid = ANY(${uuidArray(sql, uuids)})
      ORDER BY r.uuid ${options.lock ? sql.literal("FOR UPDATE OF r") : sql``}`,
      decodeRuns
    ))

/** Runs of a course, newest first, optionally of some statuses; keyset by (created_at, uuid). */
export const listRunRows = (
  courseUuid: string,
  options: {
    readonly statuses?: ReadonlyArray<RunStatus>
    readonly limit: number
    readonly after?: { readonly key: string; readonly uuid: string }
    /** Only the runs this condition (over alias `r`) lets through. */
    readonly visible?: Statement.Fragment
  }
): Effect.Effect<ReadonlyArray<RunRow & { readonly position: string }>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(positionedColumns)} FROM learning_runs r
      WHERE r.course_uuid = ${courseUuid}${options.visible !== undefined ? sql` AND ${options.visible}` : sql``}
        ${options.statuses !== undefined ? sql`AND r.status IN ${sql.in(options.statuses)}` : sql``}
        ${options.after !== undefined ? sql`AND (r.created_at, r.uuid) < (${options.after.key}::timestamptz, ${options.after.uuid}::uuid)` : sql``}
      ORDER BY r.created_at DESC, r.uuid DESC LIMIT ${options.limit}`,
      decodePositioned
    ))

/** Sets columns of a locked run and bumps its revision; returns the new row. */
export const updateRun = (
  uuid: string,
  values: Readonly<Record<string, string | number | boolean | Date | null>>,
  json: Readonly<Record<string, unknown>> = {}
): Effect.Effect<RunRow, SqlError | NotFound, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE learning_runs SET ${revisedColumns(sql, values, json)} WHERE uuid = ${uuid}`
    return yield* loadRun(uuid, { lock: false })
  })

/** A new draft run of a published version (its policies are written after, by `writePolicy`). */
export const insertRun = (run: {
  readonly uuid: string
  readonly courseUuid: string
  readonly versionNumber: number
  readonly title: string
  readonly pacing: "cohort" | "self"
  readonly startsAt: Date
  readonly endsAt: Date | null
  readonly admission: "open" | "approval" | "invite"
  readonly capacity: number | null
  readonly waitlist: boolean
  readonly opensAt: Date | null
  readonly closesAt: Date | null
  readonly pausePolicy: { readonly maxDays: number; readonly maxCount: number }
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`INSERT INTO learning_runs (uuid, course_uuid, version_number, title, pacing, starts_at, ends_at, admission, capacity,
          waitlist, enrollment_opens_at, enrollment_closes_at, pause_policy)
        VALUES (${run.uuid}, ${run.courseUuid}, ${run.versionNumber}, ${run.title}, ${run.pacing}, ${run.startsAt}, ${run.endsAt},
          ${run.admission}, ${run.capacity}, ${run.waitlist}, ${run.opensAt},
          ${run.closesAt}, ${JSON.stringify(run.pausePolicy)}::jsonb)`))

/** The run columns of an enrollment policy's given fields. */
const policyColumns = (policy: EnrollmentPolicyInput | undefined): Record<string, number | boolean> => ({
  ...(policy?.seatOfferHours !== undefined ? { seat_offer_hours: policy.seatOfferHours } : {}),
  ...(policy?.withdrawGraceHours !== undefined ? { withdraw_grace_hours: policy.withdrawGraceHours } : {}),
  ...(policy?.restoreDays !== undefined ? { restore_days: policy.restoreDays } : {}),
  ...(policy?.completeOnCriteria !== undefined ? { complete_on_criteria: policy.completeOnCriteria } : {})
})

/** Writes a run's enrollment policy fields (reminder hours as an int array). */
export const writePolicy = (uuid: string, policy: EnrollmentPolicyInput | undefined) =>
  Effect.gen(function*() {
    if (policy === undefined) return
    const sql = yield* SqlClient.SqlClient
    const columns = policyColumns(policy)
    const sets = [
      ...Object.entries(columns).map(([column, value]) => sql`${sql(column)} = ${value}`),
      ...(policy.reminderHours !== undefined ? [sql`reminder_hours = ${`{${policy.reminderHours.join(",")}}`}::int[]`] : [])
    ]
    if (sets.length > 0) yield* sql`UPDATE learning_runs SET ${sql.csv(sets)} WHERE uuid = ${uuid}`
  })

/** Sets a new run's extension policy (without a revision bump: the run is being created). */
export const writeExtensionPolicy = (uuid: string, policy: ExtensionPolicy): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`UPDATE learning_runs SET extension_policy = ${JSON.stringify(policy)}::jsonb WHERE uuid = ${uuid}`))
