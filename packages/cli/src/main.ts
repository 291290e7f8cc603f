// The `birzha` command itself, loaded by bin.ts for everything but the overview, the version and
// `birzha mail` (./mail.ts).
import { run } from "./Cli.js"
import { runProgram } from "./Program.js"

runProgram(run)
