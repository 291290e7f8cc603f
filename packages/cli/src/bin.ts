#!/usr/bin/env -S node --max-semi-space-size=64 --min-semi-space-size=16
// A young generation of 64 MB semi-spaces (Node's default: 16): the host allocates per request, and
// scavenging four times less often cut its CPU per session-authenticated read by about a fifth
// (bench/README.md, `auth-session`). The floor of 16 MB keeps the start-up collection
// (infrastructure's StartupMemory.ts) from leaving it at 1 MB to regrow under load
// (docs/decisions.md, "Node's young generation"). `serve` on a Postgres server then holds it at that
// floor (infrastructure's StartupMemory.ts, StartupMemoryRequestsLive). bench/run.mjs starts the host with the flags of this line.
import { readFileSync } from "node:fs"
import { setFlagsFromString } from "node:v8"
import { embeddedDataDirOf, isForwardable, runningHostIn, sendToHost, writeToProcess } from "./HostClient.js"
import { version } from "./version.js"

// `birzha`, `birzha --help` and `birzha --version` (or `version`) answer without loading the
// service: the overview is the text main.js prints for `--help` (Overview.ts), written next to it at
// build time (tsup.config.ts), so it is the same text without compiling the whole command. A
// database command beside a host that holds the embedded database goes to that host from here
// (HostClient.ts), as main.js would send it. `birzha mail` loads mail.js, the rest main.js, each
// built as one module with its dependencies inside.
const args = process.argv.slice(2)
const asked = args.length === 0 ? "--help" : args.length === 1 ? args[0] : undefined

const quickAnswer = (): string | undefined => {
  if (asked === "--version" || asked === "version") return `${version}\n`
  if (asked !== "--help" && asked !== "-h") return undefined
  try {
    return readFileSync(new URL("./help.txt", import.meta.url), "utf8")
  } catch {
    // Not written (a build that stopped early): the command prints it.
    return undefined
  }
}

/** The exit code of the command run by a host beside this process, or `undefined` when none ran it. */
const forwarded = async (): Promise<number | undefined> => {
  const dataDir = isForwardable(args) ? embeddedDataDirOf(process.env) : undefined
  const host = dataDir === undefined ? undefined : runningHostIn(dataDir, () => true)
  if (host === undefined) return undefined
  // Ctrl-C (or SIGTERM) ends the command as main.js would, with exit code 0: the closed connection
  // interrupts it in the host (`events tail` runs until then).
  const stop = () => process.exit(0)
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  const exit = await sendToHost(host, args, writeToProcess)
  process.off("SIGINT", stop)
  process.off("SIGTERM", stop)
  return exit
}

/**
 * A command that ends by itself (all but `serve` and `worker`) has V8 compile the embedded
 * database's WebAssembly with its baseline compiler alone: optimising it in the background cost a
 * one-shot command more CPU than it saved (bench/README.md, "The command's start").
 */
const runsUntilStopped = new Set(["serve", "worker"])

const answer = quickAnswer()
if (answer !== undefined) process.stdout.write(answer)
else {
  const exit = await forwarded()
  if (exit !== undefined) process.exitCode = exit
  else {
    if (!runsUntilStopped.has(args[0] ?? "")) setFlagsFromString("--liftoff-only")
    await (args[0] === "mail" ? import("./mail.js") : import("./main.js"))
  }
}
