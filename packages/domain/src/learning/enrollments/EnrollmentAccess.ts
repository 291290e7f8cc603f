import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option, Schema } from "effect"
import { Forbidden, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { rowsDecoder, Timestamp, uuidArray } from "../../store/Rows.js"
import { type EnrollmentRule, runningEnrollmentRule } from "./EnrollmentRule.js"
import { type CourseHead, loadCourseHeads, versionNodes } from "../courses/CourseRepository.js"
import { type EnrollmentRow, loadEnrollments } from "./EnrollmentRepository.js"
import type { CourseNode } from "../courses/Model.js"
import { type Assignment, covers, enrollmentTarget, holdsAtom, onlyGroupScoped, standingOn, type Target } from "../Permissions.js"
import { loadRun, loadRuns, type RunRow } from "../courses/RunRepository.js"

/**
 * Who may do what to one enrollment: `enrollmentFor` is the one check every operation under
 * `/enrollments/{enrollment}` (and those reaching an enrollment through a submission or job) runs,
 * under the rule its declaration carries (`EnrollmentAccess`, EnrollmentRule.ts).
 */

/** The run's enrollment policies beyond the L1 run row. */
export interface RunPolicies {
  readonly seat_offer_hours: number
  readonly withdraw_grace_hours: number
  readonly restore_days: number
  readonly reminder_hours: ReadonlyArray<number>
  readonly complete_on_criteria: boolean
  readonly application_form: unknown
}

/** A run row's policies (the row carries them: no second read). */
export const policiesOf = (run: RunRow): RunPolicies => ({
  seat_offer_hours: run.seat_offer_hours,
  withdraw_grace_hours: run.withdraw_grace_hours,
  restore_days: run.restore_days,
  reminder_hours: run.reminder_hours,
  complete_on_criteria: run.complete_on_criteria,
  application_form: run.application_form
})

/** The policies of a run that exists (a run uuid read from an enrollment or a locked row). */
export const loadRunPolicies = (runUuid: string): Effect.Effect<RunPolicies, SqlError, SqlClient.SqlClient> =>
  Effect.map(Effect.orDie(loadRun(runUuid, { lock: false })), policiesOf)

/** The node tree of the version a run pins (`versionNodes`: from memory once read). */
export const pinnedNodes = (runUuid: string): Effect.Effect<ReadonlyArray<CourseNode>, SqlError, SqlClient.SqlClient> =>
  Effect.map(pinnedNodesOf([runUuid]), (byRun) => byRun.get(runUuid.toLowerCase()) ?? [])

/** A run's pinned version (`versionNodes` takes it). */
const RunPin = Schema.Struct({
  run_uuid: Schema.String,
  course_uuid: Schema.String,
  version_number: Schema.Number,
  content_hash: Schema.String,
  published_at: Timestamp
})
const decodePins = rowsDecoder(RunPin)

/**
 * `pinnedNodes` of several runs: their pins in one statement, each tree from the version cache (or
 * read once); keyed by the run uuid as Postgres writes it (lower case).
 */
export const pinnedNodesOf = (
  runUuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<CourseNode>>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (runUuids.length === 0) return new Map()
    const sql = yield* SqlClient.SqlClient
    const pins = yield* Effect.flatMap(
      sql`SELECT r.uuid::text AS run_uuid, r.course_uuid, r.version_number, v.content_hash, v.published_at FROM learning_runs r
          JOIN learning_course_versions v ON v.course_uuid = r.course_uuid AND v.number = r.version_number
        WHERE r.uuid = ANY(${uuidArray(sql, runUuids)})`,
      decodePins
    )
    const trees = yield* Effect.forEach(pins, (pin) => Effect.map(versionNodes(pin), (nodes) => [pin.run_uuid, nodes] as const))
    return new Map(trees)
  })

/** What `enrollmentFor` hands back: everything an enrollment operation usually needs, read once. */
export interface EnrollmentContext {
  readonly enrollment: EnrollmentRow
  readonly run: RunRow
  readonly policies: RunPolicies
  /** The course without its draft content. */
  readonly course: CourseHead
  /** The node tree of the run's pinned version (never the draft). */
  readonly nodes: ReadonlyArray<CourseNode>
  /** The caller is the enrollment's learner (false for staff acting on it). */
  readonly asLearner: boolean
  /** The caller's active staff assignments on the course (empty for a learner). */
  readonly assignments: ReadonlyArray<Assignment>
  /** What staff checks on this enrollment are about: its run and (for group-scoped callers) its groups. */
  readonly target: Target
}

/**
 * The pure decision: undefined when allowed. Strangers (neither the learner nor staff of the
 * course) get 404, so an enrollment's existence never leaks; the learner or staff without the
 * right get 403. `learnerOnly` narrows any rule to the learner (staff: 403).
 */
