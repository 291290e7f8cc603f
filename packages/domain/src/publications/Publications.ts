import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import {
  InvalidPublication,
  InvalidRequest,
  InvalidState,
  InvalidTask,
  NotFound,
  type RequestConflict,
  type RevisionConflict,
  stateRefusal
} from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import type { EventType } from "../events/EventType.js"
import { unusableFiles } from "../files/Files.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { declineResponsesTo } from "../relations/Relations.js"
import { appendEvent } from "../store/Outbox.js"
import { requireRevision } from "../store/Revision.js"
import { newRoutingKey } from "../store/RoutingKey.js"
import { ownPublication, type PublicationKind, type PublicationStatus } from "./Publication.js"
import {
  insertPublication,
  listOwnPublications,
  lockOwnPublication,
  type PublicationChange,
  type PublicationRow,
  updatePublication
} from "./PublicationRepository.js"

/** The owner's full view of a publication of data type A; operation outputs narrow it (OwnTask). */
export interface OwnRecord<A> {
  readonly uuid: string
  readonly id: string
  readonly kind: PublicationKind
  readonly revision: number
  readonly status: PublicationStatus
  readonly draft: A
  readonly approved: A | null
  readonly hidden: boolean
  readonly closed: boolean
  readonly reason: string
  readonly createdAt: Date
  readonly updatedAt: Date
}

export { type PublicationRow, rowColumns } from "./PublicationRepository.js"

