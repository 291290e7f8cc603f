import { Chunk, Effect, Option, Stream } from "effect"
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
 * Every row, read `pageSize` at a time in key order: each page a statement of its own after the
 * last row of the page before (keyset), read only when the stream is pulled that far. No
 * connection is held between pages, so a reader that drains slowly holds one page, not the pool.
 */
export const keysetPages = <Row, E, R>(
  pageSize: number,
  page: (after: Option.Option<CursorPosition>, limit: number) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  position: (row: Row) => CursorPosition
): Stream.Stream<Row, E, R> =>
  Stream.paginateChunkEffect(Option.none<CursorPosition>(), (after) =>
    Effect.map(page(after, pageSize), (rows) => {
      const last = rows[rows.length - 1]
      const next = rows.length < pageSize || last === undefined ? Option.none() : Option.some(Option.some(position(last)))
      return [Chunk.unsafeFromArray(rows), next] as const
    }))
