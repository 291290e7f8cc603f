/**
 * What no input may hold, whatever its schema (used by `Operations` for every operation's input,
 * and by the course import for an uploaded package).
 */

/**
 * Deepest nesting of arrays and objects an input may have. The deepest the spec allows is an
 * automation condition (depth 6, a few levels more as JSON); 64 leaves room and stops a body of
 * thousands of levels before any schema walks it (decoding and error formatting recurse).
 */
export const maxInputDepth = 64

/**
 * Characters no input string may hold: C0 controls but tab, line feed and carriage return
 * (text fields take newlines and tabs), DEL, C1 controls, and lone surrogates (not Unicode; the
 * database would store something else). NUL is what Postgres itself refuses (22021).
 */
const unsafeCharacter = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uD800-\uDFFF]/u

/** The first value no input may hold: where, why, and the rule it breaks (an error's `field` and `rule`). */
export type InputProblem = { readonly path: ReadonlyArray<PropertyKey>; readonly message: string; readonly rule: string }

const problemIn = (value: unknown, path: Array<PropertyKey>, depth: number): InputProblem | undefined => {
  if (typeof value === "string") {
    return unsafeCharacter.test(value) ? {
        path: [...path],
        message: "control characters (other than tab and newline) and lone surrogates are not allowed",
        rule: "no control characters"
      } : undefined
  }
  if (typeof value !== "object" || value === null) return undefined
  if (depth >= maxInputDepth) return { path: [...path], message: `nested deeper than ${maxInputDepth} levels`, rule: `maxDepth ${maxInputDepth}` }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i)
      const problem = problemIn(value[i], path, depth + 1)
      path.pop()
      if (problem !== undefined) return problem
    }
    return undefined
  }
  for (const key of Object.keys(value)) {
    path.push(key)
    const problem = unsafeCharacter.test(key)
      ? { path: [...path], message: "control characters are not allowed in a property name", rule: "no control characters" }
      : problemIn((value as Record<string, unknown>)[key], path, depth + 1)
    path.pop()
    if (problem !== undefined) return problem
  }
  return undefined
}

/** The first string or property name of a value (any JSON: an input, an uploaded package) that no input may hold, with its path. */
export const unsafeValueProblem = (value: unknown): InputProblem | undefined => problemIn(value, [], 0)
