#!/usr/bin/env node
// Reports which of the spec's operations the catalog does not declare yet, and any declared
// operation whose method or path differs from the spec. Reads the built domain package.
import { readFileSync } from "node:fs"

const { catalog, coverage } = await import("../packages/domain/dist/index.js").catch(() => {
  console.error("Build the packages first: npx -y pnpm@10.34.9 build")
  process.exit(2)
})
const spec = JSON.parse(readFileSync(new URL("../docs/spec/operations.json", import.meta.url), "utf8"))
const result = coverage(catalog, spec)
const covered = spec.length - result.missing.length
console.log(`declared ${result.declared} operations; ${covered} of the spec's ${spec.length} covered`)
if (result.mismatched.length > 0) {
  console.log("\nmethod or path differs from the spec:")
  for (const m of result.mismatched) console.log(`  ${m.id}: declared ${m.declared}, spec ${m.spec}`)
}
if (result.extra.length > 0) console.log(`\nnot in the spec (our own): ${result.extra.join(", ")}`)
if (process.argv.includes("--missing")) {
  console.log("\nnot declared yet:")
  for (const op of result.missing) console.log(`  ${op.operationId ?? "(unnamed)"} ${op.method} ${op.path}`)
} else if (result.missing.length > 0) {
  console.log(`\n${result.missing.length} not declared yet (--missing lists them)`)
}
process.exit(result.mismatched.length > 0 ? 1 : 0)
