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
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { Authentication } from "../../kernel/Authentication.js"
import { operation } from "../../kernel/Operation.js"

/**
 * The enrollment side of learning L2 (LEARNING §4 "L2"): enrollments and their state machine,
 * invitations, decisions, seats, pauses, withdrawal and restore, date overrides, the application,
 * the calendar (JSON or ICS), completion, media progress and transfers between runs. Ids, paths,
 * scopes and approval flags as §4 gives them.
 */
const base = "/api/v1/learning"
const EnrollmentPath = Schema.Struct({ enrollment: Schema.UUID })
const RunPath = Schema.Struct({ run: Schema.UUID })
const CoursePath = Schema.Struct({ course: Schema.UUID })

const recordErrors = Schema.Union(wire(NotFound), wire(Forbidden))
const changeErrors = Schema.Union(wire(RevisionConflict), wire(RequestConflict))

const read = ["learning:read"]
const study = ["learning:study"]
const teach = ["learning:teach"]
const either = ["learning:study", "learning:teach"]

/** A command on one enrollment at expectedRevision. */
const enrollmentCommand = <const Id extends string, const Path extends `/${string}`>(
  id: Id,
  path: Path,
  options: { readonly scopes: ReadonlyArray<string>; readonly approval?: boolean; readonly summary: string }
) =>
  operation("POST", id, `${base}/enrollments/:enrollment${path}`, options)
    .middleware(Authentication)
    .setPath(EnrollmentPath)
    .addSuccess(Enrollment)
    .addError(recordErrors)
    .addError(changeErrors)
    .addError(wire(InvalidState))

/** A read of one enrollment's facet. */
const enrollmentRead = <const Id extends string, const Path extends `/${string}`>(id: Id, path: Path, summary: string) =>
  operation("GET", id, `${base}/enrollments/:enrollment${path}`, { scopes: read, summary })
    .middleware(Authentication)
    .setPath(EnrollmentPath)
    .addError(recordErrors)

