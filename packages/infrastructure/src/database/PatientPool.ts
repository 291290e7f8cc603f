import Pg from "pg"

/** SQLSTATE 53300 `too_many_connections`: the server's `max_connections`, or a role's or database's `CONNECTION LIMIT`, is reached. */
const tooManyConnections = "53300"

const refusedAsFull = (error: unknown): boolean =>
  typeof error === "object" && error !== null && Reflect.get(error, "code") === tooManyConnections

/** The first wait after a refusal, doubled after each next one up to `maxRetryDelayMs` (with jitter). */
const firstRetryDelayMs = 20
const maxRetryDelayMs = 500

/** An open connection a caller holds (`#idleSince`). */
const inUse = -1
/** How often an idle timeout the sweep looks for connections idle for that long. */
const sweepsPerTimeout = 4

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
 *
 * It also keeps `idleTimeoutMillis` and `connectionTimeoutMillis` without node-postgres's two timers
 * per statement (`#sweep`, `#checkOut`; docs/decisions.md, "The pool arms no timer per statement").
 */
export class PatientPool extends Pg.Pool {
  readonly #slotWaitMillis: number
  #retrying = 0
  /** When each open connection went idle; `inUse` while a caller holds it (see `#sweep`). */
  readonly #idleSince = new Map<Pg.PoolClient, number>()
  readonly #idleMillis: number
  #sweeping: ReturnType<typeof setInterval> | undefined

  constructor(config: Pg.PoolConfig & { readonly slotWaitMillis?: number } = {}) {
    // The idle timeout is this pool's own sweep (below); node-postgres's would arm a timer on every
    // release and clear it on the next checkout, two timer-list operations per statement.
    super({ ...config, idleTimeoutMillis: 0 })
    this.#slotWaitMillis = config.slotWaitMillis ?? (config.connectionTimeoutMillis || 5_000)
    // node-postgres's default when the setting is absent; 0 keeps idle connections open.
    this.#idleMillis = config.idleTimeoutMillis ?? 10_000
    if (this.#idleMillis > 0) {
      this.on("acquire", (client) => void this.#idleSince.set(client, inUse))
      this.on("release", (error, client) => void (error ? this.#idleSince.delete(client) : this.#idleSince.set(client, Date.now())))
      this.on("remove", (client) => void this.#idleSince.delete(client))
      this.#sweeping = setInterval(() => this.#sweep(), Math.max(1, Math.floor(this.#idleMillis / sweepsPerTimeout)))
      this.#sweeping.unref()
    }
  }

  /**
   * Closes as many connections as have been idle for `idleTimeoutMillis` (never below the pool's
   * `min`), so a connection is closed between one and 1¼ idle timeouts after its last use. Only
   * the pool's public calls: a connection is taken from the idle ones (which one is the pool's
   * choice) and released destroyed; when that was not one of the long-idle connections, one of
   * those takes over its idle time, so each closed connection counts one long-idle connection off.
   */
  #sweep(): void {
    const due = Date.now() - this.#idleMillis
    // Idle times as they are now: a connection taken below is in use by the time it is given.
    const idle = new Map<Pg.PoolClient, number>()
    const longIdle = new Set<Pg.PoolClient>()
    for (const [client, since] of this.#idleSince) {
      if (since === inUse) continue
      idle.set(client, since)
      if (since <= due) longIdle.add(client)
    }
    for (let closing = Math.min(longIdle.size, this.totalCount - (this.options.min ?? 0), this.idleCount); closing > 0; closing--) {
      this.#checkOut((error, client) => {
        if (error || client === undefined) return
        if (!longIdle.delete(client)) {
          const [standIn] = longIdle
          if (standIn !== undefined) {
            longIdle.delete(standIn)
            if (this.#idleSince.get(standIn) !== inUse) this.#idleSince.set(standIn, idle.get(client) ?? Date.now())
          }
        }
        client.release(true)
      })
    }
  }

  /** Ends the pool as `pg` does, and stops the idle sweep first. */
  override end(): Promise<void>
  /** Ends the pool as `pg` does, and stops the idle sweep first; calls `callback` when it has. */
  override end(callback: () => void): void
  override end(callback?: () => void): Promise<void> | void {
    clearInterval(this.#sweeping)
    return callback === undefined ? super.end() : super.end(callback)
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
      this.#checkOut((error, client, release) => {
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

  /**
   * node-postgres's `connect`, without its connection timer where an idle connection is there for
   * every caller already waiting: the pool gives this caller one on its next tick (in the order
   * callers came), so the timer it would arm and clear for every checkout bounds nothing. The pool
   * reads the setting while `connect` runs, so it is left unset for that call alone. Should the
   * idle connection close within that tick, the caller gets a new connection (whose connecting the
   * timeout bounds) or, when the pool is full, the next one released.
   */
  #checkOut(callback: (error: Error | undefined, client: Pg.PoolClient | undefined, release: (release?: unknown) => void) => void): void {
    const timeout = this.options.connectionTimeoutMillis
    if (this.idleCount > this.waitingCount) this.options.connectionTimeoutMillis = 0
    try {
      super.connect(callback)
    } finally {
      this.options.connectionTimeoutMillis = timeout
    }
  }
}
