import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { DeclarativeRule } from "./Declarative.js"
import { CheckerKind, CheckerStatus, ReferenceCase } from "./GradingModel.js"

/**
 * `learning_checkers`: the one module that writes it (docs/layout.md). The rules of a checker's
 * life (what may move it, what is logged) stay in `Checkers.ts` and `Grading.ts`; here are its row
 * and its statements, unchanged.
 */

/** A checker version as stored; `rules` and `reference_cases` were checked by `CheckerCreate` (or a package's checker) when written. */
export const CheckerRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  lineage_uuid: Schema.String,
  version: Schema.Number,
  name: Schema.String,
  kind: CheckerKind,
  status: CheckerStatus,
  rules: Schema.NullOr(DeclarativeRule),
  url: Schema.NullOr(Schema.String),
  generator_url: Schema.NullOr(Schema.String),
  timeout_ms: Schema.Number,
  secret_sealed: Schema.NullOr(Schema.String),
  reference_cases: Schema.Array(ReferenceCase),
  sample_cases: Schema.Array(Schema.Unknown),
  concurrency: Schema.Number,
  error_streak: Schema.Number,
  replaces_uuid: Schema.NullOr(Schema.String),
  superseded_by_uuid: Schema.NullOr(Schema.String),
  preflight_job_uuid: Schema.NullOr(Schema.String),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type CheckerRow = typeof CheckerRow.Type

export const checkerColumns = selectList(CheckerRow)
export const decodeCheckers = rowsDecoder(CheckerRow)

const decodeStreak = rowsDecoder(Schema.Struct({ course_uuid: Schema.String, error_streak: Schema.Number }))

/** A checker of a course (`FOR UPDATE` with `lock`), or undefined. */
export const findChecker = (courseUuid: string, uuid: string, options: { readonly lock: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT ${sql.literal(checkerColumns)} FROM learning_checkers
      WHERE uuid = ${uuid} AND course_uuid = ${courseUuid} ${options.lock ? sql`FOR UPDATE` : sql``}`,
        decodeCheckers
      ),
      (rows): CheckerRow | undefined => rows[0]
    ))

/** Inserts a new checker version (`checkers.create`) and returns it. */
export const insertChecker = (checker: {
  readonly uuid: string
  readonly courseUuid: string
  readonly lineageUuid: string
  readonly version: number
  readonly name: string
  readonly kind: CheckerRow["kind"]
  readonly rules: DeclarativeRule | undefined
  readonly url: string | null
  readonly generatorUrl: string | null
  readonly timeoutMs: number
  readonly secretSealed: string | null
  readonly sampleCases: ReadonlyArray<unknown>
  readonly referenceCases: ReadonlyArray<ReferenceCase>
  readonly concurrency: number
  readonly replacesUuid: string | null
  readonly createdBy: string
}): Effect.Effect<CheckerRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, version, name, kind, rules, url, generator_url,
        timeout_ms, secret_sealed, sample_cases, reference_cases, concurrency, replaces_uuid, created_by)
      VALUES (${checker.uuid}, ${checker.courseUuid}, ${checker.lineageUuid}, ${checker.version}, ${checker.name}, ${checker.kind},
        ${checker.rules === undefined ? null : JSON.stringify(checker.rules)}::jsonb,
        ${checker.url}, ${checker.generatorUrl}, ${checker.timeoutMs}, ${checker.secretSealed}, ${JSON.stringify(checker.sampleCases)}::jsonb,
        ${JSON.stringify(checker.referenceCases)}::jsonb, ${checker.concurrency}, ${checker.replacesUuid}, ${checker.createdBy})
      RETURNING ${sql.literal(checkerColumns)}`,
        decodeCheckers
      ),
      (rows) => rows[0]!
    ))

/** A specification written as a draft checker of a lineage of its own (`CheckerDrafts.insertCheckerDrafts`). */
export interface CheckerDraftValues {
  readonly uuid: string
  readonly kind: CheckerRow["kind"]
  readonly rules: unknown
  readonly url: string | null
  readonly generatorUrl: string | null
  readonly timeoutMs: number
  readonly sampleCases: ReadonlyArray<unknown>
  readonly name: string
  readonly referenceCases: ReadonlyArray<unknown>
  readonly concurrency: number
}

/** Inserts draft checkers of a course in one statement (a course's copy or import). */
export const insertDraftCheckers = (courseUuid: string, createdBy: string, drafts: ReadonlyArray<CheckerDraftValues>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, version, kind, rules, url, generator_url, timeout_ms,
        sample_cases, status, created_by, name, reference_cases, concurrency)
      SELECT d.uuid, ${courseUuid}, d.uuid, 1, d.kind, d.rules, d.url, d.generator_url, d.timeout_ms, d.sample_cases, 'draft',
        ${createdBy}, d.name, d.reference_cases, d.concurrency
      FROM jsonb_to_recordset(${
      JSON.stringify(drafts.map((draft) => ({
        uuid: draft.uuid,
        kind: draft.kind,
        rules: draft.rules ?? null,
        url: draft.url,
        generator_url: draft.generatorUrl,
        timeout_ms: draft.timeoutMs,
        sample_cases: draft.sampleCases,
        name: draft.name,
        reference_cases: draft.referenceCases,
        concurrency: draft.concurrency
      })))
    }::jsonb) AS d(uuid uuid, kind text, rules jsonb, url text, generator_url text, timeout_ms int, sample_cases jsonb, name text,
        reference_cases jsonb, concurrency int)`)

/** Moves a checker to `to` (a new revision); `resetStreak` starts the breaker's streak over (resume). */
export const updateCheckerStatus = (uuid: string, to: CheckerRow["status"], options: { readonly resetStreak: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_checkers SET status = ${to}, revision = revision + 1, updated_at = now()
      ${options.resetStreak ? sql`, error_streak = 0` : sql``}
      WHERE uuid = ${uuid} RETURNING ${sql.literal(checkerColumns)}`,
        decodeCheckers
      ),
      (rows) => rows[0]!
    ))

/** Links a superseded version to the version that replaced it. */
export const setSupersededBy = (uuid: string, supersededByUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE learning_checkers SET superseded_by_uuid = ${supersededByUuid} WHERE uuid = ${uuid}`)

/** The checker's latest preflight job. */
export const setPreflightJob = (uuid: string, jobUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE learning_checkers SET preflight_job_uuid = ${jobUuid} WHERE uuid = ${uuid}`)

/** One more platform error in the breaker's streak: the checker's course and the streak now. */
export const countCheckerError = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_checkers SET error_streak = error_streak + 1
      WHERE uuid = ${uuid} RETURNING course_uuid, error_streak`,
        decodeStreak
      ),
      (rows) => rows[0]!
    ))

/** A verdict: the breaker's streak starts over (written only when it is not zero already). */
export const resetErrorStreak = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE learning_checkers SET error_streak = 0 WHERE uuid = ${uuid} AND error_streak > 0`)
