import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import type { CourseNode } from "../courses/Model.js"
import { insertDraftCheckers } from "./CheckerRepository.js"
import { CheckerKind } from "./GradingModel.js"

/**
 * Checkers carried from one course to another (`courses.copy`, `exports.course`,
 * `courses.import`): a checker's specification without its secret or state, written into the new
 * course as a draft of a lineage of its own — an http one gets its secret by a replacing version
 * (`checkers.create` with `replaces`) and a preflight before it grades.
 */

export const CheckerSpec = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  kind: CheckerKind,
  rules: Schema.Unknown,
  url: Schema.NullOr(Schema.String),
  generatorUrl: Schema.NullOr(Schema.String),
  timeoutMs: Schema.Number,
  concurrency: Schema.Number,
  sampleCases: Schema.Array(Schema.Unknown),
  referenceCases: Schema.Array(Schema.Unknown)
})
export type CheckerSpec = typeof CheckerSpec.Type

/** A checker of the course with its lineage and state, in the columns' order of `checkersInUse` (a package keeps its keys' order). */
const SpecRow = Schema.Struct({
  uuid: Schema.String,
  lineageUuid: Schema.String,
  status: Schema.String,
  name: Schema.String,
  kind: CheckerKind,
  rules: Schema.Unknown,
  url: Schema.NullOr(Schema.String),
  generatorUrl: Schema.NullOr(Schema.String),
  timeoutMs: Schema.Number,
  concurrency: Schema.Number,
  sampleCases: Schema.Array(Schema.Unknown),
  referenceCases: Schema.Array(Schema.Unknown)
})
const decodeSpecRows = rowsDecoder(SpecRow)

/**
 * The checkers the steps use, as specifications, and for each checker a step names the one
 * standing for it: the current version of its lineage — the newest `ready` or `suspended` one, as
 * regrades take it — or, when its lineage has none, the named one itself. Abandoned drafts and
 * failed replacements no step names are not carried.
 */
export const checkersInUse = (
  courseUuid: string,
  nodes: ReadonlyArray<CourseNode>
): Effect.Effect<{ readonly specs: ReadonlyArray<CheckerSpec>; readonly standingFor: ReadonlyMap<string, string> }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const named = new Set(nodes.flatMap((node) => (node.grading?.checkerUuid !== undefined ? [node.grading.checkerUuid.toLowerCase()] : [])))
    if (named.size === 0) return { specs: [], standingFor: new Map() }
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT uuid::text AS uuid, lineage_uuid::text AS "lineageUuid",
        status, name, kind, rules, url, generator_url AS "generatorUrl", timeout_ms AS "timeoutMs", concurrency,
        sample_cases AS "sampleCases", reference_cases AS "referenceCases"
      FROM learning_checkers WHERE course_uuid = ${courseUuid} ORDER BY lineage_uuid, version`,
      decodeSpecRows
    )
    // Versions in order: the last ready or suspended one of a lineage is its current one.
    const current = new Map(rows.filter((row) => row.status === "ready" || row.status === "suspended").map((row) => [row.lineageUuid, row]))
    const standingFor = new Map<string, string>()
    const used = new Map<string, CheckerSpec>()
    for (const row of rows) {
      if (!named.has(row.uuid)) continue
      const { lineageUuid: _lineage, status: _status, ...spec } = current.get(row.lineageUuid) ?? row
      standingFor.set(row.uuid, spec.uuid)
      used.set(spec.uuid, spec)
    }
    return { specs: [...used.values()], standingFor }
  })

/** The nodes with each step's `checkerUuid` renamed where `rename` (keys in lower case) names another. */
export const renameCheckers = (nodes: ReadonlyArray<CourseNode>, rename: ReadonlyMap<string, string>): ReadonlyArray<CourseNode> =>
  nodes.map((node) => {
    const named = node.grading?.checkerUuid
    const renamed = named === undefined ? undefined : rename.get(named.toLowerCase())
    return renamed === undefined ? node : { ...node, grading: { ...node.grading!, checkerUuid: renamed } }
  })

/**
 * Writes specifications as draft checkers of a course (each `uuid` the new checker's, a lineage of
 * its own, no secret), in one statement, and audits each as `checker.create` naming its source.
 */
export const insertCheckerDrafts = (
  courseUuid: string,
  actorProfileUuid: string,
  drafts: ReadonlyArray<CheckerSpec & { readonly source: Record<string, string> }>,
  requestUuid?: string
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (drafts.length === 0) return
    yield* insertDraftCheckers(courseUuid, actorProfileUuid, drafts)
    for (const draft of drafts) {
      yield* appendAudit({
        courseUuid,
        actorProfileUuid,
        action: "checker.create",
        subjectKind: "checker",
        subjectUuid: draft.uuid,
        after: { lineageUuid: draft.uuid, version: 1, ...draft.source },
        ...(requestUuid !== undefined ? { requestUuid } : {})
      })
    }
  })
