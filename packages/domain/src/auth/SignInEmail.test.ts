import { describe, expect, it } from "vitest"
import { signInEmail } from "./SignInEmail.js"

const link = "https://birzha.example/auth/link#challenge=7c9e6679-7425-40de-944b-e07fc1f90ae7&token=Zm9v_YmFy-YmF6"
const input = {
  to: "anna@example.com",
  code: "042917",
  link,
  expiresAt: new Date("2026-05-01T14:32:45.123Z"),
  minutes: 10
}

// What a browser does with an attribute value: the entities the renderer writes, decoded back.
const decodeEntities = (value: string): string =>
  value
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, "\"")
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
const hrefs = (html: string): Array<string> => [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => decodeEntities(m[1]!))

describe("sign-in email", () => {
  it("puts the code in the subject and addresses the requester", () => {
    const message = signInEmail(input)
    expect(message.to).toBe("anna@example.com")
    expect(message.subject).toContain("042917")
    expect(message.subject).toContain("код входа")
    expect(message.subject).toContain("sign-in code")
  })

  it("gives the code, the exact link and the expiry in Russian first, then in English, as plain text", () => {
    const { text } = signInEmail(input)
    expect(text).toContain("042917")
    expect(text).toContain(link)
    expect(text).toContain("10 минут")
    expect(text).toContain("10 minutes")
    expect(text).toContain("2026-05-01 14:32 UTC")
    expect(text).toContain("проигнорируйте это письмо")
    expect(text).toContain("you can ignore this message")
    expect(text.indexOf("Чтобы войти")).toBeGreaterThanOrEqual(0)
    expect(text.indexOf("Чтобы войти")).toBeLessThan(text.indexOf("To sign in"))
  })

  it("links to the exact sign-in link from the HTML, escaping its ampersand", () => {
    const { html } = signInEmail(input)
    expect(html).toContain("042917")
    expect(html).toContain("challenge=7c9e6679-7425-40de-944b-e07fc1f90ae7&amp;token=Zm9v_YmFy-YmF6")
    expect(html).not.toContain("&token=")
    const links = hrefs(html)
    expect(links.length).toBeGreaterThanOrEqual(2)
    expect(new Set(links)).toEqual(new Set([link]))
    expect(html).toContain("10 минут")
    expect(html).toContain("10 minutes")
    expect(html).toContain("2026-05-01 14:32 UTC")
    expect(html).toContain("проигнорируйте это письмо")
    expect(html).toContain("you can ignore this message")
    expect(html.indexOf("Чтобы войти")).toBeLessThan(html.indexOf("To sign in"))
  })

  it("loads nothing from outside: no images, stylesheets or scripts", () => {
    const { html } = signInEmail(input)
    expect(html).not.toMatch(/<img|<link|<script|<style|src=|url\(/i)
  })

  it("cannot be made to inject HTML through the link or the address", () => {
    const hostile = `https://birzha.example/auth/link#token="><script>alert(1)</script><a href='x'>`
    const { html, text } = signInEmail({ ...input, link: hostile, to: "<script>alert(2)</script>@example.com" })
    expect(html).not.toContain("<script")
    expect(html).toContain("&lt;script&gt;alert(2)&lt;/script&gt;@example.com")
    expect(new Set(hrefs(html))).toEqual(new Set([hostile]))
    expect(html.match(/<a /g)).toHaveLength(4)
    expect(text).toContain(hostile)
  })

  it("says how long in words Russian readers expect", () => {
    expect(signInEmail({ ...input, minutes: 1 }).text).toContain("1 минуту")
    expect(signInEmail({ ...input, minutes: 3 }).text).toContain("3 минуты")
    expect(signInEmail({ ...input, minutes: 15 }).text).toContain("15 минут")
    expect(signInEmail({ ...input, minutes: 21 }).text).toContain("21 минуту")
    expect(signInEmail({ ...input, minutes: 1 }).text).toContain("1 minute,")
  })
})
