import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { cursorBehind, lockCursorWindow, moveCursor } from "../../events/ConsumerCursor.js"
import { eventDescription } from "../../events/EventCatalog.js"
import type { EventType } from "../../events/EventType.js"
import { eventVisibleToColumn } from "../../events/EventVisibility.js"
import { insertLearningNotifications } from "../../notifications/NotificationRepository.js"
import { Int8Text, rowsDecoder, selectList, uuidArray } from "../../store/Rows.js"
import { communityStatuses } from "./Community.js"
import { StaffRoleSchema } from "../staff/StaffModel.js"
import { type Atom, enrollmentGroupUuids, groupScoped, holdsAtom } from "../Permissions.js"

/**
 * The learning notifier: learning events become
 * per-recipient notifications in the one inbox (`source: learning`, `kind` = the event type).
 *
 * 1. **Queue** (`queueLearningNotifications`): the events after the notifier's cursor, each
 *    addressed to the profiles its emitter listed in `context.audience` except the actor
 *    (`context.profileUuid`), become queue rows keyed by (event, recipient), in the transaction
 *    that moves the cursor. Several workers serialize on the cursor row; a batch run again inserts
 *    nothing new.
 * 2. **Deliver** (`deliverLearningNotifications`): each due row is decided once, with what holds
 *    *now*: the recipient may still see the event (`eventVisibleTo`), still holds the right the
 *    event's type asks for (`notifiedBy`), and its preferences for the kind allow the inbox. Quiet
 *    hours postpone the row to their end (decided again then). The notification and the decision
 *    are written in one transaction; the unique (event, recipient) index of learning
 *    notifications keeps a repeated delivery from writing twice.
 */

/**
 * Who of an event's audience is still entitled to its notification:
 * - `learner`: the learner of the event's enrollment (or, for a run event, of an enrollment in
 *   the run): `enrollment` whatever its status (the event is about the enrollment's own fate),
 *   `enrolled` only while it takes part in the course (active, paused, asking to withdraw,
 *   completed), `thread` the thread's learner while enrolled so, or a fellow learner of a
 *   run-visible thread still learning in the run; `none` for staff-only events;
 * - `staff`: an active staff assignment holding this atom in the scope of the event's run.
 */
export interface NotifiedBy {
  readonly learner: "enrollment" | "enrolled" | "thread" | "none"
  readonly staff?: Atom
}

type LearningEventType = Extract<EventType, `learning.${string}`>

/** Every learning event type and who it notifies (docs/decisions.md, "Learning notifier"). */
export const notifiedBy: Readonly<Record<LearningEventType, NotifiedBy>> = {
  "learning.appeal.opened": { learner: "none", staff: "appeals_resolve" },
  "learning.checker.failed": { learner: "none", staff: "checkers_manage" },
  "learning.community.created": { learner: "thread", staff: "community_staff" },
  "learning.community.replied": { learner: "thread", staff: "community_staff" },
  "learning.community.resolved": { learner: "thread", staff: "community_staff" },
  "learning.course.completed": { learner: "enrollment" },
  "learning.course.published": { learner: "none", staff: "content_edit" },
  "learning.deadline.approaching": { learner: "enrolled" },
  "learning.deadline.changed": { learner: "enrolled" },
  "learning.enrollment.activated": { learner: "enrollment" },
  "learning.enrollment.completed": { learner: "enrollment" },
  "learning.enrollment.invited": { learner: "enrollment" },
  "learning.enrollment.pause": { learner: "enrollment", staff: "roster_manage" },
  "learning.enrollment.requested": { learner: "enrollment", staff: "roster_manage" },
  "learning.enrollment.restored": { learner: "enrollment" },
  "learning.enrollment.resume": { learner: "enrollment" },
  "learning.enrollment.start": { learner: "enrollment" },
  "learning.enrollment.transferred": { learner: "enrollment" },
  "learning.enrollment.withdraw": { learner: "enrollment", staff: "roster_manage" },
  "learning.enrollment.withdrawn": { learner: "enrollment", staff: "roster_manage" },
  "learning.module.completed": { learner: "enrolled" },
  "learning.review.overdue": { learner: "none", staff: "review" },
  "learning.review.requested": { learner: "none", staff: "review" },
  "learning.revision.requested": { learner: "enrolled" },
  "learning.run.cancelled": { learner: "enrollment" },
  "learning.step.available": { learner: "enrolled" },
  "learning.submission.accepted": { learner: "enrolled" },
  "learning.submission.graded": { learner: "enrolled" }
}

