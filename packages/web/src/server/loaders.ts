import type { BirzhaClient } from "@birzha/client"
import { Effect, Either } from "effect"
import type { BlockView, Card, PageData, Picture, ProfileView, PublicationView, Reviews } from "../model.js"
import { safeNext } from "../safeNext.js"
import type { ReadFailure, Refusal, ServerApi } from "./api.js"
import { loadCourses } from "./learning.js"
import { loadSignedIn } from "./signedIn.js"
import { commentsOf, isFavorite, unreadCount } from "./social.js"

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const str = (data: Json, field: string) => typeof data[field] === "string" ? data[field] : ""
const excerpt = (value: string, max = 200) => value.length <= max ? value : `${value.slice(0, max).trimEnd()}…`

/** The decoded answer as the JSON the page gets (dates as ISO strings), so server and browser render the same. */
const plain = <A>(value: A): Json => JSON.parse(JSON.stringify(value)) as Json

const picturesOf = (data: Json): ReadonlyArray<Picture> => {
  const content = isObject(data["content"]) ? data["content"] : {}
  const portfolio = isObject(data["portfolio"]) ? data["portfolio"] : {}
  const assets = [
    ...(Array.isArray(content["assets"]) ? content["assets"] : []),
    ...(Array.isArray(portfolio["assets"]) ? portfolio["assets"] : [])
  ].filter(isObject)
  const seen = new Set<string>()
  // A task's pictures: its image files, data URLs with their caption as name (TaskData has no other place).
  const taskFiles = (Array.isArray(data["files"]) ? data["files"] : []).filter(isObject)
    .filter((file) => str(file, "mimeType").startsWith("image/") && str(file, "url").startsWith("data:image/"))
    .map((file) => ({ id: str(file, "id"), alt: str(file, "name"), caption: str(file, "name"), src: str(file, "url") }))
  return [...taskFiles, ...assets.flatMap((asset) => {
    const id = str(asset, "id")
    if (id === "" || seen.has(id)) return []
    seen.add(id)
    return [{ id, alt: str(asset, "alt"), caption: str(asset, "caption") }]
  })]
}

const strings = (value: unknown): ReadonlyArray<string> => Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

/**
 * The content document's blocks (content.blocks; a portfolio's older `portfolio.blocks` when the
 * document has none), each with its pictures from the assets.
 */
const blocksOf = (data: Json, pictures: ReadonlyArray<Picture>): ReadonlyArray<BlockView> => {
  const content = isObject(data["content"]) ? data["content"] : {}
  const portfolio = isObject(data["portfolio"]) ? data["portfolio"] : {}
  const listed = Array.isArray(content["blocks"]) && content["blocks"].length > 0 ? content["blocks"] : portfolio["blocks"]
  const byId = new Map(pictures.map((picture) => [picture.id, picture]))
  return (Array.isArray(listed) ? listed : []).filter(isObject).map((block) => ({
    id: str(block, "id"),
    type: str(block, "type"),
    ...(str(block, "title") === "" ? {} : { title: str(block, "title") }),
    ...(str(block, "text") === "" ? {} : { text: str(block, "text") }),
    ...(Array.isArray(block["items"]) ? { items: strings(block["items"]) } : {}),
    ...(str(block, "language") === "" ? {} : { language: str(block, "language") }),
    media: strings(block["mediaIds"]).flatMap((id) => byId.get(id) ?? [])
  }))
}

/** The kind's own details: a task's budget and deadline at the top level, the others' in their own object. */
const detailsOf = (kind: string, data: Json): Json => {
  if (kind === "task") return { budget: data["budget"], deadline: data["deadline"] }
  const own = data[kind]
  if (!isObject(own)) return {}
  const { assets: _assets, blocks: _blocks, ...rest } = own
  return rest
}

const moneyOf = (details: Json): string | undefined => {
  const currency = typeof details["currency"] === "string" ? details["currency"] : "RUB"
  const amount = details["price"] ?? details["salaryFrom"] ?? details["salary"] ?? details["salaryTo"]
  return typeof amount === "number" ? `${amount} ${currency}` : undefined
}

