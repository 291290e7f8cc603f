import { MaxJsonBytes } from "@birzha/domain"
import { maxInputDepth } from "@birzha/domain/internal"
import { SchemaAST } from "effect"
import type { JsonShapeLimits } from "./JsonShape.js"

/**
 * What one operation's request body may be, derived once from its declared body schema: the
 * largest body a valid input can be written as (`maxBytes`, checked against `Content-Length`
 * before reading and while reading a chunked body), and the structural limits the bytes are
 * counted against before `JSON.parse` (`JsonShape.ts`). A field the schema bounds (`maxLength`,
 * `maxItems`, a UUID, a literal) counts at its bound; free-form JSON (`Schema.Unknown`) counts as
 * unbounded unless annotated with `MaxJsonBytes`; an operation whose body is unbounded takes up to
 * `BIRZHA_MAX_BODY_BYTES`, which caps every operation.
 */
export interface BodyLimits extends JsonShapeLimits {
  readonly maxBytes: number
}

/**
 * Structural limits where the schema declares none (free-form JSON, records, recursive types):
 * far above any valid input's, and low enough that `JSON.parse` of a body at all of them takes
 * milliseconds (bench/README.md, "body-limits").
 */
export const structuralCeilings = { maxDepth: maxInputDepth, maxMembers: 1_000, maxItems: 10_000, maxValues: 100_000 } as const

/** No operation's bound is below this: whitespace, key order and extra fields a lenient schema ignores never matter. */
export const minBodyBytes = 64 * 1024

/**
 * A string written with every character escaped (`\uXXXX`, as clients that write ASCII only do)
 * takes six bytes a UTF-16 unit; the quotes add two.
 */
const bytesPerChar = 6
const stringBytes = (chars: number) => chars * bytesPerChar + 2

/** A string the schema gives no length (a date, a number as text, a token): counted at this many characters. */
const undeclaredStringChars = 256
/** No string is refused below this many characters, whatever the schema says (its own check answers with the field's error). */
const minStringChars = 1_024
/** A number as written: `-1.2345678901234567e+308` is 24 bytes. */
const numberBytes = 32
/** Separators and whitespace around each member or element (a pretty-printed body's indentation). */
const separatorBytes = 32
/** Members or elements the counts below never go under, for the same reason as `minBodyBytes`. */
const minCount = 64

interface Shape {
  readonly bytes: number
  readonly string: number
  readonly members: number
  readonly items: number
}

const unbounded: Shape = { bytes: Infinity, string: Infinity, members: Infinity, items: Infinity }
const scalar = (bytes: number): Shape => ({ bytes, string: 0, members: 0, items: 0 })
const text = (chars: number): Shape => ({ bytes: stringBytes(chars), string: stringBytes(chars), members: 0, items: 0 })
const largest = (a: Shape, b: Shape): Shape => ({
  bytes: Math.max(a.bytes, b.bytes),
  string: Math.max(a.string, b.string),
  members: Math.max(a.members, b.members),
  items: Math.max(a.items, b.items)
})

const jsonSchemaOf = (ast: SchemaAST.AST): Readonly<Record<string, unknown>> => {
  const annotation = ast.annotations[SchemaAST.JSONSchemaAnnotationId]
  return typeof annotation === "object" && annotation !== null ? annotation as Record<string, unknown> : {}
}

const finite = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined)

/** The `maxLength` a string schema declares on its decoded side (a trimmed or lower-cased string's). */
const declaredChars = (ast: SchemaAST.AST): number | undefined => {
  if (ast._tag !== "Refinement") return undefined
  const schema = jsonSchemaOf(ast)
  return finite(schema["maxLength"]) ?? (schema["format"] === "uuid" ? 36 : declaredChars(ast.from))
}

/** How many keys an index signature's key schema admits: a union of literals names them; anything else is open. */
const keyCount = (ast: SchemaAST.AST): number => {
  if (ast._tag === "Literal") return 1
  if (ast._tag === "Union") return ast.types.reduce((sum, member) => sum + keyCount(member), 0)
  if (ast._tag === "Refinement" && ast.from._tag === "Union") return keyCount(ast.from)
  return Infinity
}

