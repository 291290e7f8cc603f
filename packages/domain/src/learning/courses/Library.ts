import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { matchingAll } from "../../publications/PublicReads.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { requireRevision } from "../../store/Revision.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { authorView, courseFor, requireCourseState } from "./Courses.js"
import { once } from "../Commands.js"
import { updateCourse } from "./CourseRepository.js"
import { CourseAuthor, type CourseNode, LibraryItem } from "./Model.js"
import { storedArray } from "./StoredJson.js"
import { maxNodes, subtree, withFreshKeys } from "./Tree.js"

/**
 * The library: a profile's saved subtrees. Saving copies a draft subtree;
 * inserting places a copy with fresh nodeKeys into a draft, so keys stay unique and stable.
 */
const LibraryRow = Schema.Struct({
  uuid: Schema.String,
  title: Schema.String,
  nodes: storedArray<CourseNode>("StoredCourseNodes"),
  source_course_uuid: Schema.NullOr(Schema.String),
  source_node_key: Schema.String,
  created_at: Timestamp
})
type LibraryRow = typeof LibraryRow.Type

const columns = selectList(LibraryRow)
const decodeItems = rowsDecoder(LibraryRow)
/** An item with its keyset position (`created_at::text`, exact to the microsecond). */
const PositionedLibraryRow = Schema.Struct({ ...LibraryRow.fields, position: Schema.String })
const positionedColumns = selectList(PositionedLibraryRow, undefined, { position: "created_at::text" })
const decodePositioned = rowsDecoder(PositionedLibraryRow)

const itemView = (row: LibraryRow) => ({
  uuid: row.uuid,
  title: row.title,
  nodes: row.nodes,
  ...(row.source_course_uuid !== null ? { sourceCourseUuid: row.source_course_uuid } : {}),
  sourceNodeKey: row.source_node_key,
  createdAt: row.created_at
})

export const saveToLibrary = (actor: Actor, courseUuid: string, input: { readonly requestUuid: string; readonly nodeKey: string; readonly title: string }) =>
  once(actor, "learning.library.save", input, LibraryItem, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* courseFor(actor, "learning.library.save", courseUuid, { lock: false })
    if (!course.nodes.some((node) => node.nodeKey === input.nodeKey)) {
      return yield* new NotFound({ message: `No node ${input.nodeKey} in the course's draft` })
    }
    const [row] = yield* Effect.flatMap(
      sql`INSERT INTO learning_library_items (uuid, owner_profile_uuid, title, nodes, source_course_uuid, source_node_key)
      VALUES (${crypto.randomUUID()}, ${actor.profileUuid}, ${input.title}, ${JSON.stringify(subtree(course.nodes, input.nodeKey))}::jsonb,
        ${courseUuid}, ${input.nodeKey})
      RETURNING ${sql.literal(columns)}`,
      decodeItems
    )
    return itemView(row!)
  }))

export const listLibrary = (actor: Actor, query: { readonly q?: string | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const conditions = [
      sql`owner_profile_uuid = ${actor.profileUuid}`,
      ...matchingAll(sql, "search_text", query.q),
      ...(position._tag === "Some" ? [sql`(created_at, uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)`] : [])
    ]
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(positionedColumns)}
      FROM learning_library_items WHERE ${sql.and(conditions)} ORDER BY created_at DESC, uuid DESC LIMIT ${limit + 1}`,
      decodePositioned
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), itemView)
  })

export const insertFromLibrary = (
  actor: Actor,
  courseUuid: string,
  itemUuid: string,
  input: { readonly requestUuid: string; readonly expectedRevision: number; readonly parentNodeKey?: string | undefined; readonly position?: number | undefined }
) =>
  once(actor, "learning.library.insert", input, CourseAuthor, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* courseFor(actor, "learning.library.insert", courseUuid, { lock: true })
    const [item] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM learning_library_items
      WHERE uuid = ${itemUuid} AND owner_profile_uuid = ${actor.profileUuid}`,
      decodeItems
    )
    if (item === undefined) return yield* new NotFound({ message: `No library item ${itemUuid} of the acting profile` })
    yield* requireCourseState("learning.library.insert", course)
    if (course.kind === "bundle") return yield* new InvalidState({ message: "A bundle's content is its member courses; insert into a single course" })
    yield* requireRevision("course", course.revision, input.expectedRevision)
    if (input.parentNodeKey !== undefined && !course.nodes.some((node) => node.nodeKey === input.parentNodeKey && node.kind === "module")) {
      return yield* new InvalidRequest({ message: `parentNodeKey: no module "${input.parentNodeKey}" in the draft` })
    }
    if (course.nodes.length + item.nodes.length > maxNodes) {
      return yield* new InvalidRequest({ message: `The draft would hold more than ${maxNodes} nodes` })
    }
    const copy = withFreshKeys(item.nodes, new Set(course.nodes.map((node) => node.nodeKey)), input.parentNodeKey)
    // `position` counts among the parent's children (absent: after the last).
    const siblings = course.nodes.map((node, at) => ({ node, at })).filter(({ node }) => node.parentKey === input.parentNodeKey)
    const anchor = input.position === undefined || input.position >= siblings.length ? undefined : siblings[input.position]
    const at = anchor !== undefined ? anchor.at : course.nodes.length
    const nodes = [...course.nodes.slice(0, at), ...copy, ...course.nodes.slice(at)]
    return yield* authorView(yield* updateCourse(courseUuid, {}, { nodes }))
  }))
