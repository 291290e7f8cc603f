import type { CatalogEntry } from "@birzha/domain"
import { Arbitrary, FastCheck as fc, Option, Schema, SchemaAST } from "effect"

// Test-only (not exported by the package): inputs for the catalog fuzz suite, derived from each
// operation's own declared schemas, and the ways they are broken.

/** A small seeded generator (mulberry32): the same seed gives the same run. */
export const makeRandom = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (below: number) => Math.floor(next() * below)
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)] as A
  const weighted = <A extends string>(weights: Readonly<Record<A, number>>): A => {
    const entries = Object.entries(weights) as Array<[A, number]>
    let roll = next() * entries.reduce((sum, [, w]) => sum + w, 0)
    for (const [name, w] of entries) {
      roll -= w
      if (roll < 0) return name
    }
    return entries[0]![0]
  }
  return { next, int, pick, weighted }
}
export type Random = ReturnType<typeof makeRandom>

/**
 * The same schema with every refinement's check removed but its annotations kept: generation
 * still follows the declared lengths, bounds and patterns, and never loops on a check random
 * values rarely pass (a data URL whose decoded size is declared beside it). Values are then
 * "valid-ish": the service's own checks decide.
 */
export const relaxed = (ast: SchemaAST.AST, memo = new Map<SchemaAST.AST, SchemaAST.AST>()): SchemaAST.AST => {
  const known = memo.get(ast)
  if (known !== undefined) return known
  const go = (inner: SchemaAST.AST) => relaxed(inner, memo)
  switch (ast._tag) {
    case "Refinement":
      return new SchemaAST.Refinement(go(ast.from), () => Option.none(), ast.annotations)
    case "Transformation":
      return new SchemaAST.Transformation(go(ast.from), go(ast.to), ast.transformation, ast.annotations)
    case "TypeLiteral":
      return new SchemaAST.TypeLiteral(
        ast.propertySignatures.map((p) => new SchemaAST.PropertySignature(p.name, go(p.type), p.isOptional, p.isReadonly, p.annotations)),
        ast.indexSignatures.map((i) => new SchemaAST.IndexSignature(i.parameter, go(i.type), i.isReadonly)),
        ast.annotations
      )
    case "TupleType":
      return new SchemaAST.TupleType(
        ast.elements.map((e) => new SchemaAST.OptionalType(go(e.type), e.isOptional, e.annotations)),
        ast.rest.map((r) => new SchemaAST.Type(go(r.type), r.annotations)),
        ast.isReadonly,
        ast.annotations
      )
    case "Union":
      return SchemaAST.Union.make(ast.types.map(go), ast.annotations)
    case "Suspend": {
      const out = new SchemaAST.Suspend(() => go(ast.f()), ast.annotations)
      memo.set(ast, out)
      return out
    }
    default:
      return ast
  }
}

/** Every bound the schema declares (lengths, sizes, minimum and maximum): where off-by-one lives. */
export const boundsOf = (ast: SchemaAST.AST, out = new Set<number>(), seen = new Set<SchemaAST.AST>()): Set<number> => {
  if (seen.has(ast)) return out
  seen.add(ast)
  for (const key of [SchemaAST.JSONSchemaAnnotationId]) {
    const annotation = ast.annotations[key]
    if (typeof annotation === "object" && annotation !== null) {
      for (const name of ["minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"]) {
        const value: unknown = Reflect.get(annotation, name)
        if (typeof value === "number" && Number.isFinite(value)) out.add(value)
      }
    }
  }
  switch (ast._tag) {
    case "Refinement":
      boundsOf(ast.from, out, seen)
      break
    case "Transformation":
      boundsOf(ast.from, out, seen)
      boundsOf(ast.to, out, seen)
      break
    case "TypeLiteral":
      for (const p of ast.propertySignatures) boundsOf(p.type, out, seen)
      for (const i of ast.indexSignatures) boundsOf(i.type, out, seen)
      break
    case "TupleType":
      for (const e of ast.elements) boundsOf(e.type, out, seen)
      for (const r of ast.rest) boundsOf(r.type, out, seen)
      break
    case "Union":
      for (const t of ast.types) boundsOf(t, out, seen)
      break
    case "Suspend":
      boundsOf(ast.f(), out, seen)
      break
  }
  return out
}