/** The largest encoded form of `ast`; `count` is a `maxItems`/`maxProperties` an enclosing refinement declares. */
const shapeOf = (ast: SchemaAST.AST, visiting: Set<SchemaAST.AST>, count?: number): Shape => {
  const declared = finite(ast.annotations[MaxJsonBytes])
  if (declared !== undefined) {
    // Measured by the implementation as compact JSON; the client may have escaped every character.
    return { bytes: declared * bytesPerChar, string: declared * bytesPerChar, members: structuralCeilings.maxMembers, items: structuralCeilings.maxItems }
  }
  // A string's declared length, on a refinement or on a transformation as a whole (a trimmed comment).
  const schema = jsonSchemaOf(ast)
  const chars = finite(schema["maxLength"]) ?? (schema["format"] === "uuid" ? 36 : undefined)
  if (chars !== undefined) return text(chars)
  switch (ast._tag) {
    case "Refinement":
      return shapeOf(ast.from, visiting, finite(schema["maxItems"]) ?? finite(schema["maxProperties"]) ?? count)
    case "Transformation": {
      // The wire form is `from`; a string bounded only after a transformation (trimmed) is bounded by it too.
      const chars = ast.from._tag === "StringKeyword" ? declaredChars(ast.to) : undefined
      return chars !== undefined ? text(Math.max(chars, undeclaredStringChars)) : shapeOf(ast.from, visiting, count)
    }
    case "StringKeyword":
    case "TemplateLiteral":
      return text(undeclaredStringChars)
    case "Literal":
      return typeof ast.literal === "string" ? text(ast.literal.length) : scalar(numberBytes)
    case "Enums":
      return ast.enums.reduce((shape, [, value]) => largest(shape, typeof value === "string" ? text(value.length) : scalar(numberBytes)), scalar(0))
    case "NumberKeyword":
    case "BigIntKeyword":
    case "BooleanKeyword":
    case "SymbolKeyword":
    case "UniqueSymbol":
      return scalar(numberBytes)
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "NeverKeyword":
      return scalar(0)
    case "Union":
      return ast.types.reduce((shape, member) => largest(shape, shapeOf(member, visiting)), scalar(0))
    case "TypeLiteral": {
      let shape: Shape = { bytes: 2, string: 0, members: ast.propertySignatures.length, items: 0 }
      for (const property of ast.propertySignatures) {
        const key = text(String(property.name).length)
        const value = shapeOf(property.type, visiting)
        shape = largest(
          { ...shape, bytes: shape.bytes + key.bytes + value.bytes + separatorBytes },
          { ...value, bytes: 0, string: Math.max(value.string, key.string) }
        )
      }
      for (const index of ast.indexSignatures) {
        const keys = Math.min(count ?? Infinity, keyCount(index.parameter))
        const key = shapeOf(index.parameter, visiting)
        const value = shapeOf(index.type, visiting)
        shape = largest(
          { ...shape, bytes: shape.bytes + keys * (key.bytes + value.bytes + separatorBytes), members: shape.members + keys },
          { ...largest(key, value), bytes: 0 }
        )
      }
      return shape
    }
    case "TupleType": {
      let shape: Shape = { bytes: 2, string: 0, members: 0, items: ast.elements.length }
      for (const element of ast.elements) {
        const value = shapeOf(element.type, visiting)
        shape = largest({ ...shape, bytes: shape.bytes + value.bytes + separatorBytes }, { ...value, bytes: 0 })
      }
      for (const rest of ast.rest) {
        const items = count ?? Infinity
        const value = shapeOf(rest.type, visiting)
        shape = largest({ ...shape, bytes: shape.bytes + items * (value.bytes + separatorBytes), items: shape.items + items }, { ...value, bytes: 0 })
      }
      return shape
    }
    case "Suspend": {
      // A recursive schema (a condition of conditions) is as large as its recursion allows: unbounded here.
      if (visiting.has(ast)) return unbounded
      visiting.add(ast)
      const shape = shapeOf(ast.f(), visiting, count)
      visiting.delete(ast)
      return shape
    }
    default:
      // Unknown, Any, object, a declaration: nothing bounds it.
      return unbounded
  }
}

/** One operation's body limits from its body schema; `ceiling` is `BIRZHA_MAX_BODY_BYTES`. */
export const bodyLimitsOf = (payload: SchemaAST.AST, ceiling: number): BodyLimits => {
  const shape = shapeOf(payload, new Set())
  const maxBytes = Math.min(ceiling, Math.max(minBodyBytes, shape.bytes))
  return {
    maxBytes,
    maxStringBytes: Math.min(maxBytes, Math.max(stringBytes(minStringChars), shape.string)),
    maxMembers: Math.min(structuralCeilings.maxMembers, Math.max(minCount, shape.members)),
    maxItems: Math.min(structuralCeilings.maxItems, Math.max(minCount, shape.items)),
    maxDepth: structuralCeilings.maxDepth,
    maxValues: structuralCeilings.maxValues
  }
}
