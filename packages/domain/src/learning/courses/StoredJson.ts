import { Schema } from "effect"

/**
 * `jsonb` columns of the courses area written only from values their input schema checked (a
 * course's tree, its policies, a run's schedule): a read checks the JSON's outer shape and keeps
 * the written type, instead of walking a 1000-node tree again on every course load (`Model.ts`
 * holds the schemas that checked them on the way in).
 */
export const storedArray = <A>(identifier: string) =>
  Schema.declare((value: unknown): value is ReadonlyArray<A> => Array.isArray(value), { identifier })

export const storedObject = <A extends object>(identifier: string) =>
  Schema.declare(
    (value: unknown): value is A => typeof value === "object" && value !== null && !Array.isArray(value),
    { identifier }
  )
