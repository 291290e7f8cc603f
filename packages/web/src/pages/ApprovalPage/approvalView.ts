import { kindLabel } from "../../components/format.js"
import type { Texts } from "../../i18n.js"
import type { ApprovalView } from "../../model.js"

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** A value as the owner reads it: text as it is, anything else as JSON. */
export const shown = (value: unknown) => value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value)

const titleOf = (data: Json): string | undefined => {
  const title = data["title"] ?? data["name"]
  return typeof title === "string" && title.trim() !== "" ? title : undefined
}

/**
 * The kind an owner command acts on when no record is named (`tasks.save` → task), by the kinds'
 * command prefixes (a training's are `learning.save`, …; `learning.courses.…` and the other
 * learning operations have three parts and name no publication kind).
 */
const commandKinds: Readonly<Record<string, string>> = {
  tasks: "task", services: "service", portfolio: "portfolio", articles: "article", jobs: "vacancy", resumes: "resume", learning: "training"
}
const kindOfCommand = (operationId: string): string | undefined => {
  const parts = operationId.split(".")
  return parts.length === 2 ? commandKinds[parts[0]!] : undefined
}

/** The data a save proposes (`arguments.data`), if the command carries one. */
export const proposedData = (command: ApprovalView): Json | undefined => isObject(command.arguments["data"]) ? command.arguments["data"] : undefined

/** What the command touches, in a line: "Task: «title»", or "New draft · Task: «title»"; undefined when it names no record. */
export const recordLine = (texts: Texts, command: ApprovalView): { readonly heading: string; readonly title: string } | undefined => {
  const data = proposedData(command)
  if (command.record === undefined && data === undefined) return undefined
  const kind = command.record?.kind ?? kindOfCommand(command.operationId)
  const label = kind === undefined ? "" : kindLabel(texts, kind)
  const heading = command.record === undefined ? (label === "" ? texts.t("approval.newDraft") : `${texts.t("approval.newDraft")} · ${label}`) : label
  const title = (data === undefined ? undefined : titleOf(data)) ?? command.record?.title ?? texts.t("approval.untitled")
  return { heading, title }
}

/** The fields a save changes against the current draft (every field for a new draft). */
export const changesOf = (command: ApprovalView): ReadonlyArray<{ readonly name: string; readonly now: string; readonly proposed: string }> => {
  const data = proposedData(command)
  if (data === undefined) return []
  const draft = command.record?.draft ?? {}
  return [...new Set([...Object.keys(draft), ...Object.keys(data)])]
    .filter((name) => JSON.stringify(draft[name]) !== JSON.stringify(data[name]))
    .map((name) => ({ name, now: shown(draft[name]), proposed: shown(data[name]) }))
}
