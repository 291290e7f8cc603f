import type { BirzhaClient } from "@birzha/client"
import { Effect } from "effect"
import type { CommentItem, ComplaintItem, FavoriteItem, ModeratedReviewItem, NotificationItem, PageData, QueuedComplaint } from "../model.js"
import { type Json, plain } from "../components/json.js"

// The social pages' data (favorites, complaints, notifications, comments, the moderators' queues of
// complaints and reviews), read through the client and turned into the plain JSON the pages render.

const optional = <K extends string>(key: K, value: unknown) => value === undefined || value === null ? {} : { [key]: value }

export const favoriteOf = (favorite: unknown): FavoriteItem => {
  const f = plain(favorite)
  const entity = (f["entity"] ?? {}) as Json
  return {
    uuid: f["uuid"], entityKind: f["entityKind"], entityUuid: f["entityUuid"], createdAt: f["createdAt"], available: f["available"],
    ...optional("title", entity["title"]), ...optional("publicationKind", entity["publicationKind"]), ...optional("profileType", entity["profileType"])
  }
}

export const complaintOf = (complaint: unknown): ComplaintItem => {
  const c = plain(complaint)
  const decision = c["decision"] as Json | undefined
  return {
    uuid: c["uuid"], subjectKind: c["subjectKind"], subjectUuid: c["subjectUuid"], body: c["body"], status: c["status"],
    revision: c["revision"], createdAt: c["createdAt"],
    ...(decision === undefined ? {} : {
      decision: { decision: decision["decision"], action: decision["action"], reason: decision["reason"], decidedAt: decision["decidedAt"] }
    })
  }
}

const text = (value: unknown) => typeof value === "string" ? value : ""

/** The subject as its author saw it: a publication's title, a profile's name, a message's or relation's text. */
const queuedComplaintOf = (item: unknown): QueuedComplaint => {
  const c = plain(item)
  const snapshot = (c["subjectSnapshot"] ?? {}) as Json
  return {
    ...complaintOf(item),
    subjectTitle: text(snapshot["title"]) || text(snapshot["name"]),
    subjectText: text(snapshot["body"]) || text(snapshot["about"]),
    subjectGone: c["subjectNow"] === undefined,
    otherOpen: Array.isArray(c["otherOpenComplaints"]) ? c["otherOpenComplaints"].length : 0,
    reviews: (Array.isArray(c["reviews"]) ? c["reviews"] as ReadonlyArray<Json> : [])
      .map((review) => ({ uuid: review["uuid"], status: review["status"], rating: review["rating"], body: review["body"] }))
  }
}

const moderatedReviewOf = (item: unknown): ModeratedReviewItem => {
  const r = plain(item)
  return {
    uuid: r["uuid"], revision: r["revision"], status: r["status"], body: text(r["body"]), authorName: text(r["author"]?.["name"]),
    subjectProfileUuid: r["subjectProfileUuid"], subjectRole: r["subjectRole"], openComplaints: r["openComplaints"], createdAt: r["createdAt"],
    ...optional("rating", r["rating"]), ...optional("moderationReason", r["moderationReason"])
  }
}

const notificationOf = (item: unknown): NotificationItem => {
  const n = plain(item)
  return {
    uuid: n["uuid"], kind: n["kind"], title: n["title"], body: n["body"], read: n["read"], createdAt: n["createdAt"],
    ...optional("eventType", n["eventType"])
  }
}

export const commentOf = (item: unknown): CommentItem => {
  const c = plain(item)
  return {
    uuid: c["uuid"], authorName: c["authorName"], body: c["body"], createdAt: c["createdAt"], canDelete: c["canDelete"],
    isPublicationAuthor: c["isPublicationAuthor"], deleted: c["deleted"],
    ...optional("authorProfileUuid", c["authorProfileUuid"]), ...optional("parentUuid", c["parentCommentUuid"])
  }
}

/** Roots per page of comments (each with all its answers). */
export const commentsPerPage = 30

/** A page of a publication's comments; with the visitor's session, `canDelete` is theirs. */
export const commentsOf = (client: BirzhaClient, publicationUuid: string, cursor: string) =>
  Effect.map(
    client["comments.list"]({ path: { uuid: publicationUuid }, urlParams: { limit: commentsPerPage, ...(cursor === "" ? {} : { cursor }) } }),
    (page) => ({ items: page.items.map(commentOf), cursor, ...optional("nextCursor", page.nextCursor) })
  )

