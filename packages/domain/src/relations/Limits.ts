import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { countInWindows, type LimitReached, lockSubjects, type Window } from "../auth/RateLimit.js"
import { haveRelation } from "./RelationRepository.js"
import { haveThread } from "../threads/ThreadRepository.js"

/**
 * The marketplace's rate limits (ours: the spec shows none), persisted in
 * `rate_limit_hits` like sign-in's, so they hold across restarts and hosts. Checked and counted
 * inside the command's transaction: a command that fails counts nothing.
 */
export const limits = {
  /** responses.create and job_responses.create together. */
  responses: { bucket: "relations.responses", limit: 100, seconds: 24 * 3600, message: "At most 100 responses a day; try again later" },
  /** offers.create, job_invitations.create and new threads to profiles with no prior relation or thread. */
  newContacts: {
    bucket: "relations.new_contacts",
    limit: 30,
    seconds: 24 * 3600,
    message: "At most 30 new contacts a day with profiles you have not dealt with; try again later"
  },
  messages: { bucket: "messages", limit: 600, seconds: 3600, message: "At most 600 messages an hour; try again later" }
} as const satisfies Record<string, Omit<Window, "subject">>

/** Counts one use of a limit by a profile, or fails with `LimitReached` (429 with Retry-After). */
export const countLimit = (
  limit: Omit<Window, "subject">,
  profileUuid: string
): Effect.Effect<void, LimitReached | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(countLimits(limit, [profileUuid]), ([refused]) => refused === undefined ? Effect.void : Effect.fail(refused))

/**
 * `countLimit` for a batch of uses (one per entry, a profile possibly more than once): answers
 * per use `undefined` (counted) or its `LimitReached`. Two statements whatever the batch's size.
 */
export const countLimits = (
  limit: Omit<Window, "subject">,
  profileUuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<LimitReached | undefined>, SqlError, SqlClient.SqlClient> =>
  Effect.zipRight(lockSubjects(profileUuids.map((uuid) => `${limit.bucket}:${uuid}`)), countInWindows(limit, profileUuids))

/** Counts a new contact when the two profiles have no relation and no thread yet. */
export const countNewContact = (from: string, to: string): Effect.Effect<void, LimitReached | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if ((yield* haveRelation(from, to)) || (yield* haveThread(from, to))) return
    yield* countLimit(limits.newContacts, from)
  })
