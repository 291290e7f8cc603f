// The skeleton of the bare learning baselines: a node:http server answering JSON, GET /__ready once
// the pool answers, 500 `internal_error` when a handler throws. Nothing else per request.
import http from "node:http"

/** One JSON answer with its length. */
export const send = (res, status, value) => {
  const body = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

/** Listens on `port` and `host`; `handle(url, res, req)` answers every request but /__ready. */
export const serveJson = ({ port, host, pool, handle }) => {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost")
    const answer = async () => {
      if (url.pathname === "/__ready") {
        await pool.query("SELECT 1")
        return send(res, 200, { ok: true })
      }
      return handle(url, res, req)
    }
    answer().catch((error) => send(res, 500, { error: { code: "internal_error", message: String(error) } }))
  })
  server.listen(Number(port), host)
  return server
}