export const decideOnEnrollment = (
  operation: string,
  rule: EnrollmentRule,
  enrollment: Pick<EnrollmentRow, "uuid" | "profile_uuid" | "run_uuid">,
  caller: { readonly profileUuid: string | undefined; readonly assignments: ReadonlyArray<Assignment> },
  options: { readonly learnerOnly?: boolean | undefined } = {},
  /** The groups the enrollment is a member of (needed when the caller has group-scoped assignments). */
  groupUuids: ReadonlyArray<string> = []
): NotFound | Forbidden | undefined => {
  const learner = caller.profileUuid !== undefined && caller.profileUuid === enrollment.profile_uuid
  if (learner) return rule.learner ? undefined : new Forbidden({ message: `${operation} is for the course's staff, not the learner` })
  const target: Target = { runUuid: enrollment.run_uuid, groupUuids }
  // Group-scoped staff see only their groups' learners: others do not exist for them.
  if (caller.assignments.length === 0 || onlyGroupScoped(caller.assignments) && !caller.assignments.some((a) => covers(a, target))) {
    return new NotFound({ message: `No enrollment ${enrollment.uuid}` })
  }
  const requirement = options.learnerOnly === true ? undefined : rule.staff
  if (requirement === undefined) return new Forbidden({ message: `${operation} is the learner's own action` })
  const allowed = requirement.kind === "staff"
    ? caller.assignments.some((a) => covers(a, target))
    : holdsAtom(caller.assignments, requirement.atom, target)
  if (allowed) return undefined
  return new Forbidden({
    message: requirement.kind === "staff"
      ? `${operation}: your staff role does not cover this run`
      : `${operation} needs the ${requirement.atom} permission on this run`
  })
}

/**
 * Loads an enrollment with its run, the run's policies, the course and the pinned version's node
 * tree, and authorizes the running operation on it under its declared rule (`decideOnEnrollment`: 404 to strangers, 403 to those
 * who may see it but not act). `lock: true` takes `FOR UPDATE` on the enrollment row (use it in
 * commands, inside the command's transaction, before reading state you will change).
 * `learnerOnly: true` refuses staff even where the rule lets them read.
 *
 * Use it for every operation under /enrollments/{enrollment}; for operations keyed by a
 * submission or job, load that record first and pass its enrollment uuid (the answer for a
 * stranger is then "No enrollment …", a 404, which is what the record's own 404 would be).
 */
export const enrollmentFor = (
  actor: Actor | undefined,
  enrollmentUuid: string,
  options: { readonly lock: boolean; readonly learnerOnly?: boolean }
): Effect.Effect<EnrollmentContext, NotFound | Forbidden | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(enrollmentsFor([{ actor, enrollmentUuid }], options), ([context]) => context!)

/**
 * `enrollmentFor` of several callers' enrollments (a group commit's batch): the enrollments read
 * (and locked, in uuid order) in one statement, their runs, courses and pins in one each, each
 * request authorized on its own. One answer per request, in order: its context or its refusal.
 * A batch's drain runs in a fiber its first request forked, so it carries that operation (the
 * batch's one operation) as the running one.
 */
export const enrollmentsFor = (
  requests: ReadonlyArray<{ readonly actor: Actor | undefined; readonly enrollmentUuid: string }>,
  options: { readonly lock: boolean; readonly learnerOnly?: boolean }
): Effect.Effect<ReadonlyArray<Either.Either<EnrollmentContext, NotFound | Forbidden>>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const { operationId, rule } = yield* runningEnrollmentRule
    const enrollments = new Map(
      (yield* loadEnrollments([...new Set(requests.map((request) => request.enrollmentUuid))], { lock: options.lock })).map((row) => [row.uuid, row])
    )
    const decided = yield* Effect.forEach(requests, ({ actor, enrollmentUuid }) =>
      Effect.gen(function*() {
        // A uuid may come in upper case (the schema takes either); Postgres answers in lower case.
        const enrollment = enrollments.get(enrollmentUuid.toLowerCase())
        if (enrollment === undefined) return Either.left(new NotFound({ message: `No enrollment ${enrollmentUuid}` }))
        const standing = actor === undefined || actor.profileUuid === enrollment.profile_uuid
          ? { assignments: [] as ReadonlyArray<Assignment> }
          : yield* standingOn(actor, enrollment.course_uuid)
        const target = yield* enrollmentTarget(standing.assignments, { uuid: enrollment.uuid, runUuid: enrollment.run_uuid })
        const refusal = decideOnEnrollment(
          operationId,
          rule,
          enrollment,
          { profileUuid: actor?.profileUuid, assignments: standing.assignments },
          options,
          target.groupUuids
        )
        return refusal === undefined ? Either.right({ actor, enrollment, assignments: standing.assignments, target }) : Either.left(refusal)
      }))
    const allowed = decided.flatMap((decision) => Either.isRight(decision) ? [decision.right.enrollment] : [])
    if (allowed.length === 0) return decided.map((decision) => Either.map(decision, () => undefined as never))
    const runUuids = [...new Set(allowed.map((enrollment) => enrollment.run_uuid))]
    // Independent reads: concurrent on the pool; inside a transaction one after another (its one
    // connection; `pg` queues concurrent queries on a client but deprecates doing so).
    const inTransaction = Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))
    const { courses, nodes, runs } = yield* Effect.all({
      runs: loadRuns(runUuids, { lock: false }),
      courses: loadCourseHeads([...new Set(allowed.map((enrollment) => enrollment.course_uuid))]),
      nodes: pinnedNodesOf(runUuids)
    }, { concurrency: inTransaction ? 1 : "unbounded" })
    const runOf = new Map(runs.map((run) => [run.uuid, run]))
    const courseOf = new Map(courses.map((course) => [course.uuid, course]))
    return decided.map((decision) =>
      Either.map(decision, ({ actor, assignments, enrollment, target }): EnrollmentContext => {
        // Foreign keys: an enrollment's run and course exist.
        const run = runOf.get(enrollment.run_uuid)!
        return {
          enrollment,
          run,
          policies: policiesOf(run),
          course: courseOf.get(enrollment.course_uuid)!,
          nodes: nodes.get(enrollment.run_uuid) ?? [],
          asLearner: actor !== undefined && actor.profileUuid === enrollment.profile_uuid,
          assignments,
          target
        }
      })
    )
  })
