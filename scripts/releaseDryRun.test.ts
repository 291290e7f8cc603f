import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

// The release dry run (scripts/release-dry-run.mjs) in the test command: a clean copy, the pending
// changesets applied, every package packed (its prepack builds it), publint and
// @arethetypeswrong/cli on each tarball, each installed with npm, type-checked strictly and run.
const script = join(dirname(fileURLToPath(import.meta.url)), "release-dry-run.mjs")

describe("the release dry run", { timeout: 1_800_000 }, () => {
  it("packs, lints, installs, type-checks and runs every published package", async () => {
    const result = await promisify(execFile)(process.execPath, [script], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
      .catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? "", stderr: error.stderr ?? String(error) }))
    expect(result.stderr).toBe("")
    expect(result.stdout).toContain("release dry run passed")
  })
})
