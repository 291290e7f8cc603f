import type { SqlClient } from "@effect/sql"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Either, type Option, ParseResult, Schema } from "effect"
import { fastDecoder, Unfit } from "./FastParse.js"

/**
 * Column schemas of row Schemas, for what node-postgres and PGlite return alike: `timestamptz`
 * is a Date, `int8` and `numeric` are text, `jsonb` is parsed JSON.
 */
export const Timestamp = Schema.DateFromSelf

/** `int8`/`numeric` (positions, counters), read as text so no digit is lost. */
export const Int8Text = Schema.String

/**
 * A `jsonb` object column: checked to be an object, not walked. Its content has its own schema
 * where it is read (a publication's data by its kind), so a catalog of 10k rows is not walked twice.
 */
export const JsonObject = Schema.declare(
  (value: unknown): value is { readonly [key: string]: unknown } =>
    typeof value === "object" && value !== null && !Array.isArray(value),
  { identifier: "JsonObject" }
)

/**
 * The SELECT (or RETURNING) list of a row schema: each field once, in the schema's order, as
 * `alias.field` (bare without an alias), or as the expression given in `computed`
 * (`updated_at::text` for a keyset position). The row schema is where a column is named; queries
 * take their list from here instead of spelling it again.
 */
export const selectList = <Fields extends Schema.Struct.Fields>(
  schema: { readonly fields: Fields },
  alias?: string,
  computed: { readonly [K in keyof Fields]?: string } = {}
): string =>
  Object.keys(schema.fields).map((field) => {
    const expression: string | undefined = computed[field]
    return expression !== undefined ? `${expression} AS ${field}` : alias === undefined ? field : `${alias}.${field}`
  }).join(", ")

/**
 * A decoder of one row compiled once (module level), for statements that run on every request. A
 * row that does not fit its schema is a defect of ours (the migration and the schema disagree), not
 * the caller's failure.
 */
export const rowDecoder = <A, I>(schema: Schema.Schema<A, I>): (row: unknown) => Effect.Effect<A> => {
  const fast = fastDecoder(schema)
  const decode = Schema.decodeUnknownEither(schema)
  return (row) => {
    const value = fast(row)
    return value !== Unfit ? Effect.succeed(value as A) : Either.match(decode(row), { onLeft: Effect.die, onRight: Effect.succeed })
  }
}

/** The rows decoded with one compiled array decoder. */
export const rowsDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const array = Schema.Array(schema)
  const fast = fastDecoder(array)
  const decode = Schema.decodeUnknown(array)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> => {
    const value = fast(rows)
    return value !== Unfit ? Effect.succeed(value as ReadonlyArray<A>) : Effect.orDie(decode(rows))
  }
}

/** A row that does not decode is a defect (see `rowDecoder`); the error channel keeps only `SqlError`. */
export const dieOnParse = <A, E, R>(
  effect: Effect.Effect<A, E | ParseResult.ParseError, R>
): Effect.Effect<A, Exclude<E, ParseResult.ParseError>, R> =>
  Effect.catchIf(effect, ParseResult.isParseError, Effect.die)

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

/**
 * A list of uuids as a SQL `uuid[]`, passed as one JSON parameter (the same on node-postgres and
 * PGlite). As the operand of `= ANY(…)` it gives an index scan whatever the list's length, where a
 * join with the list's rows (which the planner counts as 100) may scan the whole table.
 */
export const uuidArray = (sql: SqlClient.SqlClient, uuids: ReadonlyArray<string>) =>
  sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(uuids)}::jsonb)::uuid)`
