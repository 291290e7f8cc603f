import { BirzhaApi, Catalog, CurrentActor, type InvalidPublication, type InvalidTask, NotFound, requireScope } from "@birzha/domain"
import {
  decideModeration,
  getCatalog,
  getPublication,
  listProfiles,
  listPublications,
  moderationQueue,
  moderatorOf,
  publicationCommands,
  type publicationCommandsOf
} from "@birzha/domain/server"
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, FiberId, Option, Schema } from "effect"
import { using } from "./Storage.js"

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

type Commands<A, I, Invalid extends InvalidTask | InvalidPublication> = ReturnType<typeof publicationCommandsOf<A, I, Invalid>>

/**
 * The handlers of one kind's group: each operation is the same domain command with the caller.
 * Spelled out per kind (below) because the builder types handlers by literal operation id.
 */
const ownerHandlers = <A, I, Invalid extends InvalidTask | InvalidPublication>(commands: Commands<A, I, Invalid>, context: ReturnType<typeof using<SqlClient.SqlClient>>) => ({
  list: ({ urlParams }: { readonly urlParams: { readonly cursor?: string | undefined; readonly limit?: number | undefined } }) =>
    Effect.flatMap(CurrentActor, (actor) => context(commands.list(actor, urlParams))),
  get: ({ urlParams }: { readonly urlParams: { readonly publicationUuid?: string | undefined } }) =>
    Effect.flatMap(CurrentActor, (actor) => context(commands.get(actor, urlParams.publicationUuid))),
  save: ({ payload }: { readonly payload: Parameters<Commands<A, I, Invalid>["save"]>[1] }) =>
    Effect.flatMap(CurrentActor, (actor) => context(commands.save(actor, payload))),
  submit: ({ payload }: { readonly payload: Parameters<Commands<A, I, Invalid>["submit"]>[1] }) =>
    Effect.flatMap(CurrentActor, (actor) => context(commands.submit(actor, payload))),
  hide: ({ payload }: { readonly payload: Parameters<Commands<A, I, Invalid>["hide"]>[1] }) =>
    Effect.flatMap(CurrentActor, (actor) => context(commands.hide(actor, payload))),
  restore: ({ payload }: { readonly payload: Parameters<Commands<A, I, Invalid>["restore"]>[1] }) =>
    Effect.flatMap(CurrentActor, (actor) => context(commands.restore(actor, payload))),
  delete: ({ payload }: { readonly payload: Parameters<Commands<A, I, Invalid>["delete"]>[1] }) =>
    Effect.flatMap(CurrentActor, (actor) => context(commands.delete(actor, payload)))
})

const withSqlContext = Effect.map(Effect.context<SqlClient.SqlClient>(), using)

export const TasksHandlers = HttpApiBuilder.group(BirzhaApi, "tasks", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    const h = ownerHandlers(publicationCommands.tasks, context)
    return handlers.handle("tasks.list", h.list).handle("tasks.get", h.get).handle("tasks.save", h.save)
      .handle("tasks.submit", h.submit).handle("tasks.hide", h.hide).handle("tasks.restore", h.restore)
      .handle("tasks.delete", h.delete)
      .handle("tasks.close", ({ payload }) =>
        Effect.flatMap(CurrentActor, (actor) => context(publicationCommands.tasks.close(actor, payload))))
  }))

export const PortfolioHandlers = HttpApiBuilder.group(BirzhaApi, "portfolio", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    const h = ownerHandlers(publicationCommands.portfolio, context)
    return handlers.handle("portfolio.list", h.list).handle("portfolio.get", h.get).handle("portfolio.save", h.save)
      .handle("portfolio.submit", h.submit).handle("portfolio.hide", h.hide).handle("portfolio.restore", h.restore)
      .handle("portfolio.delete", h.delete)
  }))

export const ServicesHandlers = HttpApiBuilder.group(BirzhaApi, "services", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    const h = ownerHandlers(publicationCommands.services, context)
    return handlers.handle("services.list", h.list).handle("services.get", h.get).handle("services.save", h.save)
      .handle("services.submit", h.submit).handle("services.hide", h.hide).handle("services.restore", h.restore)
      .handle("services.delete", h.delete)
  }))