/**
 * An audience entry names a profile when it is a profile's uuid as text (lowercase, hyphenated).
 * Only such an entry is cast, so the join probes the profiles' key (a cast of the key to text
 * compared every profile with every entry) and a stray entry still matches nothing. The actor is
 * left out before the join: a regrade plan's events name their learner as both.
 */
const canonicalUuid = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"

/** Positions one queueing transaction covers at most. */
export const notifierWindow = 500

/**
 * One queueing batch: the learning events after the cursor (at most `notifierWindow` positions),
 * one row per (event, addressed profile that exists, not the actor). Returns the positions covered
 * (0: caught up) and the rows queued now.
 */
export const queueLearningNotifications: Effect.Effect<{ readonly covered: number; readonly queued: number }, SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The idle poll: one statement, no transaction, while no event waits.
    if (!(yield* cursorBehind("learning_notifier_cursor"))) return { covered: 0, queued: 0 }
    return yield* sql.withTransaction(Effect.gen(function*() {
      const next = yield* lockCursorWindow("learning_notifier_cursor", notifierWindow)
      if (next === undefined) return { covered: 0, queued: 0 }
      const { after, upto } = next
      const queued = yield* sql`INSERT INTO learning_notification_queue (event_uuid, profile_uuid, event_type, event_position)
        SELECT e.uuid, p.uuid, e.type, e.position
        FROM outbox_events e
        CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(e.context -> 'audience') = 'array'
          THEN e.context -> 'audience' ELSE '[]'::jsonb END) AS a(profile)
        JOIN profiles p ON p.uuid = CASE WHEN a.profile ~ ${canonicalUuid} THEN a.profile::uuid END
        WHERE e.position > ${after.toString()} AND e.position <= ${upto.toString()} AND e.type LIKE 'learning.%'
          AND a.profile IS DISTINCT FROM e.context ->> 'profileUuid'
        ORDER BY e.position
        ON CONFLICT (event_uuid, profile_uuid) DO NOTHING
        RETURNING event_uuid`
      yield* moveCursor("learning_notifier_cursor", upto)
      return { covered: Number(upto - after), queued: queued.length }
    }))
  })

const Due = Schema.Struct({
  event_uuid: Schema.String,
  profile_uuid: Schema.String,
  event_type: Schema.String,
  event_position: Int8Text,
  aggregate_uuid: Schema.String,
  data: Schema.Unknown,
  context: Schema.Unknown,
  /** The event visibility rule, evaluated now for the recipient. */
  visible: Schema.Boolean,
  kinds: Schema.Unknown,
  quiet_hours: Schema.Unknown
})
type Due = typeof Due.Type
const decodeDue = rowsDecoder(Due)

/** The channels of one kind; a kind the preferences do not name: the inbox only. */
export const channelsFor = (kinds: unknown, kind: string): { readonly inApp: boolean; readonly email: boolean; readonly digest: boolean } => {
  const saved = typeof kinds === "object" && kinds !== null ? (kinds as Record<string, unknown>)[kind] : undefined
  if (typeof saved !== "object" || saved === null) return { inApp: true, email: false, digest: false }
  const channels = saved as Record<string, unknown>
  return { inApp: channels.inApp !== false, email: channels.email === true, digest: channels.digest === true }
}

const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5))

/**
 * When the quiet hours that hold at `now` end (UTC), or undefined when they do not hold. `from`
 * is inside, `to` is not; a window past midnight (22:00–07:00) wraps; equal ends mean none.
 */
export const quietUntil = (quietHours: unknown, now: Date): Date | undefined => {
  if (typeof quietHours !== "object" || quietHours === null) return undefined
  const { from, to } = quietHours as { readonly from?: unknown; readonly to?: unknown }
  if (typeof from !== "string" || typeof to !== "string") return undefined
  const start = minutesOf(from)
  const end = minutesOf(to)
  if (start === end) return undefined
  const minute = now.getUTCHours() * 60 + now.getUTCMinutes()
  const inside = start < end ? minute >= start && minute < end : minute >= start || minute < end
  if (!inside) return undefined
  const until = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), Math.floor(end / 60), end % 60))
  if (until.getTime() <= now.getTime()) until.setUTCDate(until.getUTCDate() + 1)
  return until
}

