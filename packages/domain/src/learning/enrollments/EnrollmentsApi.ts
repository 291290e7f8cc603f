import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  Application,
  Calendar,
  CalendarQuery,
  Completion,
  DecideInput,
  EnrollInput,
  Enrollment,
  EnrollmentCommand,
  EnrollmentListQuery,
  EnrollmentPage,
  Invited,
  InviteInput,
  MediaList,
  MediaProgress,
  MediaSaveInput,
  OverrideInput,
  OverrideResult,
  PauseInput,
  PausePreview,
  PausePreviewQuery,
  RosterQuery,
  TransferApplied,
  TransferApplyInput,
  TransferPlan,
  TransferPreviewInput,
  WithdrawInput
} from "./EnrollmentModel.js"
import { CapacityFull, ConflictOfInterest, GradeFrozen, NotEligible, PlanExpired, PlanStale, StepLocked, WindowClosed } from "../LearningErrors.js"
import { NodeKey } from "../courses/Model.js"
import { InvalidState, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { field } from "../../kernel/Common.js"
import { authenticated, recordErrors } from "../../kernel/Operation.js"
import { EnrollmentAccess, learnerOnly, learnerOrStaff, staffWith } from "./EnrollmentRule.js"

/**
 * The enrollment side of learning L2: enrollments and their state machine,
 * invitations, decisions, seats, pauses, withdrawal and restore, date overrides, the application,
 * the calendar (JSON or ICS), completion, media progress and transfers between runs. Ids, paths,
 * scopes and approval flags as the role matrix (`learning/RoleMatrix.test.ts`) expects them.
 */
const base = "/api/v1/learning"
const EnrollmentPath = Schema.Struct({ enrollment: field(Schema.UUID, "The enrollment's uuid (from learning.enrollments.list).") })
const RunPath = Schema.Struct({ run: field(Schema.UUID, "The course run's uuid (a training publication names its runs).") })
const CoursePath = Schema.Struct({ course: Schema.UUID })

const changeErrors = Schema.Union(wire(RevisionConflict), wire(RequestConflict))

const read = ["learning:read"]
const study = ["learning:study"]
const teach = ["learning:teach"]
const either = ["learning:study", "learning:teach"]

/** A command on one enrollment at expectedRevision; `errors` its own after the common ones. */
const enrollmentCommand = <
  const Id extends string,
  const Path extends `/${string}`,
  const Errors extends ReadonlyArray<Schema.Schema.Any> = []
>(
  id: Id,
  path: Path,
  options: { readonly scopes: ReadonlyArray<string>; readonly approval?: boolean; readonly summary: string },
  errors?: Errors
) =>
  authenticated("POST", id, `${base}/enrollments/:enrollment${path}`, options, [recordErrors, changeErrors, wire(InvalidState), ...(errors ?? [])])
    .setPath(EnrollmentPath)
    .addSuccess(Enrollment)

/** A read of one enrollment's facet. */
const enrollmentRead = <const Id extends string, const Path extends `/${string}`>(id: Id, path: Path, summary: string) =>
  authenticated("GET", id, `${base}/enrollments/:enrollment${path}`, { scopes: read, summary }, [recordErrors])
    .setPath(EnrollmentPath)

export const LearningEnrollmentsApi = HttpApiGroup.make("learning_enrollments", { topLevel: true })
  .add(
    authenticated("GET", "learning.enrollments.list", `${base}/enrollments`, { scopes: read, summary: "The caller's enrollments, newest first" })
      .setUrlParams(EnrollmentListQuery)
      .addSuccess(EnrollmentPage)
  )
  .add(
    authenticated("GET", "learning.enrollments.get", `${base}/enrollments/:enrollment`, { scopes: read, summary: "One enrollment (its learner or course staff)" }, [recordErrors])
      .annotate(EnrollmentAccess, learnerOrStaff)
      .setPath(EnrollmentPath)
      .addSuccess(Enrollment)
  )
  .add(
    authenticated("POST", "learning.enrollments.enroll", `${base}/runs/:run/enroll`, {
      scopes: study,
      summary: "Enroll (open admission, seat free), apply (approval) or join the waitlist (full); learning.enrollment.activated / requested"
    }, [recordErrors, wire(RequestConflict), wire(NotEligible), wire(CapacityFull)])
      .setPath(RunPath)
      .setPayload(EnrollInput)
      .addSuccess(Enrollment)
  )
  .add(
    authenticated("POST", "learning.enrollments.invite", `${base}/runs/:run/invite`, {
      scopes: teach,
      approval: true,
      summary: "Invite up to 100 profiles; each invitation reserves a seat until it expires"
    }, [recordErrors, wire(RequestConflict), wire(InvalidState), wire(NotEligible), wire(CapacityFull)])
      .setPath(RunPath)
      .setPayload(InviteInput)
      .addSuccess(Invited)
  )
  .add(
    enrollmentCommand("learning.enrollments.accept_invitation", "/accept-invitation", { scopes: study, summary: "The invitee accepts: invited → active" })
      .annotate(EnrollmentAccess, learnerOnly)
      .setPayload(EnrollmentCommand)
  )
  .add(
    authenticated("GET", "learning.enrollments.course_list", `${base}/courses/:course/enrollments`, {
      scopes: read,
      summary: "The course's roster with progress (staff, scoped to their runs)"
    }, [recordErrors])
      .setPath(CoursePath)
      .setUrlParams(RosterQuery)
      .addSuccess(EnrollmentPage)
  )
  .add(
    enrollmentCommand("learning.enrollments.decide", "/decision", {
      scopes: teach,
      approval: true,
      summary: "Approve (→ active, or offered with requireSeatConfirmation), reject or waitlist a request"
    }, [wire(CapacityFull), wire(ConflictOfInterest)])
      .annotate(EnrollmentAccess, staffWith("roster_manage", { learner: false }))
      .setPayload(DecideInput)
  )
  .add(
    authenticated("POST", "learning.enrollments.override", `${base}/enrollments/:enrollment/overrides`, {
      scopes: teach,
      approval: true,
      summary: "Set or clear the learner's date/attempt override (one step or run-wide); the computed calendar delta"
    }, [recordErrors, wire(RequestConflict), wire(InvalidState), wire(GradeFrozen)])
      .annotate(EnrollmentAccess, staffWith("dates_grant", { learner: false }))
      .setPath(EnrollmentPath)
      .setPayload(OverrideInput)
      .addSuccess(OverrideResult)
  )
  .add(
    enrollmentCommand("learning.enrollments.pause", "/pause", {
      scopes: either,
      summary: "Pause within the run's limits: nothing unlocks or falls due while paused; resume shifts dates by the paused days"
    }, [wire(WindowClosed)])
      .annotate(EnrollmentAccess, staffWith("roster_manage", { learner: true }))
      .setPayload(PauseInput)
  )
  .add(
    enrollmentRead("learning.enrollments.pause_preview", "/pause-preview", "What a pause now would do: allowed, days left, due date shifts; no side effects")
      .annotate(EnrollmentAccess, learnerOrStaff)
      .setUrlParams(PausePreviewQuery)
      .addSuccess(PausePreview)
  )
  .add(
    enrollmentCommand("learning.enrollments.restore", "/restore", {
      scopes: either,
      approval: true,
      summary: "Undo a withdrawal within the run's restoreDays: back to active or paused"
    }, [wire(WindowClosed), wire(CapacityFull), wire(NotEligible)])
      .annotate(EnrollmentAccess, staffWith("roster_manage", { learner: true }))
      .setPayload(EnrollmentCommand)
  )
  .add(
    enrollmentCommand("learning.enrollments.resume", "/resume", { scopes: either, summary: "Resume a pause; dates shift by the paused days" })
      .annotate(EnrollmentAccess, learnerOrStaff)
      .setPayload(EnrollmentCommand)
  )
  .add(
    enrollmentCommand("learning.enrollments.start", "/start", { scopes: study, summary: "The learner starts: anchors self-paced offsets; first steps become available" }, [wire(NotEligible)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPayload(EnrollmentCommand)
  )
  .add(
    enrollmentCommand("learning.enrollments.withdraw", "/withdraw", {
      scopes: either,
      approval: true,
      summary: "Withdraw (self or staff): with the run's grace an active or paused enrollment waits in withdrawal_requested"
    }).annotate(EnrollmentAccess, staffWith("roster_manage", { learner: true })).setPayload(WithdrawInput)
  )
  .add(
    enrollmentCommand("learning.seats.accept", "/accept-seat", { scopes: study, summary: "Take the offered seat: offered → active" })
      .annotate(EnrollmentAccess, learnerOnly)
      .setPayload(EnrollmentCommand)
  )
  .add(
    enrollmentCommand("learning.seats.decline", "/decline-seat", {
      scopes: study,
      approval: true,
      summary: "Decline an offered seat or an invitation; the next waitlisted learner is offered the seat"
    }).annotate(EnrollmentAccess, learnerOnly).setPayload(EnrollmentCommand)
  )
  .add(
    enrollmentRead("learning.applications.get", "/application", "The application's answers and decision history")
      .annotate(EnrollmentAccess, staffWith("roster_manage", { learner: true }))
      .addSuccess(Application)
  )
  .add(
    enrollmentRead("learning.calendar.get", "/calendar", "Effective dates per step with provenance (schedule → group → learner → extension → pause → incident); format ics adds an iCalendar document")
      .annotate(EnrollmentAccess, learnerOrStaff)
      .setUrlParams(CalendarQuery)
      .addSuccess(Calendar)
  )
  .add(
    enrollmentRead("learning.completion.get", "/completion", "Progress against the completion criteria and the completion record")
      .annotate(EnrollmentAccess, learnerOrStaff)
      .addSuccess(Completion)
  )
  .add(
    enrollmentRead("learning.media.get", "/media-progress", "Media progress of the video steps")
      .annotate(EnrollmentAccess, learnerOrStaff)
      .addSuccess(MediaList)
  )
  .add(
    authenticated("PUT", "learning.media.save", `${base}/enrollments/:enrollment/steps/:node/media-progress`, {
      scopes: study,
      summary: "Save position and watched ranges; 90 % watched completes the step"
    }, [recordErrors, wire(RevisionConflict), wire(InvalidState), wire(StepLocked)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(Schema.Struct({ enrollment: Schema.UUID, node: NodeKey }))
      .setPayload(MediaSaveInput)
      .addSuccess(MediaProgress)
  )
  .add(
    authenticated("POST", "learning.transfers.preview", `${base}/courses/:course/transfers/preview`, {
      scopes: teach,
      summary: "Plan moving enrollments between runs of the course; progress mapped by nodeKey; no side effects but the plan"
    }, [recordErrors, wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(TransferPreviewInput)
      .addSuccess(TransferPlan)
  )
  .add(
    authenticated("POST", "learning.transfers.apply", `${base}/courses/:course/transfers/:transfer/apply`, {
      scopes: teach,
      approval: true,
      summary: "Commit the stored transfer plan exactly"
    }, [recordErrors, wire(RequestConflict), wire(InvalidState), wire(PlanStale), wire(PlanExpired), wire(CapacityFull)])
      .setPath(Schema.Struct({ course: Schema.UUID, transfer: Schema.UUID }))
      .setPayload(TransferApplyInput)
      .addSuccess(TransferApplied)
  )
  .annotate(OpenApi.Description, "Learning: enrollments, seats, pauses, dates and their provenance, completion, media progress, transfers")
