import Pg from "pg"
import { recordStatement } from "./StatementMetrics.js"

/** A connection keeps at most this many statements prepared; the rest run unnamed, as before. */
export const maxPreparedPerConnection = 200

/**
 * Statements carrying this comment always run unnamed, so Postgres plans them with their values:
 * searches, where a generic plan made without the terms reads and sorts every matching row.
 */
export const perCallPlan = "/* birzha:per-call-plan */"

/** A statement is prepared from its second run on a connection, so one-off texts take no slot. */
const runsBeforePreparing = 2

/** Bounds the per-connection run counter of texts not prepared (yet). */
const maxCounted = 1_000

type Callback = (error: Error | null, result: unknown) => void

// "cached plan must not change result type": a migration changed the columns a prepared statement returns.
const isStalePlan = (error: unknown): boolean =>
  error instanceof Error && "code" in error && error.code === "0A000" && /cached plan/.test(error.message)

/**
 * A node-postgres client that runs parameterised statements as named (prepared) statements of
 * its connection, so Postgres parses and plans each one once per connection rather than on every
 * call. The cost was the planning: the session lookup (a three-table join) took 300–450 µs of
 * Postgres CPU per call unnamed and 80–130 µs prepared (`bench/README.md`, auth-session).
 *
 * Only `query(text, values[, callback])` with at least one value (how `@effect/sql-pg` runs
 * statements) is rewritten; parameterless statements (BEGIN, COMMIT, migrations of several
 * statements) and every other shape go to node-postgres unchanged. Postgres still chooses per
 * statement between a generic and a per-call plan (`plan_cache_mode` auto).
 */
export class PreparingClient extends Pg.Client {
  readonly #names = new Map<string, string>()
  readonly #runs = new Map<string, number>()
  #nextName = 0

  /** The name to run `text` under on this connection, or undefined to run it unnamed. */
  statementName(text: string): string | undefined {
    if (text.includes(perCallPlan)) return undefined
    const known = this.#names.get(text)
    if (known !== undefined) return known
    // Names retired after a stale plan count too: their statements stay on the server until the connection closes.
    if (this.#nextName >= maxPreparedPerConnection) return undefined
    const runs = (this.#runs.get(text) ?? 0) + 1
    if (runs < runsBeforePreparing) {
      if (this.#runs.size >= maxCounted) this.#runs.clear()
      this.#runs.set(text, runs)
      return undefined
    }
    this.#runs.delete(text)
    const name = `birzha_${this.#nextName++}`
    this.#names.set(text, name)
    return name
  }

  /** Forgets the statement of `text` on this connection; its next run prepares it under a new name. */
  retire(text: string): void {
    this.#names.delete(text)
  }
}

const unnamedQuery = Pg.Client.prototype.query

/** Runs `text` as the named statement `name`; a stale plan outside a transaction runs again unnamed. */
const runNamed = (client: PreparingClient, name: string, text: string, values: Array<unknown>, done: Callback): void => {
  // Read before the statement is sent: "I" is outside a transaction, where a failed statement changed nothing.
  const outsideTransaction = client.getTransactionStatus() === "I"
  Reflect.apply(unnamedQuery, client, [{ name, text, values }, (error: Error | null, result: unknown) => {
    if (error !== null && isStalePlan(error)) {
      client.retire(text)
      // Postgres refuses the stale plan before running anything, so running it again is safe
      // outside a transaction; inside one the transaction is already aborted and the error stands.
      if (outsideTransaction) return void Reflect.apply(unnamedQuery, client, [text, values, done])
    }
    done(error, result)
  }])
}

// `query(text, values, callback)` (how @effect/sql-pg and pg's pool call it) and `query(text, values)`.
function preparingQuery(this: PreparingClient, ...args: Array<unknown>): unknown {
  const [text, values, callback] = args
  // Every statement given a callback (all of @effect/sql-pg's and the pool's) is timed to its answer.
  const last = args.length - 1
  if (typeof args[last] === "function") {
    const started = performance.now()
    const done = args[last] as Callback
    args[last] = (error: Error | null, result: unknown) => {
      recordStatement(started)
      done(error, result)
    }
  }
  const callbackOk = args.length === 2 || (args.length === 3 && typeof callback === "function")
  if (!callbackOk || typeof text !== "string" || !Array.isArray(values) || values.length === 0) {
    return Reflect.apply(unnamedQuery, this, args)
  }
  const name = this.statementName(text)
  if (name === undefined) return Reflect.apply(unnamedQuery, this, args)
  if (args.length === 3) return void runNamed(this, name, text, values, args[2] as Callback)
  const started = performance.now()
  return new Promise((resolve, reject) =>
    runNamed(this, name, text, values, (error, result) => {
      recordStatement(started)
      return error === null ? resolve(result) : reject(error)
    })
  )
}

// pg's `query` has a dozen overloads that an override cannot restate usefully; the function above
// handles the text-and-values shapes and passes every other through untouched.
PreparingClient.prototype.query = preparingQuery as Pg.Client["query"]
