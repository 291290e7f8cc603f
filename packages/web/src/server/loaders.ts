import type { BirzhaClient } from "@birzha/client"
import { Effect, Either } from "effect"
import type { Card, PageData, Picture, ProfileView, PublicationView, Reviews } from "../model.js"
import { safeNext } from "../safeNext.js"
import type { Refusal, ServerApi } from "./api.js"
import { loadCourses } from "./learning.js"
import { loadSignedIn } from "./signedIn.js"

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

/** The names of the items' authors, one read per distinct author (at most a page's worth), at once. */
const authorNames = (client: BirzhaClient, items: ReadonlyArray<{ readonly ownerUuid: string }>) =>
  Effect.forEach(
    [...new Set(items.map((item) => item.ownerUuid))],
    (uuid) => client.getProfile({ path: { uuid } }).pipe(Effect.map((profile) => [uuid, profile.name] as const), Effect.option),
    { concurrency: "unbounded" }
  ).pipe(Effect.map((found) => new Map(found.flatMap((entry) => entry._tag === "Some" ? [entry.value] : []))))

const publicationOf = (item: unknown): PublicationView => {
  const p = plain(item)
  const data = isObject(p["approved"]) ? p["approved"] : {}
  const kind = str(p, "kind")
  const content = isObject(data["content"]) ? data["content"] : {}
  const preview = isObject(content["preview"]) ? content["preview"] : {}
  const createdAt = str(p, "createdAt")
  return {
    uuid: str(p, "uuid"),
    kind,
    title: str(data, "title"),
    category: str(data, "category"),
    description: str(data, "description") || str(preview, "summary"),
    closed: p["closed"] === true,
    ownerUuid: str(p, "ownerUuid"),
    ...(createdAt === "" ? {} : { createdAt }),
    pictures: picturesOf(data),
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
        ...(reply === "" ? {} : { reply }),
        ...(str(item, "publishedAt") === "" ? {} : { publishedAt: str(item, "publishedAt") })
      }
    })
  }
}

export interface Loaded {
  readonly status: number
  readonly data: PageData
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
  return { status, data: { page: "error", status, ...(refusal.field === undefined ? {} : { field: refusal.field }) } }
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
  // The settings' first (and for now only) section of this application; integrations are the host's page.
  if (trimmed === "/settings") return { redirect: "/settings/profile" }
  if (trimmed === "/") {
    return answer(await api.run((client) =>
      client.listPublications({ urlParams: { limit: 12 } }).pipe(
        Effect.flatMap((page) => Effect.map(authorNames(client, page.items), (names): PageData => ({ page: "home", latest: page.items.map((item) => cardOf(item, names)) })))
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
          Effect.map(authorNames(client, page.items), (names): PageData => ({
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
    return answer(await api.run((client) =>
      client.getPublication({ path: { uuid: publicationUuid } }).pipe(
        Effect.flatMap((found) =>
          Effect.map(
            Effect.option(client.getProfile({ path: { uuid: found.ownerUuid } })),
            (author): PageData => ({
              page: "publication",
              publication: publicationOf(found),
              ...(author._tag === "Some" ? { author: { uuid: author.value.uuid, name: author.value.name } } : {})
            })
          )
        )
      )
    ))
  }
  const profileUuid = segmentAfter(trimmed, "/u/")
  if (profileUuid !== undefined) {
    return answer(await api.run((client) =>
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
    ))
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
 * The signed-in person for the header: name, profile, and whether the moderation link shows (a
 * session holds the moderation scopes only with the moderator role), when the cookie names a usable session.
 */
export const sessionOf = async (api: ServerApi, cookie: string): Promise<{ readonly name: string; readonly profileUuid: string; readonly moderator: boolean } | undefined> => {
  const result = await api.run((client) => client.getMyCapabilities(), cookie)
  return Either.isRight(result)
    ? { name: result.right.profile.name, profileUuid: result.right.profile.uuid, moderator: result.right.scopes.some((scope) => scope.startsWith("moderation:")) }
    : undefined
}
