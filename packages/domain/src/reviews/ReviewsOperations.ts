import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Actor, SystemCaller } from "../kernel/Authentication.js"
import { ComplaintsApi, CustomersApi, FavoritesApi, MarketplaceModerationApi, ReviewsApi } from "./ReviewsApi.js"
import { decideComplaintModeration, complaintQueue } from "../complaints/ComplaintModeration.js"
import { createComplaint, getComplaint, listComplaints } from "../complaints/Complaints.js"
import { changeFavorite, listFavorites } from "../favorites/Favorites.js"
import { type GroupImplementation, implement, implementWith } from "../operations/Implementation.js"
import { type Moderator, moderatorOf } from "../publications/Moderation.js"
import { decideReviewModeration, moderationReviews } from "./ReviewModeration.js"
import { createReview, listOwnReviews, makePublicReviews, removeReply, replyToReview } from "./Reviews.js"

export const FavoritesOperations = implement(FavoritesApi)({
  "favorites.list": ({ urlParams }, actor) => listFavorites(actor, urlParams),
  "favorites.set": ({ payload }, actor) => changeFavorite(actor, "favorites.set", payload),
  "favorites.remove": ({ payload }, actor) => changeFavorite(actor, "favorites.remove", payload)
})

export const ComplaintsOperations = implement(ComplaintsApi)({
  "complaints.create": ({ payload }, actor) => createComplaint(actor, payload),
  "complaints.get": ({ urlParams }, actor) => getComplaint(actor, urlParams.complaintUuid),
  "complaints.list": ({ urlParams }, actor) => listComplaints(actor, urlParams)
})

export const CustomersOperations = implementWith(CustomersApi, makePublicReviews)(({ getCustomer }) => ({
  "customers.get": ({ urlParams }) => getCustomer(urlParams)
}))

export const ReviewsOperations = implementWith(ReviewsApi, makePublicReviews)(({ listPublicReviews }) => ({
  "reviews.list_own": ({ urlParams }, actor) => listOwnReviews(actor, urlParams),
  "reviews.create": ({ payload }, actor) => createReview(actor, payload),
  "reviews.list_public": ({ urlParams }) => listPublicReviews(urlParams),
  "reviews.reply": ({ payload }, actor) => replyToReview(actor, payload),
  "reviews.reply_remove": ({ payload }, actor) => removeReply(actor, payload)
}))

/** A signed-in moderator, or the operator at the CLI (as publication moderation). */
const moderatorFor = (caller: Actor | SystemCaller) =>
  caller.via === "system" ? Effect.succeed<Moderator>({ accountUuid: null, name: caller.name }) : moderatorOf(caller)

export const MarketplaceModerationOperations = implement(MarketplaceModerationApi)({
  "moderation.complaints.queue": ({ urlParams }, caller) => Effect.flatMap(moderatorFor(caller), (moderator) => complaintQueue(moderator, urlParams)),
  "moderation.complaints.decide": ({ payload }, caller) =>
    Effect.flatMap(moderatorFor(caller), (moderator) => decideComplaintModeration(moderator, payload)),
  "moderation.reviews.list": ({ urlParams }, caller) => Effect.flatMap(moderatorFor(caller), () => moderationReviews(urlParams)),
  "moderation.reviews.decide": ({ payload }, caller) => Effect.flatMap(moderatorFor(caller), (moderator) => decideReviewModeration(moderator, payload))
})

/** Favorites, complaints, customers, reviews and their moderation, registered with the others in `ServiceOperations`. */
export const ReviewsAreaOperations: ReadonlyArray<GroupImplementation<SqlClient.SqlClient>> = [
  FavoritesOperations,
  ComplaintsOperations,
  CustomersOperations,
  ReviewsOperations,
  MarketplaceModerationOperations
]
