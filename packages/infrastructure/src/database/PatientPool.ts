import Pg from "pg"

/** SQLSTATE 53300 `too_many_connections`: the server's `max_connections`, or a role's or database's `CONNECTION LIMIT`, is reached. */
const tooManyConnections = "53300"

const isFull = (error: unknown): boolean => typeof error === "object" && error !== null && Reflect.get(error, "code") === tooManyConnections

/** The first wait after a refusal, doubled after each next one up to `maxRetryDelayMs` (with jitter). */
const firstRetryDelayMs = 20
const maxRetryDelayMs = 500

type ConnectCallback = (error: Error | undefined, client: Pg.PoolClient | undefined, release: (release?: unknown) => void) => void

/**
 * A node-postgres pool that waits when the server is full. A connection the server refuses with
 * `too_many_connections` (every slot of `max_connections` taken by other processes: several hosts
 * and workers on one server, as the README's scale-out runs them) is asked for again, after 20 ms
 * and then up to 500 ms apart, until the pool's `connectionTimeoutMillis` (5 s when it has none)
 * has passed since the first try; a statement waits as it waits for a busy pool's free connection,
 * instead of failing at once with 503. Any other failure to connect, and the last refusal once
 * the time is up, fail the caller as before.
 *
 * `pool.query` and `@effect/sql-pg`'s transactions both take their connection through `connect`.
 */
export class PatientPool extends Pg.Pool {
  /** How long a refused connection is asked for again: `slotWaitMillis`, else the connection timeout, else 5 s. */
  readonly #slotWaitMillis: number

  constructor(config: Pg.PoolConfig & { readonly slotWaitMillis?: number } = {}) {
    super(config)
    this.#slotWaitMillis = config.slotWaitMillis ?? (config.connectionTimeoutMillis || 5_000)
  }

  override connect(): Promise<Pg.PoolClient>
  override connect(callback: ConnectCallback): void
  override connect(callback?: ConnectCallback): Promise<Pg.PoolClient> | void {
    if (callback === undefined) {
      return new Promise((resolve, reject) => {
        this.connect((error, client) => (error === undefined || error === null) && client !== undefined ? resolve(client) : reject(error))
      })
    }
    const deadline = Date.now() + this.#slotWaitMillis
    let delay = firstRetryDelayMs
    const attempt = () =>
      super.connect((error, client, release) => {
        if (isFull(error) && !this.ending && Date.now() + delay < deadline) {
          setTimeout(attempt, delay / 2 + Math.random() * delay)
          delay = Math.min(maxRetryDelayMs, delay * 2)
          return
        }
        callback(error ?? undefined, client, release)
      })
    attempt()
  }
}
