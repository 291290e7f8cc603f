import { catalog, grantableScopes } from "@birzha/domain"
import { Option } from "effect"
import { Agent, request } from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import {
  badPathParameters,
  contentTypes,
  inputsOf,
  makeRandom,
  type Mutation,
  mutateValue,
  mutationWeights,
  type OperationInputs,
  type Random,
  rawBodies,
  serialize,
  uuidFrom
} from "./fuzzInputs.js"
import { startTestService, type TestService } from "./testService.js"

/**
 * The fuzz suite, generated from the catalog: every operation, over real HTTP against the real
 * service on Postgres, with inputs derived from its own declared schemas, valid-ish and then broken
 * (wrong types, missing and extra fields, bounds ±1, long strings, control, bidi and zero-width
 * characters, prototype keys, deep nesting, bad path parameters, other bodies and content types),
 * anonymous, with the session cookie (with and without Origin) and with a bearer key. An operation
 * added to the catalog is fuzzed here without any code of its own.
 *
 * Every answer must be below 500, the envelope (JSON with error.code and error.message) or the
 * operation's declared success, with no stack or SQL; a change made with the cookie but without
 * Origin never succeeds; requests that were all refused changed no row of the database; and no
 * answer took far longer than the run's typical one (`slowAnswer`: a pathological input, a regex, a
 * loop, a plan).
 *
 * A fixed seed (BIRZHA_FUZZ_SEED to change it) and a budget: at least 2,000 requests however long
 * they take (some seven per operation, each caller's valid-ish one among them), then up to 15,000
 * while 45 s of sending last (the count reached is logged; a loaded machine sends fewer).
 * BIRZHA_FUZZ_LONG=1 runs at least 15,000, up to 200,000 or 30 minutes.
 */

const long = process.env["BIRZHA_FUZZ_LONG"] === "1"
const seed = Number(process.env["BIRZHA_FUZZ_SEED"] ?? "20261124")
const targetRequests = long ? 200_000 : 15_000
/** Sent whatever the time: a count the assertions can rely on however busy the machine is. */
const minimumRequests = long ? 15_000 : 2_000
const budgetMs = long ? 30 * 60_000 : 45_000
/** Requests sent at once; the database is compared after each such round. */
const roundSize = 16
/**
 * When an answer counts as pathologically slow, waiting for its round's other 15 included: over
 * 5 s and over 50 times the run's median answer (tens of milliseconds on a quiet machine; the
 * slowest are logged). The median follows the machine's speed, so a busy machine, which slows every
 * answer, does not fail the run, while one input that holds the service for seconds still does.
 */
const slowAnswerFloorMs = 5_000
const slowAnswer = (ms: number, medianMs: number) => ms > slowAnswerFloorMs && ms > 50 * medianMs

/** The median of `values` (0 for none). */
const median = (values: ReadonlyArray<number>) => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

type Caller = "anonymous" | "session" | "sessionWithoutOrigin" | "key"
const callers: ReadonlyArray<Caller> = ["anonymous", "session", "sessionWithoutOrigin", "key"]

interface Planned {
  readonly inputs: OperationInputs
  readonly caller: Caller
  readonly mutation: Mutation
  readonly method: string
  readonly target: string
  readonly headers: Record<string, string>
  readonly body?: string
}

interface Outcome {
  readonly planned: Planned
  readonly status: number
  readonly contentType: string
  readonly text: string
  readonly failure?: string
}

let service: TestService
let owner: SignedIn
let keySecret: string
let forwarded = 0

const grantModeration = (who: SignedIn) => service.db.query("INSERT INTO moderators (email, source) VALUES ($1, 'cli') ON CONFLICT DO NOTHING", [who.email])

