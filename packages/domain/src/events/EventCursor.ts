import { Duration, Effect, Schema } from "effect"
import { InvalidRequest, ResyncRequired } from "../kernel/ApiError.js"

/** Spec: a cursor older than this answers 410, and the client must resync. */
export const cursorValidity = Duration.days(30)

/**
 * What an events cursor carries: the last position the client has seen and when the service issued
 * the cursor. Every page issues a fresh one, so a client that keeps following never expires; one
 * that stops for more than 30 days must resync (events older than that may be gone by then).
 */
export interface EventCursor {
  /** A position (bigint as decimal text: positions are int8). 0: before the first event. */
  readonly position: string
  readonly issuedAt: number
}

const Wire = Schema.parseJson(Schema.Struct({
  v: Schema.Literal(1),
  p: Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]{0,18})$/)),
  t: Schema.Int.pipe(Schema.nonNegative())
}))

/** base64url of `{"v":1,"p":"<position>","t":<ms>}`: opaque to clients, not a secret (a forged one only misleads its forger). */
export const encodeEventCursor = (cursor: EventCursor): string =>
  Buffer.from(JSON.stringify({ v: 1, p: cursor.position, t: cursor.issuedAt })).toString("base64url")

const invalid = () => new InvalidRequest({ message: "cursor is not an events cursor this service issued; start again without it" })

/**
 * The cursor a client sent back, checked against `now`: 400 `invalid_request` when it is not ours,
 * 410 `resync_required` when it was issued more than 30 days ago.
 */
export const decodeEventCursor = (cursor: string, now: number): Effect.Effect<EventCursor, InvalidRequest | ResyncRequired> =>
  Effect.gen(function*() {
    if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return yield* invalid()
    const wire = yield* Schema.decodeUnknown(Wire)(Buffer.from(cursor, "base64url").toString("utf8")).pipe(Effect.mapError(invalid))
    if (now - wire.t > Duration.toMillis(cursorValidity)) {
      return yield* new ResyncRequired({
        message: "The cursor is older than 30 days: read the current records again and start a new cursor without one"
      })
    }
    return { position: wire.p, issuedAt: wire.t }
  })
