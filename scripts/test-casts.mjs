// Counts the unchecked casts in the tests: ` as ` (not `as const`) and non-null assertions
// followed by `.` or `)`, in every *.test.ts under packages/. With a git ref (`node
// scripts/test-casts.mjs <ref>`) it counts that commit's files instead of the working tree, so a
// change can show its before and after. `--files` lists the files with most first.
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const args = process.argv.slice(2)
const listFiles = args.includes("--files")
const ref = args.find((arg) => !arg.startsWith("--"))

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.name === "node_modules" || entry.name === "dist"
      ? []
      : entry.isDirectory()
      ? walk(join(dir, entry.name))
      : entry.name.endsWith(".test.ts")
      ? [join(dir, entry.name)]
      : []
  )

const files = ref === undefined
  ? walk("packages")
  : execFileSync("git", ["ls-tree", "-r", "--name-only", ref, "packages"], { encoding: "utf8" })
    .split("\n")
    .filter((path) => path.endsWith(".test.ts") && !path.includes("node_modules/"))

const count = (text, pattern) => (text.match(pattern) ?? []).length

const rows = files.map((path) => {
  const text = ref === undefined ? readFileSync(path, "utf8") : execFileSync("git", ["show", `${ref}:${path}`], { encoding: "utf8", maxBuffer: 1 << 26 })
  return { path, casts: count(text, / as /g) - count(text, / as const/g), nonNull: count(text, /!\.|!\)/g) }
})

if (listFiles) {
  for (const row of [...rows].sort((a, b) => b.casts + b.nonNull - a.casts - a.nonNull)) {
    if (row.casts + row.nonNull > 0) console.log(`${row.casts}\t${row.nonNull}\t${row.path}`)
  }
}
const total = rows.reduce((sum, row) => ({ casts: sum.casts + row.casts, nonNull: sum.nonNull + row.nonNull }), { casts: 0, nonNull: 0 })
console.log(`${ref ?? "working tree"}: ${rows.length} test files, ${total.casts} casts (\` as \`, not \`as const\`), ${total.nonNull} non-null assertions (\`!.\`, \`!)\`)`)