const cardOf = (item: unknown, names: ReadonlyMap<string, string>): Card => {
  const p = plain(item)
  const data = isObject(p["approved"]) ? p["approved"] : {}
  const kind = str(p, "kind")
  const pictures = picturesOf(data)
  const content = isObject(data["content"]) ? data["content"] : {}
  const preview = isObject(content["preview"]) ? content["preview"] : {}
  const previewIds = Array.isArray(preview["assetIds"]) ? preview["assetIds"] : []
  const picture = pictures.find((pic) => pic.id === previewIds[0]) ?? pictures[0]
  const details = detailsOf(kind, data)
  const price = kind === "task" ? (typeof details["budget"] === "string" && details["budget"] !== "" ? details["budget"] : undefined) : moneyOf(details)
  const authorUuid = str(p, "ownerUuid")
  const authorName = names.get(authorUuid)
  return {
    uuid: str(p, "uuid"),
    kind,
    title: str(data, "title"),
    category: str(data, "category"),
    excerpt: excerpt(str(data, "description") || str(preview, "summary")),
    closed: p["closed"] === true,
    authorUuid,
    ...(authorName === undefined ? {} : { authorName }),
    ...(picture === undefined ? {} : { picture: { id: picture.id, alt: picture.alt } }),
    ...(price === undefined ? {} : { price })
  }
}

/** How long an author's public name is used without reading it again, and how many are kept. */
const nameTtlMs = 60_000
const namesKept = 5_000

/** Public names of authors read lately, per application (its ServerApi): uuid → name and when it was read. */
const nameCaches = new WeakMap<ServerApi, Map<string, { readonly name: string; readonly at: number }>>()

/**
 * The names of the items' authors. The API has no read of many profiles at once (getProfile is
 * one, listProfiles searches) and the catalog's publications carry no author name, so each name
 * is read once (all of a page's at once) and kept for a minute: a catalog page costs a read only
 * for authors not seen lately, instead of one per author per page.
 */
const authorNames = (api: ServerApi, client: BirzhaClient, items: ReadonlyArray<{ readonly ownerUuid: string }>) => {
  let cache = nameCaches.get(api)
  if (cache === undefined) {
    cache = new Map()
    nameCaches.set(api, cache)
  }
  const names = cache
  const now = Date.now()
  const known = new Map<string, string>()
  const missing: Array<string> = []
  for (const uuid of new Set(items.map((item) => item.ownerUuid))) {
    const kept = names.get(uuid)
    if (kept !== undefined && now - kept.at < nameTtlMs) known.set(uuid, kept.name)
    else missing.push(uuid)
  }
  return Effect.forEach(
    missing,
    (uuid) => client.getProfile({ path: { uuid } }).pipe(Effect.map((profile) => [uuid, profile.name] as const), Effect.option),
    { concurrency: "unbounded" }
  ).pipe(Effect.map((found) => {
    for (const entry of found) {
      if (entry._tag === "None") continue
      const [uuid, name] = entry.value
      known.set(uuid, name)
      names.delete(uuid)
      names.set(uuid, { name, at: now })
    }
    // The oldest first out (a Map keeps insertion order).
    for (const uuid of names.keys()) {
      if (names.size <= namesKept) break
      names.delete(uuid)
    }
    return known
  }))
}

const publicationOf = (item: unknown): PublicationView => {
  const p = plain(item)
  const data = isObject(p["approved"]) ? p["approved"] : {}
  const kind = str(p, "kind")
  const content = isObject(data["content"]) ? data["content"] : {}
  const preview = isObject(content["preview"]) ? content["preview"] : {}
  const createdAt = str(p, "createdAt")
  const pictures = picturesOf(data)
  const description = str(data, "description") || str(preview, "summary")
  // A text block that repeats the description (packages/domain/src/demo/DemoData.ts writes one) is not shown twice.
  const blocks = blocksOf(data, pictures).filter((block) =>
    !(block.type === "richtext" && block.title === undefined && block.text !== undefined && block.text.trim() === description.trim()))
  // A picture a block shows is shown there, not again in the gallery above the text.
  const inBlocks = new Set(blocks.flatMap((block) => block.media.map((picture) => picture.id)))
  return {
    uuid: str(p, "uuid"),
    kind,
    title: str(data, "title"),
    category: str(data, "category"),
    description,
    closed: p["closed"] === true,
    ownerUuid: str(p, "ownerUuid"),
    ...(createdAt === "" ? {} : { createdAt }),
    pictures: pictures.filter((picture) => !inBlocks.has(picture.id)),
    blocks,
    ...(isObject(content["article"]) && str(content["article"], "lead") !== "" ? { lead: str(content["article"], "lead") } : {}),
    details: detailsOf(kind, data)
  }
}

