import { Option, Schema, SchemaAST } from "effect"

/** An instant on the wire: an ISO 8601 string (`format: date-time`), a `Date` in code. */
export const DateTime = Schema.Date.annotations({ jsonSchema: { type: "string", format: "date-time" } })

/**
 * Characters as the spec, Postgres `char_length` and JSON Schema `maxLength` count them: code
 * points, not JavaScript's UTF-16 units (an emoji outside the BMP is one character, not two).
 */
export const codePoints = (value: string): number => {
  let count = 0
  for (const _ of value) count++
  return count
}

/** `Schema.maxLength` counting code points; the same JSON Schema (`maxLength`). */
export const maxChars = <S extends Schema.Schema.Any>(max: number, annotations?: Schema.Annotations.Filter<Schema.Schema.Type<S>>) =>
<A extends string>(self: S & Schema.Schema<A, Schema.Schema.Encoded<S>, Schema.Schema.Context<S>>): Schema.filter<S> =>
  self.pipe(Schema.filter((a) => a.length <= max || codePoints(a) <= max, {
    schemaId: Schema.MaxLengthSchemaId,
    title: `maxLength(${max})`,
    description: `a string at most ${max} character(s) long`,
    jsonSchema: { maxLength: max },
    ...annotations
  }))

/** `Schema.minLength` counting code points; the same JSON Schema (`minLength`). */
export const minChars = <S extends Schema.Schema.Any>(min: number, annotations?: Schema.Annotations.Filter<Schema.Schema.Type<S>>) =>
<A extends string>(self: S & Schema.Schema<A, Schema.Schema.Encoded<S>, Schema.Schema.Context<S>>): Schema.filter<S> =>
  self.pipe(Schema.filter((a) => a.length >= min && codePoints(a) >= min, {
    schemaId: Schema.MinLengthSchemaId,
    title: `minLength(${min})`,
    description: `a string at least ${min} character(s) long`,
    jsonSchema: { minLength: min },
    ...annotations
  }))

const emailPattern = /^[^\s@]{1,64}@[^\s@.]{1,63}(\.[^\s@.]{1,63})+$/

/**
 * Characters an address never holds: controls, format characters (bidi overrides and isolates,
 * zero-width spaces and joiners, the byte order mark, soft hyphens), surrogates, private use,
 * non-characters and line separators. They make two addresses look alike or hide part of one.
 */
const invisibleInEmail = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Noncharacter_Code_Point}\p{Zl}\p{Zp}]/u

/** An email address of at most 254 characters (spec limit); compared lower-cased. */
export const Email = Schema.String.pipe(
  maxChars(254, { message: () => "an email address has at most 254 characters" }),
  Schema.pattern(emailPattern, { message: () => "expected an email address such as name@example.com" }),
  Schema.filter((value) => !invisibleInEmail.test(value), {
    message: () => "an email address has no invisible, bidirectional or non-character code points"
  })
).annotations({ identifier: "Email", jsonSchema: { type: "string", format: "email", maxLength: 254 } })

/**
 * `limit` of a list operation, from the query string: an integer 1 to 100 (spec), 20 when absent.
 * Published as an integer with its bounds (the wire form is a query-string number).
 */
export const PageLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)).annotations({
  // The JSON Schema annotation stands for the whole schema, its meaning included (a description
  // annotation would also become what a parse error says it expected).
  jsonSchema: { type: "integer", minimum: 1, maximum: 100, default: 20, description: "How many items one page holds at most (1 to 100; 20 when absent)." }
})

/**
 * An input field with its meaning, one sentence: the description OpenAPI, the MCP tools and the
 * SDK's documentation show for it. Written on the property, not on its type: a type's description
 * is what a parse error says it expected ("Expected a Universally Unique Identifier, actual …").
 */
export const field = <S extends Schema.Schema.Any>(schema: S, meaning: string) => Schema.propertySignature(schema).annotations({ description: meaning })

/** An optional input field with its meaning (as `field`). */
export const optionalField = <S extends Schema.Schema.Any>(schema: S, meaning: string) => Schema.optional(schema).annotations({ description: meaning })

/** The meanings of the fields every list and every change share. */
export const meanings = {
  cursor: "The previous page's nextCursor, to read the next page; absent for the first page.",
  expectedRevision: "The record's revision as last read: the change is refused (409) when someone changed it since."
} as const

/** `expectedRevision` of a change: a revision, from 0. */
export const Revision = Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))

/** The client's id of one command, reused for its retries. */
export const RequestUuid = Schema.UUID.annotations({
  description: "Chosen by the client for one command and reused for its retries; the first result is returned again"
})

/** A payload object that refuses properties it does not declare (the spec's "no other properties"). */
export const strict = { parseOptions: { onExcessProperty: "error" } } as const

/**
 * Annotation of an input struct: the names of its fields that carry a credential (a mailed token).
 * A credential never goes into a prepared command: the owner would see it on the approval page and
 * it would be stored with the command's arguments (`integrationCommands.prepare` refuses it).
 */
export const CredentialFields = Symbol.for("@birzha/domain/CredentialFields")
export const credentialFieldsOf = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  const direct = SchemaAST.getAnnotation<ReadonlyArray<string>>(ast, CredentialFields)
  if (Option.isSome(direct)) return direct.value
  return Option.getOrElse(SchemaAST.getAnnotation<ReadonlyArray<string>>(SchemaAST.typeAST(ast), CredentialFields), () => [])
}

/**
 * Any JSON value. `Schema.Unknown` alone is emitted with a fixed `$id`, which appears more than
 * once in the document and makes it invalid OpenAPI; this states the same thing without an `$id`.
 */
/**
 * Annotation of free-form JSON in an input (`AnyJson`): the most bytes it may take as JSON, which
 * the implementation enforces. The HTTP host bounds the operation's request body by it; free-form
 * JSON without it may be as large as the host's body limit.
 */
export const MaxJsonBytes: unique symbol = Symbol.for("@birzha/domain/api/MaxJsonBytes")

export const AnyJson = Schema.Unknown.annotations({
  jsonSchema: { type: ["object", "array", "string", "number", "boolean", "null"] }
})
