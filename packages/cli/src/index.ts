// The programmatic surface of @birzha/cli: the `birzha` command run on an argument list, and the
// version it reports (docs/embedding.md, "What is public"). The command itself is `birzha` (bin.ts).
export { run } from "./Cli.js"
export { version } from "./version.js"
