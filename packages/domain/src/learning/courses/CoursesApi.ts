import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CheckerNotReady, CourseInvalid, GradeFrozen, NotEligible, PlanExpired, PlanStale } from "../LearningErrors.js"
import {
  AdmissionPreview,
  Analytics,
  AnalyticsExportInput,
  AnalyticsQuery,
  CourseExportInput,
  CourseImportInput,
  EnrollmentExportInput,
  Job,
  AuditEventPage,
  AuditQuery,
  AuthorListQuery,
  Course,
  CourseArchive,
  CourseAuthor,
  CourseAuthorPage,
  CourseBundle,
  CourseCardPage,
  CourseCopy,
  CourseCreate,
  CourseListQuery,
  CoursePreview,
  CoursePreviewInput,
  CoursePublish,
  CourseUpdate,
  CourseVersion,
  CourseVersionPage,
  FromPublication,
  LibraryInsert,
  LibraryItem,
  LibraryItemPage,
  LibraryQuery,
  LibrarySave,
  PageQuery,
  Plan,
  Run,
  RunCancel,
  RunCommand,
  RunCreate,
  RunListQuery,
  RunPage,
  RunUpdate,
  ScheduleApplied,
  ScheduleApplyInput,
  SchedulePreviewInput,
  Validation
} from "./Model.js"
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { Authentication } from "../../kernel/Authentication.js"
import { operation } from "../../kernel/Operation.js"

/**
 * The learning area's L1 operations (LEARNING §4 "L1"): courses and versions, runs and their
 * schedule plans, the library and the audit log, under /api/v1/learning with the spec's ids and
 * paths. Scopes and approval flags as §3/§4 give them; the public catalog, course view, run list
 * and admission preview need no caller.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const RunPath = Schema.Struct({ run: Schema.UUID })

/** The record is unknown to the caller (404) or not theirs to act on (403): every course-scoped operation. */
const recordErrors = Schema.Union(wire(NotFound), wire(Forbidden))
/** A stale expectedRevision or a reused requestUuid: commands on revisioned records. */
const changeErrors = Schema.Union(wire(RevisionConflict), wire(RequestConflict))

const read = ["learning:read"]
const write = ["learning:write"]

