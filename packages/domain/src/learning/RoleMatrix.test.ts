import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { command, ok, step } from "../../test/learning.js"
import { codeOf, type Marketplace, openMarketplace, pool } from "../../test/marketplace.js"
import { anonymous, type Caller, type KeyActor, type SessionActor } from "../kernel/Authentication.js"
import { catalog } from "../index.js"
import { grantableScopes } from "../keys/Scopes.js"
import { type Answer, Operations, type RawInput } from "../operations/Operations.js"
import type { CourseAuthor, Run } from "./courses/Model.js"
import { advanceRuns } from "./courses/Runs.js"

/**
 * The role matrix of the learning area: every `learning.*`
 * operation of the catalog × every kind of caller, through `Operations.invoke` on real Postgres.
 *
 * The expectations below are the learning area's intended rights, written by hand per operation
 * (who may call it, whether a key needs a learning scope, whether it needs approval; the roles and
 * their letters below), never derived from `Permissions.ts`: a second source, so a
 * missing or wrong check in the implementation fails here. A learning operation added to the
 * catalog without a row fails ("every operation has a row"), and so does a row naming no
 * operation.
 *
 * The callers: anonymous; an outsider (signed in, no relation to the course); the learner of the
 * records (learner A: enrollment, submissions, draft, thread, extension request, appeal); another
 * learner of the same run (B); the owner and one accepted staff member per role (course scope);
 * keys bound to the owner's profile, with every learning scope and with none of them.
 *
 * The one world: a published, listed course (visible to every signed-in profile, so a caller
 * without the right on the course gets 403; a learner's own records are invisible to others, 404)
 * with a running cohort run and every record an operation's path names. Each call runs inside an
 * outer SQL transaction that is always rolled back (the domain's own transactions become
 * savepoints of it, @effect/sql `withTransaction`), so no call changes the world of the next:
 * an owner's `runs.cancel` or `staff.revoke` is undone before anyone else calls. Calls of one
 * operation run in sequence, operations in parallel (a row lock held by a rolled-back call only
 * makes the other wait); a 503 (a deadlock between two rolled-back calls) is retried.
 *
 * "Allowed" is any answer but 401, 403 and 404 (a success, 400 on content, 409 on state), and
 * never 500 or 503; a refusal must be exactly the status and code expected.
 */

let m: Marketplace
const day = 86_400_000

const callers = [
  "anonymous", "outsider", "learner", "otherLearner", "owner", "instructor", "reviewer", "assistant", "analyst",
  "ownerKeyWithScope", "ownerKeyWithoutScope"
] as const
type Who = typeof callers[number]
type Person = Exclude<Who, "anonymous" | "ownerKeyWithScope" | "ownerKeyWithoutScope">
const people: ReadonlyArray<Person> = ["outsider", "learner", "otherLearner", "owner", "instructor", "reviewer", "assistant", "analyst"]
const staffOf = ["owner", "instructor", "reviewer", "assistant", "analyst"] as const

/** What a caller gets: allowed, or exactly this refusal. */
type Outcome = "allowed" | "401" | "403" | "404" | "insufficient_scope" | "approval_required" | "conflict_of_interest"
const refusalOf: Record<Exclude<Outcome, "allowed">, readonly [number, string]> = {
  "401": [401, "unauthenticated"],
  "403": [403, "forbidden"],
  "404": [404, "not_found"],
  insufficient_scope: [403, "insufficient_scope"],
  approval_required: [403, "approval_required"],
  conflict_of_interest: [403, "conflict_of_interest"]
}

// ---------------------------------------------------------------------------------------------
// The expectations table
// ---------------------------------------------------------------------------------------------

/**
 * Where a refused signed-in caller stands: `course` — the course is visible to them, so 403;
 * `record` — a learner's own record (enrollment, submission, thread…): invisible to people with
 * no role on the course and to other learners (404), visible to the course's staff and to its
 * learner (403); `own` — a record of one profile (an export job, a library item, an invitation
 * to someone): 404 to everyone else.
 */
type Level = "course" | "record" | "own"

interface Row {
  /** Who may call it: `*`, `P`, `S`, `staff`, `O I R A N`, or a caller's name for a relation (invitee…). */
  readonly who: string
  /** Whether a key needs a learning scope: false for "—" (a key without learning scopes may call it). */
  readonly scope: boolean
  /** Whether a key needs the owner's approval. */
  readonly appr: boolean
  readonly level: Level
  /** Callers whose outcome the world makes different from the rule (each with its reason in `note`). */
  readonly except?: Partial<Record<Who, Outcome>>
  readonly note?: string
}

const r = (who: string, scope: boolean, appr: boolean, level: Level, extra: Pick<Row, "except" | "note"> = {}): Row => ({ who, scope, appr, level, ...extra })
const Y = true
const N = false

/*
 * Refinements that docs/decisions.md records, kept as the implementation has them (each a named
 * exception, so a change to them is a visible choice).
 */
const strangers404: Partial<Record<Who, Outcome>> = { outsider: "404", learner: "404", otherLearner: "404" }
/** decisions.md "404 or 403": staff-only reads are records of the staff's own; a non-staff caller gets 404 even on a public course. */
const staffRead = { except: strangers404, note: "staff-only read: 404 to non-staff (decisions.md, 404 or 403)" }
/** decisions.md "Records of learners answer 404 to strangers" (`staffOnRecord`): incidents are unknown to non-staff, learners included. */
const incidentRead = { except: strangers404, note: "incidents: 404 to non-staff (decisions.md, corrections)" }
/** Nobody reviews, decides or adjusts their own submission. */
const ownWork: Outcome = "conflict_of_interest"
/** decisions.md, reviews "Who": a learner of the run may be a peer reviewer, so review commands answer them 403, not 404. */
const peer: Partial<Record<Who, Outcome>> = { learner: ownWork, otherLearner: "403" }
/** decisions.md, course reviews and community: another person's enrollment is 404 to everyone, staff included. */
const learnerOnly404 = { except: { owner: "404", instructor: "404", reviewer: "404", assistant: "404", analyst: "404" } as Partial<Record<Who, Outcome>> }

/** The letters of `who`: `O I R A N` the staff roles, `S` the learner, `P` any profile. */
const letters: Record<string, ReadonlyArray<Person>> = {
  O: ["owner"], I: ["instructor"], R: ["reviewer"], A: ["assistant"], N: ["analyst"],
  S: ["learner"], staff: staffOf, P: people
}

