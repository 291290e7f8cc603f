import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { PublicationKind } from "../publications/Publication.js"
import { ownReviewColumn } from "../reviews/ReviewRepository.js"
import { type ColumnValues, rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"
import { RelationKind, RelationRole } from "./Relation.js"

/** `relations` as the service reads it: this module is the table's one reader and writer. */
export const RelationRow = Schema.Struct({
  uuid: Schema.String,
  kind: RelationKind,
  status: Schema.String,
  initiator_profile_uuid: Schema.String,
  recipient_profile_uuid: Schema.String,
  initiator_role: RelationRole,
  publication_uuid: Schema.NullOr(Schema.String),
  origin_relation_uuid: Schema.NullOr(Schema.String),
  thread_uuid: Schema.NullOr(Schema.String),
  body: Schema.String,
  budget: Schema.NullOr(Schema.String),
  deadline: Schema.NullOr(Schema.String),
  refs: Schema.Array(Schema.Struct({ kind: Schema.Literal("file", "publication", "relation"), uuid: Schema.String })),
  reason: Schema.NullOr(Schema.String),
  auto_complete_at: Schema.NullOr(Schema.DateFromSelf),
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type RelationRow = typeof RelationRow.Type

type RelationColumns = ColumnValues<typeof RelationRow.Encoded>

/** A relation with what its view needs: the caller's counterpart, the publication, the deal it started, the latest results. */
export const RelationViewRow = Schema.Struct({
  ...RelationRow.fields,
  /** `updated_at` as Postgres text: the list's keyset position at full precision. */
  position: Schema.String,
  counterpart_uuid: Schema.String,
  counterpart_name: Schema.String,
  counterpart_type: ProfileType,
  counterpart_avatar_url: Schema.NullOr(Schema.String),
  /** The counterpart's customer alias when the counterpart is the relation's customer. */
  counterpart_alias: Schema.NullOr(Schema.String),
  publication_kind: Schema.NullOr(PublicationKind),
  publication_title: Schema.NullOr(Schema.String),
  deal_uuid: Schema.NullOr(Schema.String),
  /** The relation's thread: its own (an offer made in a thread, a deal inheriting it) or the one opened for it or its origin. */
  relation_thread_uuid: Schema.NullOr(Schema.String),
  results_version: Schema.NullOr(Schema.Number),
  results_body: Schema.NullOr(Schema.String),
  results_refs: Schema.NullOr(RelationRow.fields.refs),
  results_submitted_at: Schema.NullOr(Schema.DateFromSelf),
  /** Completed deals only: the caller's review and whether the two profiles share an account. */
  own_review_uuid: Schema.NullOr(Schema.String),
  same_account: Schema.NullOr(Schema.Boolean)
})
export type RelationViewRow = typeof RelationViewRow.Type

export const HistoryRow = Schema.Struct({
  relation_uuid: Schema.String,
  status: Schema.String,
  by_role: Schema.Literal("customer", "contractor", "employer", "candidate", "system"),
  at: Schema.DateFromSelf
})
export type HistoryRow = typeof HistoryRow.Type

const relationColumns = selectList(RelationRow, "r")
const decodeRelation = rowDecoder(RelationRow)
const decodeViewRows = rowsDecoder(RelationViewRow)
const decodeHistory = rowsDecoder(HistoryRow)
const decodeRelations = rowsDecoder(RelationRow)
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decodeRevisions = rowsDecoder(Schema.Struct({ revision: Schema.Number }))
const decodeVersions = rowsDecoder(Schema.Struct({ version: Schema.Number }))
const decodeMoments = rowsDecoder(Schema.Struct({ at: Schema.NullOr(Timestamp) }))

/** The view's columns over `r`, for the reader `me`. */
const viewSelect = (sql: SqlClient.SqlClient, me: string) =>
  sql`SELECT ${sql.literal(relationColumns)}, r.updated_at::text AS position,
      cp.uuid AS counterpart_uuid, cp.name AS counterpart_name, cp.type AS counterpart_type, cp.avatar_url AS counterpart_avatar_url,
      CASE WHEN r.initiator_role IN ('customer', 'contractor') AND (r.initiator_profile_uuid = ${me}::uuid) = (r.initiator_role = 'contractor')
        THEN ca.alias END AS counterpart_alias,
      pub.kind AS publication_kind, coalesce(pub.approved ->> 'title', pub.draft ->> 'title') AS publication_title,
      d.uuid AS deal_uuid, coalesce(r.thread_uuid, rt.uuid) AS relation_thread_uuid,
      res.version AS results_version, res.body AS results_body, res.refs AS results_refs, res.submitted_at AS results_submitted_at,
      CASE WHEN r.kind = 'deal' AND r.completed_at IS NOT NULL THEN ${ownReviewColumn(sql, me)} END AS own_review_uuid,
      CASE WHEN r.kind = 'deal' AND r.completed_at IS NOT NULL
        THEN coalesce(cp.account_uuid = (SELECT me.account_uuid FROM profiles me WHERE me.uuid = ${me}::uuid), false) END AS same_account
    FROM relations r
    JOIN profiles cp ON cp.uuid = CASE WHEN r.initiator_profile_uuid = ${me}::uuid THEN r.recipient_profile_uuid ELSE r.initiator_profile_uuid END
    LEFT JOIN customer_aliases ca ON ca.profile_uuid = cp.uuid
    LEFT JOIN publications pub ON pub.uuid = r.publication_uuid
    LEFT JOIN relations d ON d.origin_relation_uuid = r.uuid
    LEFT JOIN threads rt ON rt.relation_uuid = coalesce(r.origin_relation_uuid, r.uuid)
    LEFT JOIN LATERAL (
      SELECT x.version, x.body, x.refs, x.submitted_at FROM relation_results x
      WHERE x.relation_uuid = r.uuid ORDER BY x.version DESC LIMIT 1
    ) res ON true`

const isParty = (sql: SqlClient.SqlClient, me: string) =>
  sql`(r.initiator_profile_uuid = ${me}::uuid OR r.recipient_profile_uuid = ${me}::uuid)`

/** One relation of the given kinds in the view of `me`, if `me` is one of its parties. */
export const relationViewRow = (
  me: string,
  kinds: ReadonlyArray<string>,
  uuid: string
): Effect.Effect<Option.Option<RelationViewRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`${viewSelect(sql, me)} WHERE r.uuid = ${uuid} AND ${sql.in("r.kind", kinds)} AND ${isParty(sql, me)}`.pipe(
      Effect.flatMap(decodeViewRows),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

export interface ListFilter {
  readonly kinds: ReadonlyArray<string>
  readonly status?: string | undefined
  readonly publicationUuid?: string | undefined
  /** Keyset position: rows strictly after (older than) `(key, uuid)`. */
  readonly after?: { readonly key: string; readonly uuid: string } | undefined
  readonly limit: number
}

/**
 * A page of `me`'s relations of some kinds, sent and received, most recently changed first. Each
 * side is read from its own index (initiator, recipient), limited, then merged: a busy profile's
 * page costs two short index scans, not a sort of all its relations.
 */
export const relationPageRows = (me: string, filter: ListFilter): Effect.Effect<ReadonlyArray<RelationViewRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const conditions = (side: "initiator_profile_uuid" | "recipient_profile_uuid") =>
      sql.and([
        sql`${sql(side)} = ${me}::uuid`,
        sql.in("kind", filter.kinds),
        ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
        ...(filter.publicationUuid === undefined ? [] : [sql`publication_uuid = ${filter.publicationUuid}::uuid`]),
        ...(filter.after === undefined ? [] : [sql`(updated_at, uuid) < (${filter.after.key}::timestamptz, ${filter.after.uuid}::uuid)`])
      ])
    return sql`WITH page AS (
        SELECT uuid, updated_at FROM (
          (SELECT uuid, updated_at FROM relations WHERE ${conditions("initiator_profile_uuid")} ORDER BY updated_at DESC, uuid DESC LIMIT ${filter.limit})
          UNION ALL
          (SELECT uuid, updated_at FROM relations WHERE ${conditions("recipient_profile_uuid")} ORDER BY updated_at DESC, uuid DESC LIMIT ${filter.limit})
        ) both_sides ORDER BY updated_at DESC, uuid DESC LIMIT ${filter.limit}
      )
      ${viewSelect(sql, me)} JOIN page ON page.uuid = r.uuid
      ORDER BY r.updated_at DESC, r.uuid DESC`.pipe(Effect.flatMap(decodeViewRows))
  })

/** The history of some relations, oldest first. */
export const historyRows = (uuids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<HistoryRow>, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0 ? Effect.succeed([]) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT relation_uuid, status, by_role, at FROM relation_history
      WHERE ${sql.in("relation_uuid", uuids)} ORDER BY relation_uuid, seq`.pipe(Effect.flatMap(decodeHistory)))

/** A relation row-locked until the end of the transaction (the transition engine's first step). */
export const lockRelation = (uuid: string): Effect.Effect<Option.Option<RelationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(relationColumns)} FROM relations r WHERE r.uuid = ${uuid} FOR UPDATE`.pipe(
      Effect.flatMap((rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(decodeRelation(rows[0])))
    ))

export interface NewRelation {
  readonly kind: typeof RelationKind.Type
  readonly status: string
  readonly initiatorProfileUuid: string
  readonly recipientProfileUuid: string
  readonly initiatorRole: typeof RelationRole.Type
  readonly publicationUuid: string | null
  readonly originRelationUuid: string | null
  readonly threadUuid: string | null
  readonly body: string
  readonly budget: string | null
  readonly deadline: string | null
  readonly references: ReadonlyArray<{ readonly kind: string; readonly uuid: string }>
}

/** Inserts a relation with its first history entry; returns its uuid. */
export const insertRelation = (
  relation: NewRelation,
  byRole: HistoryRow["by_role"]
): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const values: RelationColumns = {
        kind: relation.kind,
        status: relation.status,
        initiator_profile_uuid: relation.initiatorProfileUuid,
        recipient_profile_uuid: relation.recipientProfileUuid,
        initiator_role: relation.initiatorRole,
        publication_uuid: relation.publicationUuid,
        origin_relation_uuid: relation.originRelationUuid,
        thread_uuid: relation.threadUuid,
        body: relation.body,
        budget: relation.budget,
        deadline: relation.deadline,
        refs: JSON.stringify(relation.references)
      }
      const [row] = yield* Effect.flatMap(sql`INSERT INTO relations ${sql.insert(values)} RETURNING uuid`, decodeUuids)
      yield* appendHistory(row!.uuid, relation.status, byRole)
      return row!.uuid
    }))

