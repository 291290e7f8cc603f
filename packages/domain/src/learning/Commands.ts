import type { Effect, Schema } from "effect"
import type { Actor } from "../kernel/Authentication.js"
import { idempotent } from "../store/Idempotency.js"

/** Runs a learning command once per `requestUuid` of the acting profile, in one transaction. */
export const once = <A, I, E, R>(
  actor: Actor,
  operationId: string,
  input: { readonly requestUuid: string },
  result: Schema.Schema<A, I>,
  effect: Effect.Effect<A, E, R>
) => idempotent({ scope: actor.profileUuid, operationId, requestUuid: input.requestUuid, request: input, result }, effect)