const text = (record: unknown, key: string): string | undefined => {
  const value = typeof record === "object" && record !== null ? (record as Record<string, unknown>)[key] : undefined
  return typeof value === "string" ? value : undefined
}

const liveStatuses: ReadonlyArray<string> = communityStatuses

const decodeThreadStanding = rowsDecoder(Schema.Struct({ learner: Schema.Boolean, peer: Schema.Boolean }))
const HeldAssignment = Schema.Struct({
  role: StaffRoleSchema,
  run_uuid: Schema.NullOr(Schema.String),
  group_uuid: Schema.NullOr(Schema.String),
  grants: Schema.Array(Schema.String),
  denies: Schema.Array(Schema.String)
})
const decodeAssignments = rowsDecoder(HeldAssignment)
const heldColumns = selectList(HeldAssignment)
const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))

/** Whether the recipient still holds what the event's type asks for, as the records say now. */
const entitled = (row: Due) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rule = notifiedBy[row.event_type as LearningEventType]
    if (rule === undefined) return false
    const courseUuid = text(row.context, "courseUuid")
    const runUuid = text(row.context, "runUuid")
    const enrollmentUuid = text(row.context, "enrollmentUuid")
    if (rule.learner === "thread") {
      const [thread] = yield* Effect.flatMap(
        sql`SELECT
          (t.learner_profile_uuid = ${row.profile_uuid} AND e.status IN ${sql.in([...liveStatuses])}) AS learner,
          (t.visibility = 'run' AND EXISTS (SELECT 1 FROM learning_enrollments mine WHERE mine.run_uuid = t.run_uuid
            AND mine.profile_uuid = ${row.profile_uuid} AND mine.status IN ${sql.in([...liveStatuses])})
          OR t.visibility = 'group' AND EXISTS (SELECT 1 FROM learning_group_members theirs
            JOIN learning_groups g ON g.uuid = theirs.group_uuid AND g.status = 'active'
            JOIN learning_group_members ours ON ours.group_uuid = theirs.group_uuid
            JOIN learning_enrollments mine ON mine.uuid = ours.enrollment_uuid
            WHERE theirs.enrollment_uuid = t.enrollment_uuid AND mine.profile_uuid = ${row.profile_uuid}
              AND mine.status IN ${sql.in([...liveStatuses])})) AS peer
        FROM learning_threads t JOIN learning_enrollments e ON e.uuid = t.enrollment_uuid WHERE t.uuid = ${row.aggregate_uuid}`,
        decodeThreadStanding
      )
      if (thread !== undefined && (thread.learner || thread.peer)) return true
    } else if (rule.learner !== "none") {
      const statuses = rule.learner === "enrolled" ? sql`AND status IN ${sql.in([...liveStatuses])}` : sql``
      const learner = enrollmentUuid !== undefined
        ? yield* sql`SELECT 1 FROM learning_enrollments WHERE uuid = ${enrollmentUuid} AND profile_uuid = ${row.profile_uuid} ${statuses}`
        : runUuid !== undefined
        ? yield* sql`SELECT 1 FROM learning_enrollments WHERE run_uuid = ${runUuid} AND profile_uuid = ${row.profile_uuid} ${statuses} LIMIT 1`
        : []
      if (learner.length > 0) return true
    }
    if (rule.staff === undefined || courseUuid === undefined) return false
    const assignments = yield* Effect.flatMap(
      sql`
      SELECT ${sql.literal(heldColumns)} FROM learning_staff
      WHERE course_uuid = ${courseUuid} AND profile_uuid = ${row.profile_uuid} AND status = 'active'`,
      decodeAssignments
    )
    const held = assignments.map((a) => ({ role: a.role, runUuid: a.run_uuid, groupUuid: a.group_uuid, grants: a.grants, denies: a.denies }))
    // Group-scoped staff hear of their groups' learners only.
    const groupUuids = enrollmentUuid !== undefined && groupScoped(held) ? yield* enrollmentGroupUuids(enrollmentUuid) : undefined
    return holdsAtom(held, rule.staff, { runUuid, groupUuids })
  })

