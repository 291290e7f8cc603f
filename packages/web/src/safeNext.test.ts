import { describe, expect, it } from "vitest"
import { safeNext } from "./safeNext.js"

describe("the return path after sign-in", () => {
  it("keeps a path of this site with its query", () => {
    expect(safeNext("/approvals/0b7e3f4e-4c1a-4f4e-9a51-2f0c2d0f6a11")).toBe("/approvals/0b7e3f4e-4c1a-4f4e-9a51-2f0c2d0f6a11")
    expect(safeNext("/approvals?lang=en")).toBe("/approvals?lang=en")
    expect(safeNext("/")).toBe("/")
  })

  it("refuses anything that could leave the site: another host, a scheme, a backslash, white space or control characters", () => {
    for (const value of [
      "//evil.example/approvals",
      "/\\evil.example",
      "\\\\evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "approvals",
      "/a b",
      "/a\tb",
      "/\u0000",
      "/%0a",
      ""
    ]) {
      expect(safeNext(value), JSON.stringify(value)).toBe(value === "/%0a" ? "/%0a" : undefined)
    }
    expect(safeNext(null)).toBeUndefined()
    expect(safeNext(undefined)).toBeUndefined()
  })

  it("refuses a path whose dot segments normalise to another host (`/..//evil.example` would be `//evil.example`)", () => {
    for (const value of ["/..//evil.example", "/.//evil.example/x", "/a/..//evil.example", "/%2e%2e//evil.example", "/./..//evil.example?x=1"]) {
      const kept = safeNext(value)
      expect(kept === undefined || (kept.startsWith("/") && !kept.startsWith("//")), `${value} → ${kept}`).toBe(true)
      if (kept !== undefined) expect(new URL(kept, "https://birzha.example").host, value).toBe("birzha.example")
    }
    expect(safeNext("/..//evil.example")).toBeUndefined()
  })

  it("takes at most 2048 characters", () => {
    expect(safeNext(`/${"a".repeat(2047)}`)).toBe(`/${"a".repeat(2047)}`)
    expect(safeNext(`/${"a".repeat(2048)}`)).toBeUndefined()
  })
})
