// An external grader for the learning-grading benchmark: a node:http server in its own process
// that verifies every request's Standard Webhooks signature (the checker's secret, `webhook-id`,
// `webhook-timestamp`, `webhook-signature`; 401 when it does not verify) and answers an accepted
// verdict after the delay its path names: `/grade/<ms>` (e.g. /grade/50, /grade/5000).
//
//   node bench/lib/grader-server.mjs <port> <host>      (secret: BENCH_GRADER_SECRET)
//
// GET /__ready answers 200; GET /__stats the counts so far (answered per path, bad signatures,
// the most requests in flight at once per path).
import { createHmac, timingSafeEqual } from "node:crypto"
import http from "node:http"

const [port = "0", host = "127.0.0.1"] = process.argv.slice(2)
const secret = process.env.BENCH_GRADER_SECRET ?? ""
const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64")
const answer = JSON.stringify({ verdict: "accepted", score: 1, feedback: "ok" })

const stats = { answered: {}, badSignatures: 0, maxInFlight: {} }
const inFlight = {}

const verified = (headers, body) => {
  const id = String(headers["webhook-id"] ?? "")
  const timestamp = String(headers["webhook-timestamp"] ?? "")
  const expected = Buffer.from("v1," + createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64"))
  const given = String(headers["webhook-signature"] ?? "").split(" ").map((one) => Buffer.from(one))
  return id !== "" && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300 &&
    given.some((one) => one.length === expected.length && timingSafeEqual(one, expected))
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/__ready") return void res.writeHead(200).end("ready")
  if (req.method === "GET" && req.url === "/__stats") {
    return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats))
  }
  const chunks = []
  req.on("data", (chunk) => chunks.push(chunk))
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8")
    if (!verified(req.headers, body)) {
      stats.badSignatures++
      return void res.writeHead(401).end()
    }
    const path = req.url ?? "/"
    const delay = Number(path.match(/^\/grade\/(\d+)/)?.[1] ?? 0)
    inFlight[path] = (inFlight[path] ?? 0) + 1
    stats.maxInFlight[path] = Math.max(stats.maxInFlight[path] ?? 0, inFlight[path])
    setTimeout(() => {
      inFlight[path]--
      stats.answered[path] = (stats.answered[path] ?? 0) + 1
      if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end(answer)
    }, delay)
  })
})
server.keepAliveTimeout = 60_000
server.listen(Number(port), host)
process.on("SIGTERM", () => server.close(() => process.exit(0)))
