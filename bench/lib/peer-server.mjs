// One peer of the host in the host-overhead benchmarks: the routes of bench/lib/headline-answers.mjs
// served by bare node:http, Fastify 5 or Hono 4 (on @hono/node-server). The answers are the same
// code for the three; what differs is only what each framework does around them: routing, its
// request and reply objects, writing the answer. No logging, no schemas, no plugins.
//
// Usage: node bench/lib/peer-server.mjs <bare|fastify|hono> <port> <host> <config-file>
//   <config-file>: JSON, see makeAnswers in bench/lib/headline-answers.mjs
//   environment BENCH_SERVER_SECRET: the host's server secret (the session answer only)
//   GET /__ready answers 200 once the database (if any) answers.

import http from "node:http"
import { makeAnswers, peerConfig, requestIdOf } from "./headline-answers.mjs"

const [framework, port, host, configFile] = process.argv.slice(2)
const { routes, close } = makeAnswers(peerConfig(configFile))

const failed = (error) => ({
  status: 500,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ error: { code: "internal_error", message: String(error?.message ?? error) } })
})

/** `answer`'s result (a value or a promise) handed to `send`; a failure answers 500. */
const respond = (result, send) => {
  if (typeof result?.then === "function") return result.then(send, (error) => send(failed(error)))
  return send(result)
}

/** node:http: a path table (exact paths, and one trailing `:param` segment), writeHead and end. */
const bare = () => {
  const exact = new Map()
  const prefixed = []
  for (const route of routes) {
    const colon = route.path.indexOf(":")
    if (colon === -1) exact.set(route.path, route)
    else prefixed.push({ prefix: route.path.slice(0, colon), param: route.path.slice(colon + 1), route })
  }
  const match = (url) => {
    const route = exact.get(url)
    if (route !== undefined) return { route, params: {} }
    for (const { prefix, param, route } of prefixed) {
      if (url.startsWith(prefix) && url.indexOf("/", prefix.length) === -1) return { route, params: { [param]: url.slice(prefix.length) } }
    }
    return undefined
  }
  const server = http.createServer((req, res) => {
    const send = (answer) => {
      res.writeHead(answer.status, answer.headers)
      res.end(answer.body)
    }
    const found = req.method === "GET" ? match(req.url ?? "/") : undefined
    if (found === undefined) {
      res.writeHead(404, { "content-length": "0" })
      return res.end()
    }
    let result
    try {
      result = found.route.answer({ params: found.params, cookie: req.headers.cookie, requestId: requestIdOf(req.headers["x-request-id"]) })
    } catch (error) {
      result = failed(error)
    }
    respond(result, send)
  })
  server.listen(Number(port), host)
  return () => new Promise((resolve) => (server.close(() => resolve()), server.closeAllConnections()))
}

/** The body as the answer made it: a string is already the JSON. */
const asIs = (body) => body

/**
 * Fastify 5: one route per path; the handler sets status and headers and returns the body (its
 * idiom). The reply's serializer is the identity, Fastify's way to send a payload serialized
 * already: without it Fastify appends `; charset=utf-8` to a JSON content-type the host sends
 * without one.
 */
const fastify = async () => {
  const { default: Fastify } = await import("fastify")
  const app = Fastify({ logger: false })
  for (const route of routes) {
    app.get(route.path, (request, reply) => {
      const send = (answer) => {
        reply.code(answer.status).headers(answer.headers).serializer(asIs)
        return answer.body
      }
      return respond(
        route.answer({ params: request.params, cookie: request.headers.cookie, requestId: requestIdOf(request.headers["x-request-id"]) }),
        send
      )
    })
  }
  await app.listen({ port: Number(port), host })
  return () => app.close()
}

/** Hono 4 on @hono/node-server: one route per path, the answer as c.body(body, status, headers). */
const hono = async () => {
  const [{ Hono }, { serve }] = await Promise.all([import("hono"), import("@hono/node-server")])
  const app = new Hono()
  for (const route of routes) {
    app.get(route.path, (c) => {
      const send = (answer) => c.body(answer.body, answer.status, answer.headers)
      return respond(route.answer({ params: c.req.param(), cookie: c.req.header("cookie"), requestId: requestIdOf(c.req.header("x-request-id")) }), send)
    })
  }
  const server = serve({ fetch: app.fetch, port: Number(port), hostname: host })
  return () => new Promise((resolve) => (server.close(() => resolve()), server.closeAllConnections?.()))
}

const servers = { bare, fastify, hono }
if (servers[framework] === undefined) throw new Error(`unknown framework "${framework}"; known: ${Object.keys(servers).join(", ")}`)
const stop = await servers[framework]()

process.on("SIGTERM", () => {
  const end = () => process.exit(0)
  Promise.race([Promise.all([stop(), close()]), new Promise((resolve) => setTimeout(resolve, 2_000))]).then(end, end)
})
