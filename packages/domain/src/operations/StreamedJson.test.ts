import { Effect, Exit, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { keysetPages, Paged } from "../store/Cursor.js"
import { forEachPiece, type JsonPiece, pieceText, type StreamedJson, streamedStruct } from "./Implementation.js"

const Item = Schema.Struct({ at: Schema.DateFromString, name: Schema.String, note: Schema.optional(Schema.String) })
const Document = Schema.Struct({
  version: Schema.Literal(2),
  title: Schema.String,
  items: Schema.Array(Item),
  tags: Schema.Array(Schema.String)
})

const item = (n: number) => ({ at: new Date(Date.UTC(2026, 0, n)), name: `item "${n}" ё`, ...(n % 2 === 0 ? { note: `n${n}` } : {}) })

/** `pages` given one at a time (as keysetPages reads them), empty pages included; then `end` (no more, or a failure). */
const paged = <A>(pages: ReadonlyArray<ReadonlyArray<A>>, end: Effect.Effect<undefined, string> = Effect.succeed(undefined)) =>
  new Paged(() => {
    let read = 0
    return Effect.suspend(() => (read < pages.length ? Effect.succeed(pages[read++]!) : end))
  }) as unknown as Paged<A>

/** Every piece of a reading, in order. */
const piecesOf = (json: StreamedJson<unknown>) =>
  Effect.suspend(() => {
    const pieces: Array<string> = []
    return Effect.as(forEachPiece(json as StreamedJson<never>, (piece) => Effect.sync(() => void pieces.push(pieceText(piece)))), pieces)
  })

const text = async (json: StreamedJson<unknown>) => (await Effect.runPromise(piecesOf(json))).join("")

describe("streamedStruct", () => {
  it("writes JSON.stringify of the encoded value, in the schema's field order, whatever the pages", async () => {
    for (const pages of [[], [[]], [[1]], [[1, 2, 3]], [[1, 2], [], [3], [4, 5, 6]], [[], [1]]]) {
      const items = pages.map((page) => page.map(item))
      const value = { version: 2 as const, title: "Каталог", items: items.flat(), tags: ["a", "b"] }
      const expected = JSON.stringify(Schema.encodeSync(Document)(value))
      // The value's own key order differs from the schema's: the schema's is what is written.
      const streamed = streamedStruct(Document, { tags: paged([["a"], ["b"]]), items: paged(items), title: "Каталог", version: 2 })
      expect(await text(streamed)).toBe(expected)
    }
  })

  it("gives a page's text as one piece, the text before it as a piece of its own", async () => {
    const streamed = streamedStruct(Document, { version: 2, title: "x", items: paged([[item(1), item(2)], [item(3)]]), tags: [] })
    const pieces = await Effect.runPromise(piecesOf(streamed))
    const encoded = (n: number) => JSON.stringify(Schema.encodeSync(Item)(item(n)))
    expect(pieces).toEqual([`{"version":2,"title":"x","items":[`, `${encoded(1)},${encoded(2)}`, ",", encoded(3), `],"tags":[]}`])
  })

  it("starts again from the beginning on every reading", async () => {
    const streamed = streamedStruct(Document, { version: 2, title: "x", items: paged([[item(1)], [item(2)]]), tags: [] })
    const first = await text(streamed)
    expect(await text(streamed)).toBe(first)
    expect(JSON.parse(first).items).toHaveLength(2)
  })

  it("gives nothing before the first items are read, and fails with the reading's failure after the pieces already given", async () => {
    const early = streamedStruct(Document, { version: 2, title: "x", items: paged([], Effect.fail("database down")), tags: [] })
    const before: Array<string> = []
    const failed = await Effect.runPromiseExit(forEachPiece(early as StreamedJson<never>, (piece) => Effect.sync(() => void before.push(pieceText(piece)))))
    expect([failed._tag, before]).toEqual(["Failure", []])

    const streamed = streamedStruct(Document, { version: 2, title: "x", items: paged([[item(1)]], Effect.fail("database down")), tags: [] })
    const seen: Array<string> = []
    const exit = await Effect.runPromiseExit(forEachPiece(streamed as StreamedJson<never>, (piece) => Effect.sync(() => void seen.push(pieceText(piece)))))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(seen.join("")).toBe(`{"version":2,"title":"x","items":[${JSON.stringify(Schema.encodeSync(Item)(item(1)))}`)
  })

  it("reads the next page only when the piece before has been used", async () => {
    const reads: Array<string> = []
    const pages = keysetPages(2, (after: Option.Option<{ key: string; uuid: string }>) => Effect.sync(() => {
      const from = Option.match(after, { onNone: () => 0, onSome: (at) => Number(at.key) })
      reads.push(`page from ${from}`)
      return [from + 1, from + 2].filter((n) => n <= 5)
    }), (n) => ({ key: String(n), uuid: "" }))
    const streamed = streamedStruct(Document, { version: 2, title: "x", items: pages.map(item), tags: [] })
    // Each piece is used a while after it is given: a page read ahead would be read meanwhile.
    const use = (piece: JsonPiece) =>
      Effect.zipRight(Effect.sleep("5 millis"), Effect.sync(() => void reads.push(`used ${pieceText(piece).length > 40 ? "items" : pieceText(piece)}`)))
    await Effect.runPromise(forEachPiece(streamed as StreamedJson<never>, use))
    expect(reads).toEqual([
      "page from 0",
      `used {"version":2,"title":"x","items":[`,
      "used items",
      "page from 2",
      "used ,",
      "used items",
      "page from 4",
      "used ,",
      "used items",
      `used ],"tags":[]}`
    ])
  })
})