const profileOf = (item: unknown): ProfileView => {
  const p = plain(item)
  const avatarUrl = str(p, "avatarUrl")
  return {
    uuid: str(p, "uuid"),
    name: str(p, "name"),
    type: str(p, "type"),
    ...(avatarUrl === "" ? {} : { avatarUrl }),
    about: str(p, "about"),
    categories: Array.isArray(p["categories"]) ? p["categories"].filter((c): c is string => typeof c === "string") : [],
    skills: Array.isArray(p["skills"]) ? p["skills"].filter(isObject).map((s) => str(s, "name")).filter((s) => s !== "") : [],
    contacts: str(p, "contacts")
  }
}

const reviewsOf = (answer: unknown): Reviews => {
  const r = plain(answer)
  const summary = isObject(r["summary"]) ? r["summary"] : {}
  const items = Array.isArray(r["items"]) ? r["items"].filter(isObject) : []
  return {
    count: typeof summary["reviewCount"] === "number" ? summary["reviewCount"] : 0,
    average: typeof summary["ratingAverage"] === "number" ? summary["ratingAverage"] : null,
    items: items.map((item) => {
      const author = isObject(item["author"]) ? item["author"] : {}
      const reply = isObject(item["reply"]) ? str(item["reply"], "body") : ""
      return {
        uuid: str(item, "uuid"),
        sealed: item["sealed"] === true,
        ...(typeof item["rating"] === "number" ? { rating: item["rating"] } : {}),
        ...(str(item, "body") === "" ? {} : { body: str(item, "body") }),
        ...(str(author, "name") === "" ? {} : { authorName: str(author, "name") }),
        ...(str(author, "profileUuid") === "" ? {} : { authorUuid: str(author, "profileUuid") }),
        ...(str(author, "customerAlias") === "" ? {} : { customerAlias: str(author, "customerAlias") }),
        ...(reply === "" ? {} : { reply }),
        ...(str(item, "publishedAt") === "" ? {} : { publishedAt: str(item, "publishedAt") }),
        ...(typeof item["revision"] === "number" ? { revision: item["revision"] } : {})
      }
    })
  }
}

/**
 * What a public page adds for its visitor: a publication's comments (with a session, `canDelete`
 * is the visitor's) and, signed in, whether the page's entity is in their favorites. A failed read
 * leaves its part out, never the page; an unusable session reads the comments as anyone.
 */
const viewerReads = async (
  api: ServerApi,
  cookie: string | undefined,
  comments: ((client: BirzhaClient) => Effect.Effect<NonNullable<Extract<PageData, { page: "publication" }>["comments"]>, unknown>) | undefined,
  entityUuid: string
): Promise<{ readonly comments?: NonNullable<Extract<PageData, { page: "publication" }>["comments"]>; readonly favorite?: boolean }> => {
  const signedIn = cookie === undefined ? undefined : await api.run((client) =>
    Effect.all({
      favorite: isFavorite(client, entityUuid),
      comments: comments === undefined ? Effect.succeed(undefined) : comments(client)
    }, { concurrency: "unbounded" }), cookie)
  if (signedIn !== undefined && Either.isRight(signedIn)) {
    return { favorite: signedIn.right.favorite, ...(signedIn.right.comments === undefined ? {} : { comments: signedIn.right.comments }) }
  }
  if (comments === undefined) return {}
  const anonymous = await api.run(comments)
  return Either.isRight(anonymous) ? { comments: anonymous.right } : {}
}

export interface Loaded {
  readonly status: number
  readonly data: PageData
  /** A 503's failed read, for the host's log. */
  readonly failure?: ReadFailure
}

/** An address that stands for another (`/settings`): a 303 there, the page's language kept. */
export interface Redirect {
  readonly redirect: string
}

/** A signed-in page asked for without a usable session: to sign in, and back here after. */
export interface ToSignIn {
  readonly signIn: true
}

const refused = (refusal: Refusal): Loaded => {
  // A public read never answers 401; should one, it is the service's fault, not the visitor's.
  const status = refusal.status === 401 ? 503 : refusal.status
  return {
    status,
    data: { page: "error", status, ...(refusal.field === undefined ? {} : { field: refusal.field }) },
    ...(status === 503 && refusal.failure !== undefined ? { failure: refusal.failure } : {})
  }
}