const expectations: Record<string, Row> = {
  // Training publications (`/api/v1/commands/learning.*`, built before the learning area, not in its operations):
  // a profile's own publications, so another profile's is unknown (404); the world's is the owner's.
  "learning.list": r("P", Y, N, "own"),
  "learning.get": r("O", Y, N, "own", { note: "the owner's publication" }),
  "learning.save": r("O", Y, N, "own", { note: "an update of the owner's publication" }),
  "learning.submit": r("O", Y, Y, "own"),
  "learning.hide": r("O", Y, Y, "own"),
  "learning.restore": r("O", Y, Y, "own"),
  "learning.delete": r("O", Y, Y, "own"),

  // L1
  "learning.courses.list": r("*", N, N, "course"),
  "learning.courses.create": r("P", Y, N, "course"),
  "learning.courses.get": r("*", N, N, "course"),
  "learning.courses.update": r("O I", Y, N, "course"),
  "learning.courses.author_list": r("P", Y, N, "course", { note: "\"staff\": the list of the caller's own courses, empty for anyone else" }),
  "learning.courses.author_get": r("staff", Y, N, "course", staffRead),
  "learning.courses.archive": r("O", Y, Y, "course"),
  "learning.courses.bundle": r("O I", Y, N, "course"),
  "learning.courses.copy": r("O I", Y, N, "course"),
  "learning.courses.from_publication": r("O", Y, N, "own", { note: "P (publication owner): the owner's training publication" }),
  "learning.courses.import": r("O", Y, N, "own", { note: "P: the file is the owner's upload" }),
  "learning.courses.preview": r("staff", Y, N, "course", staffRead),
  "learning.courses.publish": r("O I", Y, Y, "course"),
  "learning.courses.validate": r("staff", Y, N, "course", staffRead),
  "learning.versions.list": r("staff", Y, N, "course", staffRead),
  "learning.runs.create": r("O I", Y, N, "course"),
  "learning.runs.list": r("*", N, N, "course"),
  "learning.runs.update": r("O I", Y, N, "course"),
  "learning.runs.archive": r("O I", Y, Y, "course"),
  "learning.runs.cancel": r("O", Y, Y, "course"),
  "learning.runs.finish": r("O I", Y, Y, "course"),
  "learning.admissions.preview": r("*", N, N, "course"),
  "learning.schedule.preview": r("O I", Y, N, "course"),
  "learning.schedule.apply": r("O I", Y, Y, "course"),
  "learning.exports.course": r("O I", Y, N, "course"),
  "learning.exports.enrollment": r("S O I", Y, N, "record"),
  "learning.exports.get": r("O", Y, N, "own", { note: "requester: the owner's course export" }),
  "learning.analytics.get": r("O I N", Y, N, "course"),
  "learning.analytics.export": r("O I N", Y, Y, "course"),
  "learning.audit.list": r("O I N", Y, N, "course"),
  "learning.library.list": r("P", Y, N, "course"),
  "learning.library.save": r("O I", Y, N, "course"),
  "learning.library.insert": r("O I", Y, N, "course", { except: { instructor: "404" }, note: "the item is the owner's: a library is per profile" }),

  // L2
  "learning.enrollments.list": r("P", Y, N, "course"),
  "learning.enrollments.get": r("S staff", Y, N, "record"),
  "learning.enrollments.enroll": r("P", Y, N, "course"),
  "learning.enrollments.invite": r("O I A", Y, Y, "course"),
  "learning.enrollments.accept_invitation": r("S", Y, N, "record"),
  "learning.enrollments.course_list": r("staff", Y, N, "course", staffRead),
  "learning.enrollments.decide": r("O I A", Y, Y, "record"),
  "learning.enrollments.override": r("O I A", Y, Y, "record"),
  "learning.enrollments.pause": r("S O I A", Y, N, "record"),
  "learning.enrollments.pause_preview": r("S staff", Y, N, "record"),
  "learning.enrollments.restore": r("S O I A", Y, Y, "record"),
  "learning.enrollments.resume": r("S staff", Y, N, "record"),
  "learning.enrollments.start": r("S", Y, N, "record"),
  "learning.enrollments.withdraw": r("S O I A", Y, Y, "record"),
  "learning.seats.accept": r("S", Y, N, "record"),
  "learning.seats.decline": r("S", Y, Y, "record"),
  "learning.applications.get": r("S O I A", Y, N, "record"),
  "learning.calendar.get": r("S staff", Y, N, "record"),
  "learning.completion.get": r("S staff", Y, N, "record"),
  "learning.steps.get": r("S staff", Y, N, "record"),
  "learning.steps.acknowledge": r("S", Y, N, "record"),
  "learning.drafts.save": r("S", Y, N, "record"),
  "learning.submissions.create": r("S", Y, Y, "record"),
  "learning.submissions.history": r("S staff", Y, N, "record"),
  "learning.submissions.get": r("S staff", Y, N, "record"),
  "learning.submissions.cancel": r("S", Y, Y, "record"),
  "learning.variants.issue": r("S", Y, N, "record"),
  "learning.generated_variants.state": r("S", Y, N, "record"),
  "learning.generated_variants.create": r("S", Y, N, "record"),
  "learning.generated_variants.get": r("S", Y, N, "record"),
  "learning.sample_runs.create": r("S", Y, N, "record"),
  "learning.sample_runs.get": r("S", Y, N, "record"),
  "learning.demo.apply": r("S", Y, Y, "record"),
  "learning.demo.try": r("P", Y, N, "course"),
  "learning.demo.progress": r("P", Y, N, "course"),
  "learning.media.get": r("S staff", Y, N, "record"),
  "learning.media.save": r("S", Y, N, "record"),
  "learning.portfolio.create": r("S", Y, N, "record"),
  "learning.transfers.preview": r("O I A", Y, N, "course"),
  "learning.transfers.apply": r("O I A", Y, Y, "course"),

  // L3
  "learning.reviews.list": r("O I R", Y, N, "course", staffRead),
  "learning.reviews.assignment_list": r("O I R S otherLearner", Y, N, "course", { note: "peer S finds work here (decisions.md, the queue)" }),
  "learning.reviews.assignment": r("S staff", Y, N, "record"),
  "learning.reviews.claim": r("O I R otherLearner", Y, N, "record", {
    except: { learner: ownWork },
    note: "peer S: a learner of the run claims peer work once they submitted (409 not_eligible here); nobody reviews their own"
  }),
  "learning.reviews.decide": r("O I R", Y, Y, "record", { except: peer, note: "holder (the reviewer claimed it), O I (final)" }),
  "learning.reviews.draft": r("R", Y, N, "record", { except: peer, note: "holder: the reviewer claimed it" }),
  "learning.reviews.reassign": r("O I R", Y, N, "record", { except: peer, note: "O I; the holder to the pool (the payload says pool)" }),
  "learning.reviews.release": r("O I R", Y, Y, "record", { except: peer }),
  "learning.reviews.report_issue": r("R", Y, N, "record", { except: peer, note: "holder" }),
  "learning.reviews.workspace": r("O I R", Y, N, "record", { except: { learner: ownWork }, note: "holder, O I" }),
  "learning.appeals.create": r("S", Y, Y, "record"),
  "learning.appeals.list_for_submission": r("S staff", Y, N, "record"),
  "learning.appeals.list": r("O I R", Y, N, "course"),
  "learning.appeals.decide": r("O I R", Y, Y, "record", { note: "R (own review): the appeal is of the reviewer's released review" }),
  "learning.appeals.decide#automatic": r("O I", Y, Y, "record", { note: "R (own review): an appeal of an automatic score is not the reviewer's" }),
  "learning.appeals.escalate": r("S", Y, Y, "record"),
  "learning.appeals.replacements": r("O I R", Y, N, "record"),
  "learning.automatic_overrides.candidates": r("O I", Y, N, "course", staffRead),
  "learning.automatic_overrides.create": r("O I", Y, Y, "record", { except: { learner: ownWork } }),
  "learning.automatic_overrides.list": r("S staff", Y, N, "record"),
  "learning.automatic_overrides.revoke": r("O I", Y, Y, "record", { except: { learner: ownWork } }),
  "learning.checkers.list": r("O I", Y, N, "course"),
  "learning.checkers.get": r("O I", Y, N, "course"),
  "learning.checkers.create": r("O I", Y, N, "course"),
  "learning.checkers.preflight": r("O I", Y, N, "course"),
  "learning.preflights.get": r("O I", Y, N, "course"),
  "learning.checkers.resume": r("O I", Y, Y, "course"),
  "learning.checkers.suspend": r("O I", Y, N, "course"),
  "learning.checkers.control_history": r("O I", Y, N, "course"),
  "learning.grading.diagnostics": r("O I", Y, N, "course"),
  "learning.grading.usage": r("O I N", Y, N, "course"),
  "learning.regrades.candidates": r("O I", Y, N, "course"),
  "learning.regrades.create": r("O I", Y, N, "course"),
  "learning.regrades.get": r("O I", Y, N, "course"),
  "learning.regrades.apply": r("O I", Y, Y, "course"),
  "learning.regrade_plans.create": r("O I", Y, N, "course"),
  "learning.regrade_plans.get": r("O I", Y, N, "course"),
  "learning.regrade_plans.commit": r("O I", Y, Y, "course"),
  "learning.extensions.course_list": r("O I A", Y, N, "course"),
  "learning.extensions.create": r("S", Y, N, "record"),
  "learning.extensions.list": r("S staff", Y, N, "record"),
  "learning.extensions.decide": r("O I A", Y, Y, "record"),
  "learning.incidents.create": r("O I", Y, N, "course", incidentRead),
  "learning.incidents.list": r("staff", Y, N, "course", incidentRead),
  "learning.incidents.get": r("staff", Y, N, "course", incidentRead),
  "learning.incidents.preview": r("O I", Y, N, "course", incidentRead),
  "learning.incidents.apply": r("O I", Y, Y, "course", incidentRead),

  // L4
  "learning.community.create": r("S", Y, N, "record", learnerOnly404),
  "learning.community.list": r("S", Y, N, "record", { ...learnerOnly404, note: "staff read through staff_list (decisions.md, community)" }),
  "learning.community.get": r("S O I R A", Y, N, "record", { except: { analyst: "404" }, note: "participants, staff: community_staff is O I R A's; a thread unknown to a caller is 404" }),
  "learning.community.reply": r("S O I R A", Y, N, "record", { except: { analyst: "404" }, note: "community_staff is O I R A's" }),
  "learning.community.resolve": r("S O I R A", Y, N, "record", { except: { analyst: "404" }, note: "author, staff; community_staff is O I R A's" }),
  "learning.community.recipients": r("S otherLearner O I R A", Y, N, "course", { note: "community_staff is O I R A's" }),
  "learning.community.staff_create": r("O I R A", Y, N, "course", { note: "staff[community_staff]: the analyst lacks it; decided on the (public) course first" }),
  "learning.community.staff_list": r("O I R A", Y, N, "course", { note: "community_staff is O I R A's" }),
  "learning.course_reviews.list": r("*", N, N, "course"),
  "learning.course_reviews.own": r("S", Y, N, "record", learnerOnly404),
  "learning.course_reviews.save": r("S", Y, Y, "record", learnerOnly404),
  "learning.course_reviews.remove": r("S", Y, Y, "record", learnerOnly404),
  "learning.groups.create": r("O I A", Y, N, "course"),
  "learning.groups.list": r("S otherLearner staff", Y, N, "course"),
  "learning.groups.members": r("O I A", Y, Y, "course"),
  "learning.groups.staff": r("O", Y, Y, "course"),
  "learning.groups.update": r("O I A", Y, N, "course"),
  "learning.notification_preferences.get": r("P", Y, N, "own"),
  "learning.notification_preferences.update": r("P", Y, N, "own"),
  "learning.notifications.list": r("P", Y, N, "own"),
  "learning.notifications.read": r("O", Y, N, "own", { note: "recipient: the notification is the owner's" }),
  "learning.ownership.invitations": r("P", Y, N, "own"),
  "learning.ownership.accept": r("instructor", Y, Y, "own", { note: "invitee: the instructor is invited" }),
  "learning.ownership.cancel": r("O", Y, N, "course", { note: "decided on the invitation's (public) course: 403" }),
  "learning.ownership.reject": r("instructor", Y, N, "own", { note: "invitee" }),
  "learning.ownership.candidates": r("O", Y, N, "course"),
  "learning.ownership.invite": r("O", Y, Y, "course"),
  "learning.staff.list": r("S otherLearner staff", Y, N, "course"),
  "learning.staff.assign": r("O", Y, Y, "course"),
  "learning.staff.candidates": r("O", Y, N, "course"),
  "learning.staff.revoke": r("O assistant", Y, Y, "course", { note: "O; the assignee: the assistant's assignment" }),
  "learning.staff.permissions": r("O", Y, Y, "course"),
  "learning.staff.accept": r("instructor", Y, Y, "own", { note: "invitee: the instructor's own (accepted) assignment; anyone else 404 (decisions.md)" }),
  "learning.staff.invitations": r("P", Y, N, "own"),
  "learning.staff.email_invitations": r("P", Y, N, "own"),
  "learning.staff.email_get": r("O", Y, N, "own", { note: "addressee, O: the addressee is nobody of the world" }),
  "learning.staff.email_accept": r("", Y, Y, "course", { note: "addressee only (nobody of the world): forbidden on an email mismatch" }),
  "learning.staff.email_reject": r("", Y, N, "own", { except: { owner: "403" }, note: "addressee only (nobody of the world); the owner sees it (email_get), so 403" }),
  "learning.staff.email_revoke": r("O", Y, N, "own"),
  "learning.staff.email_invite": r("O", Y, Y, "course"),
  "learning.staff.email_list": r("O", Y, N, "course"),
  "learning.teaching.list": r("P", Y, N, "own"),
  "learning.teaching.get": r("staff", Y, N, "course")
}

