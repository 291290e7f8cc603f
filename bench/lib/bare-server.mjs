// The baseline: a bare node:http server answering every request with the same bytes.
//
// Usage: node bench/lib/bare-server.mjs <port> <host> <body-file> <content-type>
// Answers GET /__ready with 200 (for the runner's readiness wait) and everything else with
// 200, the given content-type, content-length and the body. No routing, no logging, no parsing.

import { readFileSync } from "node:fs"
import http from "node:http"

const [port, host, bodyFile, contentType] = process.argv.slice(2)
const body = readFileSync(bodyFile)
const headers = { "content-type": contentType, "content-length": String(body.length) }

const server = http.createServer((req, res) => {
  if (req.url === "/__ready") {
    res.writeHead(200)
    res.end()
    return
  }
  res.writeHead(200, headers)
  res.end(body)
})

server.listen(Number(port), host)
process.on("SIGTERM", () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
})
