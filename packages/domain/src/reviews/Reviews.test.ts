import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, codeOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import { only } from "../../test/learning.js"
import { anonymous, type SessionActor } from "../kernel/Authentication.js"
import type { ComplaintView } from "../complaints/Complaint.js"
import type { FavoriteChange, FavoritePage } from "../favorites/Favorite.js"
import type { CustomerReviews, PublicReviews, ReviewPage, ReviewView } from "./Review.js"
import { revealDueReviews } from "./Reviews.js"

let m: Marketplace
let a: SessionActor
let b: SessionActor
let c: SessionActor

beforeAll(async () => {
  m = await openMarketplace("reviews")
  a = await m.profile({ public: true, name: "Анна" })
  b = await m.profile({ public: true, name: "Борис" })
  c = await m.profile({ public: true, name: "Вера" })
})
afterAll(async () => {
  await m?.close()
})

const day = 24 * 60 * 60 * 1000

/** A completed deal: `customer` hired `contractor`, completed `daysAgo` days ago. */
const completedDeal = async (customer: SessionActor, contractor: SessionActor, daysAgo = 1): Promise<string> => {
  const uuid = randomUUID()
  await makeDeal(uuid, "completed", customer, contractor, new Date(Date.now() - daysAgo * day))
  return uuid
}

/** A deal in any status with its accepted offer as its origin (every deal has one). */
const makeDeal = async (uuid: string, status: string, customer: SessionActor, contractor: SessionActor, completedAt: Date | null) => {
  const origin = randomUUID()
  await m.sql(
    `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body)
     VALUES ($1, 'offer', 'accepted', $2, $3, 'customer', 'Условия')`,
    origin, customer.profileUuid, contractor.profileUuid
  )
  await m.sql(
    `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body, completed_at, origin_relation_uuid)
     VALUES ($1, 'deal', $2, $3, $4, 'customer', 'Условия', $5, $6)`,
    uuid, status, customer.profileUuid, contractor.profileUuid, completedAt, origin
  )
}

const post = (id: string, caller: SessionActor, payload: Record<string, unknown>) =>
  m.invoke(id, caller, { payload: { requestUuid: randomUUID(), ...payload } })
const get = (id: string, caller: SessionActor | undefined, urlParams: Record<string, string> = {}) =>
  m.invoke(id, caller ?? anonymous, { urlParams })

const reviewHint = (answer: Parameters<typeof bodyOf>[0]) => bodyOf<{ review?: { windowEndsAt: string; ownReviewUuid?: string; canReview: boolean } }>(answer).review

const count = async (table: string) => only(await m.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).n
const eventsOf = (uuid: string) =>
  m.sql<{ type: string; data: Record<string, unknown>; context: Record<string, unknown> }>(
    "SELECT type, data, context FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY append_order", uuid
  )