/** A signed-in owner who moderates, and a key of theirs holding every grantable scope. */
const newIdentities = async () => {
  owner = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
  await grantModeration(owner)
  const response = await fetch(`${service.host.url}/api/v1/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: service.origin, cookie: owner.cookie },
    body: JSON.stringify({ requestUuid: crypto.randomUUID(), name: "fuzz", scopes: grantableScopes, httpEnabled: true, mcpEnabled: true })
  })
  if (response.status !== 200) throw new Error(`key creation answered ${response.status}: ${await response.text()}`)
  keySecret = ((await response.json()) as { secret: string }).secret
}

/**
 * Every committed row write, logged by a trigger on each table of the test database (installed
 * after the migrations): the newest entry is the fingerprint, and what a round wrote is the entries
 * after the one before it. Refreshing `api_keys.last_used_at` is the key's bookkeeping, not data.
 */
/**
 * Tables a refusal writes on purpose (spec, Limits): a failed sign-in attempt is counted per
 * address, and a wrong code per challenge, so that guessing stops.
 */
const refusalCounters = new Set(["rate_limit_hits", "sign_in_challenges"])

const recordWrites = async () => {
  const { rows } = await service.db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
  )
  await service.db.query(`
    CREATE TABLE fuzz_writes (id bigserial PRIMARY KEY, table_name text NOT NULL);
    CREATE FUNCTION fuzz_record_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' AND (to_jsonb(NEW) - 'last_used_at') = (to_jsonb(OLD) - 'last_used_at') THEN RETURN NULL; END IF;
      INSERT INTO fuzz_writes (table_name) VALUES (TG_TABLE_NAME);
      RETURN NULL;
    END $$;`)
  for (const { name } of rows.filter((row) => !refusalCounters.has(row.name))) {
    await service.db.query(`CREATE TRIGGER fuzz_record_write AFTER INSERT OR UPDATE OR DELETE ON "${name}" FOR EACH ROW EXECUTE FUNCTION fuzz_record_write()`)
  }
}
const lastWrite = async () => Number((await service.db.query<{ id: string | null }>("SELECT max(id) AS id FROM fuzz_writes")).rows[0]?.id ?? 0)
const tablesWrittenAfter = async (id: number) =>
  (await service.db.query<{ name: string }>("SELECT DISTINCT table_name AS name FROM fuzz_writes WHERE id > $1 ORDER BY 1", [id])).rows.map((row) => row.name)

beforeAll(async () => {
  service = await startTestService("fuzz", { trustProxy: true })
  await recordWrites()
  await newIdentities()
})
afterAll(async () => {
  agent.destroy()
  await service?.close()
})

// ---- planning one request -----------------------------------------------------------------

const uuidPattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
/** UUIDs the service answered with (records that exist), so path parameters and fields reach real rows. */
const pool: Array<string> = []

const remember = (text: string) => {
  for (const uuid of text.match(uuidPattern) ?? []) {
    if (pool.length >= 400) pool.shift()
    pool.push(uuid)
  }
}

/** Valid-ish values aimed at the database: UUIDs of existing rows or fresh ones, small revisions. */
const aimed = (value: unknown, random: Random): unknown => {
  if (typeof value === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
    const roll = random.next()
    return roll < 0.4 && pool.length > 0 ? random.pick(pool) : roll < 0.8 ? uuidFrom(random) : value
  }
  if (typeof value === "number" && Number.isInteger(value) && random.next() < 0.4) return 1 + random.int(3)
  if (Array.isArray(value)) return value.map((item) => aimed(item, random))
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, aimed(v, random)]))
  return value
}

const queryOf = (value: unknown): string => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return ""
  const params = new URLSearchParams()
  for (const [name, item] of Object.entries(value)) {
    for (const one of Array.isArray(item) ? item : [item]) params.append(name, typeof one === "string" ? one : serialize(one) ?? "")
  }
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

const hostileQuery = (random: Random, names: ReadonlyArray<string>) => {
  const name = random.pick([...names, "x", "__proto__", "constructor", "q", "limit", "cursor", "types"])
  const value = random.pick(["\u0000", "бот", "a".repeat(5_000), "-1", "1e309", "%FF", "\u202e", "[]", "{}", "true", "", "0x10"])
  const repeated = random.next() < 0.3 ? `&${encodeURIComponent(name)}=${encodeURIComponent(value)}` : ""
  return `${encodeURIComponent(name)}=${encodeURIComponent(value)}${repeated}`
}

const { none: _, ...brokenWeights } = mutationWeights

const valueMutations = new Set<Mutation>(["wrongType", "dropField", "extraField", "prototypeKeys", "boundary", "longString", "hostileCharacters", "deepNesting", "wholeBody"])

const plan = (inputs: OperationInputs, caller: Caller, requested: Mutation, random: Random): Planned => {
  const { entry } = inputs
  const hasPayload = Option.isSome(entry.schemas.payload)
  let mutation = requested
  // Path parameters: the sample's, or a UUID the service gave out; one broken for `pathParameter`.
  const names = [...entry.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? "")
  if (mutation === "pathParameter" && names.length === 0) mutation = "queryParameters"
  const pathSample = inputs.paths.length > 0 ? random.pick(inputs.paths) : {}
  const broken = mutation === "pathParameter" ? random.pick(names) : undefined
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === broken) return badPathParameters(random)
    const value = pool.length > 0 && random.next() < 0.5 ? random.pick(pool) : pathSample[name] ?? uuidFrom(random)
    return encodeURIComponent(value)
  })
  // The input the mutation works on: the body when the operation takes one, else the query.
  const samples = hasPayload ? inputs.payloads : inputs.urlParams
  let value = aimed(samples.length > 0 ? structuredClone(random.pick(samples)) : {}, random)
  if (valueMutations.has(mutation)) {
    const mutated = mutateValue(mutation, value, inputs.bounds, random) ?? mutateValue("hostileCharacters", value, inputs.bounds, random)
    if (mutated !== undefined) value = mutated
  }
  const headers: Record<string, string> = {
    "x-forwarded-for": `198.${18 + ((forwarded >> 16) & 1)}.${(forwarded >> 8) & 255}.${forwarded & 255}`
  }
  forwarded++
  if (caller === "anonymous" && random.next() < 0.8) headers["origin"] = service.origin
  if (caller === "session") Object.assign(headers, { cookie: owner.cookie, origin: service.origin })
  if (caller === "sessionWithoutOrigin") headers["cookie"] = owner.cookie
  if (caller === "key") headers["authorization"] = `Bearer ${keySecret}`
  let query = hasPayload ? "" : queryOf(value)
  if (mutation === "queryParameters") {
    const known = Object.keys(typeof value === "object" && value !== null ? value : {})
    query += (query === "" ? "?" : "&") + hostileQuery(random, known)
  }
  let body: string | undefined
  if (hasPayload) {
    body = mutation === "rawBodyText" ? rawBodies(serialize(value) ?? "null", random) : serialize(value) ?? "null"
    headers["content-type"] = "application/json"
  } else if (mutation === "unexpectedBody") {
    body = serialize(value) ?? "{}"
    headers["content-type"] = random.pick(["application/json", "text/plain"])
  }
  if (mutation === "contentType" && body !== undefined) {
    const type = random.pick(contentTypes)
    if (type === undefined) delete headers["content-type"]
    else headers["content-type"] = type
  }
  return { inputs, caller, mutation, method: entry.method, target: `${path}${query}`, headers, ...(body === undefined ? {} : { body }) }
}

// ---- sending ------------------------------------------------------------------------------

/** What `fetch` refuses to send: raw non-ASCII in the request line, a broken header. */
const sendRaw = (planned: Planned, random: Random): Promise<Omit<Outcome, "planned">> =>
  new Promise((resolve) => {
    const url = new URL(service.host.url)
    const headerLines = Object.entries(planned.headers).map(([k, v]) => `${k}: ${v}`)
    const body = typeof planned.body === "string" ? planned.body : ""
    const line = random.pick([
      `${planned.method} ${planned.target}${planned.target.includes("?") ? "&" : "?"}q=бот\u0000 HTTP/1.1`,
      `${planned.method} ${planned.target}/бот HTTP/1.1`,
      `${planned.method} ${planned.target} HTTP/1.1\r\nX-Bad: a\u0000b`,
      `${planned.method} ${planned.target} HTTP/1.1\r\nBroken Header Line`,
      `${planned.method} ${planned.target} HTTP/9.9`
    ])
    const text = `${line}\r\nHost: localhost\r\n${headerLines.join("\r\n")}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
    let received = Buffer.alloc(0)
    const socket = connect(Number(url.port), url.hostname, () => socket.end(text))
    const giveUp = setTimeout(() => socket.destroy(), 20_000)
    socket.on("data", (chunk: Buffer) => (received = Buffer.concat([received, chunk])))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(giveUp)
      const all = received.toString("utf8")
      const at = all.indexOf("\r\n\r\n")
      const head = at < 0 ? all : all.slice(0, at)
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)
      resolve({
        status,
        contentType: /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? "",
        text: at < 0 ? "" : all.slice(at + 4),
        ...(status === 0 ? { failure: "no answer on the raw socket" } : {})
      })
    })
  })

