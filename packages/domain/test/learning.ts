import { expect } from "vitest"
import type { CourseNode } from "../src/learning/Model.js"
import type { Answer } from "../src/operations/Operations.js"
import { bodyOf, codeOf } from "./marketplace.js"

/** Shared helpers of the learning tests (answers through `Operations.invoke`, course trees). */

/** The body of a 200 answer (the test fails with the body otherwise). */
export const ok = <A>(answer: Answer): A => {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(200)
  return bodyOf<A>(answer)
}

/** [status, error code] of an answer, to compare with the expected refusal. */
export const refused = (answer: Answer) => [answer.status, codeOf(answer)]

/** A text step under a module, with its fields overridable. */
export const step = (nodeKey: string, parentKey: string, over: Partial<CourseNode> = {}): CourseNode => ({
  nodeKey,
  parentKey,
  kind: "step",
  stepType: "text",
  title: `Шаг ${nodeKey}`,
  body: "Текст шага",
  ...over
})