describe("favorites", () => {
  it("sets once, removes once, tells the owner alone, and marks entities no longer visible", async () => {
    const owner = await m.profile()
    const set = await post("favorites.set", owner, { entityKind: "profile", entityUuid: b.profileUuid })
    expect(set.status, JSON.stringify(set.body)).toBe(200)
    const first = bodyOf<FavoriteChange>(set)
    expect(first).toMatchObject({ favorited: true, changed: true, revision: 1 })
    const again = bodyOf<FavoriteChange>(await post("favorites.set", owner, { entityKind: "profile", entityUuid: b.profileUuid }))
    expect(again).toMatchObject({ uuid: first.uuid, favorited: true, changed: false, revision: 1 })
    const events = await eventsOf(first.uuid)
    expect(events.map((event) => [event.type, event.data["status"]])).toEqual([["favorite.changed", "added"]])
    expect(events[0]!.context).toEqual({ profileUuid: owner.profileUuid })

    const publication = await m.publication(c, "service", { title: "Вёрстка" })
    await post("favorites.set", owner, { entityKind: "publication", entityUuid: publication })
    let page = bodyOf<FavoritePage>(await get("favorites.list", owner))
    expect(page.items.map((item) => [item.entityUuid, item.available, item.entity?.title])).toEqual([
      [publication, true, "Вёрстка"],
      [b.profileUuid, true, "Борис"]
    ])
    await m.sql("UPDATE publications SET hidden = true WHERE uuid = $1", publication)
    page = bodyOf<FavoritePage>(await get("favorites.list", owner))
    expect(page.items[0]).toMatchObject({ entityUuid: publication, available: false })
    expect(page.items[0]!.entity).toBeUndefined()
    const paged = bodyOf<FavoritePage>(await get("favorites.list", owner, { limit: "1" }))
    expect(paged.items).toHaveLength(1)
    const next = bodyOf<FavoritePage>(await get("favorites.list", owner, { limit: "1", cursor: paged.nextCursor! }))
    expect(next.items.map((item) => item.entityUuid)).toEqual([b.profileUuid])

    const removed = bodyOf<FavoriteChange>(await post("favorites.remove", owner, { entityKind: "profile", entityUuid: b.profileUuid }))
    expect(removed).toMatchObject({ uuid: first.uuid, favorited: false, changed: true, revision: 2 })
    const removedAgain = bodyOf<FavoriteChange>(await post("favorites.remove", owner, { entityKind: "profile", entityUuid: b.profileUuid }))
    expect(removedAgain).toMatchObject({ changed: false, revision: 2 })
    expect((await eventsOf(first.uuid)).map((event) => event.data["status"])).toEqual(["added", "removed"])
    // Added again: the same aggregate, its revision counting on.
    expect(bodyOf<FavoriteChange>(await post("favorites.set", owner, { entityKind: "profile", entityUuid: b.profileUuid }))).toMatchObject({
      uuid: first.uuid,
      revision: 3
    })
  })

  it("refuses a private profile or a hidden publication with 404, and bad input with 400, saving nothing", async () => {
    const owner = await m.profile()
    const hidden = await m.profile({ public: false })
    const before = await count("favorites")
    expect(codeOf(await post("favorites.set", owner, { entityKind: "profile", entityUuid: hidden.profileUuid }))).toBe("not_found")
    expect(codeOf(await post("favorites.set", owner, { entityKind: "publication", entityUuid: randomUUID() }))).toBe("not_found")
    const bad = [
      { entityKind: "file", entityUuid: b.profileUuid },
      { entityKind: "profile", entityUuid: "not-a-uuid" },
      { entityKind: "profile" },
      { entityKind: "profile", entityUuid: b.profileUuid, note: "x" }
    ]
    for (const payload of bad) {
      const answer = await post("favorites.set", owner, payload)
      expect([answer.status, codeOf(answer)], JSON.stringify(payload)).toEqual([400, "invalid_request"])
    }
    for (const limit of ["0", "101", "x"]) {
      expect(codeOf(await get("favorites.list", owner, { limit })), limit).toBe("invalid_request")
    }
    expect(codeOf(await get("favorites.list", owner, { other: "1" }))).toBe("invalid_request")
    expect((await get("favorites.list", owner, { limit: "1" })).status).toBe(200)
    expect((await get("favorites.list", owner, { limit: "100" })).status).toBe(200)
    expect(await count("favorites")).toBe(before)
  })
})

