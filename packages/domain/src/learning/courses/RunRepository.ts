import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { NotFound } from "../../kernel/ApiError.js"
import { revisedColumns } from "../../store/Revision.js"
import { uuidArray } from "../../store/Rows.js"
import type { ExtensionPolicy, NodeDates, Run, RunStatus } from "./Model.js"

/** `learning_runs`: its rows, read and written only here. */
export interface RunRow {
  readonly uuid: string
  readonly course_uuid: string
  readonly version_number: number
  readonly title: string
  readonly pacing: "cohort" | "self"
  readonly starts_at: Date
  readonly ends_at: Date | null
  readonly admission: "open" | "approval" | "invite"
  readonly capacity: number | null
  readonly waitlist: boolean
  readonly enrollment_opens_at: Date | null
  readonly enrollment_closes_at: Date | null
  readonly pause_policy: { readonly maxDays: number; readonly maxCount: number }
  /** Enrollment policies (migration 20). */
  readonly seat_offer_hours: number
  readonly withdraw_grace_hours: number
  readonly restore_days: number
  readonly reminder_hours: ReadonlyArray<number>
  readonly complete_on_criteria: boolean
  readonly application_form: unknown
  /** Extension requests (migration 27). */
  readonly extension_policy: ExtensionPolicy
  /** nodeKey → dates as ISO strings (jsonb). */
  readonly schedule: Readonly<Record<string, { readonly unlockAt?: string; readonly dueAt?: string; readonly lockAt?: string }>>
  readonly status: RunStatus
  readonly finished_at: Date | null
  readonly cancelled_at: Date | null
  readonly revision: number
  readonly created_at: Date
  readonly updated_at: Date
  /** From the course: grades freeze this many days after the run finished (LEARNING §5.4). */
  readonly freeze_after_days: number
}

export const runColumns = `r.uuid, r.course_uuid, r.version_number, r.title, r.pacing, r.starts_at, r.ends_at, r.admission, r.capacity,
  r.waitlist, r.enrollment_opens_at, r.enrollment_closes_at, r.pause_policy, r.seat_offer_hours, r.withdraw_grace_hours, r.restore_days,
  r.reminder_hours, r.complete_on_criteria, r.application_form, r.extension_policy, r.schedule, r.status, r.finished_at, r.cancelled_at,
  r.revision, r.created_at, r.updated_at, (SELECT c.freeze_after_days FROM learning_courses c WHERE c.uuid = r.course_uuid) AS freeze_after_days`

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
    uuids.length === 0 ? Effect.succeed([]) : sql<RunRow>`SELECT ${sql.literal(runColumns)} FROM learning_runs r WHERE r.uuid = ANY(${uuidArray(sql, uuids)})
      ORDER BY r.uuid ${options.lock ? sql.literal("FOR UPDATE OF r") : sql``}`)

/** Runs of a course, newest first, optionally of some statuses; keyset by (created_at, uuid). */
export const listRunRows = (
  courseUuid: string,
  options: { readonly statuses?: ReadonlyArray<RunStatus>; readonly limit: number; readonly after?: { readonly key: string; readonly uuid: string } }
): Effect.Effect<ReadonlyArray<RunRow & { readonly position: string }>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<RunRow & { position: string }>`SELECT ${sql.literal(runColumns)}, r.created_at::text AS position FROM learning_runs r
      WHERE r.course_uuid = ${courseUuid}
        ${options.statuses !== undefined ? sql`AND r.status IN ${sql.in(options.statuses)}` : sql``}
        ${options.after !== undefined ? sql`AND (r.created_at, r.uuid) < (${options.after.key}::timestamptz, ${options.after.uuid}::uuid)` : sql``}
      ORDER BY r.created_at DESC, r.uuid DESC LIMIT ${options.limit}`)

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
