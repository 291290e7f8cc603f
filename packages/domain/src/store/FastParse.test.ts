import { Arbitrary, Either, FastCheck, ParseResult, Schema, SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
import { AuthSession } from "../auth/AuthApi.js"
import { catalog } from "../api/BirzhaApi.js"
import { EventTypeList } from "../events/EventsApi.js"
import { SessionActorRow } from "../auth/SessionRepository.js"
import { PublicRow } from "../publications/PublicationRepository.js"
import { Publication } from "../publications/Publication.js"
import { fastDecoder, fastEncoder, Unfit } from "./FastParse.js"

/**
 * The compiled parsers must answer exactly what the general parser answers (value, keys and key
 * order) or decline; never another value, never a value where the general parser fails.
 */
const agrees = (fast: unknown, general: Either.Either<unknown, unknown>) => {
  if (fast === Unfit) return
  expect(Either.isRight(general)).toBe(true)
  if (Either.isRight(general)) {
    expect(fast).toStrictEqual(general.right)
    expect(JSON.stringify(fast)).toBe(JSON.stringify(general.right))
  }
}

/** Adds an unknown key to every object in a value (what an implementation might leave in). */
const withExtras = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withExtras)
  if (typeof value !== "object" || value === null || value instanceof Date) return value
  const out: Record<string, unknown> = { extra_field: "leak" }
  for (const [key, item] of Object.entries(value)) out[key] = withExtras(item)
  return out
}

const samples = (schema: Schema.Schema.AnyNoContext, count: number): ReadonlyArray<unknown> => {
  try {
    return FastCheck.sample(Arbitrary.make(schema), { numRuns: count, seed: 11 })
  } catch {
    // Some schemas have no arbitrary (declarations without one); they are covered by the general path.
    return []
  }
}

/**
 * Beside these tests, `BIRZHA_CHECK_FAST_PARSE=1 npx vitest run packages/domain packages/http-host`
 * checks every compiled answer against the general parser's on every value the suites handle (a
 * difference throws).
 */
