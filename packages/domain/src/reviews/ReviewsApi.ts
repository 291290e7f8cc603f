import { HttpApiGroup, OpenApi } from "@effect/platform"
import {
  ComplaintDecisionInput,
  ComplaintDecisionResult,
  ComplaintInput,
  ComplaintPage,
  ComplaintQuery,
  ComplaintQueuePage,
  ComplaintQueueQuery,
  ComplaintView
} from "../complaints/Complaint.js"
import { FavoriteChange, FavoriteInput, FavoritePage, PageQuery } from "../favorites/Favorite.js"
import {
  CustomerQuery,
  CustomerReviews,
  ModeratedReviewPage,
  OwnReviewsQuery,
  PublicReviews,
  PublicReviewsQuery,
  ReplyInput,
  ReplyRemoveInput,
  ReviewDecisionInput,
  ReviewInput,
  ReviewModerationQuery,
  ReviewPage,
  ReviewView
} from "./Review.js"
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { anyone, authenticated, authenticatedOrOperator } from "../kernel/Operation.js"

/**
 * Favorites, complaints, customers and reviews (spec section "Favorites, complaints, customers,
 * profiles, reviews" of docs/spec/interface.md): the spec's ids, paths, inputs,
 * scopes and approvals where it gives them, our proposals for the reviews, whose
 * fields the spec does not show. Moderation of complaints and reviews are
 * extensions, as publication moderation is.
 */

const path = <const Id extends string>(id: Id) => `/api/v1/commands/${id}` as const

/** What a command on a record may answer; `revisionErrors` adds the refusal of a stale expectedRevision. */
const commandErrors = [wire(Forbidden), wire(NotFound), wire(InvalidState), wire(RequestConflict)] as const
const revisionErrors = [wire(Forbidden), wire(NotFound), wire(InvalidState), wire(RevisionConflict), wire(RequestConflict)] as const

const favoritesWrite = { scopes: ["favorites:write"] }

export const FavoritesApi = HttpApiGroup.make("favorites", { topLevel: true })
  .add(
    authenticated("GET", "favorites.list", path("favorites.list"), {
      scopes: ["favorites:read"],
      summary: "The acting profile's favorites, newest first; entities no longer visible are marked available: false"
    }).setUrlParams(PageQuery).addSuccess(FavoritePage)
  )
  .add(
    authenticated("POST", "favorites.set", path("favorites.set"), {
      ...favoritesWrite,
      summary: "Add a publicly visible profile or publication to favorites; setting it again changes nothing"
    }, [wire(Forbidden), wire(NotFound), wire(RequestConflict)]).setPayload(FavoriteInput).addSuccess(FavoriteChange)
  )
  .add(
    authenticated("POST", "favorites.remove", path("favorites.remove"), {
      ...favoritesWrite,
      summary: "Remove a profile or publication from favorites; removing an absent one changes nothing"
    }, [wire(Forbidden), wire(NotFound), wire(RequestConflict)]).setPayload(FavoriteInput).addSuccess(FavoriteChange)
  )
  .annotate(OpenApi.Description, "Favorites: profiles and publications a profile keeps, visible to it alone")

export const ComplaintsApi = HttpApiGroup.make("complaints", { topLevel: true })
  .add(
    authenticated("POST", "complaints.create", path("complaints.create"), {
      scopes: ["complaints:write"],
      approval: true,
      summary: "Complain about a profile, publication, message or relation the acting profile can see (never its own); the subject is never told"
    }, commandErrors).setPayload(ComplaintInput).addSuccess(ComplaintView)
  )
  .add(
    authenticated("GET", "complaints.get", path("complaints.get"), {
      scopes: ["complaints:read"],
      summary: "One complaint of the acting profile, with the moderator's decision and reason"
    }, [wire(NotFound)]).setUrlParams(ComplaintQuery).addSuccess(ComplaintView)
  )
  .add(
    authenticated("GET", "complaints.list", path("complaints.list"), {
      scopes: ["complaints:read"],
      summary: "The acting profile's complaints, newest first"
    }).setUrlParams(PageQuery).addSuccess(ComplaintPage)
  )
  .annotate(OpenApi.Description, "Complaints to moderators")