/** The notification's words: the catalog's summary, the course's title, the record's read operation. */
const contentOf = (row: Due, courseTitles: ReadonlyMap<string, string>) => {
  const entry = eventDescription(row.event_type)
  const courseUuid = text(row.context, "courseUuid")
  const course = courseUuid === undefined ? undefined : courseTitles.get(courseUuid)
  const read = entry?.readOperationId
  return {
    title: entry?.summary ?? row.event_type,
    body: course === undefined ? row.event_type : `${course}: ${entry?.summary ?? row.event_type}`,
    ...(read === undefined ? {} : { link: read })
  }
}

const decodeCourseTitles = rowsDecoder(Schema.Struct({ uuid: Schema.String, title: Schema.String }))
const decodeStandings = rowsDecoder(Schema.Struct({ uuid: Schema.String, profile_uuid: Schema.String, status: Schema.String }))

/** The titles of the courses a batch of rows names, by course uuid: one read for the batch. */
const courseTitlesOf = (rows: ReadonlyArray<Due>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const uuids = [...new Set(rows.flatMap((row) => text(row.context, "courseUuid") ?? []))]
    if (uuids.length === 0) return new Map<string, string>()
    const found = yield* Effect.flatMap(sql`SELECT uuid, title FROM learning_courses WHERE uuid = ANY(${uuidArray(sql, uuids)})`, decodeCourseTitles)
    return new Map(found.map((course) => [course.uuid, course.title]))
  })

/**
 * The learners of a batch's enrollment events, read once for the batch: a row whose recipient is
 * its enrollment's learner (in a live status where the rule asks for one) is entitled without a
 * read of its own; any other row is decided by `entitled`, which also weighs staff rights.
 */