const answer = (result: Either.Either<PageData, Refusal>): Loaded =>
  Either.isRight(result) ? { status: 200, data: result.right } : refused(result.left)

/** The one path segment after a prefix (`/p/{uuid}`), or undefined when the path is not of that shape. */
const segmentAfter = (path: string, prefix: string): string | undefined => {
  if (!path.startsWith(prefix)) return undefined
  const rest = path.slice(prefix.length)
  if (rest === "" || rest.includes("/")) return undefined
  try {
    return decodeURIComponent(rest)
  } catch {
    return undefined
  }
}

/**
 * The page at `path` and its data, read through the client: every read is a public operation of
 * the API, answered as it answers anyone. `undefined`: no page of the application has that path.
 */
export const load = async (api: ServerApi, path: string, search: URLSearchParams, cookie: string | undefined): Promise<Loaded | ToSignIn | Redirect | undefined> => {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  // The settings' first section; integrations are /settings/integrations.
  if (trimmed === "/settings") return { redirect: "/settings/profile" }
  // The training editor's former addresses (before /learning became the learner's area): to /trainings.
  if (trimmed === "/learning/new") return { redirect: "/trainings/new" }
  const movedTraining = /^\/learning\/([0-9a-fA-F-]{36})\/edit$/.exec(trimmed)
  if (movedTraining !== null) return { redirect: `/trainings/${movedTraining[1]!.toLowerCase()}/edit` }
  if (trimmed === "/") {
    return answer(await api.run((client) =>
      client.listPublications({ urlParams: { limit: 12 } }).pipe(
        Effect.flatMap((page) => Effect.map(authorNames(api, client, page.items), (names): PageData => ({ page: "home", latest: page.items.map((item) => cardOf(item, names)) })))
      )
    ))
  }
  if (trimmed === "/catalog") {
    const q = search.get("q") ?? ""
    const kind = search.get("kind") ?? ""
    const category = search.get("category") ?? ""
    const cursor = search.get("cursor") ?? ""
    return answer(await api.run((client) =>
      client.listPublications({
        urlParams: {
          limit: 20,
          ...(q.trim() === "" ? {} : { q }),
          ...(kind === "" ? {} : { kind: kind as "task" }),
          ...(category.trim() === "" ? {} : { category: category.trim() }),
          ...(cursor === "" ? {} : { cursor })
        }
      }).pipe(
        Effect.flatMap((page) =>
          Effect.map(authorNames(api, client, page.items), (names): PageData => ({
            page: "catalog",
            q,
            kind,
            category,
            cursor,
            items: page.items.map((item) => cardOf(item, names)),
            ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor })
          }))
        )
      )
    ))
  }
  const publicationUuid = segmentAfter(trimmed, "/p/")
  if (publicationUuid !== undefined) {
    const commentsCursor = search.get("comments") ?? ""
    const [found, viewer] = await Promise.all([
      api.run((client) =>
        client.getPublication({ path: { uuid: publicationUuid } }).pipe(
          // The author's name as the catalog reads it (kept a minute): a popular author's page
          // costs no second read in a row before its HTML can start (bench/web-lcp.bench.mjs).
          Effect.flatMap((found) =>
            Effect.map(authorNames(api, client, [found]), (names): PageData => {
              const name = names.get(found.ownerUuid)
              return {
                page: "publication",
                publication: publicationOf(found),
                ...(name === undefined ? {} : { author: { uuid: found.ownerUuid, name } })
              }
            })
          )
        )
      ),
      viewerReads(api, cookie, (client) => commentsOf(client, publicationUuid, commentsCursor), publicationUuid)
    ])
    return answer(Either.map(found, (data) => ({ ...data, ...viewer })))
  }
  const profileUuid = segmentAfter(trimmed, "/u/")
  if (profileUuid !== undefined) {
    const [found, viewer] = await Promise.all([api.run((client) =>
      client.getProfile({ path: { uuid: profileUuid } }).pipe(
        Effect.flatMap((found) =>
          Effect.all({
            own: client.listPublications({ urlParams: { ownerUuid: found.uuid, limit: 20 } }),
            // The profile's reviews as a specialist; a reading failure leaves the section out, not the page.
            reviews: Effect.option(client["reviews.list_public"]({ urlParams: { profileUuid: found.uuid, limit: 20 } }))
          }, { concurrency: "unbounded" }).pipe(
            Effect.map(({ own, reviews }): PageData => ({
              page: "profile",
              profile: profileOf(found),
              publications: own.items.map((item) => cardOf(item, new Map([[found.uuid, found.name]]))),
              ...(reviews._tag === "Some" ? { reviews: reviewsOf(reviews.value) } : {})
            }))
          )
        )
      )
    ), viewerReads(api, cookie, undefined, profileUuid)])
    return answer(Either.map(found, (data) => ({ ...data, ...viewer })))
  }
  // A customer's reputation (customers.get, public): by the pseudonymous alias deals and reviews show, never by profile.
  const customerAlias = segmentAfter(trimmed, "/customers/")
  if (customerAlias !== undefined) {
    const cursor = search.get("cursor") ?? ""
    const [found, me] = await Promise.all([
      api.run((client) => client["customers.get"]({ urlParams: { customerAlias, limit: 20, ...(cursor === "" ? {} : { cursor }) } })),
      // Signed in: whether the visitor is the reviewed customer (who may answer the reviews here).
      cookie === undefined ? Promise.resolve(undefined) : api.run((client) => client["auth.session"](), cookie)
    ])
    return answer(Either.map(found, (found): PageData => {
      const subject = found.items[0]?.subjectProfileUuid
      return {
        page: "customer",
        customer: { ...found.customer },
        reviews: reviewsOf({ summary: { reviewCount: found.customer.reviewCount, ratingAverage: found.customer.ratingAverage }, items: found.items }),
        own: subject !== undefined && me !== undefined && Either.isRight(me) && me.right.profile.uuid === subject,
        cursor,
        ...(found.nextCursor === undefined ? {} : { nextCursor: found.nextCursor })
      }
    }))
  }
  if (trimmed === "/sign-in") {
    // Where the page goes once signed in: a checked path of this site (an approval), else the account.
    return { status: 200, data: { page: "signIn", next: safeNext(search.get("next")) ?? "/account" } }
  }
  if (trimmed === "/auth/link") return { status: 200, data: { page: "signInLink" } }
  if (trimmed === "/account") {
    if (cookie === undefined) return { signIn: true }
    const result = await api.run((client) =>
      Effect.all({ session: client["auth.session"](), own: client["profiles.get_own"]() }, { concurrency: "unbounded" }), cookie)
    if (Either.isLeft(result)) return result.left.status === 401 ? { signIn: true } : refused(result.left)
    return {
      status: 200,
      data: {
        page: "account",
        email: result.right.session.user.email,
        profiles: result.right.own.profiles.map((p) => ({ uuid: p.uuid, name: p.name, type: p.type, current: p.current }))
      }
    }
  }
  const courses = loadCourses(api, trimmed, search, cookie)
  if (courses !== undefined) return answer(await courses)
  if (cookie === undefined) return loadSignedIn(api, trimmed, "", search) === undefined ? undefined : { signIn: true }
  const signedIn = loadSignedIn(api, trimmed, cookie, search)
  if (signedIn === undefined) return undefined
  const result = await signedIn
  if (Either.isLeft(result)) return result.left.status === 401 ? { signIn: true } : refused(result.left)
  return { status: 200, data: result.right }
}

/**
 * The signed-in person for the header: name, profile, and whether the moderation and admin links show
 * (a session holds the moderation scopes only with the moderator role, the admin ones only with the operator role), when the cookie names a usable session.
 */
export const sessionOf = async (
  api: ServerApi,
  cookie: string
): Promise<{ readonly name: string; readonly profileUuid: string; readonly moderator: boolean; readonly operator: boolean; readonly unread?: number } | undefined> => {
  const result = await api.run((client) =>
    Effect.all({
      capabilities: client.getMyCapabilities(),
      // The badge is left out, not the header, should the inbox not answer.
      unread: Effect.option(unreadCount(client))
    }, { concurrency: "unbounded" }), cookie)
  if (Either.isLeft(result)) return undefined
  const { capabilities, unread } = result.right
  return {
    name: capabilities.profile.name,
    profileUuid: capabilities.profile.uuid,
    moderator: capabilities.scopes.some((scope) => scope.startsWith("moderation:")),
    // Likewise the admin scopes only with the operator role.
    operator: capabilities.scopes.some((scope) => scope.startsWith("admin:")),
    ...(unread._tag === "Some" ? { unread: unread.value } : {})
  }
}
