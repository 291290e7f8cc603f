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
import { InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { anyone, authenticated, recordErrors } from "../../kernel/Operation.js"

/**
 * The learning area's L1 operations: courses and versions, runs and their
 * schedule plans, the library and the audit log, under /api/v1/learning with the spec's ids and
 * paths. Scopes and approval flags as the role matrix (`learning/RoleMatrix.test.ts`) expects them; the public catalog, course view, run list
 * and admission preview need no caller.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const RunPath = Schema.Struct({ run: Schema.UUID })

/** The record is unknown to the caller (404) or not theirs to act on (403): every course-scoped operation. */
/** A stale expectedRevision or a reused requestUuid: commands on revisioned records. */
const changeErrors = Schema.Union(wire(RevisionConflict), wire(RequestConflict))

const read = ["learning:read"]
const write = ["learning:write"]

export const LearningCoursesApi = HttpApiGroup.make("learning_courses", { topLevel: true })
  .add(
    anyone("GET", "learning.courses.list", `${base}/courses`, {
      summary: "The public catalog: published, listed courses whose training publication is approved and visible; q, level, format"
    }).setUrlParams(CourseListQuery).addSuccess(CourseCardPage)
  )
  .add(
    authenticated("POST", "learning.courses.create", `${base}/courses`, { scopes: write, summary: "A new empty draft course; the caller becomes its owner" }, [wire(RequestConflict)])
      .setPayload(CourseCreate)
      .addSuccess(CourseAuthor)
  )
  .add(
    anyone("GET", "learning.courses.get", `${base}/courses/:course`, {
      summary: "The learner and public view of the latest published version (outline) with its open runs"
    }, [recordErrors]).setPath(CoursePath).addSuccess(Course)
  )
  .add(
    authenticated("PATCH", "learning.courses.update", `${base}/courses/:course`, {
      scopes: write,
      summary: "Edit the draft at expectedRevision: metadata, the whole node tree (nodeKeys kept), completion, visibility"
    }, [recordErrors, changeErrors, wire(InvalidState)])
      .setPath(CoursePath)
      .setPayload(CourseUpdate)
      .addSuccess(CourseAuthor)
  )
  .add(
    authenticated("GET", "learning.courses.author_list", `${base}/author/courses`, { scopes: read, summary: "Courses the caller is staff of, most recently changed first" })
      .setUrlParams(AuthorListQuery)
      .addSuccess(CourseAuthorPage)
  )
  .add(
    authenticated("GET", "learning.courses.author_get", `${base}/author/courses/:course`, {
      scopes: read,
      summary: "The draft tree, its validation summary and its difference to the latest version (course staff)"
    }, [recordErrors]).setPath(CoursePath).addSuccess(CourseAuthor)
  )
  .add(
    authenticated("POST", "learning.courses.archive", `${base}/courses/:course/archive`, {
      scopes: write,
      approval: true,
      summary: "Close the course to new runs and enrollments (owner); refused while a run is running"
    }, [recordErrors, changeErrors, wire(InvalidState)])
      .setPath(CoursePath)
      .setPayload(CourseArchive)
      .addSuccess(CourseAuthor)
  )
  .add(
    authenticated("POST", "learning.courses.bundle", `${base}/courses/:course/bundle`, {
      scopes: write,
      summary: "Make the draft a bundle of 1 to 20 published single courses of the caller"
    }, [recordErrors, changeErrors, wire(InvalidState), wire(NotEligible)])
      .setPath(CoursePath)
      .setPayload(CourseBundle)
      .addSuccess(CourseAuthor)
  )
  .add(
    authenticated("POST", "learning.courses.copy", `${base}/courses/:course/copy`, { scopes: write, summary: "Deep copy of the draft into a new course of the caller" }, [recordErrors, wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(CourseCopy)
      .addSuccess(CourseAuthor)
  )
  .add(
    authenticated("POST", "learning.courses.from_publication", `${base}/courses/from-publication`, {
      scopes: write,
      summary: "A draft course from an own training publication (one course per publication)"
    }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPayload(FromPublication)
      .addSuccess(CourseAuthor)
  )
  .add(
    authenticated("POST", "learning.courses.preview", `${base}/courses/:course/preview`, {
      scopes: read,
      summary: "The draft or a version as a learner would see it at asOf; no side effects (course staff)"
    }, [recordErrors])
      .setPath(CoursePath)
      .setPayload(CoursePreviewInput)
      .addSuccess(CoursePreview)
  )
  .add(
    authenticated("POST", "learning.courses.publish", `${base}/courses/:course/publish`, {
      scopes: write,
      approval: true,
      summary: "Validate and freeze the draft as version N+1 (immutable); learning.course.published"
    }, [recordErrors, changeErrors, wire(InvalidState), wire(CourseInvalid), wire(CheckerNotReady)])
      .setPath(CoursePath)
      .setPayload(CoursePublish)
      .addSuccess(CourseVersion)
  )
  .add(
    authenticated("POST", "learning.courses.validate", `${base}/courses/:course/validate`, {
      scopes: read,
      summary: "The draft's issues {severity, nodeKey, code, message}; errors block publishing; no side effects"
    }, [recordErrors]).setPath(CoursePath).addSuccess(Validation)
  )
  .add(
    authenticated("GET", "learning.versions.list", `${base}/courses/:course/versions`, { scopes: read, summary: "Published versions, newest first (course staff)" }, [recordErrors])
      .setPath(CoursePath)
      .setUrlParams(PageQuery)
      .addSuccess(CourseVersionPage)
  )
  .annotate(OpenApi.Description, "Learning: courses, their draft trees and published versions")

export const LearningRunsApi = HttpApiGroup.make("learning_runs", { topLevel: true })
  .add(
    authenticated("POST", "learning.runs.create", `${base}/courses/:course/runs`, { scopes: write, summary: "A draft run pinned to a published version" }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(RunCreate)
      .addSuccess(Run)
  )
  .add(
    anyone("GET", "learning.runs.list", `${base}/courses/:course/runs`, {
      summary: "Runs of a course: everyone sees scheduled and running ones, learners also theirs, staff all"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(RunListQuery).addSuccess(RunPage)
  )
  .add(
    authenticated("PATCH", "learning.runs.update", `${base}/runs/:run`, {
      scopes: write,
      summary: "Settings and publish (draft → scheduled); dates change only through a schedule plan"
    }, [recordErrors, changeErrors, wire(InvalidState)])
      .setPath(RunPath)
      .setPayload(RunUpdate)
      .addSuccess(Run)
  )
  .add(
    authenticated("POST", "learning.runs.archive", `${base}/runs/:run/archive`, { scopes: write, approval: true, summary: "A finished or cancelled run becomes read-only" }, [recordErrors, changeErrors, wire(InvalidState)])
      .setPath(RunPath)
      .setPayload(RunCommand)
      .addSuccess(Run)
  )
  .add(
    authenticated("POST", "learning.runs.cancel", `${base}/runs/:run/cancel`, {
      scopes: write,
      approval: true,
      summary: "Cancel (owner): non-terminal enrollments are cancelled; learning.run.cancelled"
    }, [recordErrors, changeErrors, wire(InvalidState)])
      .setPath(RunPath)
      .setPayload(RunCancel)
      .addSuccess(Run)
  )
  .add(
    authenticated("POST", "learning.runs.finish", `${base}/runs/:run/finish`, {
      scopes: write,
      approval: true,
      summary: "Conclude a running run: active and paused enrollments complete; the grade freeze clock starts"
    }, [recordErrors, changeErrors, wire(InvalidState)])
      .setPath(RunPath)
      .setPayload(RunCommand)
      .addSuccess(Run)
  )
  .add(
    anyone("GET", "learning.admissions.preview", `${base}/runs/:run/admission-preview`, {
      summary: "What enrolling would do for the caller now: mode, eligibility and reasons, seats left; no side effects"
    }, [recordErrors]).setPath(RunPath).addSuccess(AdmissionPreview)
  )
  .add(
    authenticated("POST", "learning.schedule.preview", `${base}/runs/:run/schedule-preview`, {
      scopes: write,
      summary: "Plan date changes (run-wide or per node): the diff, blocking problems and affected learners; stores only the plan (24 h)"
    }, [recordErrors, wire(RequestConflict)])
      .setPath(RunPath)
      .setPayload(SchedulePreviewInput)
      .addSuccess(Plan)
  )
  .add(
    authenticated("POST", "learning.schedule.apply", `${base}/schedule-previews/:preview/apply`, {
      scopes: write,
      approval: true,
      summary: "Commit a stored schedule plan exactly; refused when the run changed since (plan_stale) or the plan expired"
    }, [recordErrors, wire(InvalidState), wire(PlanStale), wire(PlanExpired), wire(GradeFrozen), wire(RequestConflict)])
      .setPath(Schema.Struct({ preview: Schema.UUID }))
      .setPayload(ScheduleApplyInput)
      .addSuccess(ScheduleApplied)
  )
  .annotate(OpenApi.Description, "Learning: runs pinned to versions, admission preview, schedule plans")

export const LearningLibraryApi = HttpApiGroup.make("learning_library", { topLevel: true })
  .add(
    authenticated("GET", "learning.audit.list", `${base}/courses/:course/audit`, {
      scopes: ["learning:analytics"],
      summary: "The course's append-only audit log, newest first: staff, schedule, run and publishing changes"
    }, [recordErrors])
      .setPath(CoursePath)
      .setUrlParams(AuditQuery)
      .addSuccess(AuditEventPage)
  )
  .add(
    authenticated("GET", "learning.library.list", `${base}/library`, { scopes: read, summary: "The caller's library items, newest first" })
      .setUrlParams(LibraryQuery)
      .addSuccess(LibraryItemPage)
  )
  .add(
    authenticated("POST", "learning.library.save", `${base}/courses/:course/library`, { scopes: write, summary: "Save a draft subtree to the caller's library" }, [recordErrors, wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(LibrarySave)
      .addSuccess(LibraryItem)
  )
  .add(
    authenticated("POST", "learning.library.insert", `${base}/courses/:course/library/:item/insert`, {
      scopes: write,
      summary: "Insert a copy of a library item with fresh nodeKeys into the draft"
    }, [recordErrors, changeErrors, wire(InvalidState)])
      .setPath(Schema.Struct({ course: Schema.UUID, item: Schema.UUID }))
      .setPayload(LibraryInsert)
      .addSuccess(CourseAuthor)
  )
  .annotate(OpenApi.Description, "Learning: the library of saved subtrees and the audit log")

export const LearningJobsApi = HttpApiGroup.make("learning_jobs", { topLevel: true })
  .add(
    authenticated("POST", "learning.courses.import", `${base}/import`, {
      scopes: write,
      summary: "Import a birzha-course/1 package (an uploaded JSON file of the caller) as a new draft course; an async job"
    }, [wire(NotFound), wire(RequestConflict)])
      .setPayload(CourseImportInput)
      .addSuccess(Job)
  )
  .add(
    authenticated("POST", "learning.exports.course", `${base}/courses/:course/exports`, {
      scopes: write,
      summary: "Package the draft and versions as birzha-course/1 (no secrets, no learner data); an async job"
    }, [recordErrors, wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(CourseExportInput)
      .addSuccess(Job)
  )
  .add(
    authenticated("POST", "learning.exports.enrollment", `${base}/enrollments/:enrollment/exports`, {
      scopes: ["learning:study", "learning:teach"],
      summary: "One learner's data as JSON: by the learner, or by staff holding pii_read; an async job"
    }, [recordErrors, wire(RequestConflict)])
      .setPath(Schema.Struct({ enrollment: Schema.UUID }))
      .setPayload(EnrollmentExportInput)
      .addSuccess(Job)
  )
  .add(
    authenticated("GET", "learning.exports.get", `${base}/exports/:export`, { scopes: read, summary: "An export, import or analytics export job of the caller, with its file (7 days)" }, [wire(NotFound)])
      .setPath(Schema.Struct({ export: Schema.UUID }))
      .addSuccess(Job)
  )
  .add(
    authenticated("GET", "learning.analytics.get", `${base}/courses/:course/analytics`, {
      scopes: ["learning:analytics"],
      summary: "Funnel, step completion and difficulty, scores, grader load; cells of fewer than 5 learners suppressed"
    }, [recordErrors])
      .setPath(CoursePath)
      .setUrlParams(AnalyticsQuery)
      .addSuccess(Analytics)
  )
  .add(
    authenticated("POST", "learning.analytics.export", `${base}/courses/:course/analytics/export`, {
      scopes: ["learning:analytics"],
      approval: true,
      summary: "A CSV per learner, pseudonymized unless the caller holds pii_read and asks for names; an async job"
    }, [recordErrors, wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(AnalyticsExportInput)
      .addSuccess(Job)
  )
  .annotate(OpenApi.Description, "Learning: exports, imports and analytics (async jobs)")
