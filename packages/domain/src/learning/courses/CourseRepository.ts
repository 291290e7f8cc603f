import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { revisedColumns } from "../../store/Revision.js"
import { uuidArray } from "../../store/Rows.js"
import type { CourseNode } from "./Model.js"
import { courseNotFound } from "../Permissions.js"

/** `learning_courses` and `learning_course_versions`: their rows, read and written only here. */
export interface CourseRow {
  readonly uuid: string
  readonly owner_profile_uuid: string
  readonly title: string
  readonly summary: string
  readonly kind: "single" | "bundle"
  readonly visibility: "listed" | "unlisted" | "private"
  readonly status: "draft" | "published" | "archived"
  readonly publication_uuid: string | null
  readonly nodes: ReadonlyArray<CourseNode>
  readonly members: ReadonlyArray<{ readonly courseUuid: string; readonly required: boolean }>
  readonly completion_policy: { readonly minScorePercent?: number; readonly requiredNodeKeys?: ReadonlyArray<string> }
  readonly freeze_after_days: number
  readonly metadata: Record<string, unknown>
  readonly latest_version: number
  readonly published_at: Date | null
  readonly archived_at: Date | null
  readonly revision: number
  readonly created_at: Date
  readonly updated_at: Date
}

export interface VersionRow {
  readonly course_uuid: string
  readonly number: number
  readonly content_hash: string
  readonly title: string
  readonly summary: string
  readonly nodes: ReadonlyArray<CourseNode>
  readonly members: ReadonlyArray<{ readonly courseUuid: string; readonly required: boolean }>
  readonly changelog: string
  readonly published_by: string
  readonly published_at: Date
}

export const courseColumns = `uuid, owner_profile_uuid, title, summary, kind, visibility, status, publication_uuid, nodes, members,
  completion_policy, freeze_after_days, metadata, latest_version, published_at, archived_at, revision, created_at, updated_at`
export const versionColumns = "course_uuid, number, content_hash, title, summary, nodes, members, changelog, published_by, published_at"

/** A course without its draft content (`nodes`, `members`): what a learner's operation needs of it. */
export type CourseHead = Omit<CourseRow, "nodes" | "members">
const courseHeadColumns = courseColumns.replace("nodes, members,", "")

/** The course without its draft content (never locked: authoring locks the whole row); 404 when there is none. */
export const loadCourseHead = (uuid: string): Effect.Effect<CourseHead, SqlError | ReturnType<typeof courseNotFound>, SqlClient.SqlClient> =>
  Effect.flatMap(loadCourseHeads([uuid]), (rows) => rows[0] === undefined ? Effect.fail(courseNotFound(uuid)) : Effect.succeed(rows[0]))

/** Courses without their draft content, by uuid; unknown uuids are left out. */
export const loadCourseHeads = (uuids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<CourseHead>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    uuids.length === 0
      ? Effect.succeed([])
      : sql<CourseHead>`SELECT ${sql.literal(courseHeadColumns)} FROM learning_courses WHERE uuid = ANY(${uuidArray(sql, uuids)})`)

/** The course, locked for the transaction when asked; 404 when there is none. */
export const loadCourse = (uuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = options.lock
      ? yield* sql<CourseRow>`SELECT ${sql.literal(courseColumns)} FROM learning_courses WHERE uuid = ${uuid} FOR UPDATE`
      : yield* sql<CourseRow>`SELECT ${sql.literal(courseColumns)} FROM learning_courses WHERE uuid = ${uuid}`
    const row = rows[0]
    return row === undefined ? yield* Effect.fail(courseNotFound(uuid)) : row
  })

export const loadVersion = (courseUuid: string, number: number): Effect.Effect<VersionRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<VersionRow>`SELECT ${sql.literal(versionColumns)} FROM learning_course_versions WHERE course_uuid = ${courseUuid} AND number = ${number}`,
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
      sql<CourseRow>`INSERT INTO learning_courses
        (uuid, owner_profile_uuid, title, summary, kind, nodes, members, completion_policy, freeze_after_days, metadata, publication_uuid)
        VALUES (${course.uuid}, ${course.ownerProfileUuid}, ${course.title}, ${course.summary}, ${course.kind},
          ${JSON.stringify(course.nodes)}::jsonb, ${JSON.stringify(course.members ?? [])}::jsonb,
          ${JSON.stringify(course.completionPolicy ?? {})}::jsonb, ${course.freezeAfterDays ?? 30},
          ${JSON.stringify(course.metadata ?? {})}::jsonb, ${course.publicationUuid ?? null})
        RETURNING ${sql.literal(courseColumns)}`,
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
      sql<CourseRow>`UPDATE learning_courses SET ${revisedColumns(sql, values, json)} WHERE uuid = ${uuid} RETURNING ${sql.literal(courseColumns)}`,
      (rows) => rows[0]!
    ))

/** The public view's rows: the course's facts and its latest version's outline, in one statement. */
export interface PublicCourseRow {
  readonly uuid: string
  readonly kind: "single" | "bundle"
  readonly status: "draft" | "published" | "archived"
  readonly visibility: "listed" | "unlisted" | "private"
  readonly latest_version: number
  readonly metadata: Record<string, unknown>
  readonly publication_uuid: string | null
  readonly number: number | null
  readonly title: string | null
  readonly summary: string | null
  /** The outline as the JSON text stored at publish (built by `outlineOf`, so already in wire form). */
  readonly outline: string | null
  readonly published_at: Date | null
}

export const loadPublicCourse = (uuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<PublicCourseRow>`SELECT c.uuid, c.kind, c.status, c.visibility, c.latest_version, c.metadata, c.publication_uuid,
        v.number, v.title, v.summary, v.outline::text AS outline, v.published_at
      FROM learning_courses c LEFT JOIN learning_course_versions v ON v.course_uuid = c.uuid AND v.number = c.latest_version
      WHERE c.uuid = ${uuid}`
    return row === undefined ? yield* Effect.fail(courseNotFound(uuid)) : row
  })
