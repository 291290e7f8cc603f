import { Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect"

/**
 * Schema decoders and encoders compiled once into plain functions, for the hot paths (the
 * registry's input decoding and success encoding, row decoding): the same schemas, the same
 * checks, without the general parser's per-node `Either`s, issue bookkeeping and effect support.
 *
 * A compiled parser answers only where it is sure to answer exactly what the general parser
 * (`ParseResult`) answers: the same value, with the same keys in the same order (excess keys
 * dropped: the schema stays the allowlist). Anywhere else (a failure, an asynchronous
 * transformation, a union whose members could overlap) it returns `Unfit` and the caller runs the
 * general parser, which gives the canonical answer or error. Every refinement's filter runs;
 * nodes it does not know (a transformation of several properties, template literals, ...) go
 * through the general parser for that node only. The mirror of `ParseResult.go`, node by node.
 */
export const Unfit: unique symbol = Symbol.for("@birzha/domain/FastParse/Unfit")
export type Unfit = typeof Unfit

export type FastParser = (input: unknown) => unknown

const memo = { decode: new WeakMap<AST.AST, FastParser>(), encode: new WeakMap<AST.AST, FastParser>() }

/** What the general parser passes to filters and transformations when the caller gave no options. */
const options = AST.defaultParseOption

const isRecord = (u: unknown): u is Record<PropertyKey, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The general parser for one node, where the compiled form would not be exactly the same. */
const general = (ast: AST.AST, isDecoding: boolean): FastParser => {
  const schema = Schema.make(ast)
  const parse = isDecoding ? ParseResult.decodeUnknownEither(schema) : ParseResult.encodeUnknownEither(schema)
  return (input) => {
    const result = parse(input)
    return Either.isRight(result) ? result.right : Unfit
  }
}

/** The value of a parser result that is a synchronous success (an `Either`), else `Unfit`. */
const rightOf = (result: unknown): unknown =>
  Either.isEither(result) && Either.isRight(result) ? result.right : Unfit

const compile = (ast: AST.AST, isDecoding: boolean): FastParser => {
  const map = isDecoding ? memo.decode : memo.encode
  const known = map.get(ast)
  if (known !== undefined) return known
  // Recursive schemas reach this node again while it compiles: they find the forwarder.
  let compiled: FastParser | undefined
  const forward: FastParser = (input) => compiled!(input)
  map.set(ast, forward)
  // Options annotations change what the general parser does below this node.
  const annotated = Option.isSome(AST.getParseOptionsAnnotation(ast)) ||
    (isDecoding && Option.isSome(AST.getDecodingFallbackAnnotation(ast)))
  compiled = annotated ? general(ast, isDecoding) : build(ast, isDecoding)
  map.set(ast, compiled)
  return compiled
}

const dropRightRefinement = (ast: AST.AST): AST.AST => AST.isRefinement(ast) ? dropRightRefinement(ast.from) : ast

const build = (ast: AST.AST, isDecoding: boolean): FastParser => {
  switch (ast._tag) {
    case "Refinement": {
      if (isDecoding) {
        const from = compile(ast.from, true)
        return (input) => {
          const value = from(input)
          if (value === Unfit) return Unfit
          return Option.isNone(ast.filter(value, options, ast)) ? value : Unfit
        }
      }
      // Encoding checks the type side (filters included), then encodes what it refines.
      const check = compile(AST.typeAST(ast), true)
      const encode = compile(dropRightRefinement(ast.from), false)
      return (input) => {
        const value = check(input)
        return value === Unfit ? Unfit : encode(value)
      }
    }
    case "Transformation": {
      const kind = ast.transformation
      if (kind._tag === "TypeLiteralTransformation") return general(ast, isDecoding)
      const transform = kind._tag === "ComposeTransformation" ? undefined : isDecoding ? kind.decode : kind.encode
      const from = isDecoding ? compile(ast.from, true) : compile(ast.to, false)
      const to = isDecoding ? compile(ast.to, true) : compile(ast.from, false)
      return (input) => {
        const value = from(input)
        if (value === Unfit) return Unfit
        if (transform === undefined) return to(value)
        const transformed = rightOf(transform(value, options, ast, input))
        return transformed === Unfit ? Unfit : to(transformed)
      }
    }
    case "Declaration": {
      const parse = isDecoding ? ast.decodeUnknown(...ast.typeParameters) : ast.encodeUnknown(...ast.typeParameters)
      return (input) => rightOf(parse(input, options, ast))
    }
    case "Literal": {
      const literal = ast.literal
      return (input) => (input === literal ? input : Unfit)
    }
    case "UndefinedKeyword":
      return (input) => (input === undefined ? input : Unfit)
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
      return (input) => input
    case "StringKeyword":
      return (input) => (typeof input === "string" ? input : Unfit)
    case "NumberKeyword":
      return (input) => (typeof input === "number" ? input : Unfit)
    case "BooleanKeyword":
      return (input) => (typeof input === "boolean" ? input : Unfit)
    case "TupleType":
      return tuple(ast, isDecoding)
    case "TypeLiteral":
      return typeLiteral(ast, isDecoding)
    case "Union":
      return union(ast, isDecoding)
    case "Suspend": {
      let inner: FastParser | undefined
      return (input) => (inner ??= compile(ast.f(), isDecoding))(input)
    }
    default:
      return general(ast, isDecoding)
  }
}

/** Arrays (`Schema.Array`) and fixed tuples without optional elements; other shapes go to the general parser. */
const tuple = (ast: AST.TupleType, isDecoding: boolean): FastParser => {
  if (ast.elements.length === 0 && ast.rest.length === 1) {
    const item = compile(ast.rest[0]!.type, isDecoding)
    return (input) => {
      if (!Array.isArray(input)) return Unfit
      const output = new Array(input.length)
      for (let i = 0; i < input.length; i++) {
        const value = item(input[i])
        if (value === Unfit) return Unfit
        output[i] = value
      }
      return output
    }
  }
  if (ast.rest.length === 0 && ast.elements.every((element) => !element.isOptional)) {
    const items = ast.elements.map((element) => compile(element.type, isDecoding))
    return (input) => {
      if (!Array.isArray(input) || input.length !== items.length) return Unfit
      const output = new Array(items.length)
      for (let i = 0; i < items.length; i++) {
        const value = items[i]!(input[i])
        if (value === Unfit) return Unfit
        output[i] = value
      }
      return output
    }
  }
  return general(ast, isDecoding)
}

/**
 * Structs and records: declared keys in declaration order (absent optional ones left out), then
 * the record's other keys; nothing else. Index signatures only over plain string keys.
 */
const typeLiteral = (ast: AST.TypeLiteral, isDecoding: boolean): FastParser => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return (input) => (input === null || input === undefined ? Unfit : input)
  }
  if (ast.indexSignatures.length > 1 || ast.indexSignatures.some((signature) => signature.parameter._tag !== "StringKeyword")) {
    return general(ast, isDecoding)
  }
  if (ast.propertySignatures.some((signature) => typeof signature.name !== "string" || signature.name === "__proto__")) {
    return general(ast, isDecoding)
  }
  const names = ast.propertySignatures.map((signature) => signature.name as string)
  const optional = ast.propertySignatures.map((signature) => signature.isOptional)
  const parsers = ast.propertySignatures.map((signature) => compile(signature.type, isDecoding))
  const count = names.length
  const index = ast.indexSignatures[0]
  const expected = new Set(names)
  const value = index === undefined ? undefined : compile(index.type, isDecoding)
  return (input) => {
    if (!isRecord(input)) return Unfit
    const output: Record<string, unknown> = {}
    for (let i = 0; i < count; i++) {
      const name = names[i]!
      if (optional[i] && !Object.prototype.hasOwnProperty.call(input, name)) continue
      const parsed = parsers[i]!(input[name])
      if (parsed === Unfit) return Unfit
      output[name] = parsed
    }
    if (value !== undefined) {
      for (const key of Object.keys(input)) {
        if (key === "__proto__") return Unfit
        const parsed = value(input[key])
        if (parsed === Unfit) return Unfit
        if (!expected.has(key)) output[key] = parsed
      }
    }
    return output
  }
}

