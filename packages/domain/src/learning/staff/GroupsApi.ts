import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Group, GroupCreate, GroupListQuery, GroupMembersChange, GroupPage, GroupStaffChange, GroupUpdate } from "./GroupsModel.js"
import { CapacityFull, ConflictOfInterest } from "../LearningErrors.js"
import { InvalidState, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { authenticated, recordErrors } from "../../kernel/Operation.js"

/**
 * Learning groups: cohorts, teams and sections of a
 * run, their members (manual, random auto-fill, or learners joining a self-assignment group) and
 * their group-scoped staff, under /api/v1/learning with the spec's ids, paths, scopes and approval flags.
 */
const base = "/api/v1/learning"
const GroupPath = Schema.Struct({ group: Schema.UUID })

const changeErrors = Schema.Union(wire(RevisionConflict), wire(RequestConflict), wire(InvalidState))

const read = ["learning:read"]
const teach = ["learning:teach"]
const staff = ["learning:staff"]

export const LearningGroupsApi = HttpApiGroup.make("learning_groups", { topLevel: true })
  .add(
    authenticated("POST", "learning.groups.create", `${base}/runs/:run/groups`, {
      scopes: teach,
      summary: "Create a cohort, team or section in a run (owner, instructor, assistant: roster_manage)"
    }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(Schema.Struct({ run: Schema.UUID }))
      .setPayload(GroupCreate)
      .addSuccess(Group)
  )
  .add(
    authenticated("GET", "learning.groups.list", `${base}/courses/:course/groups`, {
      scopes: read,
      summary: "The course's groups: staff see those in their scope, a learner their own groups and the visible groups of their runs"
    }, [recordErrors]).setPath(Schema.Struct({ course: Schema.UUID })).setUrlParams(GroupListQuery).addSuccess(GroupPage)
  )
  .add(
    authenticated("POST", "learning.groups.members", `${base}/groups/:group/members`, {
      scopes: teach,
      approval: true,
      summary: "Add, remove or randomly auto-fill members (roster_manage); a learner joins or leaves a self-assignment group with their own enrollment"
    }, [recordErrors, changeErrors, wire(CapacityFull)])
      .setPath(GroupPath)
      .setPayload(GroupMembersChange)
      .addSuccess(Group)
  )
  .add(
    authenticated("POST", "learning.groups.staff", `${base}/groups/:group/staff`, {
      scopes: staff,
      approval: true,
      summary: "Attach staff assignments to the group (their scope becomes the group) or detach them (back to the group's run); owner"
    }, [recordErrors, changeErrors, wire(ConflictOfInterest)])
      .setPath(GroupPath)
      .setPayload(GroupStaffChange)
      .addSuccess(Group)
  )
  .add(
    authenticated("POST", "learning.groups.update", `${base}/groups/:group/update`, {
      scopes: teach,
      summary: "Rename, set the capacity or visibility, archive or restore a group (roster_manage)"
    }, [recordErrors, changeErrors])
      .setPath(GroupPath)
      .setPayload(GroupUpdate)
      .addSuccess(Group)
  )
  .annotate(OpenApi.Description, "Learning: groups of a run (cohorts, teams, sections) and their staff")
