import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Either, type Option, ParseResult, Schema } from "effect"

/**
 * The SELECT (or RETURNING) list of a row schema: every field once, in the schema's order,
 * qualified by the table's alias when one is given. The row schema is where a column is named;
 * queries take their list from here instead of spelling it again.
 */
export const columnsOf = (row: { readonly fields: Readonly<Record<string, unknown>> }, alias?: string): string =>
  Object.keys(row.fields).map((name) => (alias === undefined ? name : `${alias}.${name}`)).join(", ")

/**
 * A row that does not decode with its own schema means the schema and the migration disagree:
 * a defect of this service, never an answer for the caller. Its error channel stays `SqlError`.
 */
export const dieOnParse = <A, E, R>(
  effect: Effect.Effect<A, E | ParseResult.ParseError, R>
): Effect.Effect<A, Exclude<E, ParseResult.ParseError>, R> =>
  Effect.catchIf(effect, ParseResult.isParseError, Effect.die)

/**
 * A decoder of one row compiled once (module level), for statements that run on every request:
 * no Effect is built around the decode itself.
 */
export const rowDecoder = <A, I>(row: Schema.Schema<A, I, never>): (value: unknown) => Effect.Effect<A> => {
  const decode = Schema.decodeUnknownEither(row)
  return (value) => Either.match(decode(value), { onLeft: Effect.die, onRight: Effect.succeed })
}

/** `SqlSchema.findAll` with the row decoded and a mismatch a defect. */
export const findAll = <IA, II, A, AI, E, R>(options: {
  readonly Request: Schema.Schema<IA, II, never>
  readonly Result: Schema.Schema<A, AI, never>
  readonly execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}): (request: IA) => Effect.Effect<ReadonlyArray<A>, E, R> => {
  const run = SqlSchema.findAll(options)
  return (request) => dieOnParse(run(request))
}

/** `SqlSchema.findOne` with the row decoded and a mismatch a defect. */
export const findOne = <IA, II, A, AI, E, R>(options: {
  readonly Request: Schema.Schema<IA, II, never>
  readonly Result: Schema.Schema<A, AI, never>
  readonly execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}): (request: IA) => Effect.Effect<Option.Option<A>, E, R> => {
  const run = SqlSchema.findOne(options)
  return (request) => dieOnParse(run(request))
}

/**
 * The values of an insert or update, keyed by the row schema's own column names, so a misspelt
 * column is a type error. JSON columns take their text (`JSON.stringify`), which Postgres reads as jsonb.
 */
export type ColumnValues<Row> = { readonly [K in keyof Row]?: string | number | boolean | null | Date }
