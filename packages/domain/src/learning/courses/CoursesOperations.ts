import { Effect } from "effect"
import { LearningCoursesApi, LearningJobsApi, LearningLibraryApi, LearningRunsApi } from "./CoursesApi.js"
import { implement } from "../../operations/Implementation.js"
import { listAudit } from "../Audit.js"
import {
  archiveCourse,
  authorGet,
  authorList,
  bundleCourse,
  copyCourse,
  courseFor,
  courseFromPublication,
  createCourse,
  getCourse,
  listCatalog,
  listVersions,
  previewCourse,
  publishCourse,
  updateCourseDraft,
  validateCourse
} from "./Courses.js"
import { courseAnalytics, getJob, requestAnalyticsExport, requestCourseExport, requestEnrollmentExport, requestImport } from "./Jobs.js"
import { LearningCorrectionsOperations } from "../corrections/CorrectionsOperations.js"
import { LearningEnrollmentsOperations } from "../enrollments/EnrollmentsOperations.js"
import { insertFromLibrary, listLibrary, saveToLibrary } from "./Library.js"
import { LearningPeopleOperations } from "../staff/StaffOperations.js"
import { LearningReviewsOperations } from "../reviews/ReviewsOperations.js"
import { LearningGradingOperations } from "../grading/GradingOperations.js"
import { LearningStepsOperations } from "../steps/StepsOperations.js"
import { admissionPreview, applySchedule, archiveRun, cancelRun, createRun, finishRun, listRuns, previewSchedule, updateRunSettings } from "./Runs.js"

/** The learning L1 operations over the learning area's services. */
export const LearningCoursesOperations = implement(LearningCoursesApi)({
  "learning.courses.list": ({ urlParams }) => listCatalog(urlParams),
  "learning.courses.create": ({ payload }, actor) => createCourse(actor, payload),
  "learning.courses.get": ({ path }, actor) => getCourse(actor, path.course),
  "learning.courses.update": ({ path, payload }, actor) => updateCourseDraft(actor, path.course, payload),
  "learning.courses.author_list": ({ urlParams }, actor) => authorList(actor, urlParams),
  "learning.courses.author_get": ({ path }, actor) => authorGet(actor, path.course),
  "learning.courses.archive": ({ path, payload }, actor) => archiveCourse(actor, path.course, payload),
  "learning.courses.bundle": ({ path, payload }, actor) => bundleCourse(actor, path.course, payload),
  "learning.courses.copy": ({ path, payload }, actor) => copyCourse(actor, path.course, payload),
  "learning.courses.from_publication": ({ payload }, actor) => courseFromPublication(actor, payload),
  "learning.courses.preview": ({ path, payload }, actor) => previewCourse(actor, path.course, payload),
  "learning.courses.publish": ({ path, payload }, actor) => publishCourse(actor, path.course, payload),
  "learning.courses.validate": ({ path }, actor) => validateCourse(actor, path.course),
  "learning.versions.list": ({ path, urlParams }, actor) => listVersions(actor, path.course, urlParams)
})

export const LearningRunsOperations = implement(LearningRunsApi)({
  "learning.runs.create": ({ path, payload }, actor) => createRun(actor, path.course, payload),
  "learning.runs.list": ({ path, urlParams }, actor) => listRuns(actor, path.course, urlParams),
  "learning.runs.update": ({ path, payload }, actor) => updateRunSettings(actor, path.run, payload),
  "learning.runs.archive": ({ path, payload }, actor) => archiveRun(actor, path.run, payload),
  "learning.runs.cancel": ({ path, payload }, actor) => cancelRun(actor, path.run, payload),
  "learning.runs.finish": ({ path, payload }, actor) => finishRun(actor, path.run, payload),
  "learning.admissions.preview": ({ path }, actor) => admissionPreview(actor, path.run),
  "learning.schedule.preview": ({ path, payload }, actor) => previewSchedule(actor, path.run, payload),
  "learning.schedule.apply": ({ path, payload }, actor) => applySchedule(actor, path.preview, payload)
})

export const LearningLibraryOperations = implement(LearningLibraryApi)({
  "learning.audit.list": ({ path, urlParams }, actor) =>
    Effect.zipRight(courseFor(actor, "learning.audit.list", path.course, { lock: false }), listAudit(path.course, urlParams)),
  "learning.library.list": ({ urlParams }, actor) => listLibrary(actor, urlParams),
  "learning.library.save": ({ path, payload }, actor) => saveToLibrary(actor, path.course, payload),
  "learning.library.insert": ({ path, payload }, actor) => insertFromLibrary(actor, path.course, path.item, payload)
})

export const LearningJobsOperations = implement(LearningJobsApi)({
  "learning.courses.import": ({ payload }, actor) => requestImport(actor, payload),
  "learning.exports.course": ({ path, payload }, actor) => requestCourseExport(actor, path.course, payload),
  "learning.exports.enrollment": ({ path, payload }, actor) => requestEnrollmentExport(actor, path.enrollment, payload),
  "learning.exports.get": ({ path }, actor) => getJob(actor, path.export),
  "learning.analytics.get": ({ path, urlParams }, actor) => courseAnalytics(actor, path.course, urlParams),
  "learning.analytics.export": ({ path, payload }, actor) => requestAnalyticsExport(actor, path.course, payload)
})

/** The learning groups' implementations, registered with the others in `ServiceOperations`. */
export const LearningOperations = [
  LearningCoursesOperations,
  LearningRunsOperations,
  LearningLibraryOperations,
  LearningJobsOperations,
  LearningEnrollmentsOperations,
  LearningStepsOperations,
  LearningCorrectionsOperations,
  LearningReviewsOperations,
  LearningGradingOperations,
  ...LearningPeopleOperations
] as const