/** Operations whose path names no course record (a profile's own invitations…): a private course changes nothing for strangers. */
const privateExceptions: Record<string, boolean> = {
  // Decided by the invitation's address (forbidden on an email mismatch), not by the course.
  "learning.staff.email_accept": true
}


/** What each caller should get for an operation, from its row. */
const expected = (row: Row): Record<Who, Outcome> => {
  const allowed = new Set<Who>()
  for (const word of row.who.split(" ").filter((w) => w !== "")) {
    if (word === "*") {
      allowed.add("anonymous")
      for (const p of people) allowed.add(p)
    } else {
      for (const p of letters[word] ?? [word as Person]) allowed.add(p)
    }
  }
  const refusal = (who: Person): Outcome => {
    if (row.level === "course") return "403"
    if (row.level === "own") return "404"
    return who === "outsider" || who === "otherLearner" ? "404" : "403"
  }
  const outcomes = {} as Record<Who, Outcome>
  outcomes.anonymous = allowed.has("anonymous") ? "allowed" : "401"
  for (const p of people) outcomes[p] = allowed.has(p) ? "allowed" : refusal(p)
  Object.assign(outcomes, row.except ?? {})
  outcomes.ownerKeyWithoutScope = row.scope ? "insufficient_scope" : outcomes.owner
  outcomes.ownerKeyWithScope = row.appr ? "approval_required" : outcomes.owner
  return outcomes
}

// ---------------------------------------------------------------------------------------------
// The world
// ---------------------------------------------------------------------------------------------

interface World {
  readonly who: Record<Person, SessionActor>
  readonly course: string
  readonly run: string
  readonly otherRun: string
  readonly enrollment: { readonly uuid: string; readonly revision: number }
  readonly enrollmentB: string
  readonly quizSubmission: { readonly uuid: string; readonly revision: number }
  readonly overriddenSubmission: string
  readonly override: { readonly uuid: string; readonly revision: number }
  readonly essaySubmission: { readonly uuid: string; readonly revision: number }
  readonly appeal: { readonly uuid: string; readonly revision: number }
  /** An appeal of a review the reviewer decided and released. */
  readonly reviewAppeal: { readonly uuid: string; readonly revision: number }
  readonly thread: { readonly uuid: string; readonly revision: number }
  readonly extension: { readonly uuid: string; readonly revision: number }
  readonly incident: string
  readonly incidentPlan: string
  readonly regradePlan: string
  readonly regrade: string
  readonly schedulePreview: string
  readonly transfer: string
  readonly courseExport: string
  readonly libraryItem: string
  readonly demoAttempt: string
  readonly sampleRun: string
  readonly generation: string
  readonly gradeJob: string
  readonly checker: { readonly uuid: string; readonly revision: number }
  readonly preflight: string
  readonly notification: string
  readonly emailInvitation: string
  readonly ownershipInvitation: string
  readonly instructorAssignment: { readonly uuid: string; readonly revision: number }
  readonly assistantAssignment: { readonly uuid: string; readonly revision: number }
  readonly publication: string
  readonly file: string
  readonly courseRevision: number
  readonly runRevision: number
  readonly group: string
}

