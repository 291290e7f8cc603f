import { type BirzhaClient, NotFound } from "@birzha/client"
import { Effect, Either } from "effect"
import {
  type MediaEditorCommand,
  mediaEditorKinds,
  mediaEditorPaths,
  type MessageItem,
  type ApprovalView,
  type EventLogItem,
  type KeyView,
  type ModerationView,
  type OwnMediaItem,
  type OwnLifecycle,
  type OwnMediaView,
  type OwnProfileEdit,
  type OwnServiceView,
  type OwnTaskView,
  type OwnVacancyView,
  type PageData,
  type RelationItem,
  type ThreadItem
} from "../model.js"
import type { Refusal, ServerApi } from "./api.js"
import { socialPage } from "./social.js"
import { agentsPage } from "./agents.js"
import { loadLearning } from "./learning.js"
import { loadAuthoring } from "./authoring.js"
import { loadTeaching } from "./teaching.js"
import { loadAdmin } from "./admin.js"
import { loadCourseAdmin } from "./courseAdmin.js"
import { loadWebhooks } from "./webhooks.js"
import { loadRules } from "./rules.js"
import { type Json, plain } from "../components/json.js"

/** The task categories tasks.save accepts (TaskData in @birzha/domain), in its order. */
export const taskCategories = [
  "Сайты", "Картинки и видео", "Тексты и контент-редакторы", "Боты", "Автоматизация",
  "Аналитика", "Логотипы и графика", "ИИ-агенты", "Серверы и инфраструктура", "Другое"
] as const

const ownTaskOf = (task: unknown): OwnTaskView => {
  const t = plain(task)
  const d = t["draft"] as Json
  return {
    uuid: t["uuid"], revision: t["revision"], status: t["status"], reason: t["reason"] ?? "", updatedAt: t["updatedAt"],
    title: d["title"], category: d["category"], description: d["description"], budget: d["budget"], deadline: d["deadline"],
    files: d["files"] ?? []
  }
}

const ownProfileOf = (profile: unknown): OwnProfileEdit => {
  const p = plain(profile)
  return {
    uuid: p["uuid"], revision: p["revision"], name: p["name"], type: p["type"], isPublic: p["isPublic"], showContacts: p["showContacts"],
    ...(p["avatarUrl"] === undefined ? {} : { avatarUrl: p["avatarUrl"] }),
    about: p["about"], categories: p["categories"], contacts: p["contacts"], networks: p["networks"], skills: p["skills"],
    structuredContacts: p["structuredContacts"],
    ...(typeof p["customerAlias"] === "string" ? { customerAlias: p["customerAlias"] } : {})
  }
}

/** What an owner's view of a media kind, service or vacancy says of its lifecycle (ownPublication in @birzha/domain). */
const lifecycleOf = (v: Json) => ({
  ...(v["approved"] === undefined ? {} : { live: v["approved"] !== null && v["hidden"] !== true }),
  ...(typeof v["hidden"] === "boolean" ? { hidden: v["hidden"] } : {}),
  ...(typeof v["closed"] === "boolean" ? { closed: v["closed"] } : {})
})

const ownMediaItemOf = (command: MediaEditorCommand, publication: unknown): OwnMediaItem => {
  const v = plain(publication)
  return {
    kind: mediaEditorKinds[command], uuid: v["uuid"], revision: v["revision"], status: v["status"], reason: v["reason"] ?? "",
    updatedAt: v["updatedAt"], title: String((v["draft"] as Json)["title"] ?? ""), ...lifecycleOf(v)
  }
}

const ownMediaOf = (command: MediaEditorCommand, publication: unknown): OwnMediaView =>
  ({ ...ownMediaItemOf(command, publication), draft: plain(publication)["draft"] as Json })

const mediaCommands = Object.keys(mediaEditorKinds) as ReadonlyArray<MediaEditorCommand>

/** One kind's owner read, its input and answer the same for every media kind (Kinds.ts in @birzha/domain). */
const ownerRead = (client: BirzhaClient, command: MediaEditorCommand, operation: "get" | "list") =>
  client[`${command}.${operation}`] as unknown as (input: { readonly urlParams: Json }) => Effect.Effect<Json, unknown>

