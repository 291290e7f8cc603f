import { Effect, Option } from "effect"
import { InvalidRequest } from "../kernel/ApiError.js"

/**
 * Opaque keyset cursors: the sort key and uuid of the last row of a page, as base64url JSON. The
 * sort key is kept as Postgres text (`timestamptz::text`), so it compares at full microsecond
 * precision when cast back; a JavaScript Date would round it to milliseconds and skip rows.
 */
export interface CursorPosition {
  readonly key: string
  readonly uuid: string
}

export const encodeCursor = (position: CursorPosition): string =>
  Buffer.from(JSON.stringify([position.key, position.uuid])).toString("base64url")

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The position of a cursor a client sent back, or 400 `invalid_request` when it is not one of ours. */
export const decodeCursor = (cursor: string | undefined): Effect.Effect<Option.Option<CursorPosition>, InvalidRequest> => {
  if (cursor === undefined || cursor === "") return Effect.succeed(Option.none())
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && value[0].length <= 64 &&
      typeof value[1] === "string" && uuidPattern.test(value[1])
    ) {
      return Effect.succeed(Option.some({ key: value[0], uuid: value[1] }))
    }
  } catch {
    // not JSON: reported below
  }
  return Effect.fail(new InvalidRequest({ message: "cursor is not a cursor this service returned; start again without it" }))
}

/** The page and the cursor of the next one: fetch `limit + 1` rows, return `limit` and a cursor when there were more. */
export const pageOf = <Row, Item>(
  rows: ReadonlyArray<Row>,
  limit: number,
  position: (row: Row) => CursorPosition,
  item: (row: Row) => Item
): { readonly items: ReadonlyArray<Item>; readonly nextCursor?: string } => {
  const items = rows.slice(0, limit)
  const last = items[items.length - 1]
  return rows.length > limit && last !== undefined
    ? { items: items.map(item), nextCursor: encodeCursor(position(last)) }
    : { items: items.map(item) }
}

/**
 * Items read a page at a time (`keysetPages`): `start()` starts a reading from the first page;
 * each run of the effect it returns gives the next page, `undefined` after the last.
 */
export class Paged<A, E = never, R = never> {
  constructor(readonly start: () => Effect.Effect<ReadonlyArray<A> | undefined, E, R>) {}
  /** The same pages with each item mapped. */
  map<B>(f: (item: A) => B): Paged<B, E, R> {
    return new Paged(() => Effect.map(this.start(), (page) => page === undefined ? undefined : page.map(f)))
  }
}

/**
 * Every row, read `pageSize` at a time in key order: each page a statement of its own after the
 * last row of the page before (keyset), read only when the reading is pulled that far. No
 * connection is held between pages, so a reader that drains slowly holds one page, not the pool.
 */
export const keysetPages = <Row, E, R>(
  pageSize: number,
  page: (after: Option.Option<CursorPosition>, limit: number) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  position: (row: Row) => CursorPosition
): Paged<Row, E, R> =>
  new Paged(() => {
    // The position after the last page read; `undefined` once a short page has ended the rows.
    let after: Option.Option<CursorPosition> | undefined = Option.none()
    return Effect.suspend(() => {
      if (after === undefined) return Effect.succeed(undefined)
      return Effect.map(page(after, pageSize), (rows) => {
        const last = rows[rows.length - 1]
        after = rows.length < pageSize || last === undefined ? undefined : Option.some(position(last))
        return rows
      })
    })
  })
