import Pg from "pg"

/** SQLSTATE 53300 `too_many_connections`: the server's `max_connections`, or a role's or database's `CONNECTION LIMIT`, is reached. */
const tooManyConnections = "53300"

const refusedAsFull = (error: unknown): boolean =>
  typeof error === "object" && error !== null && Reflect.get(error, "code") === tooManyConnections

/** The first wait after a refusal, doubled after each next one up to `maxRetryDelayMs` (with jitter). */
const firstRetryDelayMs = 20
const maxRetryDelayMs = 500

/**
 * A node-postgres pool that waits when the server is full. A connection the server refuses with
 * `too_many_connections` (every slot of its `max_connections` taken by other processes: hosts and
 * as many workers as one likes on one server, each holding up to ten connections) is asked for
 * again, after about 20 ms and then up to 500 ms apart, until `slotWaitMillis` (by default the
 * pool's `connectionTimeoutMillis`, 5 s when it has none) has passed since the first try: the
 * statement waits as it waits for a busy pool's free connection, instead of failing at once. The
 * last attempt may itself take up to the connection timeout. Any other failure to connect, the
 * last refusal once the time is up, and a refusal while the pool is ending fail the caller as before.
 *
 * `pool.query`, `@effect/sql-pg`'s statements and transactions all take their connection through
 * `connect`. A caller waiting between two attempts holds no place in the pool's queue:
 * `retrying` counts them (`waitingCount` does not).
 */
export class PatientPool extends Pg.Pool {
  readonly #slotWaitMillis: number
  #retrying = 0

  constructor(config: Pg.PoolConfig & { readonly slotWaitMillis?: number } = {}) {
    super(config)
    this.#slotWaitMillis = config.slotWaitMillis ?? (config.connectionTimeoutMillis || 5_000)
  }

  /** Callers waiting to ask the server again for a connection it refused as full. */
  get retrying(): number {
    return this.#retrying
  }

  override connect(): Promise<Pg.PoolClient>
  override connect(callback: (error: Error | undefined, client: Pg.PoolClient | undefined, release: (release?: unknown) => void) => void): void
  override connect(
    callback?: (error: Error | undefined, client: Pg.PoolClient | undefined, release: (release?: unknown) => void) => void
  ): Promise<Pg.PoolClient> | void {
    if (callback === undefined) {
      return new Promise((resolve, reject) => {
        this.connect((error, client) => (error === undefined || error === null) && client !== undefined ? resolve(client) : reject(error))
      })
    }
    const deadline = Date.now() + this.#slotWaitMillis
    let delay = firstRetryDelayMs
    const attempt = () =>
      super.connect((error, client, release) => {
        const left = deadline - Date.now()
        if (!refusedAsFull(error) || this.ending || left <= 0) return callback(error ?? undefined, client, release)
        // Never past the deadline: the last attempt is made when the time is up.
        const sleep = Math.min(left, delay / 2 + Math.random() * delay)
        delay = Math.min(maxRetryDelayMs, delay * 2)
        this.#retrying++
        setTimeout(() => {
          this.#retrying--
          // The pool ended meanwhile: the caller gets the refusal it was waiting out.
          if (this.ending) return callback(error ?? undefined, undefined, () => {})
          attempt()
        }, sleep)
      })
    attempt()
  }
}