export const appendHistory = (
  relationUuid: string,
  status: string,
  byRole: HistoryRow["by_role"]
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO relation_history (relation_uuid, status, by_role) VALUES (${relationUuid}, ${status}, ${byRole})`.pipe(Effect.asVoid))

/**
 * Moves a locked relation to `status` with its other column changes, `revision + 1`; returns the
 * new revision. The caller checked the state and revision on the locked row.
 */
export const updateRelation = (
  uuid: string,
  status: string,
  values: {
    readonly reason?: string | undefined
    readonly autoComplete?: "in_14_days" | "clear" | undefined
    readonly completed?: boolean | undefined
  }
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE relations SET status = ${status}, revision = revision + 1, updated_at = now()
      ${values.reason === undefined ? sql`` : sql`, reason = ${values.reason}`}
      ${values.autoComplete === "in_14_days" ? sql`, auto_complete_at = now() + interval '14 days'` : values.autoComplete === "clear" ? sql`, auto_complete_at = NULL` : sql``}
      ${values.completed === true ? sql`, completed_at = now()` : sql``}
      WHERE uuid = ${uuid} RETURNING revision`.pipe(Effect.flatMap(decodeRevisions), Effect.map((rows) => rows[0]!.revision)))

/** A new version of a deal's handed-over work; returns its version. */
export const insertResults = (
  relationUuid: string,
  body: string,
  references: ReadonlyArray<{ readonly kind: string; readonly uuid: string }>
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO relation_results (relation_uuid, version, body, refs)
      SELECT ${relationUuid}, coalesce(max(version), 0) + 1, ${body}, ${JSON.stringify(references)}::jsonb
      FROM relation_results WHERE relation_uuid = ${relationUuid}
      RETURNING version`.pipe(Effect.flatMap(decodeVersions), Effect.map((rows) => rows[0]!.version)))

/** The deal started from a relation, if any. */
export const dealOf = (originUuid: string): Effect.Effect<Option.Option<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT uuid FROM relations WHERE origin_relation_uuid = ${originUuid}`.pipe(
      Effect.flatMap(decodeUuids),
      Effect.map((rows) => Option.fromNullable(rows[0]?.uuid))
    ))

