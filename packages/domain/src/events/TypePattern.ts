import { Either } from "effect"
import { type EventType, eventTypes } from "./EventType.js"

const patternSyntax = /^[a-z_.*]{1,100}$/

/**
 * The event types a list of patterns names. `*` stands for any run of characters, dots included
 * (`publication.*`, `*.withdrawn`, `learning.*.completed`, `*`). Patterns are expanded against the
 * catalog here, so storage filters on exact types; a pattern that names no type is an error, not
 * an empty result, so a typo is noticed. The result keeps the catalog's order.
 */
export const expandTypePatterns = (patterns: ReadonlyArray<string>): Either.Either<ReadonlyArray<EventType>, string> => {
  const matchers: Array<RegExp> = []
  for (const pattern of patterns) {
    if (!patternSyntax.test(pattern)) {
      return Either.left(`"${pattern.slice(0, 100)}" is not an event type pattern (lower-case letters, "_", "." and "*")`)
    }
    const matcher = new RegExp(`^${pattern.replace(/\./g, "\\.").replace(/\*/g, ".*")}$`)
    if (!eventTypes.some((type) => matcher.test(type))) {
      return Either.left(`"${pattern}" matches no event type; GET /api/v1/event-types lists them`)
    }
    matchers.push(matcher)
  }
  return Either.right(eventTypes.filter((type) => matchers.some((matcher) => matcher.test(type))))
}

/** `types` as a query parameter: patterns separated by commas (`publication.*,profile.updated`). */
export const parseTypeList = (list: string): Either.Either<ReadonlyArray<EventType>, string> => {
  const patterns = list.split(",").map((part) => part.trim()).filter((part) => part !== "")
  return patterns.length === 0 ? Either.left("types names no event type pattern") : expandTypePatterns(patterns)
}
