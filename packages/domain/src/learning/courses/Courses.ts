import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { matchingAll, searchPlan } from "../../publications/PublicReads.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { appendEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { appendAudit } from "../Audit.js"
import { once } from "../Commands.js"
import { checkersInUse, insertCheckerDrafts, renameCheckers } from "../grading/CheckerDrafts.js"
import {
  CourseRow,
  insertCourse,
  insertVersion,
  loadCourse,
  loadPublicCourse,
  loadVersion,
  updateCourse,
  versionColumns,
  VersionRow
} from "./CourseRepository.js"
import { CheckerStatus } from "../grading/GradingModel.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { storedObject } from "./StoredJson.js"
import { CheckerNotReady, CourseInvalid, NotEligible } from "../LearningErrors.js"
import { EncodedJson } from "../../operations/Implementation.js"
import {
  Course,
  CourseAuthor,
  type CourseCard,
  type CourseNode,
  type CoursePreview,
  CourseVersion
} from "./Model.js"
import { authorizeCourse, type CourseOperation, courseNotFound, holdsAtom, standingOn } from "../Permissions.js"
import { listRunRows, runView } from "./RunRepository.js"
import { assignStaff } from "../staff/Staff.js"
import { contentHash, maxNodes, outlineOf, treeDiff, treeProblem, validationIssues } from "./Tree.js"
import { effectiveDates } from "../enrollments/Schedule.js"

const optional = <K extends string, V>(key: K, value: V | null | undefined): { readonly [P in K]?: V } =>
  (value === null || value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: V }

const MemberState = CourseRow.pick("uuid", "latest_version", "status")
const memberStateColumns = selectList(MemberState)
const decodeMemberStates = rowsDecoder(MemberState)
const MemberCandidate = CourseRow.pick("uuid", "owner_profile_uuid", "status", "kind")
const memberCandidateColumns = selectList(MemberCandidate)
const decodeMemberCandidates = rowsDecoder(MemberCandidate)
const decodeCheckerStates = rowsDecoder(Schema.Struct({ uuid: Schema.String, status: CheckerStatus }))
const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))
const decodeStarts = rowsDecoder(Schema.Struct({ starts_at: Timestamp }))
const decodeVersions = rowsDecoder(VersionRow)
/** A course with its keyset position (`updated_at::text`, exact to the microsecond). */
const PositionedCourseRow = Schema.Struct({ ...CourseRow.fields, position: Schema.String })
const positionedCourseColumns = selectList(PositionedCourseRow, "c", { position: "c.updated_at::text" })
const decodePositionedCourses = rowsDecoder(PositionedCourseRow)
const CatalogRow = Schema.Struct({
  uuid: Schema.String,
  title: Schema.String,
  summary: Schema.String,
  kind: CourseRow.fields.kind,
  latest_version: Schema.Number,
  metadata: CourseRow.fields.metadata,
  publication_uuid: Schema.String,
  published_at: Timestamp,
  position: Schema.String
})
const decodeCatalog = rowsDecoder(CatalogRow)

/** Where each course command may start: the course's state machine as data. */
export const courseTransitions = {
  "learning.courses.update": { from: ["draft", "published"] },
  "learning.courses.bundle": { from: ["draft", "published"] },
  "learning.courses.publish": { from: ["draft", "published"], to: "published" },
  "learning.courses.archive": { from: ["published"], to: "archived" },
  "learning.library.insert": { from: ["draft", "published"] },
  "learning.runs.create": { from: ["published"] }
} as const satisfies Readonly<Record<string, { readonly from: ReadonlyArray<CourseRow["status"]>; readonly to?: CourseRow["status"] }>>

export const requireCourseState = (operation: keyof typeof courseTransitions, course: CourseRow): Effect.Effect<void, InvalidState> =>
  (courseTransitions[operation].from as ReadonlyArray<string>).includes(course.status)
    ? Effect.void
    : Effect.fail(new InvalidState({ message: `${operation} is not allowed on a ${course.status} course` }))

const facts = (row: CourseRow) => ({ uuid: row.uuid, status: row.status, visibility: row.visibility, latestVersion: row.latest_version })