/** The caller's most recently changed relation of the kinds (`*.get` without relationUuid). */
export const latestRelationUuid = (me: string, kinds: ReadonlyArray<string>): Effect.Effect<Option.Option<string>, SqlError, SqlClient.SqlClient> =>
  Effect.map(relationPageRows(me, { kinds, limit: 1 }), (rows) => Option.fromNullable(rows[0]?.uuid))

/** Whether two profiles already have a relation (either direction). */
export const haveRelation = (a: string, b: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM relations WHERE (initiator_profile_uuid = ${a} AND recipient_profile_uuid = ${b})
      OR (initiator_profile_uuid = ${b} AND recipient_profile_uuid = ${a}) LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0)))

/** A live response of the responder to the task that is not withdrawn (one per task). */
export const hasOpenResponse = (publicationUuid: string, responder: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM relations WHERE kind = 'response' AND publication_uuid = ${publicationUuid}
      AND initiator_profile_uuid = ${responder} AND status <> 'withdrawn'`.pipe(Effect.map((rows) => rows.length > 0)))

/** An open job contact of the kind on the publication by the initiator (one per vacancy and candidate, resume and employer). */
export const hasOpenJobContact = (
  kind: "job_response" | "job_invitation",
  publicationUuid: string,
  initiator: string
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM relations WHERE kind = ${kind} AND publication_uuid = ${publicationUuid}
      AND initiator_profile_uuid = ${initiator} AND status IN ('applied', 'invited', 'accepted')`.pipe(Effect.map((rows) => rows.length > 0)))