const learnerEntitlements = (rows: ReadonlyArray<Due>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const learnerRows = rows.filter((row) => {
      const rule = notifiedBy[row.event_type as LearningEventType]
      return rule !== undefined && (rule.learner === "enrollment" || rule.learner === "enrolled") && text(row.context, "enrollmentUuid") !== undefined
    })
    const uuids = [...new Set(learnerRows.flatMap((row) => text(row.context, "enrollmentUuid") ?? []))]
    const enrollments = uuids.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT uuid, profile_uuid, status FROM learning_enrollments WHERE uuid = ANY(${uuidArray(sql, uuids)})`,
      decodeStandings
    )
    const byUuid = new Map(enrollments.map((enrollment) => [enrollment.uuid, enrollment]))
    return (row: Due): boolean => {
      const rule = notifiedBy[row.event_type as LearningEventType]
      const enrollmentUuid = text(row.context, "enrollmentUuid")
      const enrollment = enrollmentUuid === undefined ? undefined : byUuid.get(enrollmentUuid)
      return rule !== undefined && enrollment !== undefined && enrollment.profile_uuid === row.profile_uuid &&
        (rule.learner === "enrollment" || rule.learner === "enrolled" && liveStatuses.includes(enrollment.status))
    }
  })

export type NotifierDecision = "delivered" | "preference_off" | "no_right" | "postponed"

/**
 * Decides up to `limit` due queue rows (skipping rows another worker holds), oldest event first,
 * at `now`, in one transaction: the batch's enrollments and course titles are read once, its
 * notifications written in one statement and its decisions settled in another (a row postponed by
 * quiet hours is moved alone). Returns how many were decided or postponed.
 */
export const deliverLearningNotifications = (
  limit: number,
  now: Date = new Date()
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const due = yield* decodeDue(yield* sql`
        SELECT q.event_uuid, q.profile_uuid, q.event_type, q.event_position::text AS event_position, e.aggregate_uuid, e.data, e.context,
          ${eventVisibleToColumn(sql, "q.profile_uuid")} AS visible, pref.kinds, pref.quiet_hours
        FROM learning_notification_queue q
        JOIN outbox_events e ON e.uuid = q.event_uuid
        LEFT JOIN notification_preferences pref ON pref.profile_uuid = q.profile_uuid
        WHERE q.status = 'pending' AND q.due_at <= ${now}
        ORDER BY q.due_at, q.event_position, q.profile_uuid
        LIMIT ${limit}
        FOR UPDATE OF q SKIP LOCKED`)
      if (due.length === 0) return 0
      const isLearner = yield* learnerEntitlements(due)
      const settled: Array<{ readonly row: Due; readonly status: Exclude<NotifierDecision, "postponed"> }> = []
      const delivered: Array<Due> = []
      for (const row of due) {
        const decision = yield* decide(row, now, isLearner)
        if (decision === "delivered") delivered.push(row)
        else if (decision !== "postponed") settled.push({ row, status: decision })
      }
      const titles = yield* courseTitlesOf(delivered)
      const written = yield* insertLearningNotifications(delivered.map((row) => ({
        profileUuid: row.profile_uuid,
        kind: row.event_type,
        eventUuid: row.event_uuid,
        eventType: row.event_type,
        ...contentOf(row, titles)
      })))
      const decisions = [...settled, ...delivered.map((row) => ({ row, status: "delivered" as const }))].map(({ row, status }) => {
        const channels = channelsFor(row.kinds, row.event_type)
        return {
          event_uuid: row.event_uuid,
          profile_uuid: row.profile_uuid,
          status,
          notification_uuid: status === "delivered" ? written.get(`${row.event_uuid}:${row.profile_uuid}`) ?? null : null,
          email_wanted: channels.email,
          digest_wanted: channels.digest
        }
      })
      if (decisions.length > 0) {
        yield* sql`UPDATE learning_notification_queue q SET status = d.status, decided_at = now(), notification_uuid = d.notification_uuid,
            email_wanted = d.email_wanted, digest_wanted = d.digest_wanted
          FROM jsonb_to_recordset(${JSON.stringify(decisions)}::jsonb) AS d(event_uuid uuid, profile_uuid uuid, status text,
            notification_uuid uuid, email_wanted boolean, digest_wanted boolean)
          WHERE q.event_uuid = d.event_uuid AND q.profile_uuid = d.profile_uuid`
      }
      return due.length
    }))
  })

/**
 * One queue row's decision (its notification, when delivered, is written by the caller with the
 * batch's): no right, the inbox turned off, or postponed to the end of quiet hours (moved here).
 */
const decide = (row: Due, now: Date, isLearner: (row: Due) => boolean): Effect.Effect<NotifierDecision, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (!row.visible || !(isLearner(row) || (yield* entitled(row)))) return "no_right"
    if (!channelsFor(row.kinds, row.event_type).inApp) return "preference_off"
    const quiet = quietUntil(row.quiet_hours, now)
    if (quiet === undefined) return "delivered"
    yield* sql`UPDATE learning_notification_queue SET due_at = ${quiet} WHERE event_uuid = ${row.event_uuid} AND profile_uuid = ${row.profile_uuid}`
    return "postponed"
  })

/**
 * One round of the notifier: a queueing batch, then a delivery batch. Returns the progress
 * (positions covered plus rows decided): 0 when nothing was left.
 */
export const runLearningNotifier = (limit: number, now?: Date): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const { covered } = yield* queueLearningNotifications
    const decided = yield* deliverLearningNotifications(limit, now ?? new Date())
    return covered + decided
  })

/** Decided queue rows are kept as long as notifications (90 days), then removed; pending ones stay. */
export const notifierQueueDays = 90

/** Retention of the notifier's decisions, in slices of 5,000 rows. */
export const cleanNotifierQueue: Effect.Effect<{ readonly notifierDecisions: number }, SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let total = 0
    for (;;) {
      const [row] = yield* Effect.flatMap(
        sql`WITH gone AS (
          DELETE FROM learning_notification_queue WHERE (event_uuid, profile_uuid) IN (
            SELECT event_uuid, profile_uuid FROM learning_notification_queue WHERE status <> 'pending'
              AND decided_at < now() - make_interval(days => ${notifierQueueDays}) LIMIT 5000)
          RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        decodeCount
      )
      total += row?.n ?? 0
      if ((row?.n ?? 0) < 5000) return { notifierDecisions: total }
    }
  })
