import { describe, expect, it } from "vitest"
import { sampleFiles, zipOf } from "../../../../testing/files.js"
import { checkContent, sniffBinary, zipEntryNames } from "./ContentSniffing.js"
import { fileMimeTypes } from "./File.js"

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, "utf8"))
const docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
const xlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

describe("content sniffing", () => {
  it("accepts a sample of every format as itself", () => {
    for (const type of fileMimeTypes) expect(checkContent(type, sampleFiles[type]), type).toEqual({ ok: true })
  })

  it("accepts a sample of one format as no other format, except an Office document as a zip", () => {
    for (const declared of fileMimeTypes) {
      for (const actual of fileMimeTypes) {
        if (declared === actual) continue
        const result = checkContent(declared, sampleFiles[actual])
        const allowed = declared === "application/zip" && (actual === docx || actual === xlsx) ||
          // Plain text is a superset: CSV and JSON are valid UTF-8 text too.
          declared === "text/plain" && (actual === "text/csv" || actual === "application/json") ||
          declared === "text/csv" && (actual === "text/plain" || actual === "application/json")
        expect(result.ok, `${actual} declared as ${declared}`).toBe(allowed)
      }
    }
  })

  it("tells the binary formats by their signatures", () => {
    expect(sniffBinary(sampleFiles["image/png"])).toBe("image/png")
    expect(sniffBinary(sampleFiles["image/avif"])).toBe("image/avif")
    expect(sniffBinary(sampleFiles[docx])).toBe(docx)
    expect(sniffBinary(sampleFiles[xlsx])).toBe(xlsx)
    expect(sniffBinary(sampleFiles["application/zip"])).toBe("application/zip")
    expect(sniffBinary(utf8("just text"))).toBeUndefined()
    // A signature cut short is no signature.
    expect(sniffBinary(sampleFiles["image/png"].subarray(0, 7))).toBeUndefined()
    expect(sniffBinary(new Uint8Array([0xff, 0xd8]))).toBeUndefined()
  })

  it("reads the entry names of a zip and refuses a truncated one", () => {
    const zip = zipOf([["a.txt", "1"], ["dir/b.txt", "2"]])
    expect(zipEntryNames(zip)).toEqual(["a.txt", "dir/b.txt"])
    expect(zipEntryNames(zip.subarray(0, zip.length - 1))).toBeUndefined()
    expect(checkContent("application/zip", zip.subarray(0, 40)).ok).toBe(false)
  })

  it("an ftyp box of another brand is not AVIF", () => {
    const heic = new Uint8Array(Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from("ftypheic\0\0\0\0mif1heic", "latin1")]))
    expect(checkContent("image/avif", heic).ok).toBe(false)
  })

  it("text must be UTF-8 without NUL, JSON must parse", () => {
    expect(checkContent("text/plain", new Uint8Array([0x68, 0xc3, 0x28]))).toEqual({
      ok: false,
      reason: "text/plain must be UTF-8 text without NUL bytes"
    })
    expect(checkContent("text/csv", utf8("a,b\u0000"))).toMatchObject({ ok: false })
    expect(checkContent("application/json", utf8("{\"a\":"))).toEqual({ ok: false, reason: "the bytes are not valid JSON" })
    // A byte-order mark is allowed and not part of the JSON.
    expect(checkContent("application/json", new Uint8Array([0xef, 0xbb, 0xbf, ...utf8("[1]")]))).toEqual({ ok: true })
    // Bytes with a binary signature are not text, even when they decode.
    expect(checkContent("text/plain", utf8("%PDF-1.4 pretending"))).toMatchObject({ ok: false })
  })
})
