#!/usr/bin/env node
import { ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { run } from "./Cli.js"

// runMain turns SIGINT and SIGTERM into interruption: layers close in order, the HTTP listener
// stops accepting and drains, workers finish their current run. Logs are pretty on a terminal
// and one logfmt line per entry otherwise (files, journald, containers): cheaper and greppable.
run(process.argv).pipe(
  // A wrong argument or option: @effect/cli has already printed what is wrong, so exit 1 without a logged stack.
  Effect.catchIf(ValidationError.isValidationError, () =>
    Effect.sync(() => {
      process.exitCode = 1
    })),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: process.stdout.isTTY !== true })
)
