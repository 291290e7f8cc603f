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
import { Authentication, OperatorAccess } from "../kernel/Authentication.js"
import { operation } from "../kernel/Operation.js"

/**
 * Favorites, complaints, customers and reviews (spec section "Favorites, complaints, customers,
 * profiles, reviews" of docs/spec/interface.md): the spec's ids, paths, inputs,
 * scopes and approvals where it gives them, our proposals for the reviews, whose
 * fields the spec does not show. Moderation of complaints and reviews are
 * extensions, as publication moderation is.
 */

const path = <const Id extends string>(id: Id) => `/api/v1/commands/${id}` as const

export const FavoritesApi = HttpApiGroup.make("favorites", { topLevel: true })
  .add(
    operation("GET", "favorites.list", path("favorites.list"), {
      scopes: ["favorites:read"],
      summary: "The acting profile's favorites, newest first; entities no longer visible are marked available: false"
    }).middleware(Authentication).setUrlParams(PageQuery).addSuccess(FavoritePage)
  )
  .add(
    operation("POST", "favorites.set", path("favorites.set"), {
      scopes: ["favorites:write"],
      summary: "Add a publicly visible profile or publication to favorites; setting it again changes nothing"
    })
      .middleware(Authentication)
      .setPayload(FavoriteInput)
      .addSuccess(FavoriteChange)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "favorites.remove", path("favorites.remove"), {
      scopes: ["favorites:write"],
      summary: "Remove a profile or publication from favorites; removing an absent one changes nothing"
    })
      .middleware(Authentication)
      .setPayload(FavoriteInput)
      .addSuccess(FavoriteChange)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Favorites: profiles and publications a profile keeps, visible to it alone")

export const ComplaintsApi = HttpApiGroup.make("complaints", { topLevel: true })
  .add(
    operation("POST", "complaints.create", path("complaints.create"), {
      scopes: ["complaints:write"],
      approval: true,
      summary: "Complain about a profile, publication, message or relation the acting profile can see (never its own); the subject is never told"
    })
      .middleware(Authentication)
      .setPayload(ComplaintInput)
      .addSuccess(ComplaintView)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "complaints.get", path("complaints.get"), {
      scopes: ["complaints:read"],
      summary: "One complaint of the acting profile, with the moderator's decision and reason"
    }).middleware(Authentication).setUrlParams(ComplaintQuery).addSuccess(ComplaintView).addError(wire(NotFound))
  )
  .add(
    operation("GET", "complaints.list", path("complaints.list"), {
      scopes: ["complaints:read"],
      summary: "The acting profile's complaints, newest first"
    }).middleware(Authentication).setUrlParams(PageQuery).addSuccess(ComplaintPage)
  )
  .annotate(OpenApi.Description, "Complaints to moderators")

export const CustomersApi = HttpApiGroup.make("customers", { topLevel: true })
  .add(
    operation("GET", "customers.get", path("customers.get"), {
      summary: "A customer's reputation by its alias: published reviews about it as a customer, with a summary (public)"
    }).setUrlParams(CustomerQuery).addSuccess(CustomerReviews).addError(wire(NotFound))
  )
  .annotate(OpenApi.Description, "Customers: reputation without a public profile")

const reviewsRead = { scopes: ["reviews:read"], approval: false }
const reviewsWrite = { scopes: ["reviews:write"], approval: true }

export const ReviewsApi = HttpApiGroup.make("reviews", { topLevel: true })
  .add(
    operation("GET", "reviews.list_own", path("reviews.list_own"), {
      ...reviewsRead,
      summary: "Reviews the acting profile received (default) or wrote, newest first; a sealed review received shows only that it exists"
    }).middleware(Authentication).setUrlParams(OwnReviewsQuery).addSuccess(ReviewPage)
  )
  .add(
    operation("POST", "reviews.create", path("reviews.create"), {
      ...reviewsWrite,
      summary: "Review the other party of a completed deal, within 14 days of completion, once; sealed until both wrote or the window closes"
    })
      .middleware(Authentication)
      .setPayload(ReviewInput)
      .addSuccess(ReviewView)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "reviews.list_public", path("reviews.list_public"), {
      summary: "Published reviews of a public profile as a specialist, newest first, with the rating summary (public)"
    }).setUrlParams(PublicReviewsQuery).addSuccess(PublicReviews).addError(wire(NotFound))
  )
  .add(
    operation("POST", "reviews.reply", path("reviews.reply"), {
      ...reviewsWrite,
      summary: "The reviewed profile replies once to a published review (expectedRevision replaces the reply)"
    })
      .middleware(Authentication)
      .setPayload(ReplyInput)
      .addSuccess(ReviewView)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "reviews.reply_remove", path("reviews.reply_remove"), {
      ...reviewsWrite,
      summary: "The reviewed profile removes its reply"
    })
      .middleware(Authentication)
      .setPayload(ReplyRemoveInput)
      .addSuccess(ReviewView)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Double-blind reviews of completed deals")

const moderator = { extension: true, sessionOnly: true } as const

export const MarketplaceModerationApi = HttpApiGroup.make("marketplace_moderation", { topLevel: true })
  .add(
    operation("GET", "moderation.complaints.queue", "/api/v1/moderation/complaints", {
      ...moderator,
      scopes: ["moderation:read"],
      summary: "Complaints, oldest first (open by default), each with the subject as filed and now, and the other open complaints on it (moderators only)"
    })
      .middleware(Authentication)
      .middleware(OperatorAccess)
      .setUrlParams(ComplaintQueueQuery)
      .addSuccess(ComplaintQueuePage)
      .addError(wire(Forbidden))
  )
  .add(
    operation("POST", "moderation.complaints.decide", "/api/v1/moderation/complaint-decisions", {
      ...moderator,
      scopes: ["moderation:write"],
      approval: true,
      summary: "Uphold (with an action on the subject) or dismiss an open complaint; an uphold decides every open complaint on the subject (moderators only)"
    })
      .middleware(Authentication)
      .middleware(OperatorAccess)
      .setPayload(ComplaintDecisionInput)
      .addSuccess(ComplaintDecisionResult)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "moderation.reviews.list", "/api/v1/moderation/reviews", {
      ...moderator,
      scopes: ["moderation:read"],
      summary: "Reviews with the open complaints about their relation, newest first (moderators only)"
    })
      .middleware(Authentication)
      .middleware(OperatorAccess)
      .setUrlParams(ReviewModerationQuery)
      .addSuccess(ModeratedReviewPage)
      .addError(wire(Forbidden))
  )
  .add(
    operation("POST", "moderation.reviews.decide", "/api/v1/moderation/review-decisions", {
      ...moderator,
      scopes: ["moderation:write"],
      approval: true,
      summary: "Remove a published review or restore a removed one, with a reason (moderators only)"
    })
      .middleware(Authentication)
      .middleware(OperatorAccess)
      .setPayload(ReviewDecisionInput)
      .addSuccess(ReviewView)
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Moderation of complaints and reviews")
