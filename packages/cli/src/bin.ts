#!/usr/bin/env node
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { run } from "./Cli.js"

// runMain turns SIGINT and SIGTERM into interruption: layers close in order, the HTTP listener
// stops accepting and drains, workers finish their current run. Logs are pretty on a terminal
// and one logfmt line per entry otherwise (files, journald, containers): cheaper and greppable.
run(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: process.stdout.isTTY !== true })
)