const tree = (checkerUuid: string) => [
  { nodeKey: "m1", kind: "module", title: "Модуль" },
  step("s1", "m1"),
  step("quiz", "m1", { stepType: "quiz", grading: { maxPoints: 10, passThreshold: 10, attempts: 3, check: { kind: "exact", answers: ["42"] } }, dueOffsetDays: 5 } as never),
  step("essay", "m1", { stepType: "assignment", grading: { maxPoints: 10, passThreshold: 6, review: { mode: "staff", release: "manual" } } } as never),
  step("essay2", "m1", { stepType: "assignment", grading: { maxPoints: 10, passThreshold: 6, review: { mode: "staff", release: "manual" } } } as never),
  step("code", "m1", { stepType: "code", grading: { maxPoints: 10, checkerUuid } } as never),
  step("demo", "m1", { stepType: "quiz", demo: true, grading: { maxPoints: 10, passThreshold: 10, check: { kind: "exact", answers: ["42"] } } } as never)
].map((node) => JSON.parse(JSON.stringify(node)))

const buildWorld = async (): Promise<World> => {
  const who = {} as Record<Person, SessionActor>
  for (const p of people) who[p] = await m.profile({ name: p })
  const owner = who.owner
  const invoke = (id: string, actor: SessionActor, input: RawInput = {}) => m.invoke(id, actor, input)

  const draft = ok<CourseAuthor>(await invoke("learning.courses.create", owner, { payload: command({ title: "Курс матрицы", kind: "single" }) }))
  const checkerUuid = randomUUID()
  await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, url, status, timeout_ms)
    VALUES ($1, $2, $1, 'http', 'https://grader.example/check', 'ready', 10000)`, checkerUuid, draft.uuid)
  const edited = ok<CourseAuthor>(await invoke("learning.courses.update", owner, {
    path: { course: draft.uuid },
    payload: command({ expectedRevision: draft.revision, nodes: tree(checkerUuid), visibility: "listed" })
  }))
  ok(await invoke("learning.courses.publish", owner, { path: { course: draft.uuid }, payload: command({ expectedRevision: edited.revision, changelog: "" }) }))
  const course = draft.uuid
  const newRun = (startsAt: number) =>
    invoke("learning.runs.create", owner, {
      path: { course },
      payload: command({
        versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(startsAt).toISOString(),
        admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 14, maxCount: 2 }
      })
    }).then((answer) => ok<Run>(answer))
  const run = await newRun(Date.now() - day)
  ok(await invoke("learning.runs.update", owner, { path: { run: run.uuid }, payload: command({ expectedRevision: run.revision, publish: true }) }))
  const otherRun = await newRun(Date.now() + day)
  await m.runtime.runPromise(advanceRuns(new Date()))

  const assignments = {} as Record<"instructor" | "reviewer" | "assistant" | "analyst", { uuid: string; revision: number }>
  for (const role of ["instructor", "reviewer", "assistant", "analyst"] as const) {
    const assigned = ok<{ uuid: string }>(await invoke("learning.staff.assign", owner, {
      path: { course },
      payload: command({ profileUuid: who[role].profileUuid, role, scope: {} })
    }))
    assignments[role] = ok(await invoke("learning.staff.accept", who[role], { path: { assignment: assigned.uuid }, payload: command({ expectedRevision: 1 }) }))
  }

  const enroll = async (learner: SessionActor) => {
    const made = ok<{ uuid: string; revision: number }>(await invoke("learning.enrollments.enroll", learner, { path: { run: run.uuid }, payload: command() }))
    return ok<{ uuid: string; revision: number }>(await invoke("learning.enrollments.start", learner, {
      path: { enrollment: made.uuid },
      payload: command({ expectedRevision: made.revision })
    }))
  }
  const enrollment = await enroll(who.learner)
  const enrollmentB = (await enroll(who.otherLearner)).uuid
  const learner = who.learner
  const submit = (node: string, reply: unknown) =>
    invoke("learning.submissions.create", learner, { path: { enrollment: enrollment.uuid, node }, payload: command({ reply }) })
      .then((answer) => ok<{ uuid: string; revision: number }>(answer))
  const quizSubmission = await submit("quiz", "41")
  const overridden = await submit("quiz", "40")
  const essaySubmission = await submit("essay", "Моё эссе")
  ok(await invoke("learning.reviews.claim", who.reviewer, { path: { submission: essaySubmission.uuid }, payload: command() }))
  // The second essay reviewed and released by the reviewer, then appealed: an appeal of their own review.
  const reviewed = await submit("essay2", "Второе эссе")
  const claimed = ok<{ revision: number }>(await invoke("learning.reviews.claim", who.reviewer, { path: { submission: reviewed.uuid }, payload: command() }))
  const decided = ok<{ revision: number }>(await invoke("learning.reviews.decide", who.reviewer, {
    path: { submission: reviewed.uuid },
    payload: command({ expectedRevision: claimed.revision, outcome: "accept", points: 7, rubric: [], comment: "Хорошо" })
  }))
  ok(await invoke("learning.reviews.release", who.reviewer, { path: { submission: reviewed.uuid }, payload: command({ expectedRevision: decided.revision }) }))
  const reviewAppeal = ok<{ uuid: string; revision: number }>(await invoke("learning.appeals.create", learner, {
    path: { submission: reviewed.uuid },
    payload: command({ reason: "Заслуживает большего" })
  }))
  ok(await invoke("learning.course_reviews.save", learner, { path: { enrollment: enrollment.uuid }, payload: command({ rating: 4, text: "Хороший курс" }) }))
  const appeal = ok<{ uuid: string; revision: number }>(await invoke("learning.appeals.create", learner, {
    path: { submission: quizSubmission.uuid },
    payload: command({ reason: "Ответ верный по сути" })
  }))
  const override = ok<{ uuid: string; revision: number }>(await invoke("learning.automatic_overrides.create", owner, {
    path: { submission: overridden.uuid },
    payload: command({ points: 5, reason: "Проверка ошиблась" })
  }))
  ok(await invoke("learning.drafts.save", learner, { path: { enrollment: enrollment.uuid, node: "essay" }, payload: command({ reply: "Черновик" }) }))
  const thread = ok<{ uuid: string; revision: number }>(await invoke("learning.community.create", learner, {
    path: { enrollment: enrollment.uuid },
    payload: command({ title: "Вопрос", body: "Как решать?", visibility: "private" })
  }))
  const extension = ok<{ uuid: string; revision: number; status: string }>(await invoke("learning.extensions.create", learner, {
    path: { enrollment: enrollment.uuid },
    payload: command({ nodeKey: "quiz", days: 14, reason: "Болел" })
  }))
  expect(extension.status).toBe("requested")
  const incident = ok<{ uuid: string }>(await invoke("learning.incidents.create", owner, {
    path: { run: run.uuid },
    payload: command({ kind: "checker_outage", window: { from: new Date(Date.now() - day).toISOString(), to: new Date().toISOString() }, description: "Сбой" })
  }))
  const incidentPlan = ok<{ uuid: string }>(await invoke("learning.incidents.preview", owner, { path: { incident: incident.uuid }, payload: command({ extendDays: 1 }) }))
  const regradePlan = ok<{ uuid: string }>(await invoke("learning.regrade_plans.create", owner, {
    path: { course },
    payload: command({ nodeKey: "quiz", rule: { kind: "full_credit" }, selector: {}, policy: "any" })
  }))
  const regrade = ok<{ uuid: string }>(await invoke("learning.regrades.create", owner, {
    path: { course },
    payload: command({ selector: { nodeKey: "code" }, checkerUuid, policy: "any" })
  }))
  const schedulePreview = ok<{ uuid: string }>(await invoke("learning.schedule.preview", owner, {
    path: { run: run.uuid },
    payload: command({ changes: [{ nodeKey: "quiz", shiftDays: 1 }] })
  }))
  const transfer = ok<{ uuid: string }>(await invoke("learning.transfers.preview", owner, {
    path: { course },
    payload: command({ fromRunUuid: run.uuid, toRunUuid: otherRun.uuid })
  }))
  const courseExport = ok<{ uuid: string }>(await invoke("learning.exports.course", owner, { path: { course }, payload: command({ includeCheckers: false }) }))
  const libraryItem = ok<{ uuid: string }>(await invoke("learning.library.save", owner, { path: { course }, payload: command({ nodeKey: "m1", title: "Модуль" }) }))
  const demoAttempt = ok<{ uuid: string }>(await invoke("learning.demo.try", learner, { path: { course, node: "demo" }, payload: command({ reply: "42" }) }))
  const job = async (kind: string, extra: { enrollment?: string; submission?: string; node?: string } = {}) => {
    const uuid = randomUUID()
    await m.sql(`INSERT INTO learning_grading_jobs (uuid, kind, course_uuid, enrollment_uuid, node_key, submission_uuid, checker_uuid, requester_profile_uuid)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, uuid, kind, course, extra.enrollment ?? null, extra.node ?? null, extra.submission ?? null, checkerUuid, learner.profileUuid)
    return uuid
  }
  const sampleRun = await job("sample_run", { enrollment: enrollment.uuid, node: "code" })
  const generation = await job("generate", { enrollment: enrollment.uuid, node: "code" })
  const gradeJob = await job("grade", { enrollment: enrollment.uuid, node: "code", submission: quizSubmission.uuid })
  const declarative = ok<{ uuid: string }>(await invoke("learning.checkers.create", owner, {
    path: { course },
    payload: command({
      name: "Exact", kind: "declarative", rules: { kind: "exact", answers: ["42"] },
      referenceCases: [{ name: "answer", reply: "42", expected: "correct" }, { reply: "41", expected: "wrong" }]
    })
  }))
  const preflight = ok<{ uuid: string }>(await invoke("learning.checkers.preflight", owner, { path: { course, checker: declarative.uuid }, payload: command() }))
  const [checkerRow] = await m.sql<{ revision: number }>("SELECT revision FROM learning_checkers WHERE uuid = $1", checkerUuid)
  const [notification] = await m.sql<{ uuid: string }>(
    "INSERT INTO notifications (profile_uuid, source, kind, title, body) VALUES ($1, 'learning', 'learning.review.requested', 'T', 'B') RETURNING uuid",
    owner.profileUuid
  )
  const emailInvitation = ok<{ uuid: string }>(await invoke("learning.staff.email_invite", owner, {
    path: { course },
    payload: command({ email: `nobody-${randomUUID()}@example.com`, role: "reviewer", scope: {} })
  }))
  const ownershipInvitation = ok<{ uuid: string }>(await invoke("learning.ownership.invite", owner, {
    path: { course },
    payload: command({ profileUuid: who.instructor.profileUuid, previousOwnerRole: "instructor" })
  }))
  const publication = await m.publication(owner, "training", { title: "Тренинг" })
  const [file] = await m.sql<{ uuid: string }>(
    `INSERT INTO files (profile_uuid, purpose, name, mime_type, size, status, upload_token_hash, upload_expires_at)
     VALUES ($1, 'publication_file', 'course.json', 'application/json', 10, 'ready', 'x', now() + interval '1 day') RETURNING uuid`,
    owner.profileUuid
  )
  const group = ok<{ uuid: string }>(await invoke("learning.groups.create", owner, inputs["learning.groups.create"]!({ run: run.uuid } as World))).uuid
  const [courseRow] = await m.sql<{ revision: number }>("SELECT revision FROM learning_courses WHERE uuid = $1", course)
  const [runRow] = await m.sql<{ revision: number }>("SELECT revision FROM learning_runs WHERE uuid = $1", run.uuid)
  const [enrollmentRow] = await m.sql<{ revision: number }>("SELECT revision FROM learning_enrollments WHERE uuid = $1", enrollment.uuid)
  const [essayRow] = await m.sql<{ revision: number }>("SELECT revision FROM learning_submissions WHERE uuid = $1", essaySubmission.uuid)
  return {
    who, course, run: run.uuid, otherRun: otherRun.uuid,
    enrollment: { uuid: enrollment.uuid, revision: enrollmentRow!.revision }, enrollmentB,
    quizSubmission, overriddenSubmission: overridden.uuid, override,
    essaySubmission: { uuid: essaySubmission.uuid, revision: essayRow!.revision },
    appeal, reviewAppeal, thread, extension, incident: incident.uuid, incidentPlan: incidentPlan.uuid, regradePlan: regradePlan.uuid,
    regrade: regrade.uuid, schedulePreview: schedulePreview.uuid, transfer: transfer.uuid, courseExport: courseExport.uuid,
    libraryItem: libraryItem.uuid, demoAttempt: demoAttempt.uuid, sampleRun, generation, gradeJob,
    checker: { uuid: checkerUuid, revision: checkerRow!.revision }, preflight: preflight.uuid, notification: notification!.uuid,
    emailInvitation: emailInvitation.uuid, ownershipInvitation: ownershipInvitation.uuid,
    instructorAssignment: assignments.instructor, assistantAssignment: assignments.assistant,
    publication, file: file!.uuid, courseRevision: courseRow!.revision, runRevision: runRow!.revision,
    group
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs: schema-valid for every operation (decoding comes before the role check)
// ---------------------------------------------------------------------------------------------

const iso = (offset: number) => new Date(Date.now() + offset).toISOString()
type Build = (w: World) => RawInput
const c = (w: World) => ({ course: w.course })
const e = (w: World) => ({ enrollment: w.enrollment.uuid })
const es = (w: World, node = "essay") => ({ enrollment: w.enrollment.uuid, node })
const sub = (w: World) => ({ submission: w.essaySubmission.uuid })
const quiz = (w: World) => ({ submission: w.quizSubmission.uuid })
const onCourse = (payload: Record<string, unknown> = {}): Build => (w) => ({ path: c(w), payload: command(payload) })
const onEnrollment = (payload: (w: World) => Record<string, unknown> = () => ({})): Build => (w) => ({ path: e(w), payload: command(payload(w)) })
const enrollmentRevision = onEnrollment((w) => ({ expectedRevision: w.enrollment.revision }))
const read = (path: (w: World) => Record<string, string> = () => ({}), urlParams: Record<string, string> = {}): Build => (w) => ({ path: path(w), urlParams })
const checker = (w: World) => ({ course: w.course, checker: w.checker.uuid })

const inputs: Record<string, Build> = {
  "learning.list": read(),
  "learning.get": (w) => ({ urlParams: { publicationUuid: w.publication } }),
  "learning.save": (w) => ({ payload: command({ publicationUuid: w.publication, expectedRevision: 1, data: { title: "Тренинг по SQL" } }) }),
  "learning.submit": (w) => ({ payload: command({ publicationUuid: w.publication, expectedRevision: 1 }) }),
  "learning.hide": (w) => ({ payload: command({ publicationUuid: w.publication, expectedRevision: 1 }) }),
  "learning.restore": (w) => ({ payload: command({ publicationUuid: w.publication, expectedRevision: 1 }) }),
  "learning.delete": (w) => ({ payload: command({ publicationUuid: w.publication, expectedRevision: 1 }) }),

  "learning.courses.list": read(),
  "learning.courses.create": () => ({ payload: command({ title: "Новый курс", kind: "single" }) }),
  "learning.courses.get": read(c),
  "learning.courses.update": (w) => ({ path: c(w), payload: command({ expectedRevision: w.courseRevision, title: "Курс матрицы" }) }),
  "learning.courses.author_list": read(),
  "learning.courses.author_get": read(c),
  "learning.courses.archive": (w) => ({ path: c(w), payload: command({ expectedRevision: w.courseRevision, reason: "Закрыт" }) }),
  "learning.courses.bundle": (w) => ({ path: c(w), payload: command({ expectedRevision: w.courseRevision, members: [{ courseUuid: randomUUID(), required: true }] }) }),
  "learning.courses.copy": onCourse({ title: "Копия", includeCheckers: false }),
  "learning.courses.from_publication": (w) => ({ payload: command({ publicationUuid: w.publication }) }),
  "learning.courses.import": (w) => ({ payload: command({ fileUuid: w.file, format: "birzha-course/1" }) }),
  "learning.courses.preview": (w) => ({ path: c(w), payload: { asOf: iso(0) } }),
  "learning.courses.publish": (w) => ({ path: c(w), payload: command({ expectedRevision: w.courseRevision, changelog: "" }) }),
  "learning.courses.validate": (w) => ({ path: c(w) }),
  "learning.versions.list": read(c),
  "learning.runs.create": onCourse({
    versionNumber: 1, title: "Ещё поток", pacing: "cohort", startsAt: iso(7 * day), admission: "open", waitlist: false,
    enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
  }),
  "learning.runs.list": read(c),
  "learning.runs.update": (w) => ({ path: { run: w.run }, payload: command({ expectedRevision: w.runRevision, title: "Поток 2" }) }),
  "learning.runs.archive": (w) => ({ path: { run: w.run }, payload: command({ expectedRevision: w.runRevision }) }),
  "learning.runs.cancel": (w) => ({ path: { run: w.run }, payload: command({ expectedRevision: w.runRevision, reason: "Отмена" }) }),
  "learning.runs.finish": (w) => ({ path: { run: w.run }, payload: command({ expectedRevision: w.runRevision }) }),
  "learning.admissions.preview": read((w) => ({ run: w.run })),
  "learning.schedule.preview": (w) => ({ path: { run: w.run }, payload: command({ changes: [{ nodeKey: "quiz", shiftDays: 1 }] }) }),
  "learning.schedule.apply": (w) => ({ path: { preview: w.schedulePreview }, payload: command() }),
  "learning.exports.course": onCourse({ includeCheckers: false }),
  "learning.exports.enrollment": onEnrollment(() => ({ format: "json" })),
  "learning.exports.get": read((w) => ({ export: w.courseExport })),
  "learning.analytics.get": read(c),
  "learning.analytics.export": onCourse({ kind: "grades", pseudonymize: true }),
  "learning.audit.list": read(c),
  "learning.library.list": read(),
  "learning.library.save": onCourse({ nodeKey: "m1", title: "Модуль" }),
  "learning.library.insert": (w) => ({ path: { course: w.course, item: w.libraryItem }, payload: command({ expectedRevision: w.courseRevision }) }),

  "learning.enrollments.list": read(),
  "learning.enrollments.get": read(e),
  "learning.enrollments.enroll": (w) => ({ path: { run: w.run }, payload: command() }),
  "learning.enrollments.invite": (w) => ({ path: { run: w.run }, payload: command({ profileUuids: [w.who.outsider.profileUuid] }) }),
  "learning.enrollments.accept_invitation": enrollmentRevision,
  "learning.enrollments.course_list": read(c),
  "learning.enrollments.decide": onEnrollment((w) => ({ expectedRevision: w.enrollment.revision, decision: "approve" })),
  "learning.enrollments.override": onEnrollment(() => ({ nodeKey: "quiz", extraAttempts: 1, reason: "Так надо" })),
  "learning.enrollments.pause": enrollmentRevision,
  "learning.enrollments.pause_preview": read(e),
  "learning.enrollments.restore": enrollmentRevision,
  "learning.enrollments.resume": enrollmentRevision,
  "learning.enrollments.start": enrollmentRevision,
  "learning.enrollments.withdraw": enrollmentRevision,
  "learning.seats.accept": enrollmentRevision,
  "learning.seats.decline": enrollmentRevision,
  "learning.applications.get": read(e),
  "learning.calendar.get": read(e),
  "learning.completion.get": read(e),
  "learning.media.get": read(e),
  "learning.media.save": (w) => ({ path: es(w, "s1"), payload: { positionSec: 1, ranges: [[0, 1]] } }),
  "learning.transfers.preview": (w) => ({ path: c(w), payload: command({ fromRunUuid: w.run, toRunUuid: w.otherRun }) }),
  "learning.transfers.apply": (w) => ({ path: { course: w.course, transfer: w.transfer }, payload: command() }),
  "learning.steps.get": read((w) => es(w)),
  "learning.steps.acknowledge": (w) => ({ path: es(w, "s1"), payload: command() }),
  "learning.drafts.save": (w) => ({ path: es(w), payload: command({ reply: "Ещё черновик" }) }),
  "learning.submissions.create": (w) => ({ path: es(w, "quiz"), payload: command({ reply: "42" }) }),
  "learning.submissions.history": read((w) => es(w)),
  "learning.submissions.get": read(sub),
  "learning.submissions.cancel": (w) => ({ path: sub(w), payload: command({ expectedRevision: w.essaySubmission.revision }) }),
  "learning.variants.issue": (w) => ({ path: es(w, "quiz"), payload: command() }),
  "learning.generated_variants.state": read((w) => es(w, "code")),
  "learning.generated_variants.create": (w) => ({ path: es(w, "code"), payload: command() }),
  "learning.generated_variants.get": read((w) => ({ job: w.generation })),
  "learning.sample_runs.create": (w) => ({ path: es(w, "code"), payload: command({ reply: "print(1)" }) }),
  "learning.sample_runs.get": read((w) => ({ job: w.sampleRun })),
  "learning.demo.apply": (w) => ({ path: es(w, "demo"), payload: command({ demoAttemptUuid: w.demoAttempt }) }),
  "learning.demo.try": (w) => ({ path: { course: w.course, node: "demo" }, payload: command({ reply: "41" }) }),
  "learning.demo.progress": read(c),
  "learning.portfolio.create": onEnrollment((w) => ({ submissionUuids: [w.quizSubmission.uuid], title: "Работы", includeFeedback: false })),

  "learning.extensions.course_list": read(c),
  "learning.extensions.create": onEnrollment(() => ({ nodeKey: "quiz", days: 1, reason: "Болел" })),
  "learning.extensions.list": read(e),
  "learning.extensions.decide": (w) => ({
    path: { extension: w.extension.uuid },
    payload: command({ expectedRevision: w.extension.revision, decision: "deny", comment: "Нет" })
  }),
  "learning.incidents.create": (w) => ({
    path: { run: w.run },
    payload: command({ kind: "other", window: { from: iso(-day), to: iso(0) }, description: "Сбой" })
  }),
  "learning.incidents.list": read((w) => ({ run: w.run })),
  "learning.incidents.get": read((w) => ({ incident: w.incident })),
  "learning.incidents.preview": (w) => ({ path: { incident: w.incident }, payload: command({ extendDays: 2 }) }),
  "learning.incidents.apply": (w) => ({ path: { incident: w.incident }, payload: command({ planUuid: w.incidentPlan }) }),
  "learning.appeals.create": (w) => ({ path: quiz(w), payload: command({ reason: "Ещё раз" }) }),
  "learning.appeals.list_for_submission": read(quiz),
  "learning.appeals.list": read(c),
  "learning.appeals.decide": (w) => ({
    path: { appeal: w.reviewAppeal.uuid },
    payload: command({ expectedRevision: w.reviewAppeal.revision, outcome: "uphold", comment: "Оценка верна" })
  }),
  "learning.appeals.decide#automatic": (w) => ({
    path: { appeal: w.appeal.uuid },
    payload: command({ expectedRevision: w.appeal.revision, outcome: "uphold", comment: "Оценка верна" })
  }),
  "learning.appeals.escalate": (w) => ({ path: { appeal: w.appeal.uuid }, payload: command({ expectedRevision: w.appeal.revision, reason: "Не согласен" }) }),
  "learning.appeals.replacements": read((w) => ({ appeal: w.appeal.uuid })),
  "learning.regrade_plans.create": onCourse({ nodeKey: "quiz", rule: { kind: "excuse" }, selector: {}, policy: "any" }),
  "learning.regrade_plans.get": read((w) => ({ course: w.course, plan: w.regradePlan })),
  "learning.regrade_plans.commit": (w) => ({ path: { course: w.course, plan: w.regradePlan }, payload: command() }),
  "learning.reviews.list": read(c),
  "learning.reviews.assignment_list": read(c),
  "learning.reviews.assignment": read(sub),
  "learning.reviews.claim": (w) => ({ path: sub(w), payload: command() }),
  "learning.reviews.decide": (w) => ({ path: sub(w), payload: command({ expectedRevision: 2, outcome: "accept", points: 8, rubric: [], comment: "Хорошо" }) }),
  "learning.reviews.draft": (w) => ({ path: sub(w), payload: command({ rubric: [], comment: "Черновик отзыва" }) }),
  "learning.reviews.reassign": (w) => ({ path: sub(w), payload: command({ expectedRevision: 2, pool: true, reason: "Не успеваю" }) }),
  "learning.reviews.release": (w) => ({ path: sub(w), payload: command({ expectedRevision: w.essaySubmission.revision }) }),
  "learning.reviews.report_issue": (w) => ({ path: sub(w), payload: command({ kind: "unreadable", note: "Не читается" }) }),
  "learning.reviews.workspace": read(sub),
  "learning.automatic_overrides.candidates": read(c),
  "learning.automatic_overrides.create": (w) => ({ path: quiz(w), payload: command({ points: 3, reason: "Проверка ошиблась" }) }),
  "learning.automatic_overrides.list": read((w) => ({ submission: w.overriddenSubmission })),
  "learning.automatic_overrides.revoke": (w) => ({
    path: { submission: w.overriddenSubmission, override: w.override.uuid },
    payload: command({ expectedRevision: w.override.revision, reason: "Ошибся" })
  }),
  "learning.checkers.list": read(c),
  "learning.checkers.get": read(checker),
  "learning.checkers.create": onCourse({
    name: "Exact 2", kind: "declarative", rules: { kind: "exact", answers: ["7"] }, referenceCases: [{ reply: "7", expected: "correct" }]
  }),
  "learning.checkers.preflight": (w) => ({ path: checker(w), payload: command() }),
  "learning.preflights.get": read((w) => ({ course: w.course, job: w.preflight })),
  "learning.checkers.resume": (w) => ({ path: checker(w), payload: command({ expectedRevision: w.checker.revision, reason: "Починили" }) }),
  "learning.checkers.suspend": (w) => ({ path: checker(w), payload: command({ expectedRevision: w.checker.revision, reason: "Сбой" }) }),
  "learning.checkers.control_history": read(checker),
  "learning.grading.diagnostics": read((w) => ({ course: w.course, job: w.gradeJob })),
  "learning.grading.usage": read(c, { from: iso(-7 * day), to: iso(day) }),
  "learning.regrades.candidates": read(c),
  "learning.regrades.create": (w) => ({ path: c(w), payload: command({ selector: { nodeKey: "code" }, checkerUuid: w.checker.uuid, policy: "only_if_higher" }) }),
  "learning.regrades.get": read((w) => ({ course: w.course, regrade: w.regrade })),
  "learning.regrades.apply": (w) => ({ path: { course: w.course, regrade: w.regrade }, payload: command() }),

  "learning.community.create": onEnrollment(() => ({ title: "Ещё вопрос", body: "Текст", visibility: "private" })),
  "learning.community.list": read(e),
  "learning.community.get": read((w) => ({ thread: w.thread.uuid })),
  "learning.community.reply": (w) => ({ path: { thread: w.thread.uuid }, payload: command({ body: "Ответ" }) }),
  "learning.community.resolve": (w) => ({ path: { thread: w.thread.uuid }, payload: command({ expectedRevision: w.thread.revision }) }),
  "learning.community.recipients": read(c),
  "learning.community.staff_create": (w) => ({ path: { course: w.course, enrollment: w.enrollment.uuid }, payload: command({ title: "Вопрос к вам", body: "Текст" }) }),
  "learning.community.staff_list": read(c),
  "learning.course_reviews.list": read(c),
  "learning.course_reviews.own": read(e),
  "learning.course_reviews.save": onEnrollment(() => ({ rating: 5, text: "Отличный курс" })),
  "learning.course_reviews.remove": onEnrollment(() => ({ expectedRevision: 1 })),
  "learning.groups.create": (w) => ({ path: { run: w.run }, payload: command({ name: "Группа", kind: "cohort", visibility: "visible", assignment: "manual" }) }),
  "learning.groups.list": read(c),
  "learning.groups.members": (w) => ({ path: { group: w.group }, payload: command({ expectedRevision: 1, add: [w.enrollmentB], remove: [] }) }),
  "learning.groups.staff": (w) => ({ path: { group: w.group }, payload: command({ expectedRevision: 1, add: [w.assistantAssignment.uuid], remove: [] }) }),
  "learning.groups.update": (w) => ({ path: { group: w.group }, payload: command({ expectedRevision: 1, name: "Группа 2" }) }),
  "learning.notification_preferences.get": read(),
  "learning.notification_preferences.update": () => ({ payload: { expectedRevision: 1, kinds: {} } }),
  "learning.notifications.list": read(),
  "learning.notifications.read": read((w) => ({ notification: w.notification })),
  "learning.ownership.invitations": read(),
  "learning.ownership.accept": (w) => ({ path: { invitation: w.ownershipInvitation }, payload: command() }),
  "learning.ownership.cancel": (w) => ({ path: { invitation: w.ownershipInvitation }, payload: command() }),
  "learning.ownership.reject": (w) => ({ path: { invitation: w.ownershipInvitation }, payload: command() }),
  "learning.ownership.candidates": read(c),
  "learning.ownership.invite": (w) => ({ path: c(w), payload: command({ profileUuid: w.who.outsider.profileUuid, previousOwnerRole: "none" }) }),
  "learning.staff.list": read(c),
  "learning.staff.assign": (w) => ({ path: c(w), payload: command({ profileUuid: w.who.outsider.profileUuid, role: "reviewer", scope: {} }) }),
  "learning.staff.candidates": read(c),
  "learning.staff.revoke": (w) => ({
    path: c(w),
    payload: command({ assignmentUuid: w.assistantAssignment.uuid, expectedRevision: w.assistantAssignment.revision, reason: "Ухожу" })
  }),
  "learning.staff.permissions": (w) => ({
    path: { course: w.course, assignment: w.instructorAssignment.uuid },
    payload: command({ expectedRevision: w.instructorAssignment.revision, grants: [], denies: ["content_publish"] })
  }),
  "learning.staff.accept": (w) => ({ path: { assignment: w.instructorAssignment.uuid }, payload: command({ expectedRevision: w.instructorAssignment.revision }) }),
  "learning.staff.invitations": read(),
  "learning.staff.email_invitations": read(),
  "learning.staff.email_get": read((w) => ({ invitation: w.emailInvitation })),
  "learning.staff.email_accept": (w) => ({ path: { invitation: w.emailInvitation }, payload: command() }),
  "learning.staff.email_reject": (w) => ({ path: { invitation: w.emailInvitation }, payload: command() }),
  "learning.staff.email_revoke": (w) => ({ path: { invitation: w.emailInvitation }, payload: command() }),
  "learning.staff.email_invite": onCourse({ email: "someone@example.com", role: "reviewer", scope: {} }),
  "learning.staff.email_list": read(c),
  "learning.teaching.list": read(),
  "learning.teaching.get": read(c)
}

// ---------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------

class Rollback extends Data.TaggedError("Rollback")<{ readonly answer: Answer }> {}

/**
 * One call inside a transaction that is always rolled back: the world stays as built. `before`
 * runs in the same transaction first (a change of the world for this call only).
 */
const callRolledBack = (id: string, caller: Caller, input: RawInput, before?: string): Promise<Answer> =>
  m.runtime.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const operations = yield* Operations
    return yield* sql.withTransaction(
      Effect.zipRight(
        before === undefined ? Effect.void : Effect.asVoid(sql.unsafe(before)),
        Effect.flatMap(operations.invoke(id, caller, input), (answer) => Effect.fail(new Rollback({ answer })))
      )
    ).pipe(
      Effect.catchTag("Rollback", (rollback) => Effect.succeed(rollback.answer)),
      Effect.orDie
    )
  }))

