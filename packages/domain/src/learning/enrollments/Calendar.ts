import { Effect } from "effect"
import { InvalidRequest } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { EncodedJson } from "../../operations/Implementation.js"
import { computeStepDates, type DateProvenance, loadOverrides, type StepDates } from "./Dates.js"
import { type EnrollmentContext, enrollmentFor } from "./EnrollmentAccess.js"
import type { CourseNode } from "../courses/Model.js"
import { loadStepStates, stepStatusAt } from "../steps/StepStates.js"

/**
 * `calendar.get`: each step's effective dates with the
 * layers that made them (schedule → group → learner → extension → pause → incident), as JSON or,
 * with `format=ics`, also as an iCalendar document (one event per unlock and per due) carried in
 * the same answer — every transport returns the one declared shape.
 */

/** The dates of an enrollment from an already loaded context (one query for its overrides). */
export const datesOf = (context: EnrollmentContext, now: Date) =>
  Effect.gen(function*() {
    const overrides = yield* loadOverrides(context.enrollment.uuid)
    return computeStepDates({
      run: context.run,
      startedAt: context.enrollment.started_at,
      nodes: context.nodes,
      overrides,
      pauses: context.enrollment.pauses,
      pausedAt: context.enrollment.status === "paused" ? context.enrollment.paused_at : null
    }, now)
  })

const within = (dates: StepDates, from: Date | undefined, to: Date | undefined) => {
  if (from === undefined && to === undefined) return true
  return [dates.unlockAt, dates.dueAt, dates.lockAt].some((at) =>
    at !== undefined && (from === undefined || at.getTime() >= from.getTime()) && (to === undefined || at.getTime() < to.getTime())
  )
}

const provenanceView = (p: DateProvenance) => ({
  field: p.field,
  source: p.source,
  ...(p.at !== undefined ? { at: p.at } : {}),
  ...(p.attempts !== undefined ? { attempts: p.attempts } : {}),
  ...(p.overrideUuid !== undefined ? { overrideUuid: p.overrideUuid } : {}),
  ...(p.detail !== undefined ? { detail: p.detail } : {})
})

// ---- iCalendar (RFC 5545) ----------------------------------------------------------------------------

const icsText = (value: string) => value.replace(/\\/g, "\\\\").replace(/;/g, "\\;").replace(/,/g, "\\,").replace(/\r?\n/g, "\\n")
const icsDate = (at: Date) => at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "")

/** Folds a content line at 75 octets without splitting a UTF-8 character (RFC 5545 §3.1). */
const fold = (line: string): string => {
  const parts: Array<string> = []
  let current = ""
  let octets = 0
  for (const char of line) {
    const size = Buffer.byteLength(char)
    if (octets + size > (parts.length === 0 ? 75 : 74)) {
      parts.push(current)
      current = ""
      octets = 0
    }
    current += char
    octets += size
  }
  parts.push(current)
  return parts.join("\r\n ")
}

interface Item {
  readonly nodeKey: string
  readonly title: string
  readonly unlockAt?: Date | undefined
  readonly dueAt?: Date | undefined
  readonly provenance: ReadonlyArray<DateProvenance>
}

export const toIcs = (enrollmentUuid: string, courseTitle: string, items: ReadonlyArray<Item>, now: Date): string => {
  const lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Birzha//Learning calendar//EN", "CALSCALE:GREGORIAN", `X-WR-CALNAME:${icsText(courseTitle)}`]
  const explain = (item: Item, field: "unlockAt" | "dueAt") =>
    item.provenance.filter((p) => p.field === field).map((p) => `${p.source}${p.detail !== undefined ? ` (${p.detail})` : ""}`).join(" → ")
  for (const item of items) {
    for (const [field, at, label] of [["unlockAt", item.unlockAt, "Opens"], ["dueAt", item.dueAt, "Due"]] as const) {
      if (at === undefined) continue
      lines.push(
        "BEGIN:VEVENT",
        `UID:${enrollmentUuid}-${item.nodeKey}-${field}@birzha`,
        `DTSTAMP:${icsDate(now)}`,
        `DTSTART:${icsDate(at)}`,
        `DTEND:${icsDate(at)}`,
        `SUMMARY:${icsText(`${label}: ${item.title}`)}`,
        `DESCRIPTION:${icsText(explain(item, field))}`,
        "END:VEVENT"
      )
    }
  }
  lines.push("END:VCALENDAR")
  return lines.map(fold).join("\r\n") + "\r\n"
}

// ---- the operation -----------------------------------------------------------------------------------

export const getCalendar = (
  actor: Actor,
  enrollmentUuid: string,
  query: { readonly from?: Date | undefined; readonly to?: Date | undefined; readonly format?: "json" | "ics" | undefined }
) =>
  Effect.gen(function*() {
    if (query.from !== undefined && query.to !== undefined && query.to.getTime() <= query.from.getTime()) {
      return yield* new InvalidRequest({ message: "to: must be after from" })
    }
    const context = yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    const now = new Date()
    const dates = yield* datesOf(context, now)
    const states = yield* loadStepStates(enrollmentUuid)
    const byKey = new Map<string, CourseNode>(context.nodes.map((node) => [node.nodeKey, node]))
    const items = [...dates].filter(([, step]) => within(step, query.from, query.to)).map(([nodeKey, step]) => {
      const node = byKey.get(nodeKey)!
      return {
        nodeKey,
        title: node.title,
        ...(node.parentKey !== undefined ? { moduleKey: node.parentKey } : {}),
        status: stepStatusAt(states.get(nodeKey), step, now),
        ...(step.unlockAt !== undefined ? { unlockAt: step.unlockAt } : {}),
        ...(step.dueAt !== undefined ? { dueAt: step.dueAt } : {}),
        ...(step.lockAt !== undefined ? { lockAt: step.lockAt } : {}),
        extraAttempts: step.extraAttempts,
        ...(step.startRequired === true ? { startRequired: true } : {}),
        provenance: step.provenance.map(provenanceView)
      }
    })
    const format = query.format ?? "json"
    // Built field by field in wire form already (dates serialise to ISO text), so it is sent as
    // encoded: a 200-step calendar is most of its time in a generic encode otherwise.
    return new EncodedJson(JSON.stringify({
      enrollmentUuid,
      runUuid: context.run.uuid,
      courseUuid: context.course.uuid,
      format,
      generatedAt: now,
      items,
      ...(format === "ics" ? { ics: toIcs(enrollmentUuid, `${context.course.title} — ${context.run.title}`, items, now) } : {})
    }))
  })
