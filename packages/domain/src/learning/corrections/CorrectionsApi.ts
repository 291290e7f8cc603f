import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  Appeal,
  AppealCreate,
  AppealDecide,
  AppealEscalate,
  AppealList,
  AppealListQuery,
  AppealPage,
  CompensationApplyInput,
  CompensationPlan,
  CompensationPreviewInput,
  ExtensionCourseQuery,
  ExtensionCreate,
  ExtensionDecide,
  ExtensionRequest,
  ExtensionRequestList,
  ExtensionRequestPage,
  Incident,
  IncidentCreate,
  IncidentListQuery,
  IncidentPage,
  RegradePlan,
  RegradePlanCommit,
  RegradePlanCreate,
  RegradePlanQuery,
  ReplacementOptions
} from "./CorrectionsModel.js"
import { ConflictOfInterest, GradeFrozen, PlanExpired, PlanStale, WindowClosed } from "../LearningErrors.js"
import { InvalidState, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { authenticated, recordErrors } from "../../kernel/Operation.js"
import { EnrollmentAccess, learnerOnly, learnerOrStaff } from "../enrollments/EnrollmentRule.js"

/**
 * Learning L3 corrections (7, 8): extension requests,
 * incidents and their compensation plans, appeals (Pawtograder-like), and regrade plans. Ids,
 * paths, scopes and approval flags as the role matrix (`learning/RoleMatrix.test.ts`) expects them.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const EnrollmentPath = Schema.Struct({ enrollment: Schema.UUID })
const ExtensionPath = Schema.Struct({ extension: Schema.UUID })
const RunPath = Schema.Struct({ run: Schema.UUID })
const IncidentPath = Schema.Struct({ incident: Schema.UUID })
const SubmissionPath = Schema.Struct({ submission: Schema.UUID })
const AppealPath = Schema.Struct({ appeal: Schema.UUID })
const PlanPath = Schema.Struct({ course: Schema.UUID, plan: Schema.UUID })

const commandErrors = Schema.Union(wire(InvalidState), wire(RevisionConflict), wire(RequestConflict))
const read = ["learning:read"]
const study = ["learning:study"]
const teach = ["learning:teach"]
const grade = ["learning:grade"]

export const LearningCorrectionsApi = HttpApiGroup.make("learning_corrections", { topLevel: true })
  .add(
    authenticated("GET", "learning.extensions.course_list", `${base}/courses/:course/extension-requests`, {
      scopes: read,
      summary: "The staff queue of extension requests"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(ExtensionCourseQuery).addSuccess(ExtensionRequestPage)
  )
  .add(
    authenticated("POST", "learning.extensions.create", `${base}/enrollments/:enrollment/extensions`, {
      scopes: study,
      summary: "Ask for more time on a step or the whole run; approved at once within the run's extension policy"
    }, [recordErrors, commandErrors, wire(WindowClosed), wire(GradeFrozen)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(EnrollmentPath)
      .setPayload(ExtensionCreate)
      .addSuccess(ExtensionRequest)
  )
  .add(
    authenticated("GET", "learning.extensions.list", `${base}/enrollments/:enrollment/extensions`, {
      scopes: read,
      summary: "The extension requests of an enrollment"
    }, [recordErrors]).annotate(EnrollmentAccess, learnerOrStaff).setPath(EnrollmentPath).addSuccess(ExtensionRequestList)
  )
  .add(
    authenticated("POST", "learning.extensions.decide", `${base}/extension-requests/:extension/decide`, {
      scopes: teach,
      approval: true,
      summary: "Approve (a date override with origin extension) or deny an extension request"
    }, [recordErrors, commandErrors, wire(GradeFrozen), wire(ConflictOfInterest), wire(WindowClosed)])
      .setPath(ExtensionPath)
      .setPayload(ExtensionDecide)
      .addSuccess(ExtensionRequest)
  )
  .add(
    authenticated("POST", "learning.incidents.create", `${base}/runs/:run/incidents`, {
      scopes: teach,
      summary: "Record an incident of a run; the affected learners are computed"
    }, [recordErrors, commandErrors])
      .setPath(RunPath)
      .setPayload(IncidentCreate)
      .addSuccess(Incident)
  )
  .add(
    authenticated("GET", "learning.incidents.list", `${base}/runs/:run/incidents`, {
      scopes: read,
      summary: "The incidents of a run"
    }, [recordErrors]).setPath(RunPath).setUrlParams(IncidentListQuery).addSuccess(IncidentPage)
  )
  .add(
    authenticated("GET", "learning.incidents.get", `${base}/incidents/:incident`, {
      scopes: read,
      summary: "An incident with its latest compensation plan"
    }, [recordErrors]).setPath(IncidentPath).addSuccess(Incident)
  )
  .add(
    authenticated("POST", "learning.incidents.preview", `${base}/incidents/:incident/compensation-preview`, {
      scopes: teach,
      summary: "Plan compensation for the affected learners: extensions, attempt refunds, excused steps, requeued failed jobs"
    }, [recordErrors, commandErrors])
      .setPath(IncidentPath)
      .setPayload(CompensationPreviewInput)
      .addSuccess(CompensationPlan)
  )
  .add(
    authenticated("POST", "learning.incidents.apply", `${base}/incidents/:incident/compensation-apply`, {
      scopes: teach,
      approval: true,
      summary: "Commit the compensation plan exactly as previewed; the incident is resolved"
    }, [recordErrors, commandErrors, wire(PlanStale), wire(PlanExpired), wire(GradeFrozen)])
      .setPath(IncidentPath)
      .setPayload(CompensationApplyInput)
      .addSuccess(Incident)
  )
  .add(
    authenticated("POST", "learning.appeals.create", `${base}/submissions/:submission/appeals`, {
      scopes: study,
      approval: true,
      summary: "Appeal a released score"
    }, [recordErrors, commandErrors, wire(WindowClosed), wire(GradeFrozen)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(SubmissionPath)
      .setPayload(AppealCreate)
      .addSuccess(Appeal)
  )
  .add(
    authenticated("GET", "learning.appeals.list_for_submission", `${base}/submissions/:submission/appeals`, {
      scopes: read,
      summary: "The appeals of a submission"
    }, [recordErrors]).annotate(EnrollmentAccess, learnerOrStaff).setPath(SubmissionPath).addSuccess(AppealList)
  )
  .add(
    authenticated("GET", "learning.appeals.list", `${base}/courses/:course/appeals`, {
      scopes: read,
      summary: "The appeal queue of a course"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(AppealListQuery).addSuccess(AppealPage)
  )
  .add(
    authenticated("POST", "learning.appeals.decide", `${base}/appeals/:appeal/decision`, {
      scopes: grade,
      approval: true,
      summary: "Resolve an open appeal or close an escalated one: uphold, adjust, replace or regrade"
    }, [recordErrors, commandErrors, wire(GradeFrozen), wire(ConflictOfInterest)])
      .setPath(AppealPath)
      .setPayload(AppealDecide)
      .addSuccess(Appeal)
  )
  .add(
    authenticated("POST", "learning.appeals.escalate", `${base}/appeals/:appeal/escalate`, {
      scopes: study,
      approval: true,
      summary: "The learner escalates a resolved appeal to the instructor"
    }, [recordErrors, commandErrors, wire(WindowClosed)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(AppealPath)
      .setPayload(AppealEscalate)
      .addSuccess(Appeal)
  )
  .add(
    authenticated("GET", "learning.appeals.replacements", `${base}/appeals/:appeal/replacement-options`, {
      scopes: read,
      summary: "Computed replacement options (another attempt, excusing the step) with their points; no side effects"
    }, [recordErrors]).setPath(AppealPath).addSuccess(ReplacementOptions)
  )
  .add(
    authenticated("POST", "learning.regrade_plans.create", `${base}/courses/:course/regrade-plans`, {
      scopes: grade,
      summary: "Re-evaluate stored results under a changed rule (no grader calls); a plan of items old → new"
    }, [recordErrors, commandErrors])
      .setPath(CoursePath)
      .setPayload(RegradePlanCreate)
      .addSuccess(RegradePlan)
  )
  .add(
    authenticated("GET", "learning.regrade_plans.get", `${base}/courses/:course/regrade-plans/:plan`, {
      scopes: read,
      summary: "A regrade plan and its items old → new"
    }, [recordErrors]).setPath(PlanPath).setUrlParams(RegradePlanQuery).addSuccess(RegradePlan)
  )
  .add(
    authenticated("POST", "learning.regrade_plans.commit", `${base}/courses/:course/regrade-plans/:plan/commit`, {
      scopes: grade,
      approval: true,
      summary: "Commit the plan's items as plan layers; frozen items skipped; large plans commit in resumable chunks"
    }, [recordErrors, commandErrors, wire(PlanStale), wire(PlanExpired)])
      .setPath(PlanPath)
      .setPayload(RegradePlanCommit)
      .addSuccess(RegradePlan)
  )
  .annotate(OpenApi.Description, "Learning: extension requests, incidents and compensation, appeals, regrade plans")
