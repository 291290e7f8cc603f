import type { HttpApiGroup } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Deferred, Effect, FiberId, Option, Schema } from "effect"
import { NotFound } from "../api/ApiError.js"
import type { Actor, SystemCaller } from "../api/Authentication.js"
import {
  ArticlesApi,
  Catalog,
  JobsApi,
  LearningApi,
  ModerationApi,
  PortfolioApi,
  PublicApi,
  ResumesApi,
  ServicesApi,
  TasksApi
} from "../api/PublicationsApi.js"
import { requireScope } from "../keys/KeyAccess.js"
import { type AnyImplementation, EncodedJson, type GroupImplementation, implement, implementWith } from "../operations/Implementation.js"
import { publicationCommands } from "./Commands.js"
import { decideModeration, type Moderator, moderationQueue, moderatorOf } from "./Moderation.js"
import type { PublicationCommand } from "./PublicationKinds.js"
import { getCatalog, getPublication, listProfiles, listPublications } from "./PublicReads.js"

/** The write scope of each kind `publications.create` accepts. */
const createScope = {
  task: "tasks:write",
  service: "services:write",
  portfolio: "portfolio:write",
  article: "articles:write",
  vacancy: "jobs:write",
  resume: "resumes:write",
  training: "learning:write"
} as const

/**
 * The owner operations of one kind: the same domain commands for every kind, keyed by the kind's
 * operation ids. The group's declared types are literal per kind, so the record is built by name
 * and given the group's type once here.
 */
type OwnerServices =
  | Effect.Effect.Context<ReturnType<(typeof publicationCommands)["portfolio"]["save"]>>
  | Effect.Effect.Context<ReturnType<(typeof publicationCommands)["tasks"]["close"]>>

const ownerOperations = <Group extends HttpApiGroup.HttpApiGroup.Any>(group: Group, command: PublicationCommand): GroupImplementation<OwnerServices> => {
  const commands = publicationCommands[command] as unknown as (typeof publicationCommands)["portfolio"]
  type Input = { readonly urlParams: never; readonly payload: never }
  const record = {
    [`${command}.list`]: ({ urlParams }: Input, actor: Actor) => commands.list(actor, urlParams),
    [`${command}.get`]: ({ urlParams }: { readonly urlParams: { readonly publicationUuid?: string | undefined } }, actor: Actor) =>
      commands.get(actor, urlParams.publicationUuid),
    [`${command}.save`]: ({ payload }: Input, actor: Actor) => commands.save(actor, payload),
    [`${command}.submit`]: ({ payload }: Input, actor: Actor) => commands.submit(actor, payload),
    [`${command}.hide`]: ({ payload }: Input, actor: Actor) => commands.hide(actor, payload),
    [`${command}.restore`]: ({ payload }: Input, actor: Actor) => commands.restore(actor, payload),
    [`${command}.delete`]: ({ payload }: Input, actor: Actor) => commands.delete(actor, payload)
  }
  return { group: group.identifier, build: Effect.succeed(record as unknown as Readonly<Record<string, AnyImplementation>>) }
}

/**
 * One build for every request that arrives while it runs: the catalog is one large public document
 * (26 MiB of JSON at 10k publications), so concurrent readers share the rows, the encoding and the
 * string instead of each holding a copy. Nothing is kept after the build: the next request reads
 * afresh, so an answer is never older than the requests it serves. A reader that leaves does not
 * stop the build for the others.
 */
const sharedBuild = <A, E>(build: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  let current: Deferred.Deferred<A, E> | undefined
  return Effect.suspend(() => {
    if (current !== undefined) return Deferred.await(current)
    const started = Deferred.unsafeMake<A, E>(FiberId.none)
    current = started
    return build.pipe(
      Effect.exit,
      Effect.flatMap((exit) => Deferred.done(started, exit)),
      Effect.ensuring(Effect.sync(() => {
        current = undefined
      })),
      Effect.forkDaemon,
      Effect.zipRight(Deferred.await(started))
    )
  })
}

const PublicOperations = implementWith(PublicApi, Effect.context<SqlClient.SqlClient>())((context) => {
  // The JSON the transport would send for the declared schema, built once per wave of readers.
  const catalogJson = sharedBuild(
    getCatalog.pipe(
      Effect.flatMap((catalog) => Effect.orDie(Schema.encode(Catalog)(catalog))),
      Effect.map((encoded) => new EncodedJson(JSON.stringify(encoded))),
      Effect.provide(context)
    )
  )
  return {
    getCatalog: () => catalogJson,
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
        yield* requireScope(actor, createScope[payload.kind])
        switch (payload.kind) {
          case "task": {
            const { kind: _, ...input } = payload
            return yield* publicationCommands.tasks.save(actor, input)
          }
          case "service": {
            const { kind: _, ...input } = payload
            return yield* publicationCommands.services.save(actor, input)
          }
          case "portfolio": {
            const { kind: _, ...input } = payload
            return yield* publicationCommands.portfolio.save(actor, input)
          }
          case "article": {
            const { kind: _, ...input } = payload
            return yield* publicationCommands.articles.save(actor, input)
          }
          case "vacancy": {
            const { kind: _, ...input } = payload
            return yield* publicationCommands.jobs.save(actor, input)
          }
          case "resume": {
            const { kind: _, ...input } = payload
            return yield* publicationCommands.resumes.save(actor, input)
          }
          case "training": {
            const { kind: _, ...input } = payload
            return yield* publicationCommands.learning.save(actor, input)
          }
        }
      })
  }
})

/** The moderator a caller acts as: the operator at the CLI is recorded as `cli`. */
const moderatorFor = (caller: Actor | SystemCaller) =>
  caller.via === "system" ? Effect.succeed<Moderator>({ accountUuid: null, name: caller.name }) : moderatorOf(caller)

export const ModerationOperations = implement(ModerationApi)({
  "moderation.queue": ({ urlParams }, caller) => Effect.flatMap(moderatorFor(caller), () => moderationQueue(urlParams)),
  "moderation.decide": ({ payload }, caller) => Effect.flatMap(moderatorFor(caller), (moderator) => decideModeration(moderator, payload))
})

const TasksOperations: GroupImplementation<OwnerServices> = {
  group: "tasks",
  build: Effect.map(ownerOperations(TasksApi, "tasks").build, (owner) => ({
    ...owner,
    "tasks.close": (({ payload }: { readonly payload: Parameters<typeof publicationCommands.tasks.close>[1] }, actor: Actor) =>
      publicationCommands.tasks.close(actor, payload)) as AnyImplementation
  }))
}

/** Every publication group: the seven kinds' owner operations, the public reads and moderation. */
export const PublicationsOperations = [
  PublicOperations,
  TasksOperations,
  ownerOperations(PortfolioApi, "portfolio"),
  ownerOperations(ServicesApi, "services"),
  ownerOperations(ArticlesApi, "articles"),
  ownerOperations(JobsApi, "jobs"),
  ownerOperations(ResumesApi, "resumes"),
  ownerOperations(LearningApi, "learning"),
  ModerationOperations
] as const
