import { Effect } from "effect"
import { InvalidState } from "../kernel/ApiError.js"

/** One allowed move of a record's state machine: this operation, by this actor, from → to. */
export interface Transition<Operation extends string, By extends string, Status extends string> {
  readonly operation: Operation
  readonly by: By
  readonly from: Status
  readonly to: Status
}

/**
 * The state an operation moves a record to, read from its transition table; a move the table does
 * not list answers 409 `invalid_state` (staff assignments, email and ownership invitations).
 */
export const transitionTo = <Operation extends string, By extends string, Status extends string>(
  table: ReadonlyArray<Transition<Operation, By, Status>>,
  record: string,
  operation: Operation,
  by: By,
  from: Status
): Effect.Effect<Status, InvalidState> => {
  const found = table.find((t) => t.operation === operation && t.by === by && t.from === from)
  return found === undefined
    ? Effect.fail(new InvalidState({ message: `${operation} is not allowed on a ${from} ${record}` }))
    : Effect.succeed(found.to)
}