/** What values a member of a union can take, to tell whether two members can both match. */
type Shape =
  | { readonly _tag: "Literal"; readonly value: AST.LiteralValue }
  | { readonly _tag: "Classes"; readonly classes: ReadonlySet<string>; readonly tags: ReadonlyMap<string, AST.LiteralValue> }

const anything: Shape = { _tag: "Classes", classes: new Set(["*"]), tags: new Map() }
const classes = (...names: Array<string>): Shape => ({ _tag: "Classes", classes: new Set(names), tags: new Map() })

/** Declarations known to accept objects only. */
const objectDeclarations = new Set(["DateFromSelf", "JsonObject"])

const shapeOf = (ast: AST.AST, isDecoding: boolean): Shape => {
  switch (ast._tag) {
    case "Literal":
      return { _tag: "Literal", value: ast.literal }
    case "StringKeyword":
    case "TemplateLiteral":
      return classes("string")
    case "NumberKeyword":
      return classes("number")
    case "BooleanKeyword":
      return classes("boolean")
    case "UndefinedKeyword":
    case "VoidKeyword":
      return classes("undefined")
    case "TupleType":
      return classes("array")
    case "TypeLiteral": {
      // `{}` takes anything but null and undefined.
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) return anything
      // Required literal properties: two structs that differ in one cannot both match.
      const tags = new Map<string, AST.LiteralValue>()
      for (const signature of ast.propertySignatures) {
        const type = isDecoding ? AST.encodedAST(signature.type) : AST.typeAST(signature.type)
        if (!signature.isOptional && typeof signature.name === "string" && AST.isLiteral(type)) tags.set(signature.name, type.literal)
      }
      return { _tag: "Classes", classes: new Set(["object"]), tags }
    }
    case "Refinement":
      return shapeOf(ast.from, isDecoding)
    case "Transformation":
      return shapeOf(isDecoding ? ast.from : ast.to, isDecoding)
    case "Declaration":
      return Option.exists(AST.getIdentifierAnnotation(ast), (id) => objectDeclarations.has(id)) ? classes("object") : anything
    case "Union": {
      const shapes = ast.types.map((type) => shapeOf(type, isDecoding))
      const names = new Set<string>()
      for (const shape of shapes) {
        if (shape._tag === "Literal") names.add(literalClass(shape.value))
        else for (const name of shape.classes) names.add(name)
      }
      return { _tag: "Classes", classes: names, tags: new Map() }
    }
    default:
      return anything
  }
}