export const ArticlesHandlers = HttpApiBuilder.group(BirzhaApi, "articles", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    const h = ownerHandlers(publicationCommands.articles, context)
    return handlers.handle("articles.list", h.list).handle("articles.get", h.get).handle("articles.save", h.save)
      .handle("articles.submit", h.submit).handle("articles.hide", h.hide).handle("articles.restore", h.restore)
      .handle("articles.delete", h.delete)
  }))

export const JobsHandlers = HttpApiBuilder.group(BirzhaApi, "jobs", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    const h = ownerHandlers(publicationCommands.jobs, context)
    return handlers.handle("jobs.list", h.list).handle("jobs.get", h.get).handle("jobs.save", h.save)
      .handle("jobs.submit", h.submit).handle("jobs.hide", h.hide).handle("jobs.restore", h.restore)
      .handle("jobs.delete", h.delete)
  }))

export const ResumesHandlers = HttpApiBuilder.group(BirzhaApi, "resumes", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    const h = ownerHandlers(publicationCommands.resumes, context)
    return handlers.handle("resumes.list", h.list).handle("resumes.get", h.get).handle("resumes.save", h.save)
      .handle("resumes.submit", h.submit).handle("resumes.hide", h.hide).handle("resumes.restore", h.restore)
      .handle("resumes.delete", h.delete)
  }))

export const LearningHandlers = HttpApiBuilder.group(BirzhaApi, "learning", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    const h = ownerHandlers(publicationCommands.learning, context)
    return handlers.handle("learning.list", h.list).handle("learning.get", h.get).handle("learning.save", h.save)
      .handle("learning.submit", h.submit).handle("learning.hide", h.hide).handle("learning.restore", h.restore)
      .handle("learning.delete", h.delete)
  }))

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

export const PublicHandlers = HttpApiBuilder.group(BirzhaApi, "publications", (handlers) =>
  Effect.map(withSqlContext, (context) => {
    // The JSON the framework would send for the declared schema, built once per wave of readers.
    const catalogJson = sharedBuild(
      context(getCatalog).pipe(Effect.flatMap(Schema.encode(Catalog)), Effect.orDie, Effect.map((encoded) => JSON.stringify(encoded)))
    )
    return handlers
      .handle("getCatalog", () => Effect.map(catalogJson, (body) => HttpServerResponse.text(body, { contentType: "application/json" })))
      .handle("listPublications", ({ urlParams }) => context(listPublications(urlParams)))
      .handle("getPublication", ({ path }) =>
        Effect.flatMap(context(getPublication(path.uuid)), Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such publication" })),
          onSome: Effect.succeed
        })))
      .handle("listProfiles", ({ urlParams }) => context(listProfiles(urlParams)))
      .handle("publications.create", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          // The operation lists every kind's write scope; a key needs the one of this kind.
          yield* requireScope(actor, createScope[payload.kind])
          switch (payload.kind) {
            case "task": {
              const { kind: _, ...input } = payload
              return yield* context(publicationCommands.tasks.save(actor, input))
            }
            case "service": {
              const { kind: _, ...input } = payload
              return yield* context(publicationCommands.services.save(actor, input))
            }
            case "portfolio": {
              const { kind: _, ...input } = payload
              return yield* context(publicationCommands.portfolio.save(actor, input))
            }
            case "article": {
              const { kind: _, ...input } = payload
              return yield* context(publicationCommands.articles.save(actor, input))
            }
            case "vacancy": {
              const { kind: _, ...input } = payload
              return yield* context(publicationCommands.jobs.save(actor, input))
            }
            case "resume": {
              const { kind: _, ...input } = payload
              return yield* context(publicationCommands.resumes.save(actor, input))
            }
            case "training": {
              const { kind: _, ...input } = payload
              return yield* context(publicationCommands.learning.save(actor, input))
            }
          }
        }))
  }))

export const ModerationHandlers = HttpApiBuilder.group(BirzhaApi, "moderation", (handlers) =>
  Effect.map(withSqlContext, (context) =>
    handlers
      .handle("moderation.queue", ({ urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          context(Effect.flatMap(moderatorOf(actor), () => moderationQueue(urlParams)))))
      .handle("moderation.decide", ({ payload }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          context(Effect.flatMap(moderatorOf(actor), (moderator) => decideModeration(moderator, payload)))))
  ))
