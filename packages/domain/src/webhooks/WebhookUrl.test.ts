import { Either, Redacted } from "effect"
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { addressProblem, isLoopbackAddress, parseIpv6 } from "./AddressPolicy.js"
import { newSigningSecret, openSecret, sealSecret, signatureHeader, signingKey } from "./SigningSecret.js"
import { normalizeWebhookUrl } from "./WebhookUrl.js"

const refused = (address: string, allowLoopback = false) => addressProblem(address, { allowLoopback }) !== undefined

describe("the SSRF address policy", () => {
  it("refuses private, loopback, link-local, unique-local, multicast, CGNAT and the other special ranges", () => {
    for (const address of [
      "0.0.0.0", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.255.0.9",
      "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.168.1.1", "198.18.0.1",
      "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.1.2.3", "240.0.0.1", "255.255.255.255",
      "::", "::1", "fe80::1", "febf::1", "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1", "::ffff:10.0.0.1",
      "::ffff:127.0.0.1", "::ffff:7f00:1", "64:ff9b::a00:1", "2002:a00:1::", "2001::1", "::127.0.0.1", "fec0::1"
    ]) {
      expect(refused(address), address).toBe(true)
    }
  })

  it("allows public addresses, the edges of the refused ranges included", () => {
    for (const address of [
      "1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
      "128.0.0.0", "169.253.255.255", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0",
      "198.17.255.255", "198.20.0.0", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001::200e",
      "::ffff:8.8.8.8", "64:ff9b::808:808", "2001:4860:4860::8888", "fbff::1", "fe7f::1"
    ]) {
      expect(addressProblem(address, { allowLoopback: false }), address).toBeUndefined()
    }
  })

  it("lets loopback through only when allowed, and nothing else private", () => {
    expect(refused("127.0.0.1", true)).toBe(false)
    expect(refused("::1", true)).toBe(false)
    expect(refused("::ffff:127.0.0.1", true)).toBe(false)
    expect(refused("10.0.0.1", true)).toBe(true)
    expect(refused("169.254.169.254", true)).toBe(true)
    expect(isLoopbackAddress("127.3.2.1")).toBe(true)
    expect(isLoopbackAddress("128.0.0.1")).toBe(false)
  })

  it("parses IPv6 forms exactly and refuses what is not an address", () => {
    expect(parseIpv6("::")).toEqual(Array(16).fill(0))
    expect(parseIpv6("1:2:3:4:5:6:7:8")).toHaveLength(16)
    expect(parseIpv6("1:2:3:4:5:6:7:8:9")).toBeUndefined()
    expect(parseIpv6("1::2::3")).toBeUndefined()
    expect(parseIpv6("::ffff:1.2.3.4")?.slice(10)).toEqual([0xff, 0xff, 1, 2, 3, 4])
    expect(refused("example.com")).toBe(true)
    expect(refused("1.2.3")).toBe(true)
    expect(refused("01.2.3.4")).toBe(true)
  })
})

describe("webhook URLs", () => {
  const off = { allowHttpLoopback: false }
  const on = { allowHttpLoopback: true }
  const problem = (url: string, policy = off) => Either.isLeft(normalizeWebhookUrl(url, policy))

  it("accept https URLs of public hosts and store their WHATWG form (what the owner approves is what is called)", () => {
    expect(normalizeWebhookUrl("https://Hooks.Example.com/in?x=1", off)).toEqual(Either.right("https://hooks.example.com/in?x=1"))
    expect(normalizeWebhookUrl("https://8.8.8.8:8443/h", off)).toEqual(Either.right("https://8.8.8.8:8443/h"))
    expect(normalizeWebhookUrl("https://example.com", off)).toEqual(Either.right("https://example.com/"))
  })

  it("refuse other schemes, credentials, fragments, private or loopback hosts and single-label names", () => {
    for (const url of [
      "http://example.com/", "ftp://example.com/", "https://user:pw@example.com/", "https://example.com/#x",
      "https://10.1.2.3/", "https://[::1]/", "https://127.0.0.1/", "https://2130706433/", "https://0x7f.1/",
      "https://localhost/", "https://api.localhost/", "https://intranet/", "https://169.254.169.254/latest",
      "http://127.0.0.1:8080/", "not a url"
    ]) {
      expect(problem(url), url).toBe(true)
    }
  })

  it("refuse a loopback name with a trailing dot, in any case (localhost. is localhost)", () => {
    for (const url of ["https://localhost./", "https://LOCALHOST./hook", "https://LocalHost../", "https://api.localhost./", "https://127.0.0.1./", "https://intranet./"]) {
      expect(problem(url), url).toBe(true)
    }
    expect(problem("https://example.com./")).toBe(false)
    expect(problem("http://localhost.:9000/", on)).toBe(false)
  })

  it("allow http:// loopback receivers only with BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK, and still no private ones", () => {
    expect(normalizeWebhookUrl("http://127.0.0.1:9000/hook", on)).toEqual(Either.right("http://127.0.0.1:9000/hook"))
    expect(problem("http://localhost:9000/", on)).toBe(false)
    expect(problem("http://[::1]:9000/", on)).toBe(false)
    expect(problem("http://10.0.0.1/", on)).toBe(true)
    expect(problem("http://example.com/", on)).toBe(true)
  })

  it("are at most 2048 characters", () => {
    const base = "https://example.com/"
    expect(problem(base + "a".repeat(2048 - base.length))).toBe(false)
    expect(problem(base + "a".repeat(2049 - base.length))).toBe(true)
  })
})

describe("signing secrets", () => {
  const server = Redacted.make("a server secret of at least thirty-two characters")

  it("are whsec_ plus the base64 of 32 random bytes, different each time", () => {
    const secret = newSigningSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(signingKey(secret)).toHaveLength(32)
    expect(newSigningSecret()).not.toBe(secret)
  })

  it("are kept sealed: the sealed form does not contain them and opens only for the same endpoint and server secret", () => {
    const secret = newSigningSecret()
    const endpoint = crypto.randomUUID()
    const sealed = sealSecret(server, endpoint, secret)
    expect(sealed).not.toContain(secret.slice(6))
    expect(openSecret(server, endpoint, sealed)).toBe(secret)
    expect(() => openSecret(server, crypto.randomUUID(), sealed)).toThrow()
    expect(() => openSecret(Redacted.make("another server secret of thirty-two characters"), endpoint, sealed)).toThrow()
  })

  it("sign as Standard Webhooks verifies, one v1 signature per key", () => {
    const [a, b] = [newSigningSecret(), newSigningSecret()]
    const id = crypto.randomUUID()
    const timestamp = Math.floor(Date.now() / 1000)
    const body = JSON.stringify({ uuid: id, текст: "Привет" })
    const header = signatureHeader([signingKey(a), signingKey(b)], id, timestamp, body)
    expect(header.split(" ")).toHaveLength(2)
    const headers = { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": header }
    expect(new Webhook(a).verify(body, headers)).toEqual(JSON.parse(body))
    expect(new Webhook(b).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow()
  })
})
