import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { TeachingCourse, TeachingCoursePage, TeachingListQuery } from "./TeachingModel.js"
import { Forbidden, NotFound, wire } from "../../kernel/ApiError.js"
import { authenticated } from "../../kernel/Operation.js"

/**
 * Teaching dashboards: the courses where the caller
 * holds an active staff assignment with their to-do counts, and one course's dashboard, under
 * /api/v1/learning with the spec's ids, paths and scopes.
 */
const base = "/api/v1/learning"
const read = ["learning:read"]

export const LearningTeachingApi = HttpApiGroup.make("learning_teaching", { topLevel: true })
  .add(
    authenticated("GET", "learning.teaching.list", `${base}/teaching/courses`, {
      scopes: read,
      summary: "The courses where the caller is active staff, with the to-do counts of each, newest course first"
    }).setUrlParams(TeachingListQuery).addSuccess(TeachingCoursePage)
  )
  .add(
    authenticated("GET", "learning.teaching.get", `${base}/teaching/courses/:course`, {
      scopes: read,
      summary: "The caller's teaching dashboard of one course: reviews to claim, appeals, unanswered threads, extension requests, open incidents and checker health in their scope"
    }, [Schema.Union(wire(NotFound), wire(Forbidden))])
      .setPath(Schema.Struct({ course: Schema.UUID }))
      .addSuccess(TeachingCourse)
  )
  .annotate(OpenApi.Description, "Learning: teaching dashboards of course staff")
