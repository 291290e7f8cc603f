import { describe, expect, it } from "vitest"
import { filterOf, type Group, newLeaf, numberOfPath, toCondition, type TreeProblem, treeOf } from "./conditionTree.js"

describe("the rule builder's condition tree", () => {
  it("sends a nested condition in the API's shape, each value in its allowed shape", () => {
    const root: Group = {
      kind: "group", id: 1, mode: "all",
      children: [
        { kind: "leaf", id: 2, field: "data.status", op: "eq", value: "draft" },
        {
          kind: "group", id: 3, mode: "any",
          children: [
            { kind: "leaf", id: 4, field: "aggregate.revision", op: "gte", value: "2" },
            { kind: "leaf", id: 5, field: "aggregate.kind", op: "in", value: "task, service" },
            { kind: "leaf", id: 6, field: "data.objectUuid", op: "exists", value: "no" },
            { kind: "leaf", id: 7, field: "type", op: "exists", value: "yes" }
          ]
        }
      ]
    }
    const problems: Array<TreeProblem> = []
    expect(filterOf(root, problems)).toEqual({
      all: [
        { field: "data.status", op: "eq", value: "draft" },
        { any: [
          { field: "aggregate.revision", op: "gte", value: 2 },
          { field: "aggregate.kind", op: "in", value: ["task", "service"] },
          { field: "data.objectUuid", op: "exists", value: false },
          { field: "type", op: "exists" }
        ] }
      ]
    })
    expect(problems).toEqual([])
  })

  it("names the condition at fault: an empty value, a revision that is no number, an empty group", () => {
    const problems: Array<TreeProblem> = []
    toCondition({
      kind: "group", id: 1, mode: "all",
      children: [
        { kind: "leaf", id: 2, field: "data.status", op: "eq", value: " " },
        { kind: "leaf", id: 3, field: "aggregate.revision", op: "in", value: "1, two" },
        { kind: "group", id: 4, mode: "any", children: [] }
      ]
    }, problems)
    expect(problems).toEqual([{ id: 2, problem: "value" }, { id: 3, problem: "number" }, { id: 4, problem: "empty" }])
  })

  it("an empty root is no filter; a filter read back gives the same condition (both all and any in one node: all, then the any group)", () => {
    expect(filterOf({ kind: "group", id: 1, mode: "all", children: [] })).toBeUndefined()
    const condition = { all: [{ field: "data.status", op: "in", value: ["draft", "pending"] }, { any: [{ field: "aggregate.revision", op: "lte", value: 3 }] }] }
    expect(filterOf(treeOf(condition))).toEqual(condition)
    expect(filterOf(treeOf({ field: "type", op: "eq", value: "publication.submitted" }))).toEqual({ all: [{ field: "type", op: "eq", value: "publication.submitted" }] })
    expect(filterOf(treeOf({ all: [{ field: "type", op: "exists" }], any: [{ field: "data.status", op: "contains", value: "dra" }] })))
      .toEqual({ all: [{ field: "type", op: "exists" }, { any: [{ field: "data.status", op: "contains", value: "dra" }] }] })
    expect(newLeaf().kind).toBe("leaf")
  })

  it("numbers a dry run's trace paths as the page numbers its conditions", () => {
    expect(numberOfPath("trigger.filter")).toBe("")
    expect(numberOfPath("trigger.filter.all.0")).toBe("1")
    expect(numberOfPath("trigger.filter.all.1.any.0")).toBe("2.1")
    expect(numberOfPath("action")).toBeUndefined()
  })
})
