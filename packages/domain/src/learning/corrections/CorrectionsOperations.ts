import { LearningCorrectionsApi } from "./CorrectionsApi.js"
import { implement } from "../../operations/Implementation.js"
import { courseAppeals, createAppeal, decideAppeal, escalateAppeal, replacementOptions, submissionAppeals } from "./Appeals.js"
import { courseExtensions, createExtension, decideExtension, listExtensions } from "./Extensions.js"
import { applyCompensation, createIncident, getIncident, listIncidents, previewCompensation } from "./Incidents.js"
import { commitRegradePlan, createRegradePlan, getRegradePlan } from "./RegradePlans.js"

/** Learning L3 corrections: extensions, incidents, appeals, regrade plans. */
export const LearningCorrectionsOperations = implement(LearningCorrectionsApi)({
  "learning.extensions.course_list": ({ path, urlParams }, actor) => courseExtensions(actor, path.course, urlParams),
  "learning.extensions.create": ({ path, payload }, actor) => createExtension(actor, path.enrollment, payload),
  "learning.extensions.list": ({ path }, actor) => listExtensions(actor, path.enrollment),
  "learning.extensions.decide": ({ path, payload }, actor) => decideExtension(actor, path.extension, payload),
  "learning.incidents.create": ({ path, payload }, actor) => createIncident(actor, path.run, payload),
  "learning.incidents.list": ({ path, urlParams }, actor) => listIncidents(actor, path.run, urlParams),
  "learning.incidents.get": ({ path }, actor) => getIncident(actor, path.incident),
  "learning.incidents.preview": ({ path, payload }, actor) => previewCompensation(actor, path.incident, payload),
  "learning.incidents.apply": ({ path, payload }, actor) => applyCompensation(actor, path.incident, payload),
  "learning.appeals.create": ({ path, payload }, actor) => createAppeal(actor, path.submission, payload),
  "learning.appeals.list_for_submission": ({ path }, actor) => submissionAppeals(actor, path.submission),
  "learning.appeals.list": ({ path, urlParams }, actor) => courseAppeals(actor, path.course, urlParams),
  "learning.appeals.decide": ({ path, payload }, actor) => decideAppeal(actor, path.appeal, payload),
  "learning.appeals.escalate": ({ path, payload }, actor) => escalateAppeal(actor, path.appeal, payload),
  "learning.appeals.replacements": ({ path }, actor) => replacementOptions(actor, path.appeal),
  "learning.regrade_plans.create": ({ path, payload }, actor) => createRegradePlan(actor, path.course, payload),
  "learning.regrade_plans.get": ({ path, urlParams }, actor) => getRegradePlan(actor, path.course, path.plan, urlParams),
  "learning.regrade_plans.commit": ({ path, payload }, actor) => commitRegradePlan(actor, path.course, path.plan, payload)
})
