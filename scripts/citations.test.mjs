import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { root } from "./docs-state-machines.mjs"

// Comments and documents cite only files of this repository: no issue numbers, no sections of the
// design documents that were never part of it.
const outside = new RegExp(
  [
    "[Ii]ssues? #?[0-9]+",
    "(LEARNING|MARKETPLACE|DESIGN)(\\.md)? ?§",
    "(LEARNING|MARKETPLACE|DESIGN)\\.md",
    "shared/(spec|DESIGN|LEARNING|MARKETPLACE)"
  ].join("|")
)
const texts = /\.(ts|tsx|mjs|js|md|json|css|html)$/
const skipped = new Set(["node_modules", "dist", ".git"])

const filesUnder = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return skipped.has(entry.name) ? [] : filesUnder(path)
    return texts.test(entry.name) ? [path] : []
  })

describe("citations", () => {
  it("point only at files of the repository (packages, docs, bench, scripts, README)", () => {
    const files = [
      ...["packages", "docs", "bench", "scripts", "testing"].flatMap((dir) => filesUnder(join(root, dir))),
      join(root, "README.md")
    ].filter((file) => !file.endsWith("citations.test.mjs"))
    const found = files.flatMap((file) =>
      readFileSync(file, "utf8").split("\n").flatMap((line, index) =>
        outside.test(line) ? [`${relative(root, file)}:${index + 1}: ${line.trim().slice(0, 160)}`] : []
      )
    )
    expect(found).toEqual([])
  })
})