describe("complaints", () => {
  it("files one open complaint per subject, shows it to its author alone, and never tells the subject", async () => {
    const author = await m.profile()
    const publication = await m.publication(b, "service")
    const created = await post("complaints.create", author, { subjectKind: "publication", subjectUuid: publication, body: "Мошенничество" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const complaint = bodyOf<ComplaintView>(created)
    expect(complaint).toMatchObject({ subjectKind: "publication", subjectUuid: publication, status: "open", revision: 1 })
    const [snapshot] = await m.sql<{ subject_snapshot: Record<string, unknown> }>("SELECT subject_snapshot FROM complaints WHERE uuid = $1", complaint.uuid)
    expect(snapshot!.subject_snapshot).toMatchObject({ kind: "publication", title: "Публикация service" })
    const events = await eventsOf(complaint.uuid)
    expect(events.map((event) => event.type)).toEqual(["complaint.created"])
    expect(events[0]!.context).toEqual({ profileUuid: author.profileUuid })

    expect(bodyOf<ComplaintView>(await get("complaints.get", author, { complaintUuid: complaint.uuid })).uuid).toBe(complaint.uuid)
    expect(codeOf(await get("complaints.get", b, { complaintUuid: complaint.uuid }))).toBe("not_found")
    expect(codeOf(await get("complaints.get", c, { complaintUuid: complaint.uuid }))).toBe("not_found")
    expect(bodyOf<{ items: Array<ComplaintView> }>(await get("complaints.list", author)).items.map((item) => item.uuid)).toEqual([complaint.uuid])
    expect(bodyOf<{ items: Array<ComplaintView> }>(await get("complaints.list", b)).items).toEqual([])

    const second = await post("complaints.create", author, { subjectKind: "publication", subjectUuid: publication, body: "Ещё раз" })
    expect([second.status, codeOf(second)]).toEqual([409, "invalid_state"])
  })

  it("refuses one's own subject (403), an invisible one (404) and bad input (400), saving nothing", async () => {
    const author = await m.profile({ public: true })
    const own = await m.publication(author, "service")
    const draft = await m.publication(b, "service", { visible: false })
    const stranger = await m.profile({ public: false })
    const before = await count("complaints")
    expect(codeOf(await post("complaints.create", author, { subjectKind: "publication", subjectUuid: own, body: "x" }))).toBe("forbidden")
    expect(codeOf(await post("complaints.create", author, { subjectKind: "profile", subjectUuid: author.profileUuid, body: "x" }))).toBe("forbidden")
    expect(codeOf(await post("complaints.create", author, { subjectKind: "publication", subjectUuid: draft, body: "x" }))).toBe("not_found")
    expect(codeOf(await post("complaints.create", author, { subjectKind: "profile", subjectUuid: stranger.profileUuid, body: "x" }))).toBe("not_found")
    const deal = await completedDeal(b, c)
    expect(codeOf(await post("complaints.create", author, { subjectKind: "relation", subjectUuid: deal, body: "x" }))).toBe("not_found")
    expect(codeOf(await post("complaints.create", author, { subjectKind: "message", subjectUuid: randomUUID(), body: "x" }))).toBe("not_found")
    for (
      const payload of [
        { subjectKind: "review", subjectUuid: deal, body: "x" },
        { subjectKind: "comment", subjectUuid: deal, body: "x" },
        { subjectKind: "profile", subjectUuid: b.profileUuid, body: "" },
        { subjectKind: "profile", subjectUuid: b.profileUuid, body: "x".repeat(5001) },
        { subjectKind: "profile", subjectUuid: b.profileUuid },
        { subjectKind: "profile", subjectUuid: b.profileUuid, body: "x", extra: true }
      ]
    ) {
      const answer = await post("complaints.create", author, payload)
      expect([answer.status, codeOf(answer)], JSON.stringify(payload).slice(0, 80)).toEqual([400, "invalid_request"])
    }
    for (const limit of ["0", "101"]) expect(codeOf(await get("complaints.list", author, { limit }))).toBe("invalid_request")
    expect(await count("complaints")).toBe(before)
    expect((await post("complaints.create", author, { subjectKind: "profile", subjectUuid: b.profileUuid, body: "x".repeat(5000) })).status).toBe(200)
  })
})

describe("double-blind reviews", () => {
  it("seals the first review, reveals both together when the second is written, and publishes them with a summary", async () => {
    const customer = await m.profile({ public: false, name: "Заказчик" })
    const specialist = await m.profile({ public: true, name: "Мастер" })
    const deal = await completedDeal(customer, specialist)

    const first = await post("reviews.create", customer, { relationUuid: deal, rating: 5, body: "Отлично" })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const review = bodyOf<ReviewView>(first)
    expect(review).toMatchObject({ status: "submitted", sealed: false, rating: 5, body: "Отлично", subjectRole: "specialist" })
    expect((await eventsOf(review.uuid)).map((event) => [event.type, event.context])).toEqual([
      ["review.submitted", { profileUuid: customer.profileUuid, audience: [specialist.profileUuid] }]
    ])

    // The subject sees only that a review exists; the public sees nothing yet.
    const received = bodyOf<ReviewPage>(await get("reviews.list_own", specialist))
    expect(received.items).toEqual([
      expect.objectContaining({ uuid: review.uuid, status: "submitted", sealed: true })
    ])
    expect(received.items[0]).not.toHaveProperty("rating")
    expect(received.items[0]).not.toHaveProperty("body")
    expect(received.items[0]).not.toHaveProperty("author")
    expect(bodyOf<ReviewPage>(await get("reviews.list_own", customer, { role: "written" })).items[0]).toMatchObject({ rating: 5, sealed: false })
    expect(bodyOf<PublicReviews>(await get("reviews.list_public", undefined, { profileUuid: specialist.profileUuid }))).toEqual({
      summary: { reviewCount: 0, ratingAverage: null, ratings: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 } },
      items: []
    })
    // A third profile sees none of it.
    expect(bodyOf<ReviewPage>(await get("reviews.list_own", c)).items).toEqual([])
    expect(bodyOf<ReviewPage>(await get("reviews.list_own", c, { relationUuid: deal })).items).toEqual([])

    const second = bodyOf<ReviewView>(await post("reviews.create", specialist, { relationUuid: deal, rating: 4, body: "Ясное ТЗ" }))
    expect(second).toMatchObject({ status: "published", subjectRole: "customer" })
    for (const uuid of [review.uuid, second.uuid]) {
      const moderated = (await eventsOf(uuid)).filter((event) => event.type === "review.moderated")
      expect(moderated.map((event) => [event.data["status"], event.context["cause"], event.context["profileUuid"]])).toEqual([["published", "revealed", undefined]])
    }
    const published = bodyOf<PublicReviews>(await get("reviews.list_public", undefined, { profileUuid: specialist.profileUuid }))
    expect(published.summary).toEqual({ reviewCount: 1, ratingAverage: 5, ratings: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 1 } })
    expect(published.items).toHaveLength(1)
    // A private customer is shown by name and alias, never by profile.
    const author = published.items[0]!.author!
    expect(author).toMatchObject({ name: "Заказчик" })
    expect(author.profileUuid).toBeUndefined()
    expect(author.customerAlias).toMatch(/^c-[a-z2-7]{10}$/)
    expect(bodyOf<ReviewPage>(await get("reviews.list_own", specialist)).items[0]).toMatchObject({ sealed: false, rating: 5 })

    // The customer's reputation by alias.
    const customerPage = bodyOf<CustomerReviews>(await get("customers.get", undefined, { customerAlias: author.customerAlias!, limit: "0" }))
    // completedDeals counts deals completed through the operations (this one was written with SQL).
    expect(customerPage.customer).toMatchObject({ alias: author.customerAlias, reviewCount: 1, ratingAverage: 4, completedDeals: 0 })
    expect(customerPage.customer.since).toMatch(/^\d{4}-\d{2}$/)
    expect(customerPage.items.map((item) => [item.uuid, item.rating])).toEqual([[second.uuid, 4]])
    expect((await get("customers.get", undefined, { customerAlias: author.customerAlias!, limit: "1000" })).status).toBe(200)
    expect(codeOf(await get("customers.get", undefined, { customerAlias: "c-aaaaaaaaaa" }))).toBe("not_found")
    expect(codeOf(await get("customers.get", undefined, { customerAlias: "nonsense" }))).toBe("not_found")
    expect(codeOf(await get("customers.get", undefined, { customerAlias: author.customerAlias!, limit: "-1" }))).toBe("invalid_request")
    expect(codeOf(await get("reviews.list_public", undefined, { profileUuid: customer.profileUuid }))).toBe("not_found")
    // A private profile that authors a publicly visible publication is publicly visible, its reviews too.
    await m.publication(customer, "task", { title: "Нужен сайт" })
    expect((await get("reviews.list_public", undefined, { profileUuid: customer.profileUuid })).status).toBe(200)
  })

  it("gives the customer its alias when a deal starts", async () => {
    const customer = await m.profile({ public: false })
    const offer = await post("offers.create", customer, { recipientProfileUuid: b.profileUuid, body: "Сделайте сайт" })
    expect(offer.status, JSON.stringify(offer.body)).toBe(200)
    const { uuid } = bodyOf<{ uuid: string }>(offer)
    expect(await m.sql("SELECT alias FROM customer_aliases WHERE profile_uuid = $1", customer.profileUuid)).toEqual([])
    const accepted = await post("offers.accept", b, { relationUuid: uuid, expectedRevision: 1 })
    expect(accepted.status).toBe(200)
    const { dealUuid } = bodyOf<{ dealUuid: string }>(accepted)
    const [row] = await m.sql<{ alias: string }>("SELECT alias FROM customer_aliases WHERE profile_uuid = $1", customer.profileUuid)
    expect(row!.alias).toMatch(/^c-[a-z2-7]{10}$/)
    expect(await m.sql("SELECT 1 FROM customer_aliases WHERE profile_uuid = $1", b.profileUuid)).toEqual([])
    // The specialist sees the customer's alias in the deal; the customer does not see one for the specialist.
    const seenBySpecialist = bodyOf<{ items: Array<{ counterpart: { customerAlias?: string } }> }>(await get("deals.list", b))
    expect(seenBySpecialist.items[0]!.counterpart.customerAlias).toBe(row!.alias)
    const seenByCustomer = bodyOf<{ items: Array<{ counterpart: { customerAlias?: string } }> }>(await get("deals.list", customer))
    expect(seenByCustomer.items[0]!.counterpart).not.toHaveProperty("customerAlias")
    // The customer finds its own alias in profiles.get_own; the specialist, never a customer, has none.
    type Own = { profile: { customerAlias?: string } }
    expect(bodyOf<Own>(await get("profiles.get_own", customer)).profile.customerAlias).toBe(row!.alias)
    expect(bodyOf<Own>(await get("profiles.get_own", b)).profile).not.toHaveProperty("customerAlias")
    // Completing the deal counts it for the customer's reputation.
    const customerBefore = bodyOf<CustomerReviews>(await get("customers.get", undefined, { customerAlias: row!.alias }))
    expect(customerBefore.customer).toMatchObject({ reviewCount: 0, ratingAverage: null, completedDeals: 0 })
    expect(customerBefore.items).toEqual([])
    const completed = await post("deals.complete", customer, { relationUuid: dealUuid, expectedRevision: 1 })
    expect(completed.status, JSON.stringify(completed.body)).toBe(200)
    expect(bodyOf<CustomerReviews>(await get("customers.get", undefined, { customerAlias: row!.alias })).customer.completedDeals).toBe(1)
  })

  it("allows one review per party, only of a completed deal the caller is party to, within 14 days, never within one account", async () => {
    const deal = await completedDeal(a, b)
    const before = await count("reviews")
    for (const rating of [0, 6, 2.5, "5"]) {
      const answer = await post("reviews.create", a, { relationUuid: deal, rating })
      expect([answer.status, codeOf(answer)], String(rating)).toEqual([400, "invalid_request"])
    }
    expect(codeOf(await post("reviews.create", a, { relationUuid: deal, rating: 5, body: "x".repeat(5001) }))).toBe("invalid_request")
    expect(codeOf(await post("reviews.create", a, { relationUuid: deal, rating: 5, extra: 1 }))).toBe("invalid_request")
    expect(codeOf(await post("reviews.create", c, { relationUuid: deal, rating: 5 }))).toBe("not_found")
    expect(codeOf(await post("reviews.create", c, { relationUuid: randomUUID(), rating: 5 }))).toBe("not_found")
    expect(await count("reviews")).toBe(before)
    // The deal's view tells each party its window and whether it may write now.
    const completedAt = only(await m.sql<{ at: Date }>("SELECT completed_at AS at FROM relations WHERE uuid = $1", deal)).at
    const windowEndsAt = new Date(completedAt.getTime() + 14 * day).toISOString()
    expect(reviewHint(await get("deals.get", a, { relationUuid: deal }))).toEqual({ windowEndsAt, canReview: true })

    const written = bodyOf<ReviewView>(await post("reviews.create", a, { relationUuid: deal, rating: 1 }))
    expect(reviewHint(await get("deals.get", a, { relationUuid: deal }))).toEqual({ windowEndsAt, ownReviewUuid: written.uuid, canReview: false })
    expect(reviewHint(await get("deals.get", b, { relationUuid: deal }))).toEqual({ windowEndsAt, canReview: true })
    const again = await post("reviews.create", a, { relationUuid: deal, rating: 5 })
    expect([again.status, codeOf(again)]).toEqual([409, "invalid_state"])

    const late = await completedDeal(a, b, 15)
    expect(reviewHint(await get("deals.get", a, { relationUuid: late }))?.canReview).toBe(false)
    expect(codeOf(await post("reviews.create", a, { relationUuid: late, rating: 5 }))).toBe("invalid_state")
    const lastDay = await completedDeal(a, b, 13.9)
    expect((await post("reviews.create", a, { relationUuid: lastDay, rating: 5 })).status).toBe(200)

    const active = randomUUID()
    await makeDeal(active, "active", a, b, null)
    expect(reviewHint(await get("deals.get", a, { relationUuid: active }))).toBeUndefined()
    expect(codeOf(await post("reviews.create", a, { relationUuid: active, rating: 5 }))).toBe("invalid_state")

    // A second profile of a's own account.
    const [sibling] = await m.sql<{ uuid: string }>(
      `INSERT INTO profiles (id, account_uuid, name, type, is_public) SELECT 'sib-' || gen_random_uuid(), account_uuid, 'Агентство', 'Компания', true
       FROM profiles WHERE uuid = $1 RETURNING uuid`,
      a.profileUuid
    )
    const siblingActor = { ...a, profileUuid: sibling!.uuid, profileName: "Агентство" } as SessionActor
    const inHouse = await completedDeal(a, siblingActor)
    expect(reviewHint(await get("deals.get", a, { relationUuid: inHouse }))?.canReview).toBe(false)
    const refused = await post("reviews.create", a, { relationUuid: inHouse, rating: 5 })
    expect([refused.status, codeOf(refused)]).toEqual([403, "forbidden"])
  })

  it("reveals a lone review when the window closes (worker job)", async () => {
    const deal = await completedDeal(a, c, 13)
    const review = bodyOf<ReviewView>(await post("reviews.create", c, { relationUuid: deal, rating: 3 }))
    expect(review.status).toBe("submitted")
    await m.runtime.runPromise(revealDueReviews())
    expect(only(await m.sql<{ status: string }>("SELECT status FROM reviews WHERE uuid = $1", review.uuid)).status).toBe("submitted")
    await m.sql("UPDATE reviews SET window_ends_at = now() - interval '1 second' WHERE uuid = $1", review.uuid)
    expect(await m.runtime.runPromise(revealDueReviews())).toBeGreaterThanOrEqual(1)
    const [row] = await m.sql<{ status: string }>("SELECT status FROM reviews WHERE uuid = $1", review.uuid)
    expect(row!.status).toBe("published")
    expect((await eventsOf(review.uuid)).map((event) => [event.type, event.data["status"], event.context["cause"]])).toEqual([
      ["review.submitted", "submitted", undefined],
      ["review.moderated", "published", "revealed"]
    ])
    expect(await m.runtime.runPromise(Effect.map(revealDueReviews(), (n) => n))).toBe(0)
  })

  it("lets the reviewed profile reply once, replace it at its revision and remove it", async () => {
    const deal = await completedDeal(a, c)
    await post("reviews.create", c, { relationUuid: deal, rating: 2 })
    const review = bodyOf<ReviewView>(await post("reviews.create", a, { relationUuid: deal, rating: 4, body: "Хорошо" }))
    expect(codeOf(await post("reviews.reply", a, { reviewUuid: review.uuid, body: "Сам себе" }))).toBe("forbidden")
    const replied = bodyOf<ReviewView>(await post("reviews.reply", c, { reviewUuid: review.uuid, body: "Спасибо" }))
    expect(replied.reply?.body).toBe("Спасибо")
    expect(codeOf(await post("reviews.reply", c, { reviewUuid: review.uuid, body: "Ещё" }))).toBe("invalid_state")
    expect(codeOf(await post("reviews.reply", c, { reviewUuid: review.uuid, body: "Ещё", expectedRevision: 1 }))).toBe("revision_conflict")
    const replaced = bodyOf<ReviewView>(await post("reviews.reply", c, { reviewUuid: review.uuid, body: "Ещё", expectedRevision: replied.revision }))
    expect(replaced.reply?.body).toBe("Ещё")
    expect(codeOf(await post("reviews.reply", c, { reviewUuid: review.uuid, body: "x".repeat(2001), expectedRevision: replaced.revision }))).toBe("invalid_request")
    const removed = bodyOf<ReviewView>(await post("reviews.reply_remove", c, { reviewUuid: review.uuid, expectedRevision: replaced.revision }))
    expect(removed.reply).toBeUndefined()
    expect(codeOf(await post("reviews.reply_remove", c, { reviewUuid: review.uuid, expectedRevision: removed.revision }))).toBe("invalid_state")
    expect(codeOf(await post("reviews.reply", b, { reviewUuid: randomUUID(), body: "x" }))).toBe("not_found")
  })
})

