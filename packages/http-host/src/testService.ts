import type { LogLevel } from "effect"
import Pg from "pg"
import { freePort, patientConnections } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { type ConnectionLimits, defaultConnectionLimits } from "./ConnectionLimits.js"
import { type RunningHost, startService, untilReady } from "./testing.js"

// Test-only (not exported by the package, unlike testing.ts): it needs pg and the repository's test database helpers.
export interface TestService {
  readonly database: TestDatabase
  readonly host: RunningHost
  /** A connection to the service's database, for looking behind the API. */
  readonly db: Pg.Client
  /** `http://localhost:<port>`: the service's public origin (Origin header, links in mails and pages). */
  readonly origin: string
  /** A JSON request from the service's own origin as a caller (session cookie or bearer key); the answer's JSON parsed. */
  readonly call: <T = any>(method: string, path: string, who?: Caller, body?: unknown) => Promise<JsonAnswer<T>>
  readonly close: () => Promise<void>
}

/** Who calls: a session cookie (`__Host-birzha_session=...`), a bearer key, or neither (anonymous). */
export interface Caller {
  readonly cookie?: string
  readonly bearer?: string
}

export interface JsonAnswer<T> {
  readonly status: number
  readonly headers: Headers
  readonly body: T
}

/**
 * The connection limits of a test's service unless it passes its own: the defaults with patient
 * timeouts (`patientConnections`, testing/net.ts). A journey's first sign-in was reset when its
 * request client (the Playwright server in vitest's main process, busy transforming modules as four
 * files started at once) wrote its request more than the default 5 s after connecting.
 */
export const testConnectionLimits: ConnectionLimits = { ...defaultConnectionLimits, ...patientConnections }

/**
 * A test file's service: its own database, the service on a free port whose public origin is
 * `http://localhost:<port>` unless given (so a browser on that origin satisfies the Origin rule),
 * ready, and a database connection.
 */
export const startTestService = async (
  name: string,
  options: {
    readonly env?: Record<string, string>
    readonly trustProxy?: boolean
    readonly publicOrigin?: string
    readonly connections?: ConnectionLimits
    readonly metricsPort?: number
    /** The host's minimum log level: none unless asked. */
    readonly logLevel?: LogLevel.LogLevel
  } = {}
): Promise<TestService> => {
  const database = await createTestDatabase(name, { migrated: true })
  const port = await freePort()
  const origin = options.publicOrigin ?? `http://localhost:${port}`
  const host = await startService({
    env: { DATABASE_URL: database.url, ...options.env },
    port,
    publicOrigin: origin,
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    connections: options.connections ?? testConnectionLimits,
    ...(options.metricsPort === undefined ? {} : { metricsPort: options.metricsPort }),
    ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel })
  })
  await untilReady(host)
  const db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  const call = async <T = any>(method: string, path: string, who: Caller = {}, body?: unknown): Promise<JsonAnswer<T>> => {
    const response = await fetch(`${host.url}${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        origin,
        ...(who.cookie === undefined ? {} : { cookie: who.cookie }),
        ...(who.bearer === undefined ? {} : { authorization: `Bearer ${who.bearer}` })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, body: (text === "" ? undefined : JSON.parse(text)) as T }
  }
  return {
    database,
    host,
    db,
    origin,
    call,
    close: async () => {
      await db.end()
      await host.close()
      await database.drop()
    }
  }
}
