import { Chunk, Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { streamedStruct } from "./Implementation.js"

const Item = Schema.Struct({ at: Schema.DateFromString, name: Schema.String, note: Schema.optional(Schema.String) })
const Document = Schema.Struct({
  version: Schema.Literal(2),
  title: Schema.String,
  items: Schema.Array(Item),
  tags: Schema.Array(Schema.String)
})

const item = (n: number) => ({ at: new Date(Date.UTC(2026, 0, n)), name: `item "${n}" ё`, ...(n % 2 === 0 ? { note: `n${n}` } : {}) })

/** A stream of `pages`, each page one chunk (as keysetPages reads them), empty pages included. */
const paged = <A>(pages: ReadonlyArray<ReadonlyArray<A>>) => Stream.fromChunks(...pages.map((page) => Chunk.fromIterable(page)))

const text = <R>(chunks: Stream.Stream<string, unknown, R>) => Effect.runPromise(Stream.mkString(chunks) as Effect.Effect<string>)

describe("streamedStruct", () => {
  it("writes JSON.stringify of the encoded value, in the schema's field order, whatever the pages", async () => {
    for (const pages of [[], [[]], [[1]], [[1, 2, 3]], [[1, 2], [], [3], [4, 5, 6]], [[], [1]]]) {
      const items = pages.map((page) => page.map(item))
      const value = { version: 2 as const, title: "Каталог", items: items.flat(), tags: ["a", "b"] }
      const expected = JSON.stringify(Schema.encodeSync(Document)(value))
      // The value's own key order differs from the schema's: the schema's is what is written.
      const streamed = streamedStruct(Document, { tags: paged([["a"], ["b"]]), items: paged(items), title: "Каталог", version: 2 })
      expect(await text(streamed.chunks)).toBe(expected)
    }
  })

  it("starts again from the beginning on every run of the stream", async () => {
    const streamed = streamedStruct(Document, { version: 2, title: "x", items: paged([[item(1)], [item(2)]]), tags: [] })
    const first = await text(streamed.chunks)
    expect(await text(streamed.chunks)).toBe(first)
    expect(JSON.parse(first).items).toHaveLength(2)
  })

  it("writes nothing before the first items are read, and fails with the stream's failure after the chunks already read", async () => {
    const early = streamedStruct(Document, { version: 2, title: "x", items: Stream.fail("database down") as unknown as Stream.Stream<typeof Item.Type, never, never>, tags: [] })
    const before: Array<string> = []
    const failed = await Effect.runPromiseExit(Stream.runForEach(early.chunks as Stream.Stream<string, unknown>, (chunk) => Effect.sync(() => before.push(chunk))))
    expect([failed._tag, before]).toEqual(["Failure", []])

    const failing = Stream.concat(paged([[item(1)]]), Stream.fail("database down"))
    const streamed = streamedStruct(Document, { version: 2, title: "x", items: failing as unknown as Stream.Stream<typeof Item.Type, never, never>, tags: [] })
    const seen: Array<string> = []
    const exit = await Effect.runPromiseExit(Stream.runForEach(streamed.chunks as Stream.Stream<string, unknown>, (chunk) => Effect.sync(() => seen.push(chunk))))
    expect(exit._tag).toBe("Failure")
    expect(seen.join("")).toBe(`{"version":2,"title":"x","items":[${JSON.stringify(Schema.encodeSync(Item)(item(1)))}`)
  })
})