const ownVacancyOf = (publication: unknown, whole = false): OwnVacancyView => {
  const v = plain(publication)
  const d = v["draft"] as Json
  const details = (d["vacancy"] ?? {}) as Json
  const optional = (key: string) => details[key] === undefined ? {} : { [key]: details[key] }
  return {
    uuid: v["uuid"], revision: v["revision"], status: v["status"], reason: v["reason"] ?? "", updatedAt: v["updatedAt"],
    title: d["title"], category: d["category"] ?? "", description: d["description"] ?? "", currency: details["currency"] ?? "RUB",
    ...optional("company"), ...optional("salaryFrom"), ...optional("salaryTo"), ...optional("employment"), ...optional("workplace"),
    ...optional("location"), ...optional("experience"), ...lifecycleOf(v),
    ...(whole ? { draft: d } : {})
  }
}

const ownServiceOf = (publication: unknown, whole = false): OwnServiceView => {
  const v = plain(publication)
  const d = v["draft"] as Json
  const details = (d["service"] ?? {}) as Json
  return {
    uuid: v["uuid"], revision: v["revision"], status: v["status"], reason: v["reason"] ?? "", updatedAt: v["updatedAt"],
    title: d["title"], category: d["category"] ?? "", description: d["description"] ?? "",
    currency: details["currency"] ?? "RUB", priceUnit: details["priceUnit"] ?? "fixed",
    ...(details["price"] === undefined ? {} : { price: details["price"] }),
    ...(details["deliveryDays"] === undefined ? {} : { deliveryDays: details["deliveryDays"] }),
    ...lifecycleOf(v),
    ...(whole ? { draft: d } : {})
  }
}

const moderationOf = (item: unknown): ModerationView => {
  const m = plain(item)
  const draft = (m["draft"] ?? {}) as Json
  return {
    uuid: m["uuid"], kind: m["kind"], title: String(draft["title"] ?? ""), description: String(draft["description"] ?? ""),
    ownerName: m["ownerName"], revision: m["revision"], submittedAt: m["submittedAt"],
    pictures: (Array.isArray(draft["files"]) ? draft["files"] as ReadonlyArray<Json> : [])
      .filter((file) => String(file["url"]).startsWith("data:image/"))
      .map((file) => ({ src: String(file["url"]), caption: String(file["name"]) }))
  }
}

export const relationOf = (relation: unknown): RelationItem => {
  const r = plain(relation)
  const results = r["results"] as Json | undefined
  const review = r["review"] as Json | undefined
  return {
    uuid: r["uuid"], kind: r["kind"], status: r["status"], revision: r["revision"], role: r["role"],
    publication: r["publication"] === null ? null : { uuid: r["publication"].uuid, title: r["publication"].title },
    counterpart: {
      profileUuid: r["counterpart"].profileUuid, name: r["counterpart"].name,
      ...(typeof r["counterpart"].customerAlias === "string" ? { customerAlias: r["counterpart"].customerAlias } : {})
    },
    body: r["body"],
    ...(r["budget"] === undefined ? {} : { budget: r["budget"] }),
    ...(r["deadline"] === undefined ? {} : { deadline: r["deadline"] }),
    ...(r["threadUuid"] === undefined ? {} : { threadUuid: r["threadUuid"] }),
    ...(results === undefined ? {} : {
      results: {
        version: results["version"], body: results["body"],
        files: (results["references"] as ReadonlyArray<Json>).filter((ref) => ref["kind"] === "file").map((ref) => ref["uuid"] as string)
      }
    }),
    ...(review === undefined ? {} : {
      review: {
        canReview: review["canReview"], windowEndsAt: review["windowEndsAt"],
        ...(review["ownReviewUuid"] === undefined ? {} : { ownReviewUuid: review["ownReviewUuid"] })
      }
    }),
    ...(r["autoCompleteAt"] === undefined ? {} : { autoCompleteAt: r["autoCompleteAt"] }),
    allowedActions: r["allowedActions"], updatedAt: r["updatedAt"]
  }
}

const threadOf = (thread: unknown, me: string): ThreadItem => {
  const t = plain(thread)
  const other = (t["participants"] as ReadonlyArray<Json>).find((p) => p["profileUuid"] !== me) ?? t["participants"][0]
  const last = t["lastMessage"] as Json | undefined
  return {
    uuid: t["uuid"], with: other?.["name"] ?? "", unread: t["unreadCount"],
    ...(last === undefined ? {} : { lastMessage: last["hidden"] ? "" : last["body"] }),
    ...(t["lastMessageAt"] === undefined ? {} : { lastMessageAt: t["lastMessageAt"] })
  }
}

export const messageOf = (message: unknown, me: string): MessageItem => {
  const m = plain(message)
  return { uuid: m["uuid"], mine: m["authorProfileUuid"] === me, body: m["body"], createdAt: m["createdAt"] }
}

/** What keys.create and keys.update accept (keyLimits in packages/domain/src/keys/Key.ts). */
const keyLimits = { nameMaxLength: 100, lifetimeDaysMax: 365, lifetimeDaysDefault: 90 } as const

