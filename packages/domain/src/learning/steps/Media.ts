import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { requireRevision } from "../../store/Revision.js"
import { datesOf } from "../enrollments/Calendar.js"
import { enrollmentFor } from "../enrollments/EnrollmentAccess.js"
import { StepLocked } from "../LearningErrors.js"
import { writeMedia } from "./StepStateRepository.js"
import { loadStepState, loadStepStates, recordStepProgress, stepOpenAt, type StepStateRow, stepStatusAt } from "./StepStates.js"

/**
 * Media progress: a video step's position and watched
 * ranges, merged into their union on every save; once the union covers ≥ 90 % of the media's
 * duration the step completes (and completion runs). The tree holds no durations: the player
 * sends `durationSec` once and it is kept.
 */

export const completeAtPercent = 90

type Range = readonly [number, number]

/** The union of ranges, sorted and merged. */
export const mergeRanges = (ranges: ReadonlyArray<Range>): ReadonlyArray<Range> => {
  const sorted = ranges.map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const).sort((x, y) => x[0] - y[0])
  const out: Array<[number, number]> = []
  for (const [a, b] of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b)
    else out.push([a, b])
  }
  return out
}

export const watchedPercent = (ranges: ReadonlyArray<Range>, durationSec: number | undefined): number => {
  if (durationSec === undefined || durationSec <= 0) return 0
  const seconds = mergeRanges(ranges).reduce((sum, [a, b]) => sum + Math.max(0, Math.min(b, durationSec) - Math.min(a, durationSec)), 0)
  return Math.min(100, Math.floor((seconds * 100) / durationSec))
}

const mediaView = (nodeKey: string, row: StepStateRow) => {
  const media = row.media ?? { positionSec: 0, ranges: [] }
  return {
    nodeKey,
    positionSec: media.positionSec,
    ranges: media.ranges,
    ...(media.durationSec !== undefined ? { durationSec: media.durationSec } : {}),
    watchedPct: watchedPercent(media.ranges, media.durationSec),
    status: row.status,
    ...(row.completed_at !== null ? { completedAt: row.completed_at } : {}),
    revision: row.revision
  }
}

export const getMedia = (actor: Actor, enrollmentUuid: string) =>
  Effect.gen(function*() {
    const { nodes } = yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    const states = yield* loadStepStates(enrollmentUuid)
    return {
      items: nodes.filter((node) => node.kind === "step" && node.stepType === "video").map((node) => {
        const media = states.get(node.nodeKey)?.media
        const completedAt = states.get(node.nodeKey)?.completed_at ?? null
        return {
          nodeKey: node.nodeKey,
          position: media?.positionSec ?? 0,
          watchedPct: watchedPercent(media?.ranges ?? [], media?.durationSec),
          ...(completedAt !== null ? { completedAt } : {})
        }
      })
    }
  })

export interface MediaSave {
  readonly positionSec: number
  readonly ranges: ReadonlyArray<Range>
  readonly durationSec?: number | undefined
  readonly expectedRevision?: number | undefined
}

export const saveMedia = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: MediaSave) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const context = yield* enrollmentFor(actor, enrollmentUuid, { lock: true })
      const node = context.nodes.find((n) => n.nodeKey === nodeKey && n.kind === "step")
      if (node === undefined) return yield* new NotFound({ message: `No step ${nodeKey} in this enrollment's course version` })
      if (node.stepType !== "video") return yield* new InvalidState({ message: `Step ${nodeKey} is a ${node.stepType} step, not a video` })
      if (context.enrollment.status !== "active") return yield* new InvalidState({ message: `A ${context.enrollment.status} enrollment records no progress` })
      for (const [i, [a, b]] of input.ranges.entries()) if (b < a) return yield* new InvalidRequest({ message: `ranges.${i}: the end comes before the start` })
      const now = new Date()
      const dates = (yield* datesOf(context, now)).get(nodeKey)
      const open = stepOpenAt(dates, now)
      if (open !== "open") return yield* new StepLocked({ message: open === "locked" ? `Step ${nodeKey} is not available yet` : `Step ${nodeKey} is locked` })
      const existing = yield* loadStepState(enrollmentUuid, nodeKey, { lock: true })
      if (input.expectedRevision !== undefined) yield* requireRevision("media progress", existing?.revision ?? 0, input.expectedRevision)
      const durationSec = input.durationSec ?? existing?.media?.durationSec
      const media = {
        positionSec: input.positionSec,
        ranges: mergeRanges([...(existing?.media?.ranges ?? []), ...input.ranges]),
        ...(durationSec !== undefined ? { durationSec } : {})
      }
      yield* writeMedia(enrollmentUuid, nodeKey, media)
      const status = stepStatusAt(existing, dates, now)
      const to = watchedPercent(media.ranges, media.durationSec) >= completeAtPercent ? "completed" : "in_progress"
      if (status !== "completed") yield* recordStepProgress(enrollmentUuid, nodeKey, to, now)
      return mediaView(nodeKey, (yield* loadStepState(enrollmentUuid, nodeKey))!)
    }))
  })