/** The open relations of some profiles, row-locked, oldest first (closing them when a profile is deleted). */
export const lockOpenRelationsOf = (profileUuids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<RelationRow>, SqlError, SqlClient.SqlClient> =>
  profileUuids.length === 0 ? Effect.succeed([]) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(relationColumns)} FROM relations r
      WHERE (${sql.in("r.initiator_profile_uuid", profileUuids)} OR ${sql.in("r.recipient_profile_uuid", profileUuids)})
        AND r.status IN ('pending', 'shortlisted', 'active', 'results_submitted', 'applied', 'invited')
      ORDER BY r.created_at, r.uuid FOR UPDATE`.pipe(Effect.flatMap(decodeRelations)))

/** Deals whose results waited 14 days, row-locked and skipped when another worker holds them. */
export const lockDueDeals = (limit: number): Effect.Effect<ReadonlyArray<RelationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(relationColumns)} FROM relations r
      WHERE r.status = 'results_submitted' AND r.auto_complete_at <= now()
      ORDER BY r.auto_complete_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`.pipe(Effect.flatMap(decodeRelations)))

/** When `lockDueDeals` next has a deal (index `relations_auto_complete`); `undefined`: none. */
export const nextDueDealMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT min(auto_complete_at) AS at FROM relations WHERE status = 'results_submitted'`.pipe(
    Effect.flatMap(decodeMoments),
    Effect.map(([row]) => row?.at == null ? undefined : new Date(row.at))
  ))

/** The open responses to a task, row-locked (closing or deleting the task declines them). */
export const lockOpenResponsesTo = (publicationUuid: string): Effect.Effect<ReadonlyArray<RelationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(relationColumns)} FROM relations r
      WHERE r.publication_uuid = ${publicationUuid} AND r.kind = 'response' AND r.status IN ('pending', 'shortlisted')
      ORDER BY r.created_at, r.uuid FOR UPDATE`.pipe(Effect.flatMap(decodeRelations)))

/**
 * Whether a relation between `viewerUuid` and the file's owner `ownerUuid` references the file:
 * in the relation's own references or in any version of its handed-over results (deals). What
 * lets the other party read a file handed over to it; the pair is read by `relations_pair`.
 */
export const relationReferencesFile = (
  viewerUuid: string,
  ownerUuid: string,
  fileUuid: string
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const reference = JSON.stringify([{ kind: "file", uuid: fileUuid.toLowerCase() }])
    return sql`SELECT 1 FROM relations r
      WHERE ((r.initiator_profile_uuid = ${viewerUuid}::uuid AND r.recipient_profile_uuid = ${ownerUuid}::uuid)
          OR (r.initiator_profile_uuid = ${ownerUuid}::uuid AND r.recipient_profile_uuid = ${viewerUuid}::uuid))
        AND (r.refs @> ${reference}::jsonb
          OR EXISTS (SELECT 1 FROM relation_results x WHERE x.relation_uuid = r.uuid AND x.refs @> ${reference}::jsonb))
      LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0))
  })