/** Kept-alive connections, as a client library would; node:http also sends a body with GET. */
const agent = new Agent({ keepAlive: true, maxSockets: roundSize })

const send = (planned: Planned, random: Random): Promise<Outcome> => {
  if (planned.mutation === "rawSocket") return sendRaw(planned, random).then((answer) => ({ planned, ...answer }))
  return new Promise((resolve) => {
    const body = planned.body === undefined ? undefined : Buffer.from(planned.body)
    const headers = body === undefined ? planned.headers : { ...planned.headers, "content-length": String(body.length) }
    const req = request(`${service.host.url}${planned.target}`, { method: planned.method, headers, agent, timeout: 20_000 }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () =>
        resolve({ planned, status: res.statusCode ?? 0, contentType: res.headers["content-type"] ?? "", text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", (error) => resolve({ planned, status: 0, contentType: "", text: "", failure: `answer cut: ${String(error)}` }))
    })
    req.on("timeout", () => req.destroy(new Error("no answer within 20 s")))
    req.on("error", (error) => resolve({ planned, status: 0, contentType: "", text: "", failure: `no answer: ${String(error)}` }))
    req.end(body)
  })
}

// ---- judging ------------------------------------------------------------------------------

/** What must never reach a client: a stack frame, a file of the source, SQL or the driver's words. */
const leak = /\n\s+at |\bat .+\(.+:\d+:\d+\)|node_modules|\.ts:\d+|SqlError|PostgresError|syntax error at or near|violates .+ constraint|duplicate key value|relation "|invalid input syntax for|ECONNREFUSED|\bSELECT\b[\s\S]+\bFROM\b|\bINSERT INTO\b|\bDELETE FROM\b/

const problemsOf = (outcome: Outcome): ReadonlyArray<string> => {
  const { planned, status, contentType, text } = outcome
  const { entry } = planned.inputs
  if (outcome.failure !== undefined) return [outcome.failure]
  const problems: Array<string> = []
  if (status >= 500) problems.push(`answered ${status}`)
  if (status >= 400) {
    if (!contentType.includes("application/json")) problems.push(`error answer in ${contentType || "no content type"}`)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      problems.push("error answer is not JSON")
    }
    const error: unknown = typeof body === "object" && body !== null ? Reflect.get(body, "error") : undefined
    if (typeof error !== "object" || error === null || typeof Reflect.get(error, "code") !== "string" || typeof Reflect.get(error, "message") !== "string") {
      problems.push("error answer is not the envelope")
    }
    if (leak.test(text)) problems.push("error answer shows a stack or SQL")
  } else {
    if (status !== entry.successStatus) problems.push(`success ${status}, declared ${entry.successStatus}`)
    if (planned.caller === "sessionWithoutOrigin" && entry.method !== "GET") problems.push("a change with the cookie and no Origin succeeded")
    if (status === 204) {
      if (text !== "") problems.push("204 with a body")
    } else {
      let body: unknown
      try {
        body = JSON.parse(text)
        if (!planned.inputs.success(body)) problems.push("success answer does not match the declared schema")
      } catch {
        problems.push("success answer is not JSON")
      }
    }
  }
  return problems
}