const call = async (id: string, caller: Caller, input: RawInput, before?: string): Promise<Answer> => {
  for (let attempt = 0; ; attempt++) {
    const answer = await callRolledBack(id, caller, input, before)
    if (answer.status !== 503 || attempt === 4) return answer
  }
}

const keyOf = (owner: SessionActor, scopes: ReadonlyArray<string>): KeyActor => ({
  via: "key",
  keyUuid: randomUUID(),
  keyName: "matrix",
  keyKind: "personal",
  scopes,
  httpEnabled: true,
  mcpEnabled: true,
  accountUuid: owner.accountUuid,
  email: owner.email,
  profileUuid: owner.profileUuid,
  profileName: owner.profileName,
  profileType: owner.profileType,
  expiresAt: new Date(Date.now() + day)
})

const callerOf = (w: World, who: Who): Caller => {
  switch (who) {
    case "anonymous":
      return anonymous
    case "ownerKeyWithScope":
      return keyOf(w.who.owner, grantableScopes.filter((scope) => scope.startsWith("learning:")))
    case "ownerKeyWithoutScope":
      return keyOf(w.who.owner, grantableScopes.filter((scope) => !scope.startsWith("learning:")))
    default:
      return w.who[who]
  }
}

const outcomeOf = (answer: Answer): Outcome | "error" => {
  if (answer.status === 500 || answer.status === 503) return "error"
  if (answer.status !== 401 && answer.status !== 403 && answer.status !== 404) return "allowed"
  const code = codeOf(answer)
  const found = Object.entries(refusalOf).find(([, [status, wanted]]) => status === answer.status && wanted === code)
  return found === undefined ? "error" : found[0] as Outcome
}

