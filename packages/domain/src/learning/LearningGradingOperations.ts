import { LearningGradingApi } from "../api/LearningGradingApi.js"
import { implement } from "../operations/Implementation.js"
import { controlHistory, createChecker, getChecker, getPreflight, listCheckers, preflightChecker, resumeChecker, suspendChecker } from "./Checkers.js"
import { gradingDiagnostics, gradingUsage } from "./Grading.js"

/** Checkers and grading of learning L3 (issue 18 points 1 and 2) over their services. */
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
  "learning.grading.usage": ({ path, urlParams }, actor) => gradingUsage(actor, path.course, urlParams)
})