// ---- the run ------------------------------------------------------------------------------

describe("the catalog fuzzed over HTTP", () => {
  it(`answers ${targetRequests} schema-derived, mutated requests over every operation with no 5xx, only envelopes or declared successes, and no write by a refused request`, async () => {
    const random = makeRandom(seed)
    const operations = catalog.map((entry, i) => inputsOf(entry, seed + i * 10, 24))
    const failures: Array<string> = []
    const statuses = new Map<number, number>()
    const perOperation = new Map<string, { requests: number; valid: number; succeeded: number }>(catalog.map((entry) => [entry.id, { requests: 0, valid: 0, succeeded: 0 }]))
    const writesByRefused = new Map<string, number>()
    /** The slowest answer of each operation (a round's requests are sent at once, so this includes waiting for the others). */
    const slowest = new Map<string, number>()
    /** Every answer's time, and the answers over 5 s, judged against the run's median at its end (`slowAnswer`). */
    const answerMs: Array<number> = []
    const overFiveSeconds: Array<{ readonly what: string; readonly ms: number }> = []
    let fingerprintMs = 0
    let checkedRounds = 0
    let refreshes = 0
    let sent = 0
    let visit = 0
    const started = Date.now()
    const cpuStarted = process.cpuUsage()
    let before = await lastWrite()

    while (sent < minimumRequests || (sent < targetRequests && Date.now() - started < budgetMs)) {
      const round: Array<Planned> = []
      // A round is valid-ish requests (which often succeed) or broken ones (which should all be
      // refused, so the database is compared after it); the first passes over the catalog send each
      // caller's valid-ish request.
      const valid = random.next() < mutationWeights.none / 100
      for (let i = 0; i < roundSize; i++, visit++) {
        const inputs = operations[visit % operations.length]!
        const pass = Math.floor(visit / operations.length)
        const caller = pass < callers.length ? callers[pass]! : random.pick(callers)
        const mutation = pass < callers.length || valid ? "none" : random.weighted(brokenWeights)
        round.push(plan(inputs, caller, mutation, random))
      }
      const outcomes = await Promise.all(round.map(async (planned) => {
        const sentAt = performance.now()
        const outcome = await send(planned, random)
        return { ...outcome, ms: performance.now() - sentAt }
      }))
      sent += outcomes.length
      /** Whether every request of the round was refused or a read: then nothing may have been written. */
      let refusedOnly = true
      let credentialsLost = false
      for (const outcome of outcomes) {
        const { entry } = outcome.planned.inputs
        const counts = perOperation.get(entry.id)!
        counts.requests++
        if (outcome.ms > (slowest.get(entry.id) ?? 0)) slowest.set(entry.id, outcome.ms)
        answerMs.push(outcome.ms)
        if (outcome.ms > slowAnswerFloorMs) overFiveSeconds.push({ what: `${entry.id} as ${outcome.planned.caller}, ${outcome.planned.mutation}`, ms: outcome.ms })
        if (outcome.planned.mutation === "none") counts.valid++
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1)
        if (outcome.status < 400) {
          counts.succeeded++
          // A read may succeed and still must not write.
          if (entry.method !== "GET") refusedOnly = false
          remember(outcome.text)
        }
        if (outcome.status === 401 && (outcome.planned.caller === "session" || outcome.planned.caller === "key")) credentialsLost = true
        for (const problem of problemsOf(outcome)) {
          if (failures.length < 40) {
            failures.push(`${entry.id} ${outcome.planned.method} ${outcome.planned.target.slice(0, 120)} as ${outcome.planned.caller}, ${outcome.planned.mutation}: ${problem} (${outcome.status} ${outcome.text.slice(0, 200)})`)
          }
        }
      }
      const fingerprintStarted = performance.now()
      const after = await lastWrite()
      fingerprintMs += performance.now() - fingerprintStarted
      if (refusedOnly) {
        checkedRounds++
        const changed = after === before ? [] : await tablesWrittenAfter(before)
        for (const table of changed) writesByRefused.set(table, (writesByRefused.get(table) ?? 0) + 1)
        if (changed.length > 0 && failures.length < 40) {
          failures.push(`a round of refusals and reads changed ${changed.join(", ")}: ${outcomes.map((o) => `${o.planned.inputs.entry.id}/${o.planned.caller}/${o.planned.mutation}=${o.status}`).join(" ")}`)
        }
      }
      before = after
      // An operation may end the session or the key it ran with (logout, reissue, account deletion): new ones.
      if (credentialsLost) {
        refreshes++
        await newIdentities()
        before = await lastWrite()
      }
    }

    const medianMs = median(answerMs)
    for (const { what, ms } of overFiveSeconds.filter(({ ms }) => slowAnswer(ms, medianMs)).slice(0, 40 - failures.length)) {
      failures.push(`${what}: answered in ${ms.toFixed(0)} ms, over 50 times the run's median answer (${medianMs.toFixed(1)} ms)`)
    }
    const elapsed = (Date.now() - started) / 1000
    const cpu = process.cpuUsage(cpuStarted)
    const histogram = [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, n]) => `${status}:${n}`).join(" ")
    console.log(
      `fuzz: seed ${seed}, ${sent} requests over ${catalog.length} operations in ${elapsed.toFixed(1)} s (${(sent / elapsed).toFixed(0)}/s); ` +
        `statuses ${histogram}; ${checkedRounds} rounds of refusals and reads compared with the database (${fingerprintMs.toFixed(0)} ms); ` +
        `${refreshes} credential refreshes; this process's CPU ${((cpu.user + cpu.system) / 1000 / sent).toFixed(2)} ms a request (client and service); ` +
        `median answer ${medianMs.toFixed(1)} ms, slowest ${[...slowest.entries()].sort(([, a], [, b]) => b - a).slice(0, 3).map(([id, ms]) => `${id} ${ms.toFixed(0)} ms`).join(", ")}`
    )
    expect(failures).toEqual([])
    expect([...writesByRefused.keys()]).toEqual([])
    // Every operation was reached, with valid-ish input, by every caller.
    for (const [id, counts] of perOperation) {
      expect(counts.valid, id).toBeGreaterThanOrEqual(callers.length)
      expect(counts.requests, id).toBeGreaterThanOrEqual(Math.floor(sent / catalog.length) - 1)
    }
    // Enough rounds refused whole for the comparison with the database to mean something (the
    // requests are at least `minimumRequests` by the loop's own condition).
    expect(checkedRounds).toBeGreaterThan(20)
  }, long ? budgetMs + 600_000 : undefined)
})