const learningIds = catalog.filter((entry) => entry.id.startsWith("learning.")).map((entry) => entry.id)
/** A row's operation: `id#case` is one more case of `id` (another record of the world). */
const operationOf = (key: string) => key.split("#")[0]!

let world: World
beforeAll(async () => {
  m = await openMarketplace("role_matrix")
  world = await buildWorld()
})
afterAll(async () => {
  await m?.close()
})

describe("the learning role matrix", () => {
  it("has a row and an input for every learning operation of the catalog, and names no other", () => {
    expect(learningIds.filter((id) => expectations[id] === undefined), "operations without a row").toEqual([])
    expect(learningIds.filter((id) => inputs[id] === undefined), "operations without an input").toEqual([])
    const known = new Set(learningIds)
    const unknown = (key: string) => !known.has(operationOf(key))
    expect(Object.keys(expectations).filter(unknown), "rows naming no operation").toEqual([])
    expect(Object.keys(inputs).filter(unknown), "inputs naming no operation").toEqual([])
    expect(Object.keys(inputs).filter((key) => expectations[key] === undefined), "inputs without a row").toEqual([])
  })

  it("answers every caller of every learning operation as the expectations table says", async () => {
    const known = new Set(learningIds)
    const keys = Object.keys(expectations).filter((key) => known.has(operationOf(key)) && inputs[key] !== undefined)
    const mismatches: Array<string> = []
    await pool(6, keys.map((key) => async () => {
      const id = operationOf(key)
      const row = expectations[key]!
      const want = expected(row)
      const input = inputs[key]!(world)
      for (const who of callers) {
        const answer = await call(id, callerOf(world, who), input)
        const got = outcomeOf(answer)
        // The inputs are valid: a 400 would hide the role check behind decoding.
        if (got !== want[who] || answer.status === 400) {
          mismatches.push(`${key} as ${who}: expected ${want[who]}, got ${answer.status} ${codeOf(answer) ?? ""} ${JSON.stringify(answer.body).slice(0, 160)}`)
        }
      }
    }))
    expect(mismatches.sort()).toEqual([])
  })

  it("answers 404 to whoever has no role, for every operation naming the course, once the course is private", async () => {
    // Same world, the course made private inside each call's rolled-back transaction.
    const makePrivate = `UPDATE learning_courses SET visibility = 'private' WHERE uuid = '${world.course}'`
    const known = new Set(learningIds)
    const keys = Object.keys(expectations).filter((key) => known.has(operationOf(key)) && inputs[key] !== undefined)
    const mismatches: Array<string> = []
    await pool(6, keys.map((key) => async () => {
      const id = operationOf(key)
      const entry = catalog.find((candidate) => candidate.id === id)!
      const namesCourse = entry.path.includes("{") && !(privateExceptions[key] ?? false)
      const listed = expected(expectations[key]!)
      const want: Record<"anonymous" | "outsider", Outcome> = {
        anonymous: listed.anonymous === "allowed" && namesCourse ? "404" : listed.anonymous,
        outsider: namesCourse ? "404" : listed.outsider
      }
      const input = inputs[key]!(world)
      for (const who of ["anonymous", "outsider"] as const) {
        const answer = await call(id, callerOf(world, who), input, makePrivate)
        if (outcomeOf(answer) !== want[who]) {
          mismatches.push(`${key} as ${who} (private): expected ${want[who]}, got ${answer.status} ${codeOf(answer) ?? ""} ${JSON.stringify(answer.body).slice(0, 160)}`)
        }
      }
    }))
    expect(mismatches.sort()).toEqual([])
  })
})
