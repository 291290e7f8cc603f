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
import { InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { authenticated, recordErrors } from "../../kernel/Operation.js"

/**
 * Community threads: a learner's questions and
 * discussions per enrollment, staff-opened threads to a learner, the staff inbox and the
 * recipients list, under /api/v1/learning with the spec's ids, paths, scopes and approval flags.
 */
const base = "/api/v1/learning"
const EnrollmentPath = Schema.Struct({ enrollment: Schema.UUID })
const ThreadPath = Schema.Struct({ thread: Schema.UUID })
const CoursePath = Schema.Struct({ course: Schema.UUID })


const read = ["learning:read"]
const studyOrTeach = ["learning:study", "learning:teach"]

export const LearningCommunityApi = HttpApiGroup.make("learning_community", { topLevel: true })
  .add(
    authenticated("POST", "learning.community.create", `${base}/enrollments/:enrollment/threads`, {
      scopes: ["learning:study"],
      summary: "The learner opens a question or discussion: private (the learner and staff) or visible to the run; learning.community.created"
    }, [wire(NotFound), wire(InvalidState), wire(RequestConflict)])
      .setPath(EnrollmentPath)
      .setPayload(ThreadCreate)
      .addSuccess(Thread)
  )
  .add(
    authenticated("GET", "learning.community.list", `${base}/enrollments/:enrollment/threads`, {
      scopes: read,
      summary: "Threads this learner sees: their own and the run-visible ones of their run, newest first"
    }, [wire(NotFound)]).setPath(EnrollmentPath).setUrlParams(ThreadListQuery).addSuccess(ThreadPage)
  )
  .add(
    authenticated("GET", "learning.community.get", `${base}/threads/:thread`, {
      scopes: read,
      summary: "A thread with a page of its messages, oldest first (its participants and the course's community staff)"
    }, [wire(NotFound)]).setPath(ThreadPath).setUrlParams(ThreadGetQuery).addSuccess(Thread)
  )
  .add(
    authenticated("POST", "learning.community.reply", `${base}/threads/:thread/messages`, {
      scopes: studyOrTeach,
      summary: "Reply in a thread: a staff reply makes it answered, a learner's opens it again; learning.community.replied"
    }, [wire(NotFound), wire(InvalidState), wire(InvalidReference), wire(RequestConflict)])
      .setPath(ThreadPath)
      .setPayload(ThreadReply)
      .addSuccess(ThreadMessage)
  )
  .add(
    authenticated("POST", "learning.community.resolve", `${base}/threads/:thread/resolve`, {
      scopes: studyOrTeach,
      summary: "Mark a thread resolved (its author or community staff); learning.community.resolved"
    }, [recordErrors, wire(InvalidState), Schema.Union(wire(RevisionConflict), wire(RequestConflict))])
      .setPath(ThreadPath)
      .setPayload(ThreadResolve)
      .addSuccess(Thread)
  )
  .add(
    authenticated("GET", "learning.community.recipients", `${base}/courses/:course/message-recipients`, {
      scopes: read,
      summary: "Whom the caller may address: a learner the course's community staff, staff the learners in their scope"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(RecipientQuery).addSuccess(RecipientPage)
  )
  .add(
    authenticated("POST", "learning.community.staff_create", `${base}/courses/:course/enrollments/:enrollment/threads`, {
      scopes: ["learning:teach"],
      summary: "Community staff open a private thread to one learner; learning.community.created"
    }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(Schema.Struct({ course: Schema.UUID, enrollment: Schema.UUID }))
      .setPayload(StaffThreadCreate)
      .addSuccess(Thread)
  )
  .add(
    authenticated("GET", "learning.community.staff_list", `${base}/courses/:course/threads`, {
      scopes: read,
      summary: "The staff inbox: threads in the caller's scope, newest first; status unanswered, open or resolved"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(StaffThreadQuery).addSuccess(ThreadPage)
  )
  .annotate(OpenApi.Description, "Learning: community threads between learners and course staff")
