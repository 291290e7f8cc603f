import { Effect, Schema } from "effect"

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
 * The SELECT list of a row schema: each field read as `alias.field`, or as the expression given in
 * `computed` (`updated_at::text` for a keyset position). The schema names each column once.
 */
export const selectList = <Fields extends Schema.Struct.Fields>(
  schema: Schema.Struct<Fields>,
  alias: string,
  computed: { readonly [K in keyof Fields]?: string } = {}
): string =>
  Object.keys(schema.fields).map((field) => {
    const expression: string | undefined = computed[field]
    return expression === undefined ? `${alias}.${field}` : `${expression} AS ${field}`
  }).join(", ")

/**
 * A row decoder compiled once. A row that does not fit its schema is a defect of ours (the
 * migration and the schema disagree), not the caller's failure.
 */
export const rowDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema)
  return (row: unknown): Effect.Effect<A> => Effect.orDie(decode(row))
}

/** The rows decoded with one compiled array decoder. */
export const rowsDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> => Effect.orDie(decode(rows))
}
