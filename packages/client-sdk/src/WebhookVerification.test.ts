import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { verifyWebhook, WebhookVerificationError } from "./index.js"

const secretOf = (byte: number) => `whsec_${Buffer.alloc(32, byte).toString("base64")}`
const oldSecret = secretOf(1)
const newSecret = secretOf(2)

/** A message signed by the independent Standard Webhooks library. */
const signed = (secrets: ReadonlyArray<string>, body: string, at = new Date()) => {
  const id = crypto.randomUUID()
  const signature = secrets.map((s) => new Webhook(s).sign(id, at, body)).join(" ")
  return { "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signature }
}

const body = JSON.stringify({ uuid: "u", type: "profile.updated", data: { text: "Привет" } })

describe("verifyWebhook", () => {
  it("returns the parsed body of a message signed with the secret, from a string or the raw bytes", async () => {
    const headers = signed([newSecret], body)
    expect(await verifyWebhook(newSecret, headers, body)).toEqual(JSON.parse(body))
    expect(await verifyWebhook(newSecret, headers, new TextEncoder().encode(body))).toEqual(JSON.parse(body))
    expect(await verifyWebhook(newSecret, new Headers(headers), body)).toEqual(JSON.parse(body))
  })

  it("accepts any of several v1 signatures (a rotation window) and any of several secrets", async () => {
    const both = signed([oldSecret, newSecret], body)
    expect(await verifyWebhook(oldSecret, both, body)).toEqual(JSON.parse(body))
    expect(await verifyWebhook(newSecret, both, body)).toEqual(JSON.parse(body))
    const onlyNew = signed([newSecret], body)
    await expect(verifyWebhook(oldSecret, onlyNew, body)).rejects.toBeInstanceOf(WebhookVerificationError)
    expect(await verifyWebhook([oldSecret, newSecret], onlyNew, body)).toEqual(JSON.parse(body))
  })

  it("refuses a changed body, id or timestamp, a foreign secret, other versions and missing headers", async () => {
    const headers = signed([newSecret], body)
    const refuses = (h: Record<string, string>, b = body, s = newSecret) => expect(verifyWebhook(s, h, b)).rejects.toBeInstanceOf(WebhookVerificationError)
    await refuses(headers, body + " ")
    await refuses({ ...headers, "webhook-id": crypto.randomUUID() })
    await refuses({ ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 1) })
    await refuses(headers, body, secretOf(3))
    await refuses({ ...headers, "webhook-signature": headers["webhook-signature"].replace("v1,", "v2,") })
    const { "webhook-signature": _s, ...unsigned } = headers
    await refuses(unsigned)
  })

  it("checks the timestamp window: 300 s on either side pass, 301 s do not", async () => {
    const at = new Date("2026-05-01T12:00:00Z")
    const headers = signed([newSecret], body, at)
    for (const seconds of [-300, 0, 300]) {
      expect(await verifyWebhook(newSecret, headers, body, { now: at.getTime() + seconds * 1000 })).toEqual(JSON.parse(body))
    }
    for (const seconds of [-301, 301]) {
      await expect(verifyWebhook(newSecret, headers, body, { now: at.getTime() + seconds * 1000 })).rejects.toThrow(/tolerance/)
    }
    expect(await verifyWebhook(newSecret, headers, body, { now: new Date(at.getTime() + 600_000), toleranceSeconds: 600 })).toEqual(JSON.parse(body))
  })
})
