import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Schema } from "effect"
import { RateLimited } from "../kernel/ApiError.js"
import { rowDecoder, rowsDecoder } from "../store/Rows.js"
import { deleteExpiredChallenges } from "./SignInChallengeRepository.js"

/** A limit was reached; `retryAfterSeconds` is the real remaining wait, at least 1; `limit` uses per `windowSeconds`. */
export class LimitReached extends Data.TaggedError("LimitReached")<{
  readonly retryAfterSeconds: number
  readonly limit: number
  readonly windowSeconds: number
  readonly message: string
}> {}

/** 429 `rate_limited` for a reached limit: its message, the limit, its window and the wait (the `Retry-After` sent). */
export const rateLimitedBy = (
  limit: { readonly message: string; readonly limit: number; readonly windowSeconds: number },
  retryAfterSeconds: number
): RateLimited =>
  new RateLimited({ message: limit.message, limit: limit.limit, windowSeconds: limit.windowSeconds, retryAfterSeconds })

export interface Window {
  readonly bucket: string
  readonly subject: string
  readonly limit: number
  readonly seconds: number
  readonly message: string
}

/**
 * `rate_limit_hits`, of which this module is the one reader and writer: one row per counted
 * event. `at` is read as text: microseconds, which a JavaScript `Date` would round away, and
 * `forgetHits` must name the exact instant.
 */
const RateLimitHitRow = Schema.Struct({ bucket: Schema.String, subject: Schema.String, at: Schema.String })
const decodeHit = rowDecoder(RateLimitHitRow)

/** A window's count of hits and the seconds until its oldest counted one leaves it. */
const WindowCount = Schema.Struct({ hits: Schema.Number, oldest_wait: Schema.NullOr(Schema.Number) })
const decodeWindowCount = rowsDecoder(WindowCount)
const decodeSubjectCounts = rowsDecoder(Schema.Struct({ subject: Schema.String, ...WindowCount.fields }))
const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))

/**
 * Persisted sliding-window limits: one row per counted event in `rate_limit_hits`, so limits
 * survive restarts and hold across hosts. The caller serialises concurrent checks of one subject
 * (an advisory lock in its transaction) so two requests cannot both take the last slot.
 */
export const checkWindow = (window: Window): Effect.Effect<void, LimitReached | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`
      SELECT count(*)::int AS hits,
        ceil(extract(epoch FROM (min(at) + make_interval(secs => ${window.seconds}) - clock_timestamp())))::int AS oldest_wait
      FROM (
        SELECT at FROM rate_limit_hits
        WHERE bucket = ${window.bucket} AND subject = ${window.subject}
          AND at > clock_timestamp() - make_interval(secs => ${window.seconds})
        ORDER BY at DESC LIMIT ${window.limit}
      ) recent`,
      decodeWindowCount
    )
    if (row !== undefined && row.hits >= window.limit) {
      // Full window: the slot frees when the oldest of the last `limit` hits leaves it.
      return yield* new LimitReached({
        retryAfterSeconds: Math.max(1, row.oldest_wait ?? 1),
        limit: window.limit,
        windowSeconds: window.seconds,
        message: window.message
      })
    }
  })

/**
 * `checkWindow` and `recordHit` in one statement: the event is counted only when the window has
 * room. The caller holds the subject's lock (`lockSubject`, an earlier statement: this one's
 * snapshot then sees every hit committed before it), as for `checkWindow`.
 */
export const countInWindow = (window: Window): Effect.Effect<void, LimitReached | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(countInWindows(window, [window.subject]), ([refused]) => refused === undefined ? Effect.void : Effect.fail(refused))

/**
 * `countInWindow` for several uses at once (a group commit's batch), one statement: `subjects`
 * has one entry per use, in the batch's order, a subject possibly more than once; each subject's
 * uses take the slots its window has left, in order. Answers per use `undefined` (counted) or the
 * `LimitReached` it gets. The caller holds every subject's lock (`lockSubjects`).
 */
