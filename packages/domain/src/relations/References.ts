import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { publiclyVisible, publicationsJoin } from "../publications/Visibility.js"
import { rowsDecoder } from "../store/Rows.js"
import type { ReferenceView } from "./Relation.js"
import { InvalidReference } from "./RelationErrors.js"
import type { Reference } from "./RelationFields.js"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const kinds = new Set(["file", "publication", "relation"])
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))

/**
 * Checks `references`: each item is a ready file of the caller, a publication the
 * caller may see (public, or its own), or a relation the caller is party to. Anything else is 400
 * `invalid_reference` listing the item indexes; uuids are lower-cased.
 */
export const checkReferences = (
  me: string,
  references: ReadonlyArray<Reference> | undefined
): Effect.Effect<ReadonlyArray<ReferenceView>, InvalidReference | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (references === undefined || references.length === 0) return []
    const sql = yield* SqlClient.SqlClient
    const bad = new Set<number>()
    const items = references.map((item, index) => {
      if (!kinds.has(item.kind) || !uuidPattern.test(item.uuid)) bad.add(index)
      return { kind: item.kind as ReferenceView["kind"], uuid: item.uuid.toLowerCase() }
    })
    const of = (kind: ReferenceView["kind"]) => [...new Set(items.filter((item, i) => item.kind === kind && !bad.has(i)).map((item) => item.uuid))]
    const found = new Set<string>()
    const files = of("file")
    if (files.length > 0) {
      const rows = yield* Effect.flatMap(
        sql`SELECT uuid FROM files
        WHERE ${sql.in("uuid", files)} AND profile_uuid = ${me} AND status = 'ready'`,
        decodeUuids
      )
      for (const row of rows) found.add(`file:${row.uuid}`)
    }
    const publications = of("publication")
    if (publications.length > 0) {
      const rows = yield* Effect.flatMap(
        sql`SELECT p.uuid FROM ${sql.literal(publicationsJoin)}
        WHERE ${sql.in("p.uuid", publications)} AND ((${sql.literal(publiclyVisible)}) OR (p.owner_profile_uuid = ${me} AND p.deleted_at IS NULL))`,
        decodeUuids
      )
      for (const row of rows) found.add(`publication:${row.uuid}`)
    }
    const relations = of("relation")
    if (relations.length > 0) {
      const rows = yield* Effect.flatMap(
        sql`SELECT uuid FROM relations
        WHERE ${sql.in("uuid", relations)} AND (initiator_profile_uuid = ${me} OR recipient_profile_uuid = ${me})`,
        decodeUuids
      )
      for (const row of rows) found.add(`relation:${row.uuid}`)
    }
    items.forEach((item, index) => {
      if (!found.has(`${item.kind}:${item.uuid}`)) bad.add(index)
    })
    if (bad.size > 0) {
      const indexes = [...bad].sort((a, b) => a - b)
      return yield* new InvalidReference({
        message: `references: item${indexes.length > 1 ? "s" : ""} ${indexes.join(", ")} ` +
          "must name a ready file of yours, a publication you can see, or a relation you are party to ({kind: file | publication | relation, uuid})"
      })
    }
    return items
  })
