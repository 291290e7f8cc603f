import { describe, expect, it } from "vitest"
import { jsonBody } from "./JsonBody.js"

const same = (value: unknown) => expect(jsonBody(value).toString()).toBe(JSON.stringify(value))

describe("jsonBody", () => {
  it("writes exactly what JSON.stringify writes, for pages, records, arrays and scalars", () => {
    same({ items: [{ uuid: "a", title: "Лендинг для кофейни ☕", n: 1 }, { uuid: "b", nested: { list: [1, "два", null] } }], nextCursor: "abc" })
    same({ items: [] })
    same({})
    same([])
    same([1, "x", { a: [1, 2] }])
    same({ summary: { reviewCount: 2, ratings: [0, 0, 1, 0, 1] }, items: [{ a: 1 }], tail: true, more: [[1], [2]] })
    same("строка")
    same(42)
    same(null)
    same(true)
  })

  it("leaves out what JSON.stringify leaves out and writes null where it does", () => {
    same({ a: undefined, b: () => 1, c: Symbol("s"), d: 1 })
    same({ a: undefined })
    same({ items: [undefined, () => 1, Symbol("s"), 1] })
    same([undefined, 1])
    same([undefined])
    same({ history: [], one: [undefined], two: [undefined, 2] })
  })

  it("honours toJSON and escapes keys and text", () => {
    same({ at: new Date(0), "ключ \"с\" кавычками\n": ["\u2028", "\ud83d\ude00"] })
    same(new Date(0))
  })

  it("keeps a large page in pieces and the same bytes", () => {
    const word = "Разработка лендинга для кофейни, адаптивная вёрстка. "
    const page = { items: Array.from({ length: 21 }, (_, i) => ({ uuid: String(i), approved: { description: word.repeat(40) } })), nextCursor: "x" }
    const bytes = jsonBody(page)
    expect(Buffer.isBuffer(bytes) && bytes.equals(Buffer.from(JSON.stringify(page)))).toBe(true)
  })
})