export interface ListInput {
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export interface SaveInput<A> {
  readonly requestUuid: string
  readonly data: A
  readonly publicationUuid?: string | undefined
  readonly expectedRevision?: number | undefined
  /** Tasks: save and submit in one command (the spec's "when submit is true"). */
  readonly submit?: boolean | undefined
}

export interface CommandInput {
  readonly requestUuid: string
  readonly publicationUuid: string
  readonly expectedRevision: number
}

type CommandError = NotFound | RevisionConflict | RequestConflict | SqlError

const notFound = () => new NotFound({ message: "No such publication of the acting profile" })

/** What the owner commands of one kind need of its row in `Kinds.ts`. */
export interface KindCommandsOf<A, I, Invalid extends InvalidTask | InvalidPublication> {
  readonly kind: PublicationKind
  /** Operation ids `<command>.<op>`: the idempotency records' keys. */
  readonly command: string
  readonly data: Schema.Schema<A, I>
  /** The kind's 400 for data the schema alone cannot judge (spec: `invalid_task` for tasks). */
  readonly invalid: new(props: { readonly message: string }) => Invalid
  /**
   * The 400 for a malformed save request (a revision that does not fit) is `invalid` too, not
   * `invalid_request` (tasks answer `invalid_task` for every save failure: spec).
   */
  readonly invalidCoversInput: boolean
  /** The event `close` records; `null` for a kind that does not close. */
  readonly closedEvent: EventType | null
  /** The uploaded files a draft refers to, checked to be ready files of the profile. */
  readonly references?: ((data: A) => { readonly assets: ReadonlyArray<string>; readonly files: ReadonlyArray<string> }) | undefined
  /** Why a draft cannot be submitted yet, if it cannot. */
  readonly unsubmittable?: ((data: A) => string | undefined) | undefined
}

/** What a save of a kind whose data judgments fail with `Invalid` can fail with. */
export type SaveError<Invalid> = CommandError | InvalidState | Invalid | InvalidRequest

/** A kind's save of a draft of data type A. */
export type SaveCommand<A, Invalid> = (actor: Actor, input: SaveInput<A>) => Effect.Effect<OwnRecord<A>, SaveError<Invalid>, SqlClient.SqlClient>

/** The statuses a publication is submitted from (a saved draft, or one the moderator returned). */
const submittableStatuses: ReadonlyArray<string> = ["draft", "returned"]
/** The statuses whose draft may be saved again: all but rejected. */
const editableStatuses: ReadonlyArray<string> = ["draft", "pending", "approved", "returned"]

/**
 * The owner commands of one publication kind. Data arrives decoded by the operation's schema;
 * it is stored encoded, and read back through the same schema.
 */
export const publicationCommandsOf = <A, I, Invalid extends InvalidTask | InvalidPublication>(
  kindRow: KindCommandsOf<A, I, Invalid>
) => {
  const { data, kind } = kindRow
  const operationPrefix = kindRow.command
  const invalid = (message: string): Invalid => new kindRow.invalid({ message })
  const invalidSave = (message: string): Invalid | InvalidRequest =>
    kindRow.invalidCoversInput ? invalid(message) : new InvalidRequest({ message })
  const own = ownPublication(data, `Own_${kind}`)
  const decodeData = Schema.decodeUnknown(data)
  const encodeData = Schema.encode(data)

  const view = (row: PublicationRow): Effect.Effect<OwnRecord<A>> =>
    Effect.gen(function*() {
      const draft = yield* Effect.orDie(decodeData(row.draft))
      const approved = row.approved === null ? null : yield* Effect.orDie(decodeData(row.approved))
      return {
        uuid: row.uuid,
        id: row.id,
        kind: row.kind,
        revision: row.revision,
        status: row.status,
        draft,
        approved,
        hidden: row.hidden,
        closed: row.closed,
        reason: row.reason,
        createdAt: row.created_at,
        updatedAt: row.updated_at
      }
    })

  const lockOwn = (actor: Actor, uuid: string) =>
    Effect.flatMap(
      lockOwnPublication(actor.profileUuid, kind, uuid),
      Option.match({ onNone: () => Effect.fail(notFound()), onSome: Effect.succeed })
    )

  /** Applies a change at the expected revision and records its event; returns the new row. */
  const change = (
    actor: Actor,
    row: PublicationRow,
    values: PublicationChange,
    event: EventType,
    status: string
  ) =>
    Effect.gen(function*() {
      const updated = yield* updatePublication(row.uuid, values)
      yield* appendEvent({
        type: event,
        aggregate: { kind: "publication", uuid: row.uuid, revision: updated.revision },
        data: { objectUuid: row.uuid, status },
        context: { profileUuid: actor.profileUuid, kind }
      })
      return updated
    })

  const checkFiles = (actor: Actor, value: A) =>
    Effect.gen(function*() {
      if (kindRow.references === undefined) return
      const refs = kindRow.references(value)
      const badAssets = yield* unusableFiles(actor.profileUuid, "publication_asset", refs.assets)
      const badFiles = yield* unusableFiles(actor.profileUuid, "publication_file", refs.files)
      const bad = [...badAssets, ...badFiles]
      if (bad.length > 0) {
        return yield* Effect.fail(invalid(
          `not ready files of this profile for this use: ${bad.join(", ")}; upload with files.prepare and files.complete first`
        ))
      }
    })

  const submitChecks = (value: A): Effect.Effect<void, Invalid> => {
    const problem = kindRow.unsubmittable?.(value)
    return problem === undefined ? Effect.void : Effect.fail(invalid(problem))
  }

  const submittable = (row: PublicationRow): Effect.Effect<void, InvalidState> =>
    submittableStatuses.includes(row.status)
      ? Effect.void
      : Effect.fail(stateRefusal({
        resource: kind,
        uuid: row.uuid,
        state: row.status,
        allowed: submittableStatuses,
        operation: `${operationPrefix}.submit`,
        message: row.status === "pending"
          ? "the publication is already waiting for moderation"
          : row.status === "rejected"
          ? "a rejected publication cannot be submitted again"
          : "nothing new to submit: save a changed draft first"
      }))

  const submitRow = (actor: Actor, row: PublicationRow) =>
    Effect.gen(function*() {
      yield* submittable(row)
      yield* submitChecks(yield* Effect.orDie(decodeData(row.draft)))
      return yield* change(actor, row, { status: "pending", submitted_at: new Date().toISOString(), reason: "" }, "publication.submitted", "pending")
    })

  const command = <E>(
    actor: Actor,
    operation: string,
    input: CommandInput,
    body: (row: PublicationRow) => Effect.Effect<PublicationRow, E | SqlError, SqlClient.SqlClient>
  ): Effect.Effect<OwnRecord<A>, CommandError | E, SqlClient.SqlClient> =>
    idempotent(
      { scope: actor.profileUuid, operationId: `${operationPrefix}.${operation}`, requestUuid: input.requestUuid, request: input, result: own },
      Effect.gen(function*() {
        const row = yield* lockOwn(actor, input.publicationUuid)
        yield* requireRevision(kind, row.revision, input.expectedRevision, row.uuid)
        return yield* view(yield* body(row))
      })
    )

  /**
   * Saves the whole draft: creates the publication without `publicationUuid`, else replaces the
   * draft at `expectedRevision`. Saving never publishes: an approved snapshot stays public until a
   * moderator approves the new draft.
   */
  const save: SaveCommand<A, Invalid> = (actor, input) =>
    idempotent(
      { scope: actor.profileUuid, operationId: `${operationPrefix}.save`, requestUuid: input.requestUuid, request: input, result: own },
      Effect.gen(function*() {
        const encoded = yield* encodeData(input.data).pipe(Effect.mapError((error) => invalid(error.message)))
        yield* checkFiles(actor, input.data)
        const draft = JSON.stringify(encoded)
        let row: PublicationRow
        if (input.publicationUuid === undefined) {
          if (input.expectedRevision !== undefined && input.expectedRevision !== 0) {
            return yield* Effect.fail(invalidSave("a new publication has expectedRevision 0 (or none); pass publicationUuid to edit"))
          }
          const created = yield* insertPublication({ id: newRoutingKey(), kind, ownerProfileUuid: actor.profileUuid, draft })
          yield* appendEvent({
            type: "publication.draft_saved",
            aggregate: { kind: "publication", uuid: created.uuid, revision: created.revision },
            data: { objectUuid: created.uuid, status: "draft" },
            context: { profileUuid: actor.profileUuid, kind }
          })
          row = created
        } else {
          if (input.expectedRevision === undefined) {
            return yield* Effect.fail(invalidSave("expectedRevision is required to edit a publication: read it first"))
          }
          const current = yield* lockOwn(actor, input.publicationUuid)
          yield* requireRevision(kind, current.revision, input.expectedRevision, current.uuid)
          if (current.status === "rejected") {
            return yield* stateRefusal({
              resource: kind,
              uuid: current.uuid,
              state: current.status,
              allowed: editableStatuses,
              operation: `${operationPrefix}.save`,
              message: "a rejected publication cannot be edited; create a new one"
            })
          }
          row = yield* change(actor, current, { draft, status: "draft" }, "publication.draft_saved", "draft")
        }
        if (input.submit === true) row = yield* submitRow(actor, row)
        return yield* view(row)
      })
    )

  return {
    own,

    list: (actor: Actor, input: ListInput) =>
      Effect.gen(function*() {
        const limit = input.limit ?? 20
        const after = yield* decodeCursor(input.cursor)
        const rows = yield* listOwnPublications(actor.profileUuid, kind, { after, limit: limit + 1 })
        const page = pageOf(rows, limit, (row) => ({ key: row.updated_key, uuid: row.uuid }), (row) => row)
        return { ...page, items: yield* Effect.forEach(page.items, view) }
      }),

    /** One publication by uuid, or the most recently changed one of this kind when no uuid is given. */
    get: (actor: Actor, publicationUuid: string | undefined) =>
      Effect.gen(function*() {
        const [row] = yield* listOwnPublications(actor.profileUuid, kind, { after: Option.none(), limit: 1, uuid: publicationUuid })
        return row === undefined ? yield* notFound() : yield* view(row)
      }),

    /** Saves the whole draft (above). */
    save,

    submit: (actor: Actor, input: CommandInput) => command(actor, "submit", input, (row) => submitRow(actor, row)),

    hide: (actor: Actor, input: CommandInput) =>
      command(actor, "hide", input, (row) =>
        row.hidden ? Effect.succeed(row) : change(actor, row, { hidden: true }, "publication.hidden", "hidden")),

    restore: (actor: Actor, input: CommandInput) =>
      command(actor, "restore", input, (row) =>
        row.hidden ? change(actor, row, { hidden: false }, "publication.restored", "restored") : Effect.succeed(row)),

    delete: (actor: Actor, input: CommandInput) =>
      command(actor, "delete", input, (row) =>
        change(actor, row, { deleted_at: new Date().toISOString() }, "publication.deleted", "deleted").pipe(
          Effect.tap(() => declineResponsesTo(row.uuid))
        )),

    close: (actor: Actor, input: CommandInput) =>
      command(actor, "close", input, (row) =>
        row.closed
          ? Effect.succeed(row)
          : kindRow.closedEvent === null
          ? Effect.dieMessage(`publications of kind ${kind} do not close`)
          : change(actor, row, { closed: true }, kindRow.closedEvent, "closed").pipe(Effect.tap(() => declineResponsesTo(row.uuid))))
  }
}