/** Encoded (wire) samples of one input part, or `[{}]` when the schema yields none. */
const samplesOf = (ast: SchemaAST.AST, seed: number, count: number): ReadonlyArray<unknown> => {
  const schema = Schema.make(relaxed(ast))
  const encode = Schema.encodeUnknownOption(schema)
  try {
    const values = fc.sample(Arbitrary.make(schema), { seed, numRuns: count })
    const encoded = values.map((value) => encode(value)).filter(Option.isSome).map((value) => value.value)
    return encoded.length > 0 ? encoded : [{}]
  } catch {
    return [{}]
  }
}

export interface OperationInputs {
  readonly entry: CatalogEntry
  readonly paths: ReadonlyArray<Record<string, string>>
  readonly urlParams: ReadonlyArray<unknown>
  readonly payloads: ReadonlyArray<unknown>
  readonly bounds: ReadonlyArray<number>
  readonly success: (body: unknown) => boolean
}

/** What the fuzz suite knows of an operation: all of it read from its declaration. */
export const inputsOf = (entry: CatalogEntry, seed: number, count: number): OperationInputs => {
  const bounds = new Set<number>()
  const part = (ast: Option.Option<SchemaAST.AST>, offset: number) =>
    Option.match(ast, {
      onNone: () => [],
      onSome: (value) => {
        boundsOf(value, bounds)
        return samplesOf(value, seed + offset, count)
      }
    })
  const paths = part(entry.schemas.path, 1).map((value) =>
    Object.fromEntries(Object.entries(typeof value === "object" && value !== null ? value : {}).map(([k, v]) => [k, String(v)]))
  )
  const urlParams = part(entry.schemas.urlParams, 2)
  const payloads = part(entry.schemas.payload, 3)
  const isSuccess = Schema.is(Schema.encodedSchema(Schema.make(entry.schemas.success)))
  return { entry, paths, urlParams, payloads, bounds: [...bounds], success: isSuccess }
}

// ---- mutations ----------------------------------------------------------------------------

type Json = unknown
type Path = ReadonlyArray<string | number>

/** Every node of a JSON value with its path (the root is `[]`). */
const nodesOf = (value: Json, path: Path = [], out: Array<{ path: Path; value: Json }> = []) => {
  out.push({ path, value })
  if (Array.isArray(value)) value.forEach((item, i) => nodesOf(item, [...path, i], out))
  else if (typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) nodesOf(v, [...path, k], out)
  return out
}

const setAt = (root: Json, path: Path, replacement: Json): Json => {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  if (Array.isArray(root)) return root.map((item, i) => (i === head ? setAt(item, rest, replacement) : item))
  if (typeof root === "object" && root !== null) return defineAll({ ...(root as Record<string, Json>), [head as string]: setAt((root as Record<string, Json>)[head as string], rest, replacement) })
  return root
}

const deleteAt = (root: Json, path: Path): Json => {
  if (path.length === 0) return root
  if (path.length === 1) {
    if (Array.isArray(root)) return root.filter((_, i) => i !== path[0])
    if (typeof root === "object" && root !== null) {
      const copy = { ...(root as Record<string, Json>) }
      delete copy[path[0] as string]
      return copy
    }
    return root
  }
  const [head, ...rest] = path
  if (Array.isArray(root)) return root.map((item, i) => (i === head ? deleteAt(item, rest) : item))
  if (typeof root === "object" && root !== null) return { ...(root as Record<string, Json>), [head as string]: deleteAt((root as Record<string, Json>)[head as string], rest) }
  return root
}

/** An object whose properties are all own and enumerable, `__proto__` included (JSON.stringify writes it then). */
const defineAll = (source: Record<string, Json>, extra: ReadonlyArray<readonly [string, Json]> = []) => {
  const out: Record<string, Json> = {}
  for (const [k, v] of [...Object.entries(source), ...extra]) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
  return out
}

export const prototypeKeys = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf", "__defineGetter__", "prototype"]

/** Characters that have broken services: NUL and other controls, bidi and zero-width, non-characters, lone surrogates, line separators. */
export const hostileCharacters = ["\u0000", "\u0001", "\u0008", "\u000b", "\u001b", "\u007f", "\u0085", "\u009f", "\u202e", "\u2066", "\u200b", "\u200d", "\ufeff", "\uffff", "\ufdd0", "\ud800", "\udfff", "\u2028", "\u{1fffe}"]

const hostileStrings = ["'; DROP TABLE accounts;--", "%00", "\\u0000", "${jndi:ldap://x}", "<script>alert(1)</script>", "../../etc/passwd", "{{7*7}}", "\r\nX-Injected: 1", " ", "", "null", "undefined", "NaN", "-0", "1e309", "0x10", "９９", "İ", "ß", "👩‍👩‍👧‍👦".repeat(50)]

