import {
  advanceEnrollments,
  advanceRegradePlans,
  advanceRuns,
  announceOverdueReviews,
  closeResolvedAppeals,
  expireExtensions,
  nextAppealClosingMoment,
  nextCommittingPlanMoment,
  nextEnrollmentMoment,
  nextExtensionExpiryMoment,
  nextOverdueReviewMoment,
  nextRunMoment,
  PostgresBlobStore,
  runLearningJobs,
  runLearningNotifier
} from "@birzha/domain/internal"
import { Duration, Effect } from "effect"
import { drainingJob, type JobOptions } from "../marketplace/MarketplaceJobs.js"

/**
 * The run clock: scheduled runs start at `startsAt`; running runs finish 7 days
 * after `endsAt` (their active and paused enrollments complete). Rows are claimed with
 * `SKIP LOCKED`, so any number of workers may run it.
 */
export const makeLearningRunsJob = (options: JobOptions = {}) =>
  drainingJob({ name: "learning_runs", what: "learning run clock", done: "learning runs advanced", step: (limit) => advanceRuns(new Date(), limit), next: nextRunMoment }, options)

/**
 * Exports, imports and analytics exports: due jobs claimed with `SKIP LOCKED`
 * and a lease; a job whose worker crashed is claimed again once its lease lapsed.
 */
export const makeLearningJobsJob = (options: JobOptions = {}) =>
  drainingJob({
    name: "learning_jobs",
    what: "learning exports and imports",
    done: "learning jobs finished",
    step: (limit) => Effect.provide(runLearningJobs(limit), PostgresBlobStore)
  }, { every: Duration.seconds(2), ...options })

/**
 * The enrollment clock: seat offers and invitations expire at
 * `offerExpiresAt` (the freed seat goes to the next waitlisted learner), pauses resume at `until`,
 * withdrawals complete at the grace end, and active enrollments are woken at their next unlock or
 * reminder (`learning.step.available`, `learning.deadline.approaching`). `SKIP LOCKED` batches.
 */
export const makeLearningEnrollmentsJob = (options: JobOptions = {}) =>
  drainingJob({
    name: "learning_enrollments",
    what: "learning enrollment clock",
    done: "learning enrollments advanced",
    step: (limit) => advanceEnrollments(new Date(), limit),
    next: nextEnrollmentMoment
  }, options)

/**
 * The learning notifier: sequenced learning events queued per recipient from
 * the notifier's cursor, then delivered to the inbox with the recipient's current rights and
 * preferences. The sequencer wakes it; its own tick releases rows whose quiet hours ended and
 * picks up what other processes sequenced. A batch decides up to 500 rows in a handful of
 * statements (`deliverLearningNotifications`), so a burst of events (a regrade plan's 20,000) costs
 * little more than writing its notifications.
 */
export const makeLearningNotifierJob = (options: JobOptions = {}) =>
  drainingJob({
    name: "learning_notifier",
    what: "learning notifier",
    done: "learning notifications decided",
    step: (limit) => runLearningNotifier(limit),
    batch: 500
  }, { every: Duration.seconds(2), ...options })

/**
 * Overdue reviews: claimed review assignments past their due
 * time with no reported issue emit `learning.review.overdue`, once per due time. `SKIP LOCKED` batches.
 */
export const makeLearningReviewsJob = (options: JobOptions = {}) =>
  drainingJob({
    name: "learning_reviews",
    what: "learning review deadlines",
    done: "overdue reviews announced",
    step: (limit) => announceOverdueReviews(new Date(), limit),
    next: nextOverdueReviewMoment
  }, options)

/**
 * Learning corrections: committing regrade plans advance one chunk per pass (a durable
 * cursor in the chunk's transaction, so a killed worker resumes without applying an item twice),
 * resolved appeals close after 7 days unescalated, undecided extension requests expire at their
 * requested due date. `SKIP LOCKED` throughout. A plan that starts committing, and the appeal and
 * extension moments, wake it at once; the 2 s tick is the fallback.
 */
export const makeLearningCorrectionsJob = (options: JobOptions = {}) =>
  drainingJob({
    name: "learning_corrections",
    what: "learning regrade plan commits, appeal closing, extension expiry",
    done: "learning corrections advanced",
    step: (limit) =>
      Effect.gen(function*() {
        const now = new Date()
        const items = yield* advanceRegradePlans()
        return items + (yield* closeResolvedAppeals(now, limit)) + (yield* expireExtensions(now, limit))
      }),
    // A committing plan is due now (a new one wakes the job through NOTIFY, migration 0031).
    next: Effect.map(Effect.all([nextCommittingPlanMoment, nextAppealClosingMoment, nextExtensionExpiryMoment]), (moments) =>
      moments.reduce<Date | undefined>((earliest, at) => at !== undefined && (earliest === undefined || at < earliest) ? at : earliest, undefined))
  }, { every: Duration.seconds(2), ...options })
