import { type IncomingHttpHeaders, request } from "node:http"
import { setTimeout as sleep } from "node:timers/promises"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anonymous, EncodedJson } from "@birzha/domain/internal"
import { type Marketplace, openMarketplace } from "../../domain/test/marketplace.js"
import { type RunningHost, startService, untilReady } from "./testing.js"

// The catalog over HTTP on the database of a domain test harness: the same call collected by the
// registry (as MCP and the CLI get it) is the reference for the bytes HTTP streams.
let m: Marketplace
let host: RunningHost

beforeAll(async () => {
  m = await openMarketplace("catalog-http")
  host = await startService({ env: { DATABASE_URL: m.database.url } })
  await untilReady(host)
})
afterAll(async () => {
  await host?.close()
  await m?.close()
})

interface Received {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** The answer ended as HTTP says an answer ends (the last chunk), not by the connection breaking. */
  readonly complete: boolean
}

/** A GET read to its end or to the connection's; `paused` runs once the headers are in, before any body is read. */
const get = (path: string, paused?: () => Promise<void>) =>
  new Promise<Received>((resolve, reject) => {
    const req = request(`${host.url}${path}`, { agent: false }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("error", () => {})
      res.on("close", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), complete: res.complete }))
      if (paused !== undefined) {
        res.pause()
        void paused().then(() => res.resume(), reject)
      }
    })
    req.on("error", reject)
    req.end()
  })

const collected = async () => {
  const answer = await m.invoke("getCatalog", anonymous)
  expect(answer.body).toBeInstanceOf(EncodedJson)
  return (answer.body as EncodedJson).json
}

/** `count` public publications of a new public profile; `descriptionChars` makes each as large as wanted. */
const addPublications = async (count: number, descriptionChars = 40, idPrefix = "bulk-") => {
  const owner = await m.profile({ public: true })
  await m.sql(
    `INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at)
     SELECT $4::text || gen_random_uuid(), 'task', $1, 'approved', d, d, now() - (i % 3) * interval '1 minute'
     FROM generate_series(1, $2::int) i,
       LATERAL (SELECT jsonb_build_object('title', 'Задача ' || i, 'category', 'Сайты', 'description', repeat('я', $3::int),
         'budget', 'до 5 000 ₽', 'deadline', 'неделя', 'files', '[]'::jsonb) AS d) data`,
    owner.profileUuid,
    count,
    descriptionChars,
    idPrefix
  )
}

/** Makes every read of the publications fail (as a database that lost the table would) while `during` runs. */
const withoutPublications = async <A>(during: () => Promise<A>): Promise<A> => {
  await m.sql("ALTER TABLE publications RENAME TO publications_away")
  try {
    return await during()
  } finally {
    await m.sql("ALTER TABLE publications_away RENAME TO publications")
  }
}

describe("GET /api/v1/catalog", () => {
  it("streams, chunked, exactly the bytes a collecting caller gets: empty, one, several pages", async () => {
    for (const add of [0, 1, 1100]) {
      if (add > 0) await addPublications(add)
      const answer = await get("/api/v1/catalog")
      expect([answer.status, answer.complete]).toEqual([200, true])
      expect(answer.headers["content-type"]).toBe("application/json")
      expect(answer.headers["x-content-type-options"]).toBe("nosniff")
      expect(answer.headers["transfer-encoding"]).toBe("chunked")
      expect(answer.headers["content-length"]).toBeUndefined()
      expect(answer.body).toBe(await collected())
      expect(JSON.parse(answer.body).publications).toHaveLength(add === 0 ? 0 : add === 1 ? 1 : 1101)
    }
  })

  it("sends a reader that reads slowly the same bytes: each page is read once the socket has written the one before", async () => {
    // 16 MB in pages of ~2 MB, more than the socket's buffers take while the reader waits: a page
    // is still being written when the reading could go on, and the next page's bytes would be
    // encoded where this one's are (`JsonPiece`).
    await addPublications(4000, 2000, "slow-")
    try {
      const slowly = await new Promise<Received>((resolve, reject) => {
        const req = request(`${host.url}/api/v1/catalog`, { agent: false }, (res) => {
          const chunks: Array<Buffer> = []
          // Nothing read for a while (the socket's buffers fill), then a little at a time.
          res.pause()
          setTimeout(() => res.resume(), 300)
          res.on("data", (chunk: Buffer) => {
            chunks.push(chunk)
            res.pause()
            setTimeout(() => res.resume(), 1)
          })
          res.on("close", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), complete: res.complete }))
        })
        req.on("error", reject)
        req.end()
      })
      expect([slowly.status, slowly.complete]).toEqual([200, true])
      const expected = await collected()
      expect(slowly.body.length).toBe(expected.length)
      expect(slowly.body === expected, "the bytes sent are the catalog's").toBe(true)
    } finally {
      await m.sql("DELETE FROM publications WHERE id LIKE 'slow-%'")
    }
  })

  it("answers a database failure before the first byte in the envelope", async () => {
    const answer = await withoutPublications(() => get("/api/v1/catalog"))
    expect([answer.status, answer.complete]).toEqual([503, true])
    expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(answer.body)))
    expect(JSON.parse(answer.body).error.code).toBe("unavailable")
  })

  it("breaks the connection on a database failure after the first byte: never a short answer that looks complete", async () => {
    // A first page of publications far larger than the socket's buffers (500 × ~40 KB): the host
    // waits for the client to read it before it reads the next page, which then fails.
    await addPublications(600, 20_000, "large-")
    const answer = await get("/api/v1/catalog", async () => {
      await sleep(300)
      await m.sql("ALTER TABLE publications RENAME TO publications_away")
    }).finally(() => m.sql("ALTER TABLE publications_away RENAME TO publications"))
    expect([answer.status, answer.complete]).toEqual([200, false])
    expect(answer.body.length).toBeGreaterThan(1_000_000)
    expect(() => JSON.parse(answer.body)).toThrow()
    // The host goes on answering, the whole catalog again.
    const next = await get("/api/v1/catalog")
    expect([next.status, next.complete]).toEqual([200, true])
    expect(next.body).toBe(await collected())
  })

  it("holds nothing for a client that leaves mid-answer: then more readers at once than the pool has connections", async () => {
    const left = await new Promise<boolean>((resolve, reject) => {
      const req = request(`${host.url}/api/v1/catalog`, { agent: false }, (res) => {
        res.pause()
        setTimeout(() => {
          req.destroy()
          resolve(res.complete)
        }, 100)
      })
      req.on("error", () => {})
      req.on("close", () => {})
      req.end()
      req.on("timeout", reject)
    })
    expect(left).toBe(false)
    await m.sql("DELETE FROM publications WHERE id LIKE 'large-%'")
    // Every pooled connection is free again: more readers at once than the pool has connections.
    const answers = await Promise.all(Array.from({ length: 12 }, () => get("/api/v1/catalog")))
    expect(answers.map((answer) => [answer.status, answer.complete])).toEqual(answers.map(() => [200, true]))
  })
})