describe("moderation of complaints and reviews", () => {
  const moderator = async () => {
    const actor = await m.profile()
    await m.sql("INSERT INTO moderators (email, source) VALUES ($1, 'cli')", actor.email.toLowerCase())
    return actor
  }

  it("upholds a complaint about a relation with remove_review: the review leaves public reads, events reach the right audiences, restore brings it back", async () => {
    const mod = await moderator()
    const customer = await m.profile({ public: true, name: "Клиент" })
    const specialist = await m.profile({ public: true, name: "Исполнитель" })
    const deal = await completedDeal(customer, specialist)
    const insult = bodyOf<ReviewView>(await post("reviews.create", customer, { relationUuid: deal, rating: 1, body: "Оскорбление" }))
    await post("reviews.create", specialist, { relationUuid: deal, rating: 5 })
    expect(bodyOf<PublicReviews>(await get("reviews.list_public", undefined, { profileUuid: specialist.profileUuid })).summary.reviewCount).toBe(1)

    const complaint = bodyOf<ComplaintView>(await post("complaints.create", specialist, { subjectKind: "relation", subjectUuid: deal, body: "Отзыв оскорбителен" }))
    expect(codeOf(await get("moderation.complaints.queue", specialist))).toBe("forbidden")
    const queue = bodyOf<{ items: Array<{ uuid: string; subjectSnapshot: Record<string, unknown>; reviews?: Array<{ uuid: string }> }> }>(
      await get("moderation.complaints.queue", mod, { subjectKind: "relation", limit: "100" })
    )
    const item = queue.items.find((entry) => entry.uuid === complaint.uuid)!
    expect(item.subjectSnapshot).toMatchObject({ kind: "relation", relationKind: "deal", status: "completed" })
    expect(item.reviews?.map((review) => review.uuid)).toContain(insult.uuid)
    const audited = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM moderation_audit WHERE complaint_uuid = $1", complaint.uuid)
    expect(audited[0]!.n).toBeGreaterThanOrEqual(1)

    const decide = (payload: Record<string, unknown>) => post("moderation.complaints.decide", mod, { complaintUuid: complaint.uuid, expectedRevision: 1, ...payload })
    expect(codeOf(await decide({ decision: "uphold", action: "unpublish", reason: "x" }))).toBe("invalid_request")
    expect(codeOf(await decide({ decision: "uphold", action: "remove_review", reason: "x" }))).toBe("invalid_request")
    expect(codeOf(await decide({ decision: "dismiss", action: "remove_review", reviewUuid: insult.uuid, reason: "x" }))).toBe("invalid_request")
    expect(codeOf(await decide({ decision: "uphold", action: "remove_review", reviewUuid: insult.uuid, reason: "" }))).toBe("invalid_request")
    expect(codeOf(await decide({ decision: "uphold", action: "remove_review", reviewUuid: insult.uuid, reason: "x", expectedRevision: 2 }))).toBe("revision_conflict")
    expect(codeOf(await post("moderation.complaints.decide", specialist, { complaintUuid: complaint.uuid, expectedRevision: 1, decision: "dismiss", reason: "x" }))).toBe("forbidden")
    expect(await m.sql("SELECT 1 FROM complaints WHERE uuid = $1 AND status = 'open'", complaint.uuid)).toHaveLength(1)

    const decided = await decide({ decision: "uphold", action: "remove_review", reviewUuid: insult.uuid, reason: "Оскорбления запрещены" })
    expect(decided.status, JSON.stringify(decided.body)).toBe(200)
    expect(bodyOf<{ complaint: ComplaintView }>(decided).complaint).toMatchObject({
      status: "upheld",
      decision: { decision: "uphold", action: "remove_review", reason: "Оскорбления запрещены" }
    })
    const publicAfter = bodyOf<PublicReviews>(await get("reviews.list_public", undefined, { profileUuid: specialist.profileUuid }))
    expect(publicAfter.items).toEqual([])
    expect(publicAfter.summary.reviewCount).toBe(0)
    // The author and the subject still see it, removed, with the reason.
    expect(bodyOf<ReviewPage>(await get("reviews.list_own", specialist)).items[0]).toMatchObject({
      uuid: insult.uuid,
      status: "removed",
      moderationReason: "Оскорбления запрещены"
    })
    expect(bodyOf<ComplaintView>(await get("complaints.get", specialist, { complaintUuid: complaint.uuid })).status).toBe("upheld")
    const complaintEvents = await eventsOf(complaint.uuid)
    expect(complaintEvents.map((event) => [event.type, event.data["status"], event.context])).toEqual([
      ["complaint.created", "open", { profileUuid: specialist.profileUuid }],
      ["complaint.moderated", "upheld", { audience: [specialist.profileUuid], moderation: "uphold" }]
    ])
    const removal = (await eventsOf(insult.uuid)).at(-1)!
    expect([removal.type, removal.data["status"], removal.context["profileUuid"], removal.context["audience"]]).toEqual([
      "review.moderated",
      "removed",
      undefined,
      [customer.profileUuid, specialist.profileUuid]
    ])
    // Deciding again: the complaint is no longer open.
    expect(codeOf(await decide({ decision: "dismiss", reason: "x", expectedRevision: 2 }))).toBe("invalid_state")

    const [row] = await m.sql<{ revision: number }>("SELECT revision FROM reviews WHERE uuid = $1", insult.uuid)
    const restored = await post("moderation.reviews.decide", mod, { reviewUuid: insult.uuid, expectedRevision: row!.revision, decision: "restore", reason: "Пересмотрено" })
    expect(restored.status, JSON.stringify(restored.body)).toBe(200)
    expect(bodyOf<PublicReviews>(await get("reviews.list_public", undefined, { profileUuid: specialist.profileUuid })).summary.reviewCount).toBe(1)
    expect(codeOf(await post("moderation.reviews.decide", mod, { reviewUuid: insult.uuid, expectedRevision: row!.revision + 1, decision: "restore", reason: "x" })))
      .toBe("invalid_state")
    const listed = bodyOf<{ items: Array<{ uuid: string; openComplaints: number }> }>(
      await get("moderation.reviews.list", mod, { profileUuid: specialist.profileUuid })
    )
    expect(listed.items.map((review) => review.uuid)).toContain(insult.uuid)
  })

  it("upholds with unpublish: every open complaint on the publication is decided and it leaves public view", async () => {
    const mod = await moderator()
    const owner = await m.profile({ public: true })
    const publication = await m.publication(owner, "service", { title: "Подозрительная услуга" })
    const first = bodyOf<ComplaintView>(await post("complaints.create", a, { subjectKind: "publication", subjectUuid: publication, body: "Обман" }))
    const second = bodyOf<ComplaintView>(await post("complaints.create", b, { subjectKind: "publication", subjectUuid: publication, body: "Тоже обман" }))
    const queue = bodyOf<{ items: Array<{ uuid: string; otherOpenComplaints: Array<{ uuid: string }> }> }>(
      await get("moderation.complaints.queue", mod, { subjectKind: "publication", limit: "100" })
    )
    expect(queue.items.find((item) => item.uuid === first.uuid)!.otherOpenComplaints.map((other) => other.uuid)).toEqual([second.uuid])
    const decided = await post("moderation.complaints.decide", mod, {
      complaintUuid: first.uuid,
      expectedRevision: 1,
      decision: "uphold",
      action: "unpublish",
      reason: "Мошенническая услуга"
    })
    expect(decided.status, JSON.stringify(decided.body)).toBe(200)
    expect(bodyOf<{ alsoDecided: Array<string> }>(decided).alsoDecided).toEqual([second.uuid])
    expect(bodyOf<ComplaintView>(await get("complaints.get", b, { complaintUuid: second.uuid })).status).toBe("upheld")
    const [row] = await m.sql<{ status: string; approved: unknown }>("SELECT status, approved FROM publications WHERE uuid = $1", publication)
    expect(row).toEqual({ status: "returned", approved: null })
    expect(codeOf(await post("favorites.set", c, { entityKind: "publication", entityUuid: publication }))).toBe("not_found")
    const events = await m.sql<{ type: string; data: Record<string, unknown> }>(
      "SELECT type, data FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY append_order", publication
    )
    expect(events.map((event) => [event.type, event.data["status"]])).toEqual([["publication.moderated", "returned"]])
  })
})
