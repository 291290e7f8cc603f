import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { template } from "./pglite.js"

// The waiting, not PGlite: `initialise` stands in for initdb by writing a file into the directory.
const roots: Array<string> = []
const freshRoot = () => {
  const root = mkdtempSync(join(tmpdir(), "birzha-template-"))
  roots.push(root)
  return root
}
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})
const writesMarker = (calls: Array<string>) => async (dir: string) => {
  calls.push(dir)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "made"), "yes")
}

/** The id of a process that has ended. */
const endedPid = () =>
  new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.on("exit", () => resolve(child.pid!))
  })

describe("the embedded template (testing/pglite.ts)", () => {
  it("is made once for callers at the same time, the others waiting for as long as its maker takes", async () => {
    const root = freshRoot()
    const calls: Array<string> = []
    let release!: () => void
    const slow = async (dir: string) => {
      calls.push(dir)
      // Longer than several of the waiters' 100 ms looks.
      await new Promise<void>((resolve) => (release = resolve))
      await writesMarker([])(dir)
    }
    const first = template(root, slow)
    const others = [template(root, writesMarker(calls)), template(root, writesMarker(calls))]
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(calls).toHaveLength(1)
    release()
    const dirs = await Promise.all([first, ...others])
    expect(new Set(dirs).size).toBe(1)
    expect(calls).toHaveLength(1)
    expect(readFileSync(join(dirs[0]!, "made"), "utf8")).toBe("yes")
  })

  it("is made by a waiter when the process that was making it ended without finishing", async () => {
    const root = freshRoot()
    mkdirSync(join(root, "pglite-template.making"))
    writeFileSync(join(root, "pglite-template.making", "pid"), String(await endedPid()))
    const calls: Array<string> = []
    const dir = await template(root, writesMarker(calls))
    expect(calls).toEqual([dir])
    expect(existsSync(join(root, "pglite-template.done"))).toBe(true)
  })

  it("is left to a maker that still runs, however long it takes", async () => {
    const root = freshRoot()
    mkdirSync(join(root, "pglite-template.making"))
    // This process: alive throughout.
    writeFileSync(join(root, "pglite-template.making", "pid"), String(process.pid))
    const calls: Array<string> = []
    const waiting = template(root, writesMarker(calls))
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(calls).toEqual([])
    // The maker finishes.
    mkdirSync(join(root, "pglite-template"))
    writeFileSync(join(root, "pglite-template.done"), "")
    expect(await waiting).toBe(join(root, "pglite-template"))
    expect(calls).toEqual([])
  })
})