export const CustomersApi = HttpApiGroup.make("customers", { topLevel: true })
  .add(
    anyone("GET", "customers.get", path("customers.get"), {
      summary: "A customer's reputation by its alias: published reviews about it as a customer, with a summary (public)"
    }, [wire(NotFound)]).setUrlParams(CustomerQuery).addSuccess(CustomerReviews)
  )
  .annotate(OpenApi.Description, "Customers: reputation without a public profile")

const reviewsRead = { scopes: ["reviews:read"], approval: false }
const reviewsWrite = { scopes: ["reviews:write"], approval: true }

export const ReviewsApi = HttpApiGroup.make("reviews", { topLevel: true })
  .add(
    authenticated("GET", "reviews.list_own", path("reviews.list_own"), {
      ...reviewsRead,
      summary: "Reviews the acting profile received (default) or wrote, newest first; a sealed review received shows only that it exists"
    }).setUrlParams(OwnReviewsQuery).addSuccess(ReviewPage)
  )
  .add(
    authenticated("POST", "reviews.create", path("reviews.create"), {
      ...reviewsWrite,
      summary: "Review the other party of a completed deal, within 14 days of completion, once; sealed until both wrote or the window closes"
    }, commandErrors).setPayload(ReviewInput).addSuccess(ReviewView)
  )
  .add(
    anyone("GET", "reviews.list_public", path("reviews.list_public"), {
      summary: "Published reviews of a public profile as a specialist, newest first, with the rating summary (public)"
    }, [wire(NotFound)]).setUrlParams(PublicReviewsQuery).addSuccess(PublicReviews)
  )
  .add(
    authenticated("POST", "reviews.reply", path("reviews.reply"), {
      ...reviewsWrite,
      summary: "The reviewed profile replies once to a published review (expectedRevision replaces the reply)"
    }, revisionErrors).setPayload(ReplyInput).addSuccess(ReviewView)
  )
  .add(
    authenticated("POST", "reviews.reply_remove", path("reviews.reply_remove"), {
      ...reviewsWrite,
      summary: "The reviewed profile removes its reply"
    }, revisionErrors).setPayload(ReplyRemoveInput).addSuccess(ReviewView)
  )
  .annotate(OpenApi.Description, "Double-blind reviews of completed deals")

const moderator = { extension: true, sessionOnly: true } as const

export const MarketplaceModerationApi = HttpApiGroup.make("marketplace_moderation", { topLevel: true })
  .add(
    authenticatedOrOperator("GET", "moderation.complaints.queue", "/api/v1/moderation/complaints", {
      ...moderator,
      scopes: ["moderation:read"],
      summary: "Complaints, oldest first (open by default), each with the subject as filed and now, and the other open complaints on it (moderators only)"
    }, [wire(Forbidden)]).setUrlParams(ComplaintQueueQuery).addSuccess(ComplaintQueuePage)
  )
  .add(
    authenticatedOrOperator("POST", "moderation.complaints.decide", "/api/v1/moderation/complaint-decisions", {
      ...moderator,
      scopes: ["moderation:write"],
      approval: true,
      summary: "Uphold (with an action on the subject) or dismiss an open complaint; an uphold decides every open complaint on the subject (moderators only)"
    }, revisionErrors).setPayload(ComplaintDecisionInput).addSuccess(ComplaintDecisionResult)
  )
  .add(
    authenticatedOrOperator("GET", "moderation.reviews.list", "/api/v1/moderation/reviews", {
      ...moderator,
      scopes: ["moderation:read"],
      summary: "Reviews with the open complaints about their relation, newest first (moderators only)"
    }, [wire(Forbidden)]).setUrlParams(ReviewModerationQuery).addSuccess(ModeratedReviewPage)
  )
  .add(
    authenticatedOrOperator("POST", "moderation.reviews.decide", "/api/v1/moderation/review-decisions", {
      ...moderator,
      scopes: ["moderation:write"],
      approval: true,
      summary: "Remove a published review or restore a removed one, with a reason (moderators only)"
    }, revisionErrors).setPayload(ReviewDecisionInput).addSuccess(ReviewView)
  )
  .annotate(OpenApi.Description, "Moderation of complaints and reviews")
