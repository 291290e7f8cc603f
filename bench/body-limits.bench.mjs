// Hostile request bodies against the whole host (`cli serve` on Postgres): each shape the outside
// probe sent (an object of 500,000 members, an array of 1,000,000 items, 100,000 levels of
// nesting, a 9 MiB string; all under the 10 MiB limit) to an anonymous operation
// (auth.email.start) and an authenticated one (tasks.save with a bearer key), then four 500,000-member
// bodies at once, while a second client polls GET /api/healthz one request after another. Prints
// each answer's status and time and healthz's longest wait, against healthz's longest wait with
// no hostile client in the same run (the baseline). Also times one valid 2 MiB task save (two
// files as data URLs), which must still be accepted. The host's event loop is what the bodies
// must not hold: healthz answering within milliseconds is the target.
import { connect } from "node:net"
import { benchDatabase, signInOnHost } from "./lib/database.mjs"

export const name = "body-limits"
export const description = "hostile bodies under the limit: each answer's time and healthz's longest wait meanwhile, vs idle"

const ORIGIN = "http://localhost:8080"
const mebibyte = 1024 * 1024

/** One request over a raw socket: the status and the time until the whole answer was read. */
const exchange = (url, head, body) =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url)
    const started = performance.now()
    let received = Buffer.alloc(0)
    let done = false
    const socket = connect(Number(port), hostname, () => {
      socket.write(head)
      socket.write(body)
    })
    const finish = (error) => {
      const text = received.toString("latin1")
      const at = text.indexOf("\r\n\r\n")
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? -1)
      if (done || (error === undefined && (at < 0 || length < 0 || received.length - at - 4 < length))) return
      done = true
      socket.destroy()
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), ms: performance.now() - started, error })
    }
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk])
      finish()
    })
    socket.on("error", (error) => finish(error.code ?? error.message))
    socket.on("close", () => finish("closed"))
  })

const headOf = (path, headers, length) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n` +
  Object.entries(headers).map(([key, value]) => `${key}: ${value}\r\n`).join("") + "\r\n"

/** Polls healthz until stopped; the longest single wait. */
const pollHealth = (url) => {
  let stopped = false
  let longest = 0
  let count = 0
  const done = (async () => {
    while (!stopped) {
      const started = performance.now()
      const response = await fetch(`${url}/api/healthz`)
      await response.arrayBuffer()
      longest = Math.max(longest, performance.now() - started)
      count++
    }
  })()
  return async () => {
    stopped = true
    await done
    return { longest, count }
  }
}

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)
  const created = await fetch(`${host.url}/api/v1/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, cookie },
    body: JSON.stringify({ requestUuid: crypto.randomUUID(), name: "bench", scopes: ["tasks:write"], httpEnabled: true, mcpEnabled: false })
  })
  if (created.status !== 200) throw new Error(`keys.create answered ${created.status}: ${await created.text()}`)
  const { secret } = await created.json()

  const shapes = [
    ["500,000 members", Buffer.from(`{${Array.from({ length: 500_000 }, (_, i) => `"k${i}":${i}`).join(",")}}`)],
    ["1,000,000 items", Buffer.from(`[${"0,".repeat(999_999)}0]`)],
    ["100,000 levels", Buffer.from(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)],
    ["9 MiB string", Buffer.from(`{"email":"${"a".repeat(9 * mebibyte)}"}`)]
  ]
  const targets = [
    ["auth.email.start", "/api/v1/auth/email/start", { origin: ORIGIN }],
    ["tasks.save", "/api/v1/commands/tasks.save", { authorization: `Bearer ${secret}` }]
  ]

  // Baseline: healthz alone, as long as the hostile part takes roughly.
  let stop = pollHealth(host.url)
  await new Promise((wait) => setTimeout(wait, 3_000))
  const idle = await stop()

  const rows = []
  stop = pollHealth(host.url)
  for (const [operation, path, headers] of targets) {
    for (const [shape, body] of shapes) {
      const answer = await exchange(host.url, headOf(path, headers, body.length), body)
      rows.push({ operation, shape, status: answer.error ?? answer.status, ms: answer.ms.toFixed(1) })
    }
  }
  const [, path, headers] = targets[1]
  const parallel = await Promise.all(Array.from({ length: 4 }, () => exchange(host.url, headOf(path, headers, shapes[0][1].length), shapes[0][1])))
  rows.push({ operation: "tasks.save ×4", shape: "500,000 members", status: parallel.map((a) => a.error ?? a.status).join(" "), ms: Math.max(...parallel.map((a) => a.ms)).toFixed(1) })
  const attacked = await stop()

  const file = Buffer.alloc(768 * 1024, 7).toString("base64")
  const task = Buffer.from(JSON.stringify({
    requestUuid: crypto.randomUUID(),
    data: {
      title: "Перевести инструкцию", category: "Сайты", description: "Нужно перевести инструкцию по сборке станка, 12 страниц",
      budget: "до 5 000 ₽", deadline: "неделя",
      files: [1, 2].map((n) => ({ id: `f${n}`, name: `f${n}.png`, url: `data:image/png;base64,${file}`, size: 768 * 1024, mimeType: "image/png" }))
    }
  }))
  stop = pollHealth(host.url)
  const saves = []
  for (let i = 0; i < 3; i++) saves.push(await exchange(host.url, headOf(path, headers, task.length), Buffer.from(task.toString().replace(/"requestUuid":"[^"]+"/, `"requestUuid":"${crypto.randomUUID()}"`))))
  const saving = await stop()
  for (const saved of saves) rows.push({ operation: "tasks.save", shape: `valid, ${(task.length / mebibyte).toFixed(1)} MiB`, status: saved.error ?? saved.status, ms: saved.ms.toFixed(1) })

  log("")
  log("  operation          shape                 status        ms")
  for (const row of rows) log(`  ${row.operation.padEnd(18)} ${row.shape.padEnd(21)} ${String(row.status).padEnd(13)} ${row.ms.padStart(7)}`)
  log("")
  log(`  healthz longest wait: idle ${idle.longest.toFixed(1)} ms (${idle.count} polls), under the hostile bodies ${attacked.longest.toFixed(1)} ms (${attacked.count} polls)`)
  log(`  ratio (hostile/idle longest wait): ${(attacked.longest / idle.longest).toFixed(2)}`)
  log(`  healthz longest wait during the three valid 2 MiB saves: ${saving.longest.toFixed(1)} ms (${saving.count} polls)`)
}
