import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { revisedColumns } from "../../store/Revision.js"
import { rowsDecoder, selectList, Timestamp, uuidArray } from "../../store/Rows.js"
import type { CourseNode } from "./Model.js"
import { courseNotFound } from "../Permissions.js"
import { storedArray, storedObject } from "./StoredJson.js"

/** `learning_courses` and `learning_course_versions`: their rows, read and written only here. */
const Members = storedArray<{ readonly courseUuid: string; readonly required: boolean }>("StoredBundleMembers")
const Nodes = storedArray<CourseNode>("StoredCourseNodes")

export const CourseRow = Schema.Struct({
  uuid: Schema.String,
  owner_profile_uuid: Schema.String,
  title: Schema.String,
  summary: Schema.String,
  kind: Schema.Literal("single", "bundle"),
  visibility: Schema.Literal("listed", "unlisted", "private"),
  status: Schema.Literal("draft", "published", "archived"),
  publication_uuid: Schema.NullOr(Schema.String),
  nodes: Nodes,
  members: Members,
  completion_policy: storedObject<{ readonly minScorePercent?: number; readonly requiredNodeKeys?: ReadonlyArray<string> }>("StoredCompletionPolicy"),
  freeze_after_days: Schema.Number,
  metadata: storedObject<Record<string, unknown>>("StoredCourseMetadata"),
  latest_version: Schema.Number,
  published_at: Schema.NullOr(Timestamp),
  archived_at: Schema.NullOr(Timestamp),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type CourseRow = typeof CourseRow.Type

export const VersionRow = Schema.Struct({
  course_uuid: Schema.String,
  number: Schema.Number,
  content_hash: Schema.String,
  title: Schema.String,
  summary: Schema.String,
  nodes: Nodes,
  members: Members,
  changelog: Schema.String,
  published_by: Schema.String,
  published_at: Timestamp
})
export type VersionRow = typeof VersionRow.Type

export const courseColumns = selectList(CourseRow)
export const versionColumns = selectList(VersionRow)
const decodeCourses = rowsDecoder(CourseRow)
const decodeVersions = rowsDecoder(VersionRow)

/** A course without its draft content (`nodes`, `members`): what a learner's operation needs of it. */
export const CourseHead = CourseRow.omit("nodes", "members")
export type CourseHead = typeof CourseHead.Type
const courseHeadColumns = selectList(CourseHead)
const decodeHeads = rowsDecoder(CourseHead)

/** The course without its draft content (never locked: authoring locks the whole row); 404 when there is none. */
export const loadCourseHead = (uuid: string): Effect.Effect<CourseHead, SqlError | ReturnType<typeof courseNotFound>, SqlClient.SqlClient> =>
  Effect.flatMap(loadCourseHeads([uuid]), (rows) => rows[0] === undefined ? Effect.fail(courseNotFound(uuid)) : Effect.succeed(rows[0]))

/** Courses without their draft content, by uuid; unknown uuids are left out. */
export const loadCourseHeads = (uuids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<CourseHead>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    uuids.length === 0
      ? Effect.succeed([])
      : Effect.flatMap(sql`SELECT ${sql.literal(courseHeadColumns)} FROM learning_courses WHERE uuid = ANY(${uuidArray(sql, uuids)})`, decodeHeads))

/** The course, locked for the transaction when asked; 404 when there is none. */
export const loadCourse = (uuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = options.lock
      ? yield* Effect.flatMap(sql`SELECT ${sql.literal(courseColumns)} FROM learning_courses WHERE uuid = ${uuid} FOR UPDATE`, decodeCourses)
      : yield* Effect.flatMap(sql`SELECT ${sql.literal(courseColumns)} FROM learning_courses WHERE uuid = ${uuid}`, decodeCourses)
    const row = rows[0]
    return row === undefined ? yield* Effect.fail(courseNotFound(uuid)) : row
  })

export const loadVersion = (courseUuid: string, number: number): Effect.Effect<VersionRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT ${sql.literal(versionColumns)} FROM learning_course_versions WHERE course_uuid = ${courseUuid} AND number = ${number}`,
        decodeVersions
      ),
      (rows) => rows[0]
    ))

/** What names one published version's content exactly: the content hash and publish time too, since demo data may remove a course and publish one again under its uuid. */
export interface VersionPin {
  readonly course_uuid: string
  readonly version_number: number
  readonly content_hash: string
  readonly published_at: Date
}

/**
 * Published versions never change, so their node trees are kept in memory (bounded; the oldest
 * read goes first): a learner's every step read would otherwise fetch and parse the whole tree.
 */
const versionCache = new Map<string, ReadonlyArray<CourseNode>>()
const versionCacheSize = 200

/** The node tree of a published version, from memory when it was read before. */
export const versionNodes = (pin: VersionPin): Effect.Effect<ReadonlyArray<CourseNode>, SqlError, SqlClient.SqlClient> =>
  Effect.suspend(() => {
    const key = `${pin.course_uuid}/${pin.version_number}/${pin.content_hash}/${pin.published_at.getTime()}`
    const cached = versionCache.get(key)
    if (cached !== undefined) {
      versionCache.delete(key)
      versionCache.set(key, cached)
      return Effect.succeed(cached)
    }
    return Effect.map(loadVersion(pin.course_uuid, pin.version_number), (version) => {
      const nodes = version?.nodes ?? []
      versionCache.set(key, nodes)
      if (versionCache.size > versionCacheSize) versionCache.delete(versionCache.keys().next().value!)
      return nodes
    })
  })

export interface NewCourse {
  readonly uuid: string
  readonly ownerProfileUuid: string
  readonly title: string
  readonly summary: string
  readonly kind: "single" | "bundle"
  readonly nodes: ReadonlyArray<CourseNode>
  readonly members?: ReadonlyArray<{ readonly courseUuid: string; readonly required: boolean }>
  readonly completionPolicy?: unknown
  readonly freezeAfterDays?: number
  readonly metadata?: unknown
  readonly publicationUuid?: string | undefined
}

export const insertCourse = (course: NewCourse): Effect.Effect<CourseRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(sql`INSERT INTO learning_courses
        (uuid, owner_profile_uuid, title, summary, kind, nodes, members, completion_policy, freeze_after_days, metadata, publication_uuid)
        VALUES (${course.uuid}, ${course.ownerProfileUuid}, ${course.title}, ${course.summary}, ${course.kind},
          ${JSON.stringify(course.nodes)}::jsonb, ${JSON.stringify(course.members ?? [])}::jsonb,
          ${JSON.stringify(course.completionPolicy ?? {})}::jsonb, ${course.freezeAfterDays ?? 30},
          ${JSON.stringify(course.metadata ?? {})}::jsonb, ${course.publicationUuid ?? null})
        RETURNING ${sql.literal(courseColumns)}`, decodeCourses),
      (rows) => rows[0]!
    ))

/** Sets columns of a locked course and bumps its revision; returns the new row. */
export const updateCourse = (
  uuid: string,
  values: Readonly<Record<string, string | number | boolean | Date | null>>,
  json: Readonly<Record<string, unknown>> = {}
): Effect.Effect<CourseRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_courses SET ${revisedColumns(sql, values, json)} WHERE uuid = ${uuid} RETURNING ${sql.literal(courseColumns)}`,
        decodeCourses
      ),
      (rows) => rows[0]!
    ))