const keyOf = (key: unknown): KeyView => {
  const k = plain(key)
  return {
    uuid: k["uuid"], revision: k["revision"], name: k["name"], kind: k["kind"], status: k["status"],
    profileName: k["profile"]?.["name"] ?? "", scopes: k["scopes"], httpEnabled: k["httpEnabled"], mcpEnabled: k["mcpEnabled"],
    ...(k["secretHint"] === undefined ? {} : { secretHint: k["secretHint"] }),
    ...(k["expiresAt"] === undefined ? {} : { expiresAt: k["expiresAt"] }),
    ...(k["lastUsedAt"] === undefined ? {} : { lastUsedAt: k["lastUsedAt"] })
  }
}

/** How many pages of events.list (100 each) the event log page reads at once. */
const eventLogPages = 5

const eventLogItemOf = (event: unknown): EventLogItem => {
  const e = plain(event)
  return { uuid: e["uuid"], type: e["type"], occurredAt: e["occurredAt"], aggregate: e["aggregate"], envelope: JSON.stringify(e, null, 2) }
}

/**
 * The owner's view of a prepared command as the approval pages render it (plain JSON), with when
 * the asking key was made, from the account's own keys (keys.list).
 */
const approvalOf = (command: unknown, keys: ReadonlyArray<unknown> = []): ApprovalView => {
  const view = plain(command) as ApprovalView
  const made = keys.map((key) => plain(key)).find((key) => key["uuid"] === view.key.uuid)?.["createdAt"]
  return typeof made === "string" ? { ...view, key: { ...view.key, createdAt: made } } : view
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const segment = (path: string, prefix: string, suffix = ""): string | undefined => {
  if (!path.startsWith(prefix) || !path.endsWith(suffix)) return undefined
  const rest = path.slice(prefix.length, path.length - suffix.length)
  return rest === "" || rest.includes("/") ? undefined : rest
}

/**
 * A task's lifecycle, which its owner's view (OwnTask, the spec's fields and `reason`) does not
 * carry: read as anyone reads it. Public: live, closed or not; 404: not public — hidden when its
 * status is approved (an approved task is public unless hidden), else no approved version shows;
 * another failure: unknown (the page then goes by the moderation status).
 */
const taskLifecycle = (client: BirzhaClient, uuid: string, status: string): Effect.Effect<OwnLifecycle> =>
  client.getPublication({ path: { uuid } }).pipe(
    Effect.map((found): OwnLifecycle => ({ live: true, hidden: false, closed: found.closed === true })),
    Effect.catchAll((error) => Effect.succeed<OwnLifecycle>(error instanceof NotFound ? { live: false, ...(status === "approved" ? { hidden: true } : {}) } : {}))
  )

/** The acting profile (whose messages are "mine"): one read beside the page's own. */
const me = (client: BirzhaClient) => Effect.map(client["auth.session"](), (session) => session.profile.uuid)

/**
 * The signed-in pages' data, read with the visitor's session through the client. `undefined`: not
 * one of these paths. Each page renders on the server from it; its forms call the API in the
 * browser and load the page again.
 */
export const loadSignedIn = (
  api: ServerApi,
  path: string,
  cookie: string,
  search: URLSearchParams = new URLSearchParams()
): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  if (path === "/tasks/new") return run(() => Effect.succeed({ page: "taskEditor", categories: taskCategories }))
  const editing = segment(path, "/tasks/", "/edit")
  if (editing !== undefined) {
    return run((client) =>
      Effect.map(client["tasks.get"]({ urlParams: { publicationUuid: editing } }), (task): PageData => ({ page: "taskEditor", task: ownTaskOf(task), categories: taskCategories })))
  }
  if (path === "/settings/profile") {
    return run((client) =>
      Effect.map(client["profiles.get_own"](), (own): PageData => ({
        page: "profileSettings",
        profile: ownProfileOf(own.profile),
        profiles: own.profiles.map((p) => ({ uuid: p.uuid, name: p.name, type: p.type, current: p.current }))
      })))
  }
  if (path === "/services/new") return run(() => Effect.succeed({ page: "serviceEditor" }))
  const editingService = segment(path, "/services/", "/edit")
  if (editingService !== undefined) {
    return run((client) =>
      Effect.map(client["services.get"]({ urlParams: { publicationUuid: editingService } }), (service): PageData => ({ page: "serviceEditor", service: ownServiceOf(service, true) })))
  }
  if (path === "/jobs/new") return run(() => Effect.succeed({ page: "vacancyEditor" }))
  const editingVacancy = segment(path, "/jobs/", "/edit")
  if (editingVacancy !== undefined) {
    return run((client) =>
      Effect.map(client["jobs.get"]({ urlParams: { publicationUuid: editingVacancy } }), (vacancy): PageData => ({ page: "vacancyEditor", vacancy: ownVacancyOf(vacancy, true) })))
  }
  // Portfolio items, articles, resumes and trainings: one editor (pages/MediaEditorPage) at /<path>/new and /<path>/{uuid}/edit.
  for (const command of mediaCommands) {
    const editorPath = mediaEditorPaths[command]
    if (path === `/${editorPath}/new`) return run(() => Effect.succeed({ page: "mediaEditor", kind: mediaEditorKinds[command] }))
    const editingMedia = segment(path, `/${editorPath}/`, "/edit")
    if (editingMedia !== undefined) {
      return run((client) =>
        Effect.map(ownerRead(client, command, "get")({ urlParams: { publicationUuid: editingMedia } }), (found): PageData => ({
          page: "mediaEditor",
          kind: mediaEditorKinds[command],
          publication: ownMediaOf(command, found)
        })))
    }
  }
  if (path === "/publications") {
    return run((client) =>
      Effect.all({
        tasks: client["tasks.list"]({ urlParams: { limit: 100 } }),
        vacancies: client["jobs.list"]({ urlParams: { limit: 100 } }),
        services: client["services.list"]({ urlParams: { limit: 100 } }),
        media: Effect.forEach(mediaCommands, (command) =>
          Effect.map(ownerRead(client, command, "list")({ urlParams: { limit: 100 } }), (page) =>
            (page["items"] as ReadonlyArray<unknown>).map((item) => ownMediaItemOf(command, item))), { concurrency: "unbounded" })
      }, { concurrency: "unbounded" }).pipe(
        Effect.flatMap(({ tasks, vacancies, services, media }) =>
          Effect.map(Effect.forEach(tasks.items, (task) => taskLifecycle(client, task.uuid, task.status), { concurrency: 8 }), (states): PageData => ({
          page: "myPublications",
          tasks: tasks.items.map((task, i) => ({ ...ownTaskOf(task), ...states[i] })),
          vacancies: vacancies.items.map((item) => ownVacancyOf(item)),
          services: services.items.map((item) => ownServiceOf(item)),
          media: media.flat()
        })))
      ))
  }
  if (path === "/moderation") {
    return run((client) =>
      client["moderation.queue"]({ urlParams: { limit: 50 } }).pipe(
        Effect.map((page): PageData => ({ page: "moderation", allowed: true, items: page.items.map(moderationOf) })),
        // Not a moderator: the page says so (the header shows no link to it then).
        Effect.catchIf((error) => (error as { readonly _tag?: string })._tag === "Forbidden", () => Effect.succeed<PageData>({ page: "moderation", allowed: false, items: [] }))
      ))
  }
  if (path === "/responses") {
    return run((client) =>
      Effect.all({
        responses: client["responses.list"]({ urlParams: { limit: 100 } }),
        offers: client["offers.list"]({ urlParams: { limit: 100 } }),
        jobs: client["job_contacts.list"]({ urlParams: { limit: 100 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ responses, offers, jobs }): PageData => ({
          page: "responses",
          items: responses.items.map(relationOf),
          offers: offers.items.map(relationOf),
          jobContacts: jobs.items.map(relationOf)
        }))
      ))
  }
  if (path === "/deals") {
    return run((client) =>
      Effect.all({
        deals: client["deals.list"]({ urlParams: { limit: 100 } }),
        written: client["reviews.list_own"]({ urlParams: { role: "written", limit: 100 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ deals, written }): PageData => ({
          page: "deals",
          items: deals.items.map(relationOf),
          // The author always reads their own review; it is sealed for the other party while "submitted".
          reviews: written.items.map((review) => ({ uuid: review.uuid, sealed: review.status === "submitted", relationUuid: review.relationUuid }))
        }))
      ))
  }
  if (path === "/messages") {
    return run((client) =>
      Effect.all({ me: me(client), threads: client["threads.list"]({ urlParams: { limit: 100 } }) }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ me, threads }): PageData => ({ page: "messages", threads: threads.items.map((thread) => threadOf(thread, me)) }))
      ))
  }
  const threadUuid = segment(path, "/messages/")
  if (threadUuid !== undefined) {
    return run((client) =>
      Effect.all({
        me: me(client),
        thread: client["threads.get"]({ urlParams: { threadUuid } }),
        messages: client["threads.messages"]({ urlParams: { threadUuid, limit: 100 } })
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ me, thread, messages }): PageData => ({
          page: "thread",
          threadUuid,
          with: threadOf(thread, me).with,
          messages: messages.items.map((message) => messageOf(message, me))
        }))
      ))
  }
  if (path === "/settings/integrations") {
    return run((client) =>
      Effect.all({
        session: client["auth.session"](),
        keys: client["keys.list"](),
        own: client["profiles.get_own"](),
        scopes: client["scopes.list"]()
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ keys, own, scopes, session }): PageData => ({
          page: "integrations",
          email: session.user.email,
          recentSignIn: keys.recentSignIn === true,
          keys: keys.items.map(keyOf),
          profiles: own.profiles.map((p) => ({ uuid: p.uuid, name: p.name, type: p.type, current: p.current })),
          scopes: scopes.items.filter((scope) => scope.grantable).map((scope) => ({ name: scope.name, operations: scope.operations })),
          limits: keyLimits
        }))
      ))
  }
  if (path === "/settings/events") {
    const cursor = (search.get("cursor") ?? "").slice(0, 200)
    return run((client) =>
      Effect.gen(function*() {
        const known = (yield* client["events.types"]()).types.map(String)
        const wanted = search.get("type") ?? ""
        const type = known.includes(wanted) ? wanted : ""
        // events.list reads forward from a cursor; the page reads up to eventLogPages pages and shows them newest first.
        const read = (from: string) => client["events.list"]({ urlParams: { limit: 100, ...(from === "" ? {} : { cursor: from }), ...(type === "" ? {} : { types: type }) } })
        const items: Array<EventLogItem> = []
        let next = cursor
        let more = true
        for (let page = 0; page < eventLogPages && more; page++) {
          const got = yield* read(next)
          items.push(...got.items.map(eventLogItemOf))
          next = got.nextCursor
          more = got.hasMore
        }
        return { page: "eventLog", types: known, type, cursor, nextCursor: next, hasMore: more, cursorProblem: "", items: items.reverse() } satisfies PageData
      }).pipe(
        Effect.catchIf(
          (error) => cursor !== "" && ["ResyncRequired", "InvalidRequest"].includes(String((error as { readonly _tag?: unknown })._tag)),
          (error) => Effect.succeed<PageData>({
            page: "eventLog", types: [], type: "", cursor, nextCursor: "", hasMore: false, items: [],
            cursorProblem: (error as { readonly _tag?: unknown })._tag === "ResyncRequired" ? "expired" : "invalid"
          })
        )
      ))
  }
  if (path === "/approvals") {
    return run((client) =>
      Effect.all({ pending: client["integrationCommands.pending"](), keys: client["keys.list"]() }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ keys, pending }): PageData => ({ page: "approvals", items: pending.items.map((command) => approvalOf(command, keys.items)) }))
      ))
  }
  const commandUuid = segment(path, "/approvals/")
  if (commandUuid !== undefined) {
    return run((client) =>
      Effect.all({
        found: client["integrationCommands.get"]({ path: { uuid: commandUuid } }),
        keys: client["keys.list"](),
        session: client["auth.session"]()
      }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ found, keys, session }): PageData => ({ page: "approval", command: approvalOf(found.command, keys.items), email: session.user.email }))
      ))
  }
  const endpointUuid = segment(path, "/webhooks/", "/approve")
  if (endpointUuid !== undefined) {
    return run((client) =>
      Effect.flatMap(client["webhooks.list"](), (list) => {
        // The acting profile's own endpoint, read from its list (the API has no single read of one).
        const found = uuidPattern.test(endpointUuid) ? list.items.find((item) => item.uuid === endpointUuid) : undefined
        return found === undefined
          ? Effect.fail(new NotFound({ message: "The acting profile has no such webhook" }))
          : Effect.succeed<PageData>({
            page: "webhookApproval",
            endpoint: {
              uuid: found.uuid, revision: found.revision, url: found.url, eventTypes: found.eventTypes, payloadMode: found.payloadMode,
              state: found.state, approved: found.approvedAt !== undefined
            }
          })
      }))
  }
  const social = socialPage(path, search)
  if (social !== undefined) return run(social)
  const agents = agentsPage(path)
  if (agents !== undefined) return run(agents)
  return loadCourseAdmin(api, path, cookie) ?? loadAuthoring(api, path, cookie) ?? loadWebhooks(api, path, cookie) ?? loadRules(api, path, cookie) ??
    loadTeaching(api, path, search, cookie) ?? loadLearning(api, path, search, cookie) ?? loadAdmin(api, path, search, cookie)
}

