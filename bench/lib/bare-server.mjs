// The baseline: a bare node:http server answering every request with the same bytes.
//
// Usage: node bench/lib/bare-server.mjs <port> <host> <body-file> <headers-file>
// <headers-file> is a JSON array of raw header name/value pairs ([name, value, name, value, ...]),
// sent as they are (with content-length from the body when absent). Answers GET /__ready with 200
// (for the runner's readiness wait) and everything else with 200, those headers and the body.
// No routing, no logging, no parsing. Node adds Date and Connection/Keep-Alive itself, as it does
// for the host.

import { readFileSync } from "node:fs"
import http from "node:http"

const [port, host, bodyFile, headersFile] = process.argv.slice(2)
const body = readFileSync(bodyFile)
const pairs = JSON.parse(readFileSync(headersFile, "utf8"))
const headers = []
for (let i = 0; i < pairs.length; i += 2) headers.push([pairs[i], pairs[i + 1]])
if (!headers.some(([name]) => name.toLowerCase() === "content-length" || name.toLowerCase() === "transfer-encoding")) {
  headers.push(["content-length", String(body.length)])
}
const flat = headers.flat()

const server = http.createServer((req, res) => {
  if (req.url === "/__ready") {
    res.writeHead(200)
    res.end()
    return
  }
  res.writeHead(200, flat)
  res.end(body)
})

server.listen(Number(port), host)
process.on("SIGTERM", () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
})