/** The public view's rows: the course's facts and its latest version's outline, in one statement. */
export const PublicCourseRow = Schema.Struct({
  uuid: Schema.String,
  kind: CourseRow.fields.kind,
  status: CourseRow.fields.status,
  visibility: CourseRow.fields.visibility,
  latest_version: Schema.Number,
  metadata: CourseRow.fields.metadata,
  publication_uuid: Schema.NullOr(Schema.String),
  number: Schema.NullOr(Schema.Number),
  title: Schema.NullOr(Schema.String),
  summary: Schema.NullOr(Schema.String),
  /** The outline as the JSON text stored at publish (built by `outlineOf`, so already in wire form). */
  outline: Schema.NullOr(Schema.String),
  published_at: Schema.NullOr(Timestamp)
})
export type PublicCourseRow = typeof PublicCourseRow.Type
const publicCourseColumns = selectList(PublicCourseRow, undefined, {
  uuid: "c.uuid",
  kind: "c.kind",
  status: "c.status",
  visibility: "c.visibility",
  latest_version: "c.latest_version",
  metadata: "c.metadata",
  publication_uuid: "c.publication_uuid",
  number: "v.number",
  title: "v.title",
  summary: "v.summary",
  outline: "v.outline::text",
  published_at: "v.published_at"
})
const decodePublic = rowsDecoder(PublicCourseRow)

export const loadPublicCourse = (uuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(publicCourseColumns)}
      FROM learning_courses c LEFT JOIN learning_course_versions v ON v.course_uuid = c.uuid AND v.number = c.latest_version
      WHERE c.uuid = ${uuid}`,
      decodePublic
    )
    return row === undefined ? yield* Effect.fail(courseNotFound(uuid)) : row
  })

/** A course's new published version, returned as stored (its publish time is the database's). */
export const insertVersion = (version: {
  readonly courseUuid: string
  readonly number: number
  readonly contentHash: string
  readonly title: string
  readonly summary: string
  readonly nodes: ReadonlyArray<CourseNode>
  readonly outline: unknown
  readonly members: ReadonlyArray<{ readonly courseUuid: string; readonly required: boolean }>
  readonly changelog: string
  readonly publishedBy: string
}): Effect.Effect<VersionRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_course_versions
        (course_uuid, number, content_hash, title, summary, nodes, outline, members, changelog, published_by)
      VALUES (${version.courseUuid}, ${version.number}, ${version.contentHash}, ${version.title}, ${version.summary}, ${JSON.stringify(version.nodes)}::jsonb,
        ${JSON.stringify(version.outline)}::jsonb,
        ${JSON.stringify(version.members)}::jsonb, ${version.changelog}, ${version.publishedBy})
      RETURNING ${sql.literal(versionColumns)}`,
        decodeVersions
      ),
      (rows) => rows[0]!
    ))
