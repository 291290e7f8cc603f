import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { kinds } from "../../publications/Kinds.js"
import { publicationCommandsOf } from "../../publications/Publications.js"
import { once } from "../Commands.js"
import { enrollmentFor } from "../enrollments/EnrollmentAccess.js"
import { decodeSubmissions, effectiveLayer, layersOf, submissionColumns } from "./SubmissionViews.js"

/**
 * Learner work → portfolio: `portfolio.create` writes, through the publications
 * service's own save (the path and event of `portfolio.save`: `publication.draft_saved`), a
 * private portfolio draft of the learner's profile from 1 to 10 accepted submissions of the
 * enrollment: each step's title and a reply excerpt, and the released reviewer feedback only when
 * the learner opts in. Publishing stays `portfolio.submit` (approval, moderation).
 */

const portfolio = publicationCommandsOf(kinds.portfolio)

const excerptChars = 1500
const maxDescription = 20000

const excerpt = (reply: unknown): string => {
  const text = typeof reply === "string" ? reply : JSON.stringify(reply, null, 1) ?? ""
  return [...text].length > excerptChars ? `${[...text].slice(0, excerptChars).join("")}…` : text
}

export const createPortfolioDraft = (
  actor: Actor,
  enrollmentUuid: string,
  input: { readonly requestUuid: string; readonly submissionUuids: ReadonlyArray<string>; readonly title: string; readonly includeFeedback: boolean }
) =>
  once(actor, "learning.portfolio.create", input, kinds.portfolio.own, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    const wanted = [...new Set(input.submissionUuids)]
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(submissionColumns)} FROM learning_submissions s
      WHERE s.enrollment_uuid = ${enrollmentUuid} AND s.uuid IN ${sql.in(wanted)}`,
      decodeSubmissions
    )
    const missing = wanted.find((uuid) => !rows.some((row) => row.uuid === uuid))
    if (missing !== undefined) return yield* new NotFound({ message: `No submission ${missing} in this enrollment` })
    const notAccepted = rows.find((row) => row.status !== "accepted")
    if (notAccepted !== undefined) return yield* new InvalidState({ message: `Submission ${notAccepted.uuid} is ${notAccepted.status}, not accepted` })
    const layers = yield* layersOf(wanted)
    const sections = wanted.map((uuid) => {
      const row = rows.find((candidate) => candidate.uuid === uuid)!
      const title = context.nodes.find((node) => node.nodeKey === row.node_key)?.title ?? row.node_key
      const released = (layers.get(uuid) ?? []).filter((layer) => layer.released && layer.kind !== "auto")
      const feedback = input.includeFeedback ? effectiveLayer(released)?.feedback ?? "" : ""
      return [`${title}`, excerpt(row.reply), ...(feedback !== "" ? [`Feedback: ${feedback}`] : [])].join("\n\n")
    })
    const description = [`${context.course.title}`, ...sections].join("\n\n---\n\n")
    return yield* portfolio.save(actor, {
      requestUuid: crypto.randomUUID(),
      data: {
        title: input.title,
        description: [...description].length > maxDescription ? [...description].slice(0, maxDescription).join("") : description,
        files: []
      }
    }).pipe(Effect.catchTag("RevisionConflict", Effect.die)) // a new publication has no revision to conflict with
  }))
