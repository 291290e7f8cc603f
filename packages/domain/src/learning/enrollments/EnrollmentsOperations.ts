import { LearningEnrollmentsApi } from "./EnrollmentsApi.js"
import { implement } from "../../operations/Implementation.js"
import { getCalendar } from "./Calendar.js"
import { getCompletion } from "./Completion.js"
import {
  acceptInvitation,
  acceptSeat,
  courseRoster,
  declineSeat,
  decideEnrollment,
  enroll,
  getApplication,
  getEnrollment,
  invite,
  listEnrollments,
  pauseEnrollment,
  pausePreview,
  restoreEnrollment,
  resumeEnrollment,
  startEnrollment,
  withdrawEnrollment
} from "./Enrollments.js"
import { getMedia, saveMedia } from "../steps/Media.js"
import { overrideDates } from "./Overrides.js"
import { applyTransfer, previewTransfer } from "./Transfers.js"

/** The enrollment side of learning L2 over its services. */
export const LearningEnrollmentsOperations = implement(LearningEnrollmentsApi)({
  "learning.enrollments.list": ({ urlParams }, actor) => listEnrollments(actor, urlParams),
  "learning.enrollments.get": ({ path }, actor) => getEnrollment(actor, path.enrollment),
  "learning.enrollments.enroll": ({ path, payload }, actor) => enroll(actor, path.run, payload),
  "learning.enrollments.invite": ({ path, payload }, actor) => invite(actor, path.run, payload),
  "learning.enrollments.accept_invitation": ({ path, payload }, actor) => acceptInvitation(actor, path.enrollment, payload),
  "learning.enrollments.course_list": ({ path, urlParams }, actor) => courseRoster(actor, path.course, urlParams),
  "learning.enrollments.decide": ({ path, payload }, actor) => decideEnrollment(actor, path.enrollment, payload),
  "learning.enrollments.override": ({ path, payload }, actor) => overrideDates(actor, path.enrollment, payload),
  "learning.enrollments.pause": ({ path, payload }, actor) => pauseEnrollment(actor, path.enrollment, payload),
  "learning.enrollments.pause_preview": ({ path, urlParams }, actor) => pausePreview(actor, path.enrollment, urlParams),
  "learning.enrollments.restore": ({ path, payload }, actor) => restoreEnrollment(actor, path.enrollment, payload),
  "learning.enrollments.resume": ({ path, payload }, actor) => resumeEnrollment(actor, path.enrollment, payload),
  "learning.enrollments.start": ({ path, payload }, actor) => startEnrollment(actor, path.enrollment, payload),
  "learning.enrollments.withdraw": ({ path, payload }, actor) => withdrawEnrollment(actor, path.enrollment, payload),
  "learning.seats.accept": ({ path, payload }, actor) => acceptSeat(actor, path.enrollment, payload),
  "learning.seats.decline": ({ path, payload }, actor) => declineSeat(actor, path.enrollment, payload),
  "learning.applications.get": ({ path }, actor) => getApplication(actor, path.enrollment),
  "learning.calendar.get": ({ path, urlParams }, actor) => getCalendar(actor, path.enrollment, urlParams),
  "learning.completion.get": ({ path }, actor) => getCompletion(actor, path.enrollment),
  "learning.media.get": ({ path }, actor) => getMedia(actor, path.enrollment),
  "learning.media.save": ({ path, payload }, actor) => saveMedia(actor, path.enrollment, path.node, payload),
  "learning.transfers.preview": ({ path, payload }, actor) => previewTransfer(actor, path.course, payload),
  "learning.transfers.apply": ({ path, payload }, actor) => applyTransfer(actor, path.course, path.transfer, payload)
})