describe("FastParse", () => {
  // Schemas whose values fast-check can draw quickly (a filter such as the event-type set cannot be drawn).
  const drawn: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext]> = [
    ["AuthSession", AuthSession],
    ["Publication", Publication],
    ["tagged union", Schema.Union(
      Schema.Struct({ kind: Schema.Literal("a"), n: Schema.optional(Schema.NumberFromString) }),
      Schema.Struct({ kind: Schema.Literal("b"), list: Schema.Array(Schema.NullOr(Schema.Date)) })
    )],
    ["record and tuple", Schema.Struct({ r: Schema.Record({ key: Schema.String, value: Schema.Boolean }), t: Schema.Tuple(Schema.String, Schema.Int) })]
  ]

  it.each(drawn)("encodes and decodes drawn values of %s as the general parser does, dropping undeclared fields", (_, schema) => {
    const encode = fastEncoder(schema)
    const generalEncode = ParseResult.encodeUnknownEither(schema)
    const values = samples(Schema.typeSchema(schema), 100)
    expect(values.length).toBe(100)
    for (const value of values) {
      agrees(encode(value), generalEncode(value))
      agrees(encode(withExtras(value)), generalEncode(withExtras(value)))
    }
    const decode = fastDecoder(schema)
    const generalDecode = ParseResult.decodeUnknownEither(schema)
    for (const value of [...samples(Schema.encodedSchema(schema), 100), ...values]) {
      agrees(decode(value), generalDecode(value))
      agrees(decode(withExtras(value)), generalDecode(withExtras(value)))
    }
  })

  it("compiles every schema of the catalog, and answers the catalog's paths as the general decoder does", () => {
    for (const entry of catalog) {
      const success = Schema.make(entry.schemas.success)
      expect(typeof fastEncoder(success)).toBe("function")
      for (const ast of [entry.schemas.path, entry.schemas.urlParams, entry.schemas.payload]) {
        if (ast._tag === "None") continue
        const schema = Schema.make(ast.value)
        const decode = fastDecoder(schema)
        const general = ParseResult.decodeUnknownEither(schema)
        for (const value of [{}, null, "x", { uuid: "3b241101-e2bb-4255-8caf-4136c566a962" }, { uuid: "nope" }, { id: "x", uuid: "3b241101-e2bb-4255-8caf-4136c566a962" }]) {
          agrees(decode(value), general(value))
        }
      }
    }
  })

  it("answers the hot paths itself: the event-type list, the session, a publication, their rows", () => {
    const types = { types: ["profile.updated", "task.closed"] }
    expect(fastEncoder(EventTypeList)(types)).toStrictEqual(types)
    const session = {
      user: { uuid: "3b241101-e2bb-4255-8caf-4136c566a962", email: "a@example.com" },
      profile: { uuid: "3b241101-e2bb-4255-8caf-4136c566a963", name: "A", type: "ИП" },
      expiresAt: new Date("2026-01-01T00:00:00.000Z")
    }
    expect(fastEncoder(AuthSession)(session)).toStrictEqual({ ...session, expiresAt: "2026-01-01T00:00:00.000Z" })
    const publication = {
      uuid: "3b241101-e2bb-4255-8caf-4136c566a962",
      id: "T-1",
      ownerId: "p1",
      ownerUuid: "3b241101-e2bb-4255-8caf-4136c566a963",
      kind: "task",
      approved: { title: "x", nested: { deep: [1, 2] } },
      draft: { title: "x", nested: { deep: [1, 2] } },
      status: "approved",
      hidden: false,
      history: [],
      reason: "",
      closed: false,
      createdAt: new Date("2026-01-01T00:00:00.000Z"),
      updatedAt: new Date("2026-01-02T00:00:00.000Z")
    }
    const encoded = fastEncoder(Publication)(publication)
    expect(encoded).toStrictEqual(ParseResult.encodeUnknownSync(Publication)(publication))
    const now = new Date()
    const row = { uuid: "u", id: "T-1", kind: "task", owner_id: "p1", owner_uuid: "o", approved: {}, closed: false, demo: false, created_at: now, approved_at: now, approved_key: "k" }
    expect(fastDecoder(PublicRow)(row)).toStrictEqual(row)
    const actor = { session_uuid: "s", expires_at: now, account_uuid: "a", email: "e", profile_uuid: "p", name: "n", type: "ИП" }
    expect(fastDecoder(SessionActorRow)(actor)).toStrictEqual(actor)
  })

  it("declines what the general parser refuses: an unknown event type, a wrong field, an invalid date", () => {
    expect(fastEncoder(EventTypeList)({ types: ["no.such_type"] })).toBe(Unfit)
    expect(fastEncoder(EventTypeList)({ types: "profile.updated" })).toBe(Unfit)
    expect(fastEncoder(Schema.Struct({ at: Schema.Date }))({ at: new Date(Number.NaN) })).toBe(Unfit)
    expect(fastDecoder(Schema.Struct({ uuid: Schema.UUID }))({ uuid: "not-a-uuid" })).toBe(Unfit)
  })

  it("keeps the declared key order and drops keys the schema does not declare", () => {
    const schema = Schema.Struct({ b: Schema.String, a: Schema.optional(Schema.Number) })
    const out = fastEncoder(schema)({ a: 1, extra: true, b: "x" })
    expect(JSON.stringify(out)).toBe(`{"b":"x","a":1}`)
    expect(fastEncoder(schema)({ b: "x" })).toStrictEqual({ b: "x" })
  })

  it("leaves to the general parser a union whose members may overlap, and a record key named __proto__", () => {
    const overlapping = Schema.Union(Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.String }))
    expect(fastEncoder(overlapping)({ a: "x", b: "y" })).toStrictEqual(ParseResult.encodeUnknownSync(overlapping)({ a: "x", b: "y" }))
    const record = Schema.Record({ key: Schema.String, value: Schema.Unknown })
    expect(fastDecoder(record)(JSON.parse(`{"__proto__": {"x": 1}}`))).toBe(Unfit)
  })

  it("tells members apart by a literal tag, and literals from their class", () => {
    const tagged = Schema.Union(
      Schema.Struct({ kind: Schema.Literal("a"), x: Schema.String }),
      Schema.Struct({ kind: Schema.Literal("b"), x: Schema.Number })
    )
    expect(fastDecoder(tagged)({ kind: "b", x: 1, y: 2 })).toStrictEqual({ kind: "b", x: 1 })
    const nullable = Schema.NullOr(Schema.Date)
    expect(fastEncoder(nullable)(null)).toBe(null)
    expect(fastEncoder(nullable)(new Date(0))).toBe("1970-01-01T00:00:00.000Z")
    expect(SchemaAST.isUnion(nullable.ast)).toBe(true)
  })
})
