#!/usr/bin/env node
// The public surface of every published package, as API Extractor reports of the built
// declarations (`packages/<package>/api/<entry>.api.md`, committed).
//
//   node scripts/api-report.mjs --check    fails when a report differs from the built declarations
//   node scripts/api-report.mjs --update   writes the reports
//   … --only domain,http-host              just these reports
//
// Run after `npx -y pnpm@10.34.9 run build` (declarations included). A change to an exported
// signature shows in the report's diff, which review then sees; the release checks
// (scripts/release-dry-run.mjs, `test:release`, run by CI) run `--check` on the declarations their
// packs built, so a surface changed without its report fails. Only the public entries are
// reported: the `internal` subpaths carry no compatibility promise (docs/embedding.md, "What is public").
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/** Each public entry point: its package folder, its built declaration file, its report's name. */
const entries = [
  { folder: "domain", declarations: "dist/index.d.ts", report: "domain" },
  { folder: "domain", declarations: "dist/server.d.ts", report: "domain-server" },
  { folder: "infrastructure", declarations: "dist/index.d.ts", report: "infrastructure" },
  { folder: "http-host", declarations: "dist/index.d.ts", report: "http-host" },
  { folder: "worker-host", declarations: "dist/index.d.ts", report: "worker-host" },
  { folder: "cli", declarations: "dist/index.d.ts", report: "cli" },
  { folder: "client-sdk", declarations: "dist/index.d.ts", report: "client" }
]

/**
 * A report's declarations with the order of object members and of union members made canonical.
 * The declarations tsup writes spell inferred types as the compiler prints them, members in the
 * order the compiler happened to create their types, which follows the order the bundler asked for
 * each file's declarations: two builds of the same sources can list `avatarUrl` before or after
 * `name`. Neither order means anything to a caller, so reports that differ only in it are the same
 * surface (docs/decisions.md, "Release checks in CI").
 */
const canonical = (report) => {
  const code = report.slice(report.indexOf("```ts") + 5, report.lastIndexOf("```"))
  const source = ts.createSourceFile("report.d.ts", code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const printer = ts.createPrinter({ removeComments: true })
  const text = (node) => printer.printNode(ts.EmitHint.Unspecified, node, source)
  const sorted = (nodes) => [...nodes].map((node) => [text(node), node]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, node]) => node)
  const [file] = ts.transform(source, [(context) => (root) => {
    const visit = (node) => {
      const visited = ts.visitEachChild(node, visit, context)
      if (ts.isTypeLiteralNode(visited)) return context.factory.updateTypeLiteralNode(visited, context.factory.createNodeArray(sorted(visited.members)))
      if (ts.isUnionTypeNode(visited)) return context.factory.updateUnionTypeNode(visited, context.factory.createNodeArray(sorted(visited.types)))
      return visited
    }
    return ts.visitNode(root, visit)
  }]).transformed
  return printer.printFile(file)
}

const mode = process.argv.includes("--update") ? "update" : process.argv.includes("--check") ? "check" : undefined
if (mode === undefined) {
  console.error("usage: node scripts/api-report.mjs --check | --update")
  process.exit(2)
}

const onlyAt = process.argv.indexOf("--only")
const only = onlyAt < 0 ? undefined : new Set((process.argv[onlyAt + 1] ?? "").split(","))

const quiet = { logLevel: "none", addToApiReportFile: false }
const temp = mkdtempSync(join(tmpdir(), "birzha-api-report-"))
const problems = []
try {
  for (const entry of entries.filter((entry) => only === undefined || only.has(entry.report))) {
    const projectFolder = join(root, "packages", entry.folder)
    const mainEntryPointFilePath = join(projectFolder, entry.declarations)
    if (!existsSync(mainEntryPointFilePath)) {
      problems.push(`${entry.report}: ${mainEntryPointFilePath} is missing; build with declarations first (npx -y pnpm@10.34.9 run build)`)
      continue
    }
    if (mode === "update") mkdirSync(join(projectFolder, "api"), { recursive: true })
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder,
        mainEntryPointFilePath,
        compiler: {
          overrideTsconfig: {
            compilerOptions: {
              target: "ES2022",
              module: "NodeNext",
              moduleResolution: "NodeNext",
              lib: ["ES2022", "DOM", "DOM.Iterable"],
              types: ["node"],
              strict: true,
              skipLibCheck: true,
              exactOptionalPropertyTypes: true
            },
            files: [mainEntryPointFilePath]
          },
          skipLibCheck: true
        },
        apiReport: {
          enabled: true,
          reportFileName: entry.report,
          reportFolder: join(projectFolder, "api"),
          reportTempFolder: join(temp, entry.report)
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        newlineKind: "lf",
        messages: {
          compilerMessageReporting: { default: { logLevel: "warning" } },
          // The report is the record; release tags and TSDoc style are not used in this repository.
          extractorMessageReporting: {
            default: quiet,
            "ae-forgotten-export": { logLevel: "none", addToApiReportFile: true },
            "ae-wrong-input-file-type": { logLevel: "error" }
          },
          tsdocMessageReporting: { default: quiet }
        }
      },
      configObjectFullPath: join(projectFolder, "api-extractor.json"),
      packageJsonFullPath: join(projectFolder, "package.json")
    })
    const reportFile = join(projectFolder, "api", `${entry.report}.api.md`)
    const before = existsSync(reportFile) ? readFileSync(reportFile, "utf8") : undefined
    const result = Extractor.invoke(config, { localBuild: mode === "update", showVerboseMessages: false, showDiagnostics: false })
    const made = result.apiReportChanged ? readFileSync(mode === "update" ? reportFile : join(temp, entry.report, `${entry.report}.api.md`), "utf8") : undefined
    const reordered = made !== undefined && before !== undefined && result.errorCount === 0 && canonical(made) === canonical(before)
    if (reordered) {
      // The same surface in another order: the committed report stands.
      if (mode === "update") writeFileSync(reportFile, before)
      console.log(`${entry.report}: report unchanged (members in another order)`)
    } else if (!result.succeeded) {
      problems.push(
        mode === "check" && result.apiReportChanged
          ? `${entry.report}: the surface differs from packages/${entry.folder}/api/${entry.report}.api.md; review the change, then run node scripts/api-report.mjs --update`
          : `${entry.report}: API Extractor failed (${result.errorCount} errors)`
      )
    } else {
      console.log(`${entry.report}: ${result.apiReportChanged ? "report updated" : "report unchanged"}`)
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true })
}
if (problems.length > 0) {
  for (const problem of problems) console.error(problem)
  process.exit(1)
}