const literalClass = (value: AST.LiteralValue) => (value === null ? "null" : typeof value)

/** Whether no value can match both members. */
const disjoint = (a: Shape, b: Shape): boolean => {
  if (a._tag === "Literal" && b._tag === "Literal") return true
  if (a._tag === "Literal") return b._tag === "Classes" && !b.classes.has("*") && !b.classes.has(literalClass(a.value))
  if (b._tag === "Literal") return disjoint(b, a)
  if (a.classes.has("*") || b.classes.has("*")) return false
  for (const name of a.classes) {
    if (!b.classes.has(name)) continue
    if (name !== "object" || a.classes.size !== 1 || b.classes.size !== 1) return false
    // Two structs: disjoint when a required literal property differs.
    let differs = false
    for (const [key, value] of a.tags) if (b.tags.has(key) && b.tags.get(key) !== value) differs = true
    if (!differs) return false
  }
  return true
}

/**
 * Literal unions by set lookup; other unions only when at most one member can match any value
 * (the general parser answers with the first member that matches, in an order of its own).
 */
const union = (ast: AST.Union, isDecoding: boolean): FastParser => {
  if (ast.types.every(AST.isLiteral)) {
    const literals = new Set<unknown>(ast.types.map((type) => (type as AST.Literal).literal))
    return (input) => (literals.has(input) ? input : Unfit)
  }
  const shapes = ast.types.map((type) => shapeOf(type, isDecoding))
  for (let i = 0; i < shapes.length; i++) {
    for (let j = i + 1; j < shapes.length; j++) if (!disjoint(shapes[i]!, shapes[j]!)) return general(ast, isDecoding)
  }
  const members = ast.types.map((type) => compile(type, isDecoding))
  return (input) => {
    for (const member of members) {
      const value = member(input)
      if (value !== Unfit) return value
    }
    return Unfit
  }
}

/** Whether two parse results are the same: values, keys and key order (dates by time). */
export const sameParse = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (a instanceof Date && b instanceof Date) return Object.is(a.getTime(), b.getTime())
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  const keysA = Reflect.ownKeys(a)
  const keysB = Reflect.ownKeys(b)
  return keysA.length === keysB.length &&
    keysA.every((key, i) => key === keysB[i] && sameParse(Reflect.get(a, key), Reflect.get(b, key)))
}

/**
 * `BIRZHA_CHECK_FAST_PARSE=1` (tests): every compiled answer is checked against the general
 * parser's, and a difference throws, so the whole test suite checks the compiled parsers on the
 * values the service really handles.
 */
const checked = (ast: AST.AST, isDecoding: boolean, fast: FastParser): FastParser => {
  if (globalThis.process?.env?.["BIRZHA_CHECK_FAST_PARSE"] !== "1") return fast
  const schema = Schema.make(ast)
  const parse = isDecoding ? ParseResult.decodeUnknownEither(schema) : ParseResult.encodeUnknownEither(schema)
  return (input) => {
    const value = fast(input)
    if (value === Unfit) return value
    const expected = parse(input)
    if (Either.isLeft(expected) || !sameParse(value, expected.right)) {
      throw new Error(`FastParse: the compiled ${isDecoding ? "decoder" : "encoder"} of ${String(ast)} differs from the general parser`)
    }
    return value
  }
}

/** A compiled decoder of `schema` (the same value `Schema.decodeUnknown` gives, or `Unfit`). */
export const fastDecoder = <A, I, R>(schema: Schema.Schema<A, I, R>): FastParser => checked(schema.ast, true, compile(schema.ast, true))

/** A compiled encoder of `schema` (the same value `Schema.encodeUnknown` gives, or `Unfit`). */
export const fastEncoder = <A, I, R>(schema: Schema.Schema<A, I, R>): FastParser => checked(schema.ast, false, compile(schema.ast, false))