/**
 * Whether the acting profile keeps an entity in favorites: favorites.list has no lookup by entity,
 * so its pages are read (newest first) until it is found, at most ten pages of 100.
 */
export const isFavorite = (client: BirzhaClient, entityUuid: string) =>
  Effect.gen(function*() {
    let cursor: string | undefined
    for (let page = 0; page < 10; page++) {
      const found = yield* client["favorites.list"]({ urlParams: { limit: 100, ...(cursor === undefined ? {} : { cursor }) } })
      if (found.items.some((item) => item.entityUuid === entityUuid)) return true
      cursor = found.nextCursor
      if (cursor === undefined) return false
    }
    return false
  })

/** Unread notifications for the header's badge: one read of up to 100 (100 stands for "100 or more"). */
export const unreadCount = (client: BirzhaClient) =>
  Effect.map(client["learning.notifications.list"]({ urlParams: { unread: "true", limit: 100 } }), (page) => page.items.length)

const isForbidden = (error: unknown) => (error as { readonly _tag?: string })._tag === "Forbidden"

const statusOf = (value: string | null, allowed: ReadonlyArray<string>, fallback: string) =>
  value !== null && allowed.includes(value) ? value : fallback

/** The social pages by path; `undefined`: not one of them. */
export const socialPage = (
  path: string,
  search: URLSearchParams
): ((client: BirzhaClient) => Effect.Effect<PageData, unknown>) | undefined => {
  if (path === "/favorites") {
    return (client) =>
      Effect.map(client["favorites.list"]({ urlParams: { limit: 100 } }), (page): PageData => ({ page: "favorites", items: page.items.map(favoriteOf) }))
  }
  if (path === "/complaints") {
    return (client) =>
      Effect.gen(function*() {
        const page = yield* client["complaints.list"]({ urlParams: { limit: 100 } })
        const items = page.items.map(complaintOf)
        // The subjects' titles and names as they are public now (the complaint keeps only the uuid); one read per subject.
        const subjects = [...new Map(items.filter((item) => item.subjectKind === "publication" || item.subjectKind === "profile")
          .map((item) => [item.subjectUuid, item.subjectKind] as const)).entries()]
        const titles = new Map(yield* Effect.forEach(subjects, ([uuid, kind]) =>
          (kind === "publication"
            ? Effect.map(client.getPublication({ path: { uuid } }), (found) => text((found.approved as { readonly title?: unknown } | undefined)?.title))
            : Effect.map(client.getProfile({ path: { uuid } }), (found) => found.name)).pipe(
              Effect.map((title) => [uuid, title] as const),
              Effect.orElseSucceed(() => [uuid, ""] as const)
            ), { concurrency: 8 }))
        return {
          page: "complaints",
          items: items.map((item) => titles.get(item.subjectUuid) ? { ...item, subjectTitle: titles.get(item.subjectUuid)! } : item)
        } satisfies PageData
      })
  }
  if (path === "/notifications") {
    const cursor = search.get("cursor") ?? ""
    return (client) =>
      Effect.map(
        client["learning.notifications.list"]({ urlParams: { limit: 50, ...(cursor === "" ? {} : { cursor }) } }),
        (page): PageData => ({ page: "notifications", items: page.items.map(notificationOf), cursor, ...optional("nextCursor", page.nextCursor) })
      )
  }
  if (path === "/moderation/complaints") {
    const status = statusOf(search.get("status"), ["open", "upheld", "dismissed"], "open") as "open"
    return (client) =>
      client["moderation.complaints.queue"]({ urlParams: { status, limit: 50 } }).pipe(
        Effect.map((page): PageData => ({ page: "moderationComplaints", allowed: true, status, items: page.items.map(queuedComplaintOf) })),
        // Not a moderator: the page says so (the header shows no link to it then).
        Effect.catchIf(isForbidden, () => Effect.succeed<PageData>({ page: "moderationComplaints", allowed: false, status, items: [] }))
      )
  }
  if (path === "/moderation/reviews") {
    const status = statusOf(search.get("status"), ["published", "removed", "submitted"], "published") as "published"
    return (client) =>
      client["moderation.reviews.list"]({ urlParams: { status, limit: 50 } }).pipe(
        Effect.map((page): PageData => ({ page: "moderationReviews", allowed: true, status, items: page.items.map(moderatedReviewOf) })),
        Effect.catchIf(isForbidden, () => Effect.succeed<PageData>({ page: "moderationReviews", allowed: false, status, items: [] }))
      )
  }
  return undefined
}