export const LearningCoursesApi = HttpApiGroup.make("learning_courses", { topLevel: true })
  .add(
    operation("GET", "learning.courses.list", `${base}/courses`, {
      summary: "The public catalog: published, listed courses whose training publication is approved and visible; q, level, format"
    }).setUrlParams(CourseListQuery).addSuccess(CourseCardPage)
  )
  .add(
    operation("POST", "learning.courses.create", `${base}/courses`, { scopes: write, summary: "A new empty draft course; the caller becomes its owner" })
      .middleware(Authentication)
      .setPayload(CourseCreate)
      .addSuccess(CourseAuthor)
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.courses.get", `${base}/courses/:course`, {
      summary: "The learner and public view of the latest published version (outline) with its open runs"
    }).setPath(CoursePath).addSuccess(Course).addError(recordErrors)
  )
  .add(
    operation("PATCH", "learning.courses.update", `${base}/courses/:course`, {
      scopes: write,
      summary: "Edit the draft at expectedRevision: metadata, the whole node tree (nodeKeys kept), completion, visibility"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(CourseUpdate)
      .addSuccess(CourseAuthor)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .add(
    operation("GET", "learning.courses.author_list", `${base}/author/courses`, { scopes: read, summary: "Courses the caller is staff of, most recently changed first" })
      .middleware(Authentication)
      .setUrlParams(AuthorListQuery)
      .addSuccess(CourseAuthorPage)
  )
  .add(
    operation("GET", "learning.courses.author_get", `${base}/author/courses/:course`, {
      scopes: read,
      summary: "The draft tree, its validation summary and its difference to the latest version (course staff)"
    }).middleware(Authentication).setPath(CoursePath).addSuccess(CourseAuthor).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.courses.archive", `${base}/courses/:course/archive`, {
      scopes: write,
      approval: true,
      summary: "Close the course to new runs and enrollments (owner); refused while a run is running"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(CourseArchive)
      .addSuccess(CourseAuthor)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .add(
    operation("POST", "learning.courses.bundle", `${base}/courses/:course/bundle`, {
      scopes: write,
      summary: "Make the draft a bundle of 1 to 20 published single courses of the caller"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(CourseBundle)
      .addSuccess(CourseAuthor)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
      .addError(wire(NotEligible))
  )
  .add(
    operation("POST", "learning.courses.copy", `${base}/courses/:course/copy`, { scopes: write, summary: "Deep copy of the draft into a new course of the caller" })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(CourseCopy)
      .addSuccess(CourseAuthor)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.courses.from_publication", `${base}/courses/from-publication`, {
      scopes: write,
      summary: "A draft course from an own training publication (one course per publication)"
    })
      .middleware(Authentication)
      .setPayload(FromPublication)
      .addSuccess(CourseAuthor)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.courses.preview", `${base}/courses/:course/preview`, {
      scopes: read,
      summary: "The draft or a version as a learner would see it at asOf; no side effects (course staff)"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(CoursePreviewInput)
      .addSuccess(CoursePreview)
      .addError(recordErrors)
  )
  .add(
    operation("POST", "learning.courses.publish", `${base}/courses/:course/publish`, {
      scopes: write,
      approval: true,
      summary: "Validate and freeze the draft as version N+1 (immutable); learning.course.published"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(CoursePublish)
      .addSuccess(CourseVersion)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
      .addError(wire(CourseInvalid))
      .addError(wire(CheckerNotReady))
  )
  .add(
    operation("POST", "learning.courses.validate", `${base}/courses/:course/validate`, {
      scopes: read,
      summary: "The draft's issues {severity, nodeKey, code, message}; errors block publishing; no side effects"
    }).middleware(Authentication).setPath(CoursePath).addSuccess(Validation).addError(recordErrors)
  )
  .add(
    operation("GET", "learning.versions.list", `${base}/courses/:course/versions`, { scopes: read, summary: "Published versions, newest first (course staff)" })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setUrlParams(PageQuery)
      .addSuccess(CourseVersionPage)
      .addError(recordErrors)
  )
  .annotate(OpenApi.Description, "Learning: courses, their draft trees and published versions")

export const LearningRunsApi = HttpApiGroup.make("learning_runs", { topLevel: true })
  .add(
    operation("POST", "learning.runs.create", `${base}/courses/:course/runs`, { scopes: write, summary: "A draft run pinned to a published version" })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(RunCreate)
      .addSuccess(Run)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.runs.list", `${base}/courses/:course/runs`, {
      summary: "Runs of a course: everyone sees scheduled and running ones, learners also theirs, staff all"
    }).setPath(CoursePath).setUrlParams(RunListQuery).addSuccess(RunPage).addError(recordErrors)
  )
  .add(
    operation("PATCH", "learning.runs.update", `${base}/runs/:run`, {
      scopes: write,
      summary: "Settings and publish (draft → scheduled); dates change only through a schedule plan"
    })
      .middleware(Authentication)
      .setPath(RunPath)
      .setPayload(RunUpdate)
      .addSuccess(Run)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .add(
    operation("POST", "learning.runs.archive", `${base}/runs/:run/archive`, { scopes: write, approval: true, summary: "A finished or cancelled run becomes read-only" })
      .middleware(Authentication)
      .setPath(RunPath)
      .setPayload(RunCommand)
      .addSuccess(Run)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .add(
    operation("POST", "learning.runs.cancel", `${base}/runs/:run/cancel`, {
      scopes: write,
      approval: true,
      summary: "Cancel (owner): non-terminal enrollments are cancelled; learning.run.cancelled"
    })
      .middleware(Authentication)
      .setPath(RunPath)
      .setPayload(RunCancel)
      .addSuccess(Run)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .add(
    operation("POST", "learning.runs.finish", `${base}/runs/:run/finish`, {
      scopes: write,
      approval: true,
      summary: "Conclude a running run: active and paused enrollments complete; the grade freeze clock starts"
    })
      .middleware(Authentication)
      .setPath(RunPath)
      .setPayload(RunCommand)
      .addSuccess(Run)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .add(
    operation("GET", "learning.admissions.preview", `${base}/runs/:run/admission-preview`, {
      summary: "What enrolling would do for the caller now: mode, eligibility and reasons, seats left; no side effects"
    }).setPath(RunPath).addSuccess(AdmissionPreview).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.schedule.preview", `${base}/runs/:run/schedule-preview`, {
      scopes: write,
      summary: "Plan date changes (run-wide or per node): the diff, blocking problems and affected learners; stores only the plan (24 h)"
    })
      .middleware(Authentication)
      .setPath(RunPath)
      .setPayload(SchedulePreviewInput)
      .addSuccess(Plan)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.schedule.apply", `${base}/schedule-previews/:preview/apply`, {
      scopes: write,
      approval: true,
      summary: "Commit a stored schedule plan exactly; refused when the run changed since (plan_stale) or the plan expired"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ preview: Schema.UUID }))
      .setPayload(ScheduleApplyInput)
      .addSuccess(ScheduleApplied)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(PlanStale))
      .addError(wire(PlanExpired))
      .addError(wire(GradeFrozen))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Learning: runs pinned to versions, admission preview, schedule plans")

export const LearningLibraryApi = HttpApiGroup.make("learning_library", { topLevel: true })
  .add(
    operation("GET", "learning.audit.list", `${base}/courses/:course/audit`, {
      scopes: ["learning:analytics"],
      summary: "The course's append-only audit log, newest first: staff, schedule, run and publishing changes"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setUrlParams(AuditQuery)
      .addSuccess(AuditEventPage)
      .addError(recordErrors)
  )
  .add(
    operation("GET", "learning.library.list", `${base}/library`, { scopes: read, summary: "The caller's library items, newest first" })
      .middleware(Authentication)
      .setUrlParams(LibraryQuery)
      .addSuccess(LibraryItemPage)
  )
  .add(
    operation("POST", "learning.library.save", `${base}/courses/:course/library`, { scopes: write, summary: "Save a draft subtree to the caller's library" })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(LibrarySave)
      .addSuccess(LibraryItem)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.library.insert", `${base}/courses/:course/library/:item/insert`, {
      scopes: write,
      summary: "Insert a copy of a library item with fresh nodeKeys into the draft"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ course: Schema.UUID, item: Schema.UUID }))
      .setPayload(LibraryInsert)
      .addSuccess(CourseAuthor)
      .addError(recordErrors)
      .addError(changeErrors)
      .addError(wire(InvalidState))
  )
  .annotate(OpenApi.Description, "Learning: the library of saved subtrees and the audit log")

export const LearningJobsApi = HttpApiGroup.make("learning_jobs", { topLevel: true })
  .add(
    operation("POST", "learning.courses.import", `${base}/import`, {
      scopes: write,
      summary: "Import a birzha-course/1 package (an uploaded JSON file of the caller) as a new draft course; an async job"
    })
      .middleware(Authentication)
      .setPayload(CourseImportInput)
      .addSuccess(Job)
      .addError(wire(NotFound))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.exports.course", `${base}/courses/:course/exports`, {
      scopes: write,
      summary: "Package the draft and versions as birzha-course/1 (no secrets, no learner data); an async job"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(CourseExportInput)
      .addSuccess(Job)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.exports.enrollment", `${base}/enrollments/:enrollment/exports`, {
      scopes: ["learning:study", "learning:teach"],
      summary: "One learner's data as JSON: by the learner, or by staff holding pii_read; an async job"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ enrollment: Schema.UUID }))
      .setPayload(EnrollmentExportInput)
      .addSuccess(Job)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.exports.get", `${base}/exports/:export`, { scopes: read, summary: "An export, import or analytics export job of the caller, with its file (7 days)" })
      .middleware(Authentication)
      .setPath(Schema.Struct({ export: Schema.UUID }))
      .addSuccess(Job)
      .addError(wire(NotFound))
  )
  .add(
    operation("GET", "learning.analytics.get", `${base}/courses/:course/analytics`, {
      scopes: ["learning:analytics"],
      summary: "Funnel, step completion and difficulty, scores, grader load; cells of fewer than 5 learners suppressed"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setUrlParams(AnalyticsQuery)
      .addSuccess(Analytics)
      .addError(recordErrors)
  )
  .add(
    operation("POST", "learning.analytics.export", `${base}/courses/:course/analytics/export`, {
      scopes: ["learning:analytics"],
      approval: true,
      summary: "A CSV per learner, pseudonymized unless the caller holds pii_read and asks for names; an async job"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(AnalyticsExportInput)
      .addSuccess(Job)
      .addError(recordErrors)
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Learning: exports, imports and analytics (async jobs)")
