import type { SqlClient } from "@effect/sql"
import { Effect, Option, type Schema } from "effect"
import type { InvalidPublication, InvalidTask } from "../kernel/ApiError.js"
import { NotFound } from "../kernel/ApiError.js"
import type { Actor, SystemCaller } from "../kernel/Authentication.js"
import { ModerationApi, PublicApi } from "./PublicationsApi.js"
import { requireScope } from "../keys/KeyAccess.js"
import { type GroupImplementation, type GroupImplementations, implement, implementWith } from "../operations/Implementation.js"
import { type Kinds, kindList, kinds } from "./Kinds.js"
import { decideModeration, type Moderator, moderationQueue, moderatorOf } from "./Moderation.js"
import type { PublicationKind } from "./Publication.js"
import {
  type CommandInput,
  type ListInput,
  type OwnRecord,
  publicationCommandsOf,
  type SaveCommand,
  type SaveError,
  type SaveInput
} from "./Publications.js"
import { makePooledRead } from "../store/PooledReads.js"
import { catalogAnswerWith, getPublicationWith, listProfiles, listPublications } from "./PublicReads.js"

/**
 * The owner operations of a kind by their short names, over the kind's domain commands: typed in
 * the kind's data, and checked below against each kind's declared group.
 */
const ownerOperationsOf = <A, I, Invalid extends InvalidTask | InvalidPublication>(
  commands: ReturnType<typeof publicationCommandsOf<A, I, Invalid>>
) => ({
  list: ({ urlParams }: { readonly urlParams: ListInput }, actor: Actor) => commands.list(actor, urlParams),
  get: ({ urlParams }: { readonly urlParams: { readonly publicationUuid?: string | undefined } }, actor: Actor) =>
    commands.get(actor, urlParams.publicationUuid),
  save: ({ payload }: { readonly payload: SaveInput<A> }, actor: Actor) => commands.save(actor, payload),
  submit: ({ payload }: { readonly payload: CommandInput }, actor: Actor) => commands.submit(actor, payload),
  hide: ({ payload }: { readonly payload: CommandInput }, actor: Actor) => commands.hide(actor, payload),
  restore: ({ payload }: { readonly payload: CommandInput }, actor: Actor) => commands.restore(actor, payload),
  delete: ({ payload }: { readonly payload: CommandInput }, actor: Actor) => commands.delete(actor, payload),
  close: ({ payload }: { readonly payload: CommandInput }, actor: Actor) => commands.close(actor, payload)
})

type DataOf<K extends PublicationKind> = Schema.Schema.Type<Kinds[K]["data"]>
type EncodedOf<K extends PublicationKind> = Schema.Schema.Encoded<Kinds[K]["data"]>
type InvalidOf<K extends PublicationKind> = InstanceType<Kinds[K]["invalid"]>

/** A kind's operations under their operation ids (`tasks.save`...): only those its row declares. */
type OperationsOf<K extends PublicationKind> = {
  readonly [Op in Kinds[K]["operations"][number] as `${Kinds[K]["command"]}.${Op}`]: ReturnType<
    typeof ownerOperationsOf<DataOf<K>, EncodedOf<K>, InvalidOf<K>>
  >[Op]
}

/**
 * Every kind's domain commands and operations, built from its row. The one cast: a record keyed by
 * kind, and operation ids made from the command prefix, are beyond what TypeScript infers from
 * `Object.fromEntries`; `implemented` below then checks each kind's operations against its group.
 */
const byKind = Object.fromEntries(kindList.map((kind) => {
  // Over any kind: each kind's own data type is what the cast below restores.
  const commands = publicationCommandsOf<any, any, InvalidTask | InvalidPublication>(kind)
  const operations: Record<string, unknown> = ownerOperationsOf(commands)
  return [kind.kind, {
    save: commands.save,
    operations: Object.fromEntries(kind.operations.map((op) => [`${kind.command}.${op}`, operations[op]]))
  }]
})) as unknown as { readonly [K in PublicationKind]: { readonly save: SaveCommand<DataOf<K>, InvalidOf<K>>; readonly operations: OperationsOf<K> } }

/** Each kind's operations are exactly what its declared group needs: a missing or mistyped one is a type error. */
const implemented: {
  readonly [K in PublicationKind]: { readonly operations: GroupImplementations<Kinds[K]["group"], SqlClient.SqlClient> }
} = byKind

/** A save through `publications.create`: the kind's own save. */
const saveOfKind = <K extends PublicationKind>(
  actor: Actor,
  kind: K,
  input: SaveInput<DataOf<K>>
): Effect.Effect<{ readonly [P in K]: OwnRecord<DataOf<P>> }[K], SaveError<InvalidOf<K>>, SqlClient.SqlClient> =>
  byKind[kind].save(actor, input)

const PublicOperations = implementWith(
  PublicApi,
  Effect.map(makePooledRead, (read) => ({ getPublication: getPublicationWith(read), catalog: catalogAnswerWith(read) }))
)(({ catalog, getPublication }) => ({
  getCatalog: () => Effect.succeed(catalog),
  listPublications: ({ urlParams }) => listPublications(urlParams),
  getPublication: ({ path }) =>
    Effect.flatMap(getPublication(path.uuid), Option.match({
      onNone: () => Effect.fail(new NotFound({ message: "No such publication" })),
      onSome: Effect.succeed
    })),
  listProfiles: ({ urlParams }) => listProfiles(urlParams),
  "publications.create": ({ payload }, actor) =>
    Effect.gen(function*() {
      // The operation lists every kind's write scope; a key needs the one of this kind.
      yield* requireScope(actor, kinds[payload.kind].scopes.write)
      const { kind, ...input } = payload
      return yield* saveOfKind(actor, kind, input)
    })
}))

/** The moderator a caller acts as: the operator at the CLI is recorded as `cli`. */
const moderatorFor = (caller: Actor | SystemCaller) =>
  caller.via === "system" ? Effect.succeed<Moderator>({ accountUuid: null, name: caller.name }) : moderatorOf(caller)

export const ModerationOperations = implement(ModerationApi)({
  "moderation.queue": ({ urlParams }, caller) => Effect.flatMap(moderatorFor(caller), () => moderationQueue(urlParams)),
  "moderation.decide": ({ payload }, caller) => Effect.flatMap(moderatorFor(caller), (moderator) => decideModeration(moderator, payload))
})

/** Every publication group: the public reads, each kind's owner operations (the table's order) and moderation. */
export const PublicationsOperations: ReadonlyArray<GroupImplementation<SqlClient.SqlClient>> = [
  PublicOperations,
  ...kindList.map((kind): GroupImplementation<SqlClient.SqlClient> => ({
    group: kind.group.identifier,
    build: Effect.succeed(implemented[kind.kind].operations)
  })),
  ModerationOperations
]