const otherTypes: ReadonlyArray<Json> = [0, -1, 1.5, 2 ** 53 + 1, 1e308, "", "x", "0", true, false, null, [], {}, [null], { "": null }]

const stringOfLength = (random: Random, length: number) => {
  const alphabet = random.pick(["a", "я", "😀", "a\u0301", " "])
  // Bounds such as a file's byte size are far past any text field's: cut to the longest text field's, and more.
  return alphabet.repeat(Math.max(0, Math.min(length, 70_000)))
}

/**
 * Nesting as deep as a body may carry is written as text: `JSON.stringify` itself recurses and
 * would overflow the test's stack. The value stands in as a token that `serialize` expands.
 */
class Deep {
  /** Written once, by the one `serialize` of the request that holds it. */
  static readonly expansions = new Map<number, string>()
  static next = 0
  readonly token: string
  constructor(levels: number, objects: boolean, leaf: Json) {
    const inner = serialize(leaf) ?? "null"
    const id = Deep.next++
    Deep.expansions.set(id, objects ? "{\"a\":".repeat(levels) + inner + "}".repeat(levels) : "[".repeat(levels) + inner + "]".repeat(levels))
    this.token = `__deep_${id}__`
  }
  toJSON() {
    return this.token
  }
}

/** `JSON.stringify` for mutated values, deep nesting included. */
export const serialize = (value: Json): string | undefined => {
  const text = JSON.stringify(value)
  return text?.includes("\"__deep_") ? text.replace(/"__deep_(\d+)__"/g, (_, id: string) => {
      const expansion = Deep.expansions.get(Number(id)) ?? "null"
      Deep.expansions.delete(Number(id))
      return expansion
    }) : text
}

const nest = (levels: number, leaf: Json, random: Random): Json =>
  levels <= 100 ? nestInline(levels, leaf, random.next() < 0.5) : new Deep(levels, random.next() < 0.5, leaf)

const nestInline = (levels: number, leaf: Json, objects: boolean): Json => {
  let value = leaf
  for (let i = 0; i < levels; i++) value = objects ? { a: value } : [value]
  return value
}

export type Mutation =
  | "none"
  | "wrongType"
  | "dropField"
  | "extraField"
  | "prototypeKeys"
  | "boundary"
  | "longString"
  | "hostileCharacters"
  | "deepNesting"
  | "wholeBody"
  | "rawBodyText"
  | "pathParameter"
  | "queryParameters"
  | "contentType"
  | "unexpectedBody"
  | "rawSocket"

export const mutationWeights: Readonly<Record<Mutation, number>> = {
  none: 22,
  wrongType: 8,
  dropField: 6,
  extraField: 5,
  prototypeKeys: 5,
  boundary: 10,
  longString: 3,
  hostileCharacters: 10,
  deepNesting: 5,
  wholeBody: 4,
  rawBodyText: 4,
  pathParameter: 5,
  queryParameters: 5,
  contentType: 5,
  unexpectedBody: 2,
  rawSocket: 1
}

