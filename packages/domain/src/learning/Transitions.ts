import { Effect } from "effect"
import { type InvalidState, stateRefusal } from "../kernel/ApiError.js"

/** One allowed move of a record's state machine: this operation, by this actor, from → to. */
export interface Transition<Operation extends string, By extends string, Status extends string> {
  readonly operation: Operation
  readonly by: By
  readonly from: Status
  readonly to: Status
}

/**
 * The state an operation moves a record to, read from its transition table; a move the table does
 * not list answers 409 `invalid_state` naming the record, its state and the states from which this
 * actor may make the move (staff assignments, email and ownership invitations, groups, threads).
 */
export const transitionTo = <Operation extends string, By extends string, Status extends string>(
  table: ReadonlyArray<Transition<Operation, By, Status>>,
  record: { readonly resource: string; readonly uuid: string },
  operation: Operation,
  by: By,
  from: Status
): Effect.Effect<Status, InvalidState> => {
  const found = table.find((t) => t.operation === operation && t.by === by && t.from === from)
  return found === undefined
    ? Effect.fail(stateRefusal({
      ...record,
      operation,
      state: from,
      allowed: table.filter((t) => t.operation === operation && t.by === by).map((t) => t.from)
    }))
    : Effect.succeed(found.to)
}
