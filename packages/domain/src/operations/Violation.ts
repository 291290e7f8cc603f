import { type ParseResult, SchemaAST } from "effect"

/** Where an input first fails its schema, and the rule it breaks there (the error's `field` and `rule`). */
export interface Violation {
  readonly path: ReadonlyArray<PropertyKey>
  readonly rule: string | undefined
}

/** A rule quotes at most this much of a pattern or literal: the schema's own text, but some are long. */
const maxRuleLength = 120

const cut = (text: string) => (text.length > maxRuleLength ? `${text.slice(0, maxRuleLength)}…` : text)

const show = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value))

/** The JSON Schema keywords that constrain a value (not `default`, `description`, `examples`...). */
const constraintKeywords = new Set([
  "type", "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "multipleOf", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "enum", "const"
])

const keywordRule: Partial<Record<SchemaAST.AST["_tag"], string>> = {
  StringKeyword: "type string",
  NumberKeyword: "type number",
  BooleanKeyword: "type boolean",
  BigIntKeyword: "type integer",
  TypeLiteral: "type object",
  TupleType: "type array",
  ObjectKeyword: "type object"
}

/** The literals a union of literals allows, or `undefined` when it holds anything else. */
const literalsOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.LiteralValue> | undefined => {
  if (SchemaAST.isLiteral(ast)) return [ast.literal]
  if (SchemaAST.isEnums(ast)) return ast.enums.map(([, value]) => value)
  if (!SchemaAST.isUnion(ast)) return undefined
  const all: Array<SchemaAST.LiteralValue> = []
  for (const member of ast.types) {
    const literals = literalsOf(member)
    if (literals === undefined) return undefined
    all.push(...literals)
  }
  return all
}

/**
 * The rule a schema node states, in a client's words: a refinement's JSON Schema keyword and value
 * (`maxLength 160`, `format uuid`, `type integer`), the literals a value must be (`one of a, b`),
 * the type (`type string`), or the schema's own name; `undefined` when it has none.
 */
export const ruleOf = (ast: SchemaAST.AST): string | undefined => {
  if (SchemaAST.isRefinement(ast)) {
    const jsonSchema = SchemaAST.getJSONSchemaAnnotation(ast)
    if (jsonSchema._tag === "Some") {
      const entries = Object.entries(jsonSchema.value as Record<string, unknown>).filter(([key]) => constraintKeywords.has(key))
      // A format says it all (a uuid's pattern adds nothing a client can use).
      const format = entries.find(([key]) => key === "format")
      const stated = format === undefined ? entries : [format]
      if (stated.length > 0) return cut(stated.map(([key, value]) => `${key} ${show(value)}`).join(", "))
    }
  }
  const literals = literalsOf(ast)
  if (literals !== undefined) return cut(`one of ${literals.map(show).join(", ")}`)
  const keyword = keywordRule[ast._tag]
  if (keyword !== undefined) return keyword
  const named = SchemaAST.getIdentifierAnnotation(ast)
  if (named._tag === "Some") return cut(named.value)
  const title = SchemaAST.getTitleAnnotation(ast)
  if (title._tag === "Some") return cut(title.value)
  // A check of the project's own (`Schema.filter`) says what it wants in its description.
  const description = SchemaAST.getDescriptionAnnotation(ast)
  return SchemaAST.isRefinement(ast) && description._tag === "Some" ? cut(description.value) : undefined
}

/**
 * The first violation of a decode, in the order `ArrayFormatter` lists its issues (so `path` is the
 * first issue's), with the rule of the node that refused the value. A node with its own message
 * is where the formatter stops, so the rule is that node's too.
 */
export const firstViolation = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey> = []): Violation => {
  switch (issue._tag) {
    case "Pointer":
      return firstViolation(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])])
    case "Missing":
      return { path, rule: "required" }
    case "Unexpected":
      return { path, rule: "not allowed" }
    case "Forbidden":
      return { path, rule: undefined }
    case "Type":
      return { path, rule: ruleOf(issue.ast) }
    case "Composite":
    case "Refinement":
    case "Transformation": {
      if (SchemaAST.getMessageAnnotation(issue.ast)._tag === "Some") return { path, rule: ruleOf(issue.ast) }
      if (issue._tag !== "Composite") return firstViolation(issue.issue, path)
      // A value none of a union's literals: the union's rule, not its first member's.
      if (literalsOf(issue.ast) !== undefined) return { path, rule: ruleOf(issue.ast) }
      const first = Array.isArray(issue.issues) ? issue.issues[0] : issue.issues
      return first === undefined ? { path, rule: ruleOf(issue.ast) } : firstViolation(first as ParseResult.ParseIssue, path)
    }
  }
}