/** Loads a course and authorizes the operation on it; the course is locked when the operation changes it. */
export const courseFor = (
  actor: Actor | undefined,
  operation: CourseOperation,
  uuid: string,
  options: { readonly lock: boolean; readonly runUuid?: string; readonly groupUuids?: ReadonlyArray<string> }
) =>
  Effect.gen(function*() {
    const course = yield* loadCourse(uuid, options)
    yield* authorizeCourse(actor, operation, facts(course), {
      runUuid: options.runUuid,
      ...(options.groupUuids !== undefined ? { groupUuids: options.groupUuids } : {})
    })
    return course
  })

/** Published state of bundle members (validation needs it). */
const memberStates = (members: CourseRow["members"]) =>
  Effect.gen(function*() {
    if (members.length === 0) return []
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(memberStateColumns)} FROM learning_courses WHERE uuid IN ${sql.in(members.map((m) => m.courseUuid))}`,
      decodeMemberStates
    )
    const published = new Set(rows.filter((row) => row.latest_version > 0 && row.status === "published").map((row) => row.uuid))
    return members.map((member) => ({ courseUuid: member.courseUuid, published: published.has(member.courseUuid) }))
  })

/** The course's checkers with their status (a step may name no other; a course publishes only with preflighted ones). */
const courseCheckers = (courseUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(sql`SELECT uuid::text AS uuid, status FROM learning_checkers WHERE course_uuid = ${courseUuid}`, decodeCheckerStates),
      (rows) => new Map(rows.map((row) => [row.uuid, row.status]))
    ))

const issuesOf = (course: CourseRow) =>
  Effect.gen(function*() {
    const members = yield* memberStates(course.members)
    const usesCheckers = course.nodes.some((node) => node.grading?.checkerUuid !== undefined)
    const checkers = usesCheckers ? yield* courseCheckers(course.uuid) : new Map<string, CheckerStatus>()
    return validationIssues({ kind: course.kind, nodes: course.nodes, requiredNodeKeys: course.completion_policy.requiredNodeKeys ?? [], members, checkers })
  })

/** The author's view: draft, validation counts, difference to the latest version. */
export const authorView = (course: CourseRow) =>
  Effect.gen(function*() {
    const issues = yield* issuesOf(course)
    const latest = course.latest_version > 0 ? yield* loadVersion(course.uuid, course.latest_version) : undefined
    return {
      uuid: course.uuid,
      revision: course.revision,
      ownerProfileUuid: course.owner_profile_uuid,
      title: course.title,
      summary: course.summary,
      kind: course.kind,
      visibility: course.visibility,
      status: course.status,
      ...optional("publicationUuid", course.publication_uuid),
      nodes: course.nodes,
      members: course.members,
      completionPolicy: course.completion_policy,
      freezeAfterDays: course.freeze_after_days,
      metadata: course.metadata,
      latestVersion: course.latest_version,
      validation: {
        errors: issues.filter((issue) => issue.severity === "error").length,
        warnings: issues.filter((issue) => issue.severity === "warning").length
      },
      diff: treeDiff(latest?.nodes ?? [], course.nodes),
      createdAt: course.created_at,
      updatedAt: course.updated_at,
      ...optional("publishedAt", course.published_at),
      ...optional("archivedAt", course.archived_at)
    } as CourseAuthor
  })

export const versionView = (row: VersionRow): CourseVersion => ({
  courseUuid: row.course_uuid,
  number: row.number,
  contentHash: row.content_hash,
  title: row.title,
  summary: row.summary,
  nodes: row.nodes,
  members: row.members,
  changelog: row.changelog,
  publishedBy: row.published_by,
  publishedAt: row.published_at
})

/** 400 naming the first structural problem of a tree. */
export const requireTree = (nodes: ReadonlyArray<CourseNode>): Effect.Effect<void, InvalidRequest> => {
  if (nodes.length > maxNodes) return Effect.fail(new InvalidRequest({ message: `nodes: at most ${maxNodes} nodes` }))
  const problem = treeProblem(nodes)
  return problem === undefined ? Effect.void : Effect.fail(new InvalidRequest({ message: problem }))
}

/** A new course owned by `actor` (its creator becomes owner, audited) — create, copy, from_publication. */
export const createOwned = (profileUuid: string, requestUuid: string | undefined, course: Omit<Parameters<typeof insertCourse>[0], "uuid" | "ownerProfileUuid">) =>
  Effect.flatMap(insertOwned(profileUuid, requestUuid, course), authorView)

/** A new course of the profile, its owner assigned. */
export const insertOwned = (profileUuid: string, requestUuid: string | undefined, course: Omit<Parameters<typeof insertCourse>[0], "uuid" | "ownerProfileUuid">) =>
  Effect.gen(function*() {
    const row = yield* insertCourse({ ...course, uuid: crypto.randomUUID(), ownerProfileUuid: profileUuid })
    // A new course has no owner yet: `owner_required` cannot happen here.
    yield* assignStaff({ courseUuid: row.uuid, profileUuid, role: "owner", byProfileUuid: profileUuid, requestUuid })
      .pipe(Effect.catchTag("OwnerRequired", Effect.die))
    return row
  })

// ---- commands ---------------------------------------------------------------------------------

export const createCourse = (actor: Actor, input: { readonly requestUuid: string; readonly title: string; readonly summary?: string | undefined; readonly kind: "single" | "bundle" }) =>
  once(actor, "learning.courses.create", input, CourseAuthor, createOwned(actor.profileUuid, input.requestUuid, {
    title: input.title,
    summary: input.summary ?? "",
    kind: input.kind,
    nodes: []
  }))

export interface CourseUpdateInput {
  readonly requestUuid: string
  readonly expectedRevision: number
  readonly title?: string | undefined
  readonly summary?: string | undefined
  readonly visibility?: "listed" | "unlisted" | "private" | undefined
  readonly nodes?: ReadonlyArray<CourseNode> | undefined
  readonly completionPolicy?: { readonly minScorePercent?: number | undefined; readonly requiredNodeKeys?: ReadonlyArray<string> | undefined } | undefined
  readonly freezeAfterDays?: number | undefined
}

export const updateCourseDraft = (actor: Actor, uuid: string, input: CourseUpdateInput) =>
  Effect.gen(function*() {
    if (input.nodes !== undefined) yield* requireTree(input.nodes)
    return yield* once(actor, "learning.courses.update", input, CourseAuthor, Effect.gen(function*() {
      const course = yield* courseFor(actor, "learning.courses.update", uuid, { lock: true })
      yield* requireCourseState("learning.courses.update", course)
      yield* requireRevision("course", course.revision, input.expectedRevision)
      const values: Record<string, string | number> = {}
      if (input.title !== undefined) values["title"] = input.title
      if (input.summary !== undefined) values["summary"] = input.summary
      if (input.visibility !== undefined) values["visibility"] = input.visibility
      if (input.freezeAfterDays !== undefined) values["freeze_after_days"] = input.freezeAfterDays
      const json: Record<string, unknown> = {}
      if (input.nodes !== undefined) json["nodes"] = input.nodes
      if (input.completionPolicy !== undefined) json["completion_policy"] = input.completionPolicy
      return yield* authorView(yield* updateCourse(uuid, values, json))
    }))
  })

export const validateCourse = (actor: Actor, uuid: string) =>
  Effect.gen(function*() {
    const course = yield* courseFor(actor, "learning.courses.validate", uuid, { lock: false })
    return { issues: yield* issuesOf(course) }
  })

export const publishCourse = (actor: Actor, uuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number; readonly changelog: string }) =>
  once(actor, "learning.courses.publish", input, CourseVersion, Effect.gen(function*() {
    const course = yield* courseFor(actor, "learning.courses.publish", uuid, { lock: true })
    yield* requireCourseState("learning.courses.publish", course)
    yield* requireRevision("course", course.revision, input.expectedRevision)
    const errors = (yield* issuesOf(course)).filter((issue) => issue.severity === "error")
    // Only not-ready checkers in the way: 409 `checker_not_ready` (preflight them and publish again);
    // any other blocking issue: `course_invalid`, which counts them too.
    if (errors.length > 0 && errors.every((issue) => issue.code === "checker_not_ready")) {
      return yield* new CheckerNotReady({
        message: `${errors.length} step(s) name a checker that has not passed its preflight, first: ${errors[0]!.message}; read them with learning.courses.validate`
      })
    }
    if (errors.length > 0) {
      return yield* new CourseInvalid({
        message: `The draft has ${errors.length} blocking issue(s), first: ${errors[0]!.code} — ${errors[0]!.message}; read them with learning.courses.validate`
      })
    }
    const number = course.latest_version + 1
    const content = { title: course.title, summary: course.summary, nodes: course.nodes, members: course.members }
    const version = yield* insertVersion({
      courseUuid: uuid,
      number,
      contentHash: contentHash(content),
      title: course.title,
      summary: course.summary,
      nodes: course.nodes,
      outline: outlineOf(course.nodes),
      members: course.members,
      changelog: input.changelog,
      publishedBy: actor.profileUuid
    })
    const updated = yield* updateCourse(uuid, { status: "published", latest_version: number, published_at: version.published_at })
    yield* appendEvent({
      type: "learning.course.published",
      aggregate: { kind: "learning_course", uuid, revision: updated.revision },
      data: { objectUuid: uuid, status: "published", versionNumber: number },
      context: { profileUuid: actor.profileUuid, courseUuid: uuid }
    })
    yield* appendAudit({
      courseUuid: uuid,
      actorProfileUuid: actor.profileUuid,
      action: "course.publish",
      subjectKind: "course",
      subjectUuid: uuid,
      before: { latestVersion: course.latest_version },
      after: { latestVersion: number, contentHash: version.content_hash },
      reason: input.changelog,
      requestUuid: input.requestUuid
    })
    return versionView(version)
  }))

export const archiveCourse = (actor: Actor, uuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number; readonly reason: string }) =>
  once(actor, "learning.courses.archive", input, CourseAuthor, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* courseFor(actor, "learning.courses.archive", uuid, { lock: true })
    yield* requireCourseState("learning.courses.archive", course)
    yield* requireRevision("course", course.revision, input.expectedRevision)
    const running = yield* Effect.flatMap(
      sql`SELECT count(*)::int AS n FROM learning_runs WHERE course_uuid = ${uuid} AND status = 'running'`,
      decodeCount
    )
    if ((running[0]?.n ?? 0) > 0) {
      return yield* new InvalidState({ message: `The course has ${running[0]!.n} running run(s); finish or cancel them before archiving` })
    }
    const updated = yield* updateCourse(uuid, { status: "archived", archived_at: new Date() })
    yield* appendAudit({
      courseUuid: uuid,
      actorProfileUuid: actor.profileUuid,
      action: "course.archive",
      subjectKind: "course",
      subjectUuid: uuid,
      before: { status: course.status },
      after: { status: "archived" },
      reason: input.reason,
      requestUuid: input.requestUuid
    })
    return yield* authorView(updated)
  }))

export const bundleCourse = (
  actor: Actor,
  uuid: string,
  input: { readonly requestUuid: string; readonly expectedRevision: number; readonly members: ReadonlyArray<{ readonly courseUuid: string; readonly required: boolean }> }
) =>
  Effect.gen(function*() {
    const seen = new Set<string>()
    for (const [i, member] of input.members.entries()) {
      if (seen.has(member.courseUuid)) return yield* new InvalidRequest({ message: `members.${i}.courseUuid: listed twice` })
      if (member.courseUuid === uuid) return yield* new InvalidRequest({ message: `members.${i}.courseUuid: a course cannot hold itself` })
      seen.add(member.courseUuid)
    }
    return yield* once(actor, "learning.courses.bundle", input, CourseAuthor, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const course = yield* courseFor(actor, "learning.courses.bundle", uuid, { lock: true })
      yield* requireCourseState("learning.courses.bundle", course)
      yield* requireRevision("course", course.revision, input.expectedRevision)
      const rows = yield* Effect.flatMap(
        sql`SELECT ${sql.literal(memberCandidateColumns)} FROM learning_courses WHERE uuid IN ${sql.in(input.members.map((m) => m.courseUuid))}`,
        decodeMemberCandidates
      )
      for (const member of input.members) {
        const row = rows.find((r) => r.uuid === member.courseUuid)
        if (row === undefined || row.owner_profile_uuid !== actor.profileUuid || row.status !== "published" || row.kind !== "single") {
          return yield* new NotEligible({ message: `Member ${member.courseUuid} is not a published single course of the acting profile` })
        }
      }
      return yield* authorView(yield* updateCourse(uuid, { kind: "bundle" }, { members: input.members }))
    }))
  })

/** 403 unless the caller may manage the course's checkers: carrying them out (a copy, a package) shows their URLs, rules and cases. */
export const requireCheckersManage = (actor: Actor, courseUuid: string) =>
  Effect.flatMap(standingOn(actor, courseUuid), (standing) =>
    holdsAtom(standing.assignments, "checkers_manage", {})
      ? Effect.void
      : Effect.fail(new Forbidden({ message: "includeCheckers needs the checkers_manage permission on this course" })))

export const copyCourse = (actor: Actor, uuid: string, input: { readonly requestUuid: string; readonly title: string; readonly includeCheckers: boolean }) =>
  once(actor, "learning.courses.copy", input, CourseAuthor, Effect.gen(function*() {
    const source = yield* courseFor(actor, "learning.courses.copy", uuid, { lock: false })
    // With includeCheckers: the source's checkers in use as drafts of the copy (`CheckerDrafts.ts`),
    // the steps naming the copies. Without: the steps keep naming the source's checkers, which
    // the copy's validation reports (`unknown_checker`).
    if (input.includeCheckers) yield* requireCheckersManage(actor, source.uuid)
    const { specs, standingFor } = input.includeCheckers ? yield* checkersInUse(source.uuid, source.nodes) : { specs: [], standingFor: new Map<string, string>() }
    const copies = new Map(specs.map((spec) => [spec.uuid, crypto.randomUUID()]))
    const row = yield* insertOwned(actor.profileUuid, input.requestUuid, {
      title: input.title,
      summary: source.summary,
      kind: source.kind,
      nodes: renameCheckers(source.nodes, new Map([...standingFor].map(([named, now]) => [named, copies.get(now)!]))),
      members: source.members,
      completionPolicy: source.completion_policy,
      freezeAfterDays: source.freeze_after_days,
      metadata: source.metadata
    })
    yield* insertCheckerDrafts(row.uuid, actor.profileUuid, specs.map((spec) => ({ ...spec, uuid: copies.get(spec.uuid)!, source: { copiedFrom: spec.uuid } })), input.requestUuid)
    return yield* authorView(row)
  }))

/**
 * What a course made from a training publication reads of it. The draft was checked by the
 * training kind's schema when it was saved (`publications/`); here only its outer shape is.
 */
const PublicationRow = Schema.Struct({
  uuid: Schema.String,
  kind: Schema.String,
  owner_profile_uuid: Schema.String,
  draft: storedObject<{
    readonly title?: string
    readonly description?: string
    readonly content?: { readonly blocks?: ReadonlyArray<{ readonly id: string; readonly type: string; readonly title?: string; readonly text?: string; readonly items?: ReadonlyArray<string> }> }
    readonly training?: Record<string, unknown>
  }>("StoredTrainingDraft")
})
type PublicationRow = typeof PublicationRow.Type
const decodePublications = rowsDecoder(PublicationRow)

/** The first module of a course made from a training publication: its description and text blocks as text steps. */
export const nodesFromPublication = (draft: PublicationRow["draft"]): ReadonlyArray<CourseNode> => {
  const steps: Array<CourseNode> = []
  if ((draft.description ?? "").trim() !== "") {
    steps.push({ nodeKey: "description", parentKey: "module-1", kind: "step", stepType: "text", title: "О курсе", body: draft.description!.slice(0, 50000) })
  }
  for (const [i, block] of (draft.content?.blocks ?? []).entries()) {
    const body = [block.text ?? "", ...(block.items ?? []).map((item) => `• ${item}`)].filter((line) => line !== "").join("\n")
    if (body.trim() === "" || steps.length >= maxNodes - 1) continue
    steps.push({ nodeKey: `block-${i + 1}`, parentKey: "module-1", kind: "step", stepType: "text", title: (block.title ?? `Раздел ${i + 1}`).slice(0, 200) || `Раздел ${i + 1}`, body: body.slice(0, 50000) })
  }
  return [{ nodeKey: "module-1", kind: "module", title: "Введение" }, ...steps]
}

export const courseFromPublication = (actor: Actor, input: { readonly requestUuid: string; readonly publicationUuid: string }) =>
  once(actor, "learning.courses.from_publication", input, CourseAuthor, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [publication] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(selectList(PublicationRow))} FROM publications
      WHERE uuid = ${input.publicationUuid} AND deleted_at IS NULL FOR UPDATE`,
      decodePublications
    )
    if (publication === undefined || publication.owner_profile_uuid !== actor.profileUuid || publication.kind !== "training") {
      return yield* new NotFound({ message: `No training publication ${input.publicationUuid} of the acting profile` })
    }
    const linked = yield* sql`SELECT 1 FROM learning_courses WHERE publication_uuid = ${input.publicationUuid}`
    if (linked.length > 0) return yield* new InvalidState({ message: "A course is already linked to this publication" })
    const training = publication.draft.training ?? {}
    const metadata = Object.fromEntries(
      ["level", "format", "durationHours", "outcomes", "certificate", "startsOn"].filter((key) => training[key] !== undefined).map((key) => [key, training[key]])
    )
    return yield* createOwned(actor.profileUuid, input.requestUuid, {
      title: (publication.draft.title ?? "Курс").slice(0, 160),
      summary: (publication.draft.description ?? "").slice(0, 2000),
      kind: "single",
      nodes: nodesFromPublication(publication.draft),
      metadata,
      publicationUuid: publication.uuid
    })
  }))