export const countInWindows = (
  window: Omit<Window, "subject">,
  subjects: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<LimitReached | undefined>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const uses = new Map<string, number>()
    for (const subject of subjects) uses.set(subject, (uses.get(subject) ?? 0) + 1)
    const rows = yield* Effect.flatMap(
      sql`
      WITH counted AS (
        SELECT w.subject, w.n, c.hits, c.oldest_wait
        FROM jsonb_to_recordset(${JSON.stringify([...uses].map(([subject, n]) => ({ subject, n })))}::jsonb) AS w(subject text, n int)
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS hits,
            ceil(extract(epoch FROM (min(at) + make_interval(secs => ${window.seconds}) - clock_timestamp())))::int AS oldest_wait
          FROM (
            SELECT at FROM rate_limit_hits
            WHERE bucket = ${window.bucket} AND subject = w.subject
              AND at > clock_timestamp() - make_interval(secs => ${window.seconds})
            ORDER BY at DESC LIMIT ${window.limit}
          ) recent
        ) c
      ), hit AS (
        INSERT INTO rate_limit_hits (bucket, subject, at)
        SELECT ${window.bucket}, subject, clock_timestamp() FROM counted, generate_series(1, least(n, ${window.limit}::int - hits))
      )
      SELECT subject, hits, oldest_wait FROM counted`,
      decodeSubjectCounts
    )
    const taken = new Map(rows.map((row) => [row.subject, row.hits]))
    const waits = new Map(rows.map((row) => [row.subject, row.oldest_wait]))
    return subjects.map((subject) => {
      const hits = taken.get(subject) ?? 0
      taken.set(subject, hits + 1)
      if (hits < window.limit) return undefined
      // Full window: the slot frees when the oldest of the last `limit` hits leaves it (the
      // whole window when every slot was taken by this batch itself).
      return new LimitReached({
        retryAfterSeconds: Math.max(1, waits.get(subject) ?? window.seconds),
        limit: window.limit,
        windowSeconds: window.seconds,
        message: window.message
      })
    })
  })

/** One counted event, as `forgetHits` needs it to take the count back. */
export interface Hit {
  readonly bucket: string
  readonly subject: string
  /** The exact instant, as text: microseconds, which a JavaScript `Date` would round away. */
  readonly at: string
}

export const recordHit = (bucket: string, subject: string): Effect.Effect<Hit, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`INSERT INTO rate_limit_hits (bucket, subject, at) VALUES (${bucket}, ${subject}, clock_timestamp())
        RETURNING bucket, subject, at::text AS at`,
      (rows) => decodeHit(rows[0])
    ))

/** Takes counted events back (an attempt that turned out not to count, e.g. a refused email). */
export const forgetHits = (hits: ReadonlyArray<Hit>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(hits, (hit) =>
      sql`DELETE FROM rate_limit_hits WHERE bucket = ${hit.bucket} AND subject = ${hit.subject} AND at = ${hit.at}::timestamptz`, { discard: true }))

/** Serialises checks of one subject until the end of the current transaction. */
export const lockSubject = (key: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`)

/**
 * `lockSubject` for several keys in one statement, taken in sorted order (so two batches never
 * wait on each other crosswise).
 */
export const lockSubjects = (keys: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT pg_advisory_xact_lock(hashtext(k)) FROM jsonb_array_elements_text(${JSON.stringify([...new Set(keys)].sort())}::jsonb) AS k`)

/**
 * Forgets counted events older than a day (the longest window is an hour) and sign-in challenges
 * that expired more than a day ago: the addresses of people who never finished signing in are not
 * kept. Returns how many rows of each went.
 */
export const cleanSignInRecords: Effect.Effect<{ readonly hits: number; readonly challenges: number }, SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [hits] = yield* Effect.flatMap(
      sql`WITH gone AS (
        DELETE FROM rate_limit_hits WHERE at < now() - interval '1 day' RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`,
      decodeCount
    )
    const challenges = yield* deleteExpiredChallenges
    return { hits: hits?.n ?? 0, challenges }
  })
