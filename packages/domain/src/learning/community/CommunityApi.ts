import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  RecipientPage,
  RecipientQuery,
  StaffThreadCreate,
  StaffThreadQuery,
  Thread,
  ThreadCreate,
  ThreadGetQuery,
  ThreadListQuery,
  ThreadMessage,
  ThreadPage,
  ThreadReply,
  ThreadResolve
} from "./CommunityModel.js"
import { InvalidReference } from "../../relations/RelationErrors.js"
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { Authentication } from "../../kernel/Authentication.js"
import { operation } from "../../kernel/Operation.js"

/**
 * Community threads (LEARNING §4 "L4" community, issue 19 point 5): a learner's questions and
 * discussions per enrollment, staff-opened threads to a learner, the staff inbox and the
 * recipients list, under /api/v1/learning with the spec's ids, paths, scopes and approval flags.
 */
const base = "/api/v1/learning"
const EnrollmentPath = Schema.Struct({ enrollment: Schema.UUID })
const ThreadPath = Schema.Struct({ thread: Schema.UUID })
const CoursePath = Schema.Struct({ course: Schema.UUID })

const recordErrors = Schema.Union(wire(NotFound), wire(Forbidden))

const read = ["learning:read"]
const studyOrTeach = ["learning:study", "learning:teach"]

export const LearningCommunityApi = HttpApiGroup.make("learning_community", { topLevel: true })
  .add(
    operation("POST", "learning.community.create", `${base}/enrollments/:enrollment/threads`, {
      scopes: ["learning:study"],
      summary: "The learner opens a question or discussion: private (the learner and staff) or visible to the run; learning.community.created"
    })
      .middleware(Authentication)
      .setPath(EnrollmentPath)
      .setPayload(ThreadCreate)
      .addSuccess(Thread)
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.community.list", `${base}/enrollments/:enrollment/threads`, {
      scopes: read,
      summary: "Threads this learner sees: their own and the run-visible ones of their run, newest first"
    }).middleware(Authentication).setPath(EnrollmentPath).setUrlParams(ThreadListQuery).addSuccess(ThreadPage).addError(wire(NotFound))
  )
  .add(
    operation("GET", "learning.community.get", `${base}/threads/:thread`, {
      scopes: read,
      summary: "A thread with a page of its messages, oldest first (its participants and the course's community staff)"
    }).middleware(Authentication).setPath(ThreadPath).setUrlParams(ThreadGetQuery).addSuccess(Thread).addError(wire(NotFound))
  )
  .add(
    operation("POST", "learning.community.reply", `${base}/threads/:thread/messages`, {
      scopes: studyOrTeach,
      summary: "Reply in a thread: a staff reply makes it answered, a learner's opens it again; learning.community.replied"
    })
      .middleware(Authentication)
      .setPath(ThreadPath)
      .setPayload(ThreadReply)
      .addSuccess(ThreadMessage)
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(InvalidReference))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.community.resolve", `${base}/threads/:thread/resolve`, {
      scopes: studyOrTeach,
      summary: "Mark a thread resolved (its author or community staff); learning.community.resolved"
    })
      .middleware(Authentication)
      .setPath(ThreadPath)
      .setPayload(ThreadResolve)
      .addSuccess(Thread)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(Schema.Union(wire(RevisionConflict), wire(RequestConflict)))
  )
  .add(
    operation("GET", "learning.community.recipients", `${base}/courses/:course/message-recipients`, {
      scopes: read,
      summary: "Whom the caller may address: a learner the course's community staff, staff the learners in their scope"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(RecipientQuery).addSuccess(RecipientPage).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.community.staff_create", `${base}/courses/:course/enrollments/:enrollment/threads`, {
      scopes: ["learning:teach"],
      summary: "Community staff open a private thread to one learner; learning.community.created"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ course: Schema.UUID, enrollment: Schema.UUID }))
      .setPayload(StaffThreadCreate)
      .addSuccess(Thread)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.community.staff_list", `${base}/courses/:course/threads`, {
      scopes: read,
      summary: "The staff inbox: threads in the caller's scope, newest first; status unanswered, open or resolved"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(StaffThreadQuery).addSuccess(ThreadPage).addError(recordErrors)
  )
  .annotate(OpenApi.Description, "Learning: community threads between learners and course staff")