// ---- reads ------------------------------------------------------------------------------------

export const authorGet = (actor: Actor, uuid: string) =>
  Effect.flatMap(courseFor(actor, "learning.courses.author_get", uuid, { lock: false }), authorView)

/** Courses the caller is staff of, most recently changed first. */
export const authorList = (actor: Actor, query: { readonly status?: CourseRow["status"] | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(sql`SELECT ${sql.literal(positionedCourseColumns)} FROM learning_courses c
      WHERE EXISTS (SELECT 1 FROM learning_staff s WHERE s.course_uuid = c.uuid AND s.profile_uuid = ${actor.profileUuid} AND s.status = 'active')
        ${query.status !== undefined ? sql`AND c.status = ${query.status}` : sql``}
        ${position._tag === "Some" ? sql`AND (c.updated_at, c.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY c.updated_at DESC, c.uuid DESC LIMIT ${limit + 1}`, decodePositionedCourses)
    const page = pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => row)
    return { ...page, items: yield* Effect.forEach(page.items, authorView) }
  })

export const listVersions = (actor: Actor, uuid: string, query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.versions.list", uuid, { lock: false })
    const position = yield* decodeCursor(query.cursor)
    const below = position._tag === "Some" ? Number(position.value.key) : 2_147_483_647
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(versionColumns)}
      FROM learning_course_versions WHERE course_uuid = ${uuid} AND number < ${Number.isInteger(below) && below > 0 && below <= 2_147_483_647 ? below : 0}
      ORDER BY number DESC LIMIT ${limit + 1}`,
      decodeVersions
    )
    return pageOf(rows, limit, (row) => ({ key: String(row.number), uuid }), versionView)
  })

const encodeCourse = Schema.encode(Course)

/**
 * The learner's and public view of the latest published version (its outline), with the runs open
 * to new learners. The outline is immutable JSON written at publish by `outlineOf` (OutlineNode's
 * fields only): it is spliced into the encoded answer as stored, not parsed and encoded again
 * (a 500-node outline cost more than the rest of the call).
 */
export const getCourse = (actor: Actor | undefined, uuid: string) =>
  Effect.gen(function*() {
    const course = yield* loadPublicCourse(uuid)
    yield* authorizeCourse(actor, "learning.courses.get", { uuid, status: course.status, visibility: course.visibility, latestVersion: course.latest_version })
    // Staff of a never-published course may know it, but it has no learner view yet.
    if (course.number === null || course.outline === null) return yield* courseNotFound(uuid)
    const runs = course.status === "archived" ? [] : yield* listRunRows(uuid, { statuses: ["scheduled", "running"], limit: 100 })
    const encoded = yield* Effect.orDie(encodeCourse({
      uuid,
      title: course.title ?? "",
      summary: course.summary ?? "",
      kind: course.kind,
      status: course.status,
      visibility: course.visibility,
      versionNumber: course.number,
      outline: [],
      metadata: course.metadata,
      ...optional("publicationUuid", course.publication_uuid),
      publishedAt: course.published_at ?? new Date(0),
      runs: runs.map(runView)
    }))
    const { outline: _, ...rest } = encoded
    return new EncodedJson(`${JSON.stringify(rest).slice(0, -1)},"outline":${course.outline}}`)
  })

const catalogCondition = `c.status = 'published' AND c.visibility = 'listed' AND c.publication_uuid IS NOT NULL`

/**
 * The public catalog: published, listed courses whose linked training publication is approved and
 * visible (marketplace moderation; no second queue). Newest publish first.
 */
export const listCatalog = (query: {
  readonly q?: string | undefined
  readonly level?: string | undefined
  readonly format?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const conditions = [
      sql.literal(catalogCondition),
      sql`p.approved IS NOT NULL AND NOT p.hidden AND p.deleted_at IS NULL`,
      ...matchingAll(sql, "c.search_text", query.q),
      ...(query.level !== undefined ? [sql`c.metadata ->> 'level' = ${query.level}`] : []),
      ...(query.format !== undefined ? [sql`c.metadata ->> 'format' = ${query.format}`] : []),
      ...(position._tag === "Some" ? [sql`(c.published_at, c.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)`] : [])
    ]
    const rows = yield* Effect.flatMap(
      sql`
      ${sql.literal(query.q !== undefined ? searchPlan : "")}
      SELECT c.uuid, v.title, v.summary, c.kind, c.latest_version, c.metadata, c.publication_uuid, c.published_at, c.published_at::text AS position
      FROM learning_courses c
      JOIN publications p ON p.uuid = c.publication_uuid
      JOIN learning_course_versions v ON v.course_uuid = c.uuid AND v.number = c.latest_version
      WHERE ${sql.and(conditions)}
      ORDER BY c.published_at DESC, c.uuid DESC LIMIT ${limit + 1}`,
      decodeCatalog
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row): typeof CourseCard.Type => ({
      uuid: row.uuid,
      title: row.title,
      summary: row.summary,
      kind: row.kind,
      versionNumber: row.latest_version,
      metadata: row.metadata,
      publicationUuid: row.publication_uuid,
      publishedAt: row.published_at
    }))
  })


