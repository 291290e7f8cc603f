import { type Command, HelpDoc } from "@effect/cli"
import { stripAnsi } from "./CommandConsole.js"

/**
 * `birzha --help`: one aligned line per command a user can run (its path, e.g. `moderation
 * approve`) with the first clause of its description. @effect/cli's own listing repeats the parent
 * of nested commands ("moderation moderation complaint …") and pads every line to its longest
 * usage with all options; `birzha <command> --help` keeps @effect/cli's detailed help.
 *
 * The tree is read from the commands' descriptors, in declaration order, so a new command appears
 * here with its own `Command.withDescription` and nothing else to keep in step. @effect/cli
 * (pinned in packages/cli/package.json) does not export the descriptors' shape; the fields read
 * here are its instructions' (`Standard`, `Map`, `Subcommands`), and an unknown shape throws, so
 * packages/cli/src/Cli.test.ts notices a change of version.
 */

interface Entry {
  readonly path: string
  readonly summary: string
}

type Node =
  | { readonly _tag: "Standard" | "GetUserInput"; readonly name: string; readonly description: HelpDoc.HelpDoc }
  | { readonly _tag: "Map"; readonly command: Node }
  | { readonly _tag: "Subcommands"; readonly parent: Node; readonly children: ReadonlyArray<Node> }

const own = (node: Node): { readonly name: string; readonly description: HelpDoc.HelpDoc } => {
  switch (node._tag) {
    case "Standard":
    case "GetUserInput":
      return node
    case "Map":
      return own(node.command)
    case "Subcommands":
      return own(node.parent)
    default:
      throw new Error(`birzha: unknown @effect/cli command shape ${String((node as { _tag?: unknown })._tag)}`)
  }
}

const childrenOf = (node: Node): ReadonlyArray<Node> =>
  node._tag === "Subcommands" ? node.children : node._tag === "Map" ? childrenOf(node.command) : []

/**
 * The first clause of a description, without its parenthesised remarks: up to its first `.`, `:`
 * or `;` that ends a word outside parentheses ("Print the moderators: address, …" → "Print the
 * moderators"; "Run the workers alone (any number …)." → "Run the workers alone").
 */
export const firstClause = (description: string): string => {
  let depth = 0
  let clause = ""
  for (let index = 0; index < description.length; index++) {
    const char = description[index]!
    const next = description[index + 1]
    if (char === "(") depth++
    else if (char === ")") depth = Math.max(0, depth - 1)
    else if (depth === 0 && ".:;".includes(char) && (next === undefined || /\s/.test(next))) break
    else if (depth === 0) clause += char
  }
  return clause.replace(/\s+/g, " ").replace(/\s+([,.;:])/g, "$1").trim()
}

/** Every runnable command under `command`, depth first in declaration order, with its summary. */
export const commandEntries = (command: Command.Command<any, any, any, any>): ReadonlyArray<Entry> => {
  const walk = (node: Node, prefix: ReadonlyArray<string>): ReadonlyArray<Entry> =>
    childrenOf(node).flatMap((child) => {
      const path = [...prefix, own(child).name]
      const nested = childrenOf(child)
      if (nested.length > 0) return walk(child, path)
      const text = stripAnsi(HelpDoc.toAnsiText(own(child).description)).replace(/\s+/g, " ").trim()
      return [{ path: path.join(" "), summary: firstClause(text) }]
    })
  return walk(command.descriptor as unknown as Node, [])
}

/** The text of `birzha --help`. */
export const overview = (command: Command.Command<any, any, any, any>, name: string, version: string): string => {
  const entries = commandEntries(command)
  const width = Math.max(...entries.map((entry) => entry.path.length)) + 2
  const description = stripAnsi(HelpDoc.toAnsiText(own(command.descriptor as unknown as Node).description)).trim()
  return [
    `${name} ${version}`,
    description,
    "",
    `Usage: ${name} <command> [options]`,
    "",
    "Commands:",
    ...entries.map((entry) => `  ${entry.path.padEnd(width)}${entry.summary}`),
    "",
    `${name} <command> --help   its arguments and options`,
    `${name} --version          the version`,
    ""
  ].join("\n")
}
