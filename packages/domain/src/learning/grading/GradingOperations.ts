import { LearningGradingApi } from "./GradingApi.js"
import { implement } from "../../operations/Implementation.js"
import { controlHistory, createChecker, getChecker, getPreflight, listCheckers, preflightChecker, resumeChecker, suspendChecker } from "./Checkers.js"
import { gradingDiagnostics, gradingUsage } from "./Grading.js"
import { applyRegrade, createRegrade, getRegrade, regradeCandidates } from "../corrections/Regrades.js"

/** Checkers, grading and regrades of learning L3 over their services. */
export const LearningGradingOperations = implement(LearningGradingApi)({
  "learning.checkers.list": ({ path, urlParams }, actor) => listCheckers(actor, path.course, urlParams),
  "learning.checkers.get": ({ path }, actor) => getChecker(actor, path.course, path.checker),
  "learning.checkers.create": ({ path, payload }, actor) => createChecker(actor, path.course, payload),
  "learning.checkers.preflight": ({ path, payload }, actor) => preflightChecker(actor, path.course, path.checker, payload),
  "learning.preflights.get": ({ path }, actor) => getPreflight(actor, path.course, path.job),
  "learning.checkers.resume": ({ path, payload }, actor) => resumeChecker(actor, path.course, path.checker, payload),
  "learning.checkers.suspend": ({ path, payload }, actor) => suspendChecker(actor, path.course, path.checker, payload),
  "learning.checkers.control_history": ({ path, urlParams }, actor) => controlHistory(actor, path.course, path.checker, urlParams),
  "learning.grading.diagnostics": ({ path }, actor) => gradingDiagnostics(actor, path.course, path.job),
  "learning.grading.usage": ({ path, urlParams }, actor) => gradingUsage(actor, path.course, urlParams),
  "learning.regrades.candidates": ({ path, urlParams }, actor) => regradeCandidates(actor, path.course, urlParams),
  "learning.regrades.create": ({ path, payload }, actor) => createRegrade(actor, path.course, payload),
  "learning.regrades.get": ({ path, urlParams }, actor) => getRegrade(actor, path.course, path.regrade, urlParams),
  "learning.regrades.apply": ({ path, payload }, actor) => applyRegrade(actor, path.course, path.regrade, payload)
})