/** The draft or a version as a learner would see it at `asOf`; writes nothing. */
export const previewCourse = (
  actor: Actor,
  uuid: string,
  input: { readonly versionNumber?: number | undefined; readonly asOf: Date; readonly nodeKey?: string | undefined; readonly variantSeed?: string | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* courseFor(actor, "learning.courses.preview", uuid, { lock: false })
    let nodes: ReadonlyArray<CourseNode> = course.nodes
    if (input.versionNumber !== undefined) {
      const version = yield* loadVersion(uuid, input.versionNumber)
      if (version === undefined) return yield* new NotFound({ message: `The course has no version ${input.versionNumber}` })
      nodes = version.nodes
    }
    if (input.nodeKey !== undefined && !nodes.some((node) => node.nodeKey === input.nodeKey)) {
      return yield* new NotFound({ message: `No node ${input.nodeKey} in that tree` })
    }
    const [run] = input.versionNumber === undefined ? [] : yield* Effect.flatMap(
      sql`SELECT starts_at FROM learning_runs
      WHERE course_uuid = ${uuid} AND version_number = ${input.versionNumber} ORDER BY created_at DESC LIMIT 1`,
      decodeStarts
    )
    const startsAt = run?.starts_at ?? input.asOf
    const shown = input.nodeKey === undefined ? nodes : nodes.filter((node) => node.nodeKey === input.nodeKey || node.parentKey === input.nodeKey)
    return {
      courseUuid: uuid,
      versionNumber: input.versionNumber ?? 0,
      asOf: input.asOf,
      startsAt,
      ...optional("variantSeed", input.variantSeed),
      nodes: shown.map((node) => {
        // The offsets from the start (a preview has no run schedule).
        const { dueAt, unlockAt = startsAt } = effectiveDates(node, undefined, startsAt)
        return {
          nodeKey: node.nodeKey,
          ...optional("parentKey", node.parentKey),
          kind: node.kind,
          title: node.title,
          ...optional("stepType", node.stepType),
          state: unlockAt.getTime() <= input.asOf.getTime() ? "available" as const : "locked" as const,
          unlockAt,
          ...optional("dueAt", dueAt),
          ...optional("body", input.nodeKey === undefined ? undefined : node.body)
        }
      })
    } as typeof CoursePreview.Type
  })