export const LearningEnrollmentsApi = HttpApiGroup.make("learning_enrollments", { topLevel: true })
  .add(
    operation("GET", "learning.enrollments.list", `${base}/enrollments`, { scopes: read, summary: "The caller's enrollments, newest first" })
      .middleware(Authentication)
      .setUrlParams(EnrollmentListQuery)
      .addSuccess(EnrollmentPage)
  )
  .add(
    operation("GET", "learning.enrollments.get", `${base}/enrollments/:enrollment`, { scopes: read, summary: "One enrollment (its learner or course staff)" })
      .middleware(Authentication)
      .setPath(EnrollmentPath)
      .addSuccess(Enrollment)
      .addError(recordErrors)
  )
  .add(
    operation("POST", "learning.enrollments.enroll", `${base}/runs/:run/enroll`, {
      scopes: study,
      summary: "Enroll (open admission, seat free), apply (approval) or join the waitlist (full); learning.enrollment.activated / requested"
    })
      .middleware(Authentication)
      .setPath(RunPath)
      .setPayload(EnrollInput)
      .addSuccess(Enrollment)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
      .addError(wire(NotEligible))
      .addError(wire(CapacityFull))
  )
  .add(
    operation("POST", "learning.enrollments.invite", `${base}/runs/:run/invite`, {
      scopes: teach,
      approval: true,
      summary: "Invite up to 100 profiles; each invitation reserves a seat until it expires"
    })
      .middleware(Authentication)
      .setPath(RunPath)
      .setPayload(InviteInput)
      .addSuccess(Invited)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
      .addError(wire(InvalidState))
      .addError(wire(NotEligible))
      .addError(wire(CapacityFull))
  )
  .add(
    enrollmentCommand("learning.enrollments.accept_invitation", "/accept-invitation", { scopes: study, summary: "The invitee accepts: invited → active" })
      .setPayload(EnrollmentCommand)
  )
  .add(
    operation("GET", "learning.enrollments.course_list", `${base}/courses/:course/enrollments`, {
      scopes: read,
      summary: "The course's roster with progress (staff, scoped to their runs)"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setUrlParams(RosterQuery)
      .addSuccess(EnrollmentPage)
      .addError(recordErrors)
  )
  .add(
    enrollmentCommand("learning.enrollments.decide", "/decision", {
      scopes: teach,
      approval: true,
      summary: "Approve (→ active, or offered with requireSeatConfirmation), reject or waitlist a request"
    })
      .setPayload(DecideInput)
      .addError(wire(CapacityFull))
      .addError(wire(ConflictOfInterest))
  )
  .add(
    operation("POST", "learning.enrollments.override", `${base}/enrollments/:enrollment/overrides`, {
      scopes: teach,
      approval: true,
      summary: "Set or clear the learner's date/attempt override (one step or run-wide); the computed calendar delta"
    })
      .middleware(Authentication)
      .setPath(EnrollmentPath)
      .setPayload(OverrideInput)
      .addSuccess(OverrideResult)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
      .addError(wire(InvalidState))
      .addError(wire(GradeFrozen))
  )
  .add(
    enrollmentCommand("learning.enrollments.pause", "/pause", {
      scopes: either,
      summary: "Pause within the run's limits: nothing unlocks or falls due while paused; resume shifts dates by the paused days"
    })
      .setPayload(PauseInput)
      .addError(wire(WindowClosed))
  )
  .add(
    enrollmentRead("learning.enrollments.pause_preview", "/pause-preview", "What a pause now would do: allowed, days left, due date shifts; no side effects")
      .setUrlParams(PausePreviewQuery)
      .addSuccess(PausePreview)
  )
  .add(
    enrollmentCommand("learning.enrollments.restore", "/restore", {
      scopes: either,
      approval: true,
      summary: "Undo a withdrawal within the run's restoreDays: back to active or paused"
    })
      .setPayload(EnrollmentCommand)
      .addError(wire(WindowClosed))
      .addError(wire(CapacityFull))
      .addError(wire(NotEligible))
  )
  .add(
    enrollmentCommand("learning.enrollments.resume", "/resume", { scopes: either, summary: "Resume a pause; dates shift by the paused days" })
      .setPayload(EnrollmentCommand)
  )
  .add(
    enrollmentCommand("learning.enrollments.start", "/start", { scopes: study, summary: "The learner starts: anchors self-paced offsets; first steps become available" })
      .setPayload(EnrollmentCommand)
      .addError(wire(NotEligible))
  )
  .add(
    enrollmentCommand("learning.enrollments.withdraw", "/withdraw", {
      scopes: either,
      approval: true,
      summary: "Withdraw (self or staff): with the run's grace an active or paused enrollment waits in withdrawal_requested"
    }).setPayload(WithdrawInput)
  )
  .add(
    enrollmentCommand("learning.seats.accept", "/accept-seat", { scopes: study, summary: "Take the offered seat: offered → active" })
      .setPayload(EnrollmentCommand)
  )
  .add(
    enrollmentCommand("learning.seats.decline", "/decline-seat", {
      scopes: study,
      approval: true,
      summary: "Decline an offered seat or an invitation; the next waitlisted learner is offered the seat"
    }).setPayload(EnrollmentCommand)
  )
  .add(enrollmentRead("learning.applications.get", "/application", "The application's answers and decision history").addSuccess(Application))
  .add(
    enrollmentRead("learning.calendar.get", "/calendar", "Effective dates per step with provenance (schedule → group → learner → extension → pause → incident); format ics adds an iCalendar document")
      .setUrlParams(CalendarQuery)
      .addSuccess(Calendar)
  )
  .add(enrollmentRead("learning.completion.get", "/completion", "Progress against the completion criteria and the completion record").addSuccess(Completion))
  .add(enrollmentRead("learning.media.get", "/media-progress", "Media progress of the video steps").addSuccess(MediaList))
  .add(
    operation("PUT", "learning.media.save", `${base}/enrollments/:enrollment/steps/:node/media-progress`, {
      scopes: study,
      summary: "Save position and watched ranges; 90 % watched completes the step"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ enrollment: Schema.UUID, node: NodeKey }))
      .setPayload(MediaSaveInput)
      .addSuccess(MediaProgress)
      .addError(recordErrors)
      .addError(wire(RevisionConflict))
      .addError(wire(InvalidState))
      .addError(wire(StepLocked))
  )
  .add(
    operation("POST", "learning.transfers.preview", `${base}/courses/:course/transfers/preview`, {
      scopes: teach,
      summary: "Plan moving enrollments between runs of the course; progress mapped by nodeKey; no side effects but the plan"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(TransferPreviewInput)
      .addSuccess(TransferPlan)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.transfers.apply", `${base}/courses/:course/transfers/:transfer/apply`, {
      scopes: teach,
      approval: true,
      summary: "Commit the stored transfer plan exactly"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ course: Schema.UUID, transfer: Schema.UUID }))
      .setPayload(TransferApplyInput)
      .addSuccess(TransferApplied)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
      .addError(wire(InvalidState))
      .addError(wire(PlanStale))
      .addError(wire(PlanExpired))
      .addError(wire(CapacityFull))
  )
  .annotate(OpenApi.Description, "Learning: enrollments, seats, pauses, dates and their provenance, completion, media progress, transfers")