/** A JSON value broken one way; `undefined` when the mutation does not apply to this value. */
export const mutateValue = (mutation: Mutation, value: Json, bounds: ReadonlyArray<number>, random: Random): Json | undefined => {
  const nodes = nodesOf(value)
  const objects = nodes.filter((n) => typeof n.value === "object" && n.value !== null && !Array.isArray(n.value))
  const strings = nodes.filter((n) => typeof n.value === "string")
  const leaves = nodes.filter((n) => n.path.length > 0)
  switch (mutation) {
    case "wrongType": {
      const target = random.pick(leaves.length > 0 ? leaves : nodes)
      return setAt(value, target.path, random.pick(otherTypes.filter((other) => typeof other !== typeof target.value)))
    }
    case "dropField": {
      const fields = leaves.filter((n) => typeof n.path[n.path.length - 1] === "string")
      return fields.length === 0 ? undefined : deleteAt(value, random.pick(fields).path)
    }
    case "extraField": {
      const target = objects.length > 0 ? random.pick(objects) : undefined
      if (target === undefined) return undefined
      const name = random.pick(["extra", "", "x".repeat(300), "a.b", "$where", "kind", "uuid", "profileUuid", "requestUuid"])
      return setAt(value, target.path, defineAll(target.value as Record<string, Json>, [[name, random.pick(otherTypes)]]))
    }
    case "prototypeKeys": {
      const target = objects.length > 0 && random.next() < 0.5 ? random.pick(objects) : { path: [] as Path, value: objects[0]?.value ?? {} }
      const keys = random.next() < 0.5 ? prototypeKeys : [random.pick(prototypeKeys)]
      const base = typeof target.value === "object" && target.value !== null && !Array.isArray(target.value) ? target.value as Record<string, Json> : {}
      return setAt(value, target.path, defineAll(base, keys.map((k) => [k, random.pick<Json>([1, "x", {}, { prototype: { polluted: true } }, null, []])] as const)))
    }
    case "boundary": {
      const edges = [0, 1, ...bounds.flatMap((b) => [b - 1, b, b + 1])]
      const target = random.pick(leaves.length > 0 ? leaves : nodes)
      const edge = random.pick(edges)
      if (typeof target.value === "string") return setAt(value, target.path, stringOfLength(random, edge))
      if (typeof target.value === "number") return setAt(value, target.path, random.pick([edge, -edge, edge + 0.5]))
      if (Array.isArray(target.value)) {
        const item = target.value[0] ?? "x"
        return setAt(value, target.path, Array.from({ length: Math.max(0, Math.min(edge, 1000)) }, () => item))
      }
      return setAt(value, target.path, edge)
    }
    case "longString": {
      const target = strings.length > 0 ? random.pick(strings) : random.pick(nodes)
      return setAt(value, target.path, stringOfLength(random, random.pick([4_097, 20_001, 65_537])))
    }
    case "hostileCharacters": {
      const character = random.pick([...hostileCharacters, ...hostileStrings])
      if (strings.length > 0 && random.next() < 0.8) {
        const target = random.pick(strings)
        const text = target.value as string
        const at = random.int(text.length + 1)
        return setAt(value, target.path, text.slice(0, at) + character + text.slice(at))
      }
      // In a property name.
      const target = objects.length > 0 ? random.pick(objects) : undefined
      return target === undefined ? undefined : setAt(value, target.path, defineAll(target.value as Record<string, Json>, [[`k${character}`, "v"]]))
    }
    case "deepNesting": {
      const target = random.pick(nodes)
      return setAt(value, target.path, nest(random.pick([63, 64, 65, 66, 200, 2_200, 10_000]), target.value ?? "x", random))
    }
    case "wholeBody":
      return random.pick<Json>([null, [], "", "x", 0, true, [value], { value }, nest(3, value, random)])
    default:
      return undefined
  }
}

/** Bodies that are not JSON, or JSON in forms parsers differ on. */
export const rawBodies = (valid: string, random: Random): string =>
  random.pick([
    "",
    "{",
    "nul",
    "{\"a\":1,}",
    "\ufeff" + valid,
    valid + valid,
    valid.replace(/^\{/, "{\"kind\":\"task\",\"kind\":\"service\","),
    "1e999999",
    "[".repeat(20_000),
    "[".repeat(5_000) + "]".repeat(5_000),
    "\u0000",
    valid.slice(0, Math.max(1, Math.floor(valid.length / 2))),
    "{\"__proto__\":{\"isAdmin\":true}}",
    "\"\\ud800\"",
    "{\"a\":\"\\u0000\"}"
  ])

export const contentTypes = [
  undefined,
  "text/plain",
  "text/plain;charset=UTF-8",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=----x",
  "application/xml",
  "application/jsonx",
  "application/json; charset=utf-16",
  "APPLICATION/JSON",
  "application/vnd.api+json",
  ""
]

/** A UUID drawn from the seeded generator (version 4 layout). */
export const uuidFrom = (random: Random) => {
  const hex = Array.from({ length: 32 }, () => "0123456789abcdef"[random.int(16)]).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

export const badPathParameters = (random: Random) =>
  random.pick([
    "%FF",
    "%00",
    "%E0%A4%A",
    "a".repeat(101),
    "a".repeat(10_000),
    "..",
    "%2e%2e",
    "%2F",
    encodeURIComponent("юникод"),
    "%20",
    "null",
    "0",
    "-1",
    "00000000-0000-0000-0000-000000000000",
    "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
    `{${uuidFrom(random)}}`,
    uuidFrom(random).toUpperCase(),
    uuidFrom(random).replace(/-/g, ""),
    encodeURIComponent("\u202e" + uuidFrom(random))
  ])
