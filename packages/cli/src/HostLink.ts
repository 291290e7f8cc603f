import { DatabaseConfig, DatabaseLive, isProcessRunning } from "@birzha/infrastructure"
import { type CliApp, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Cause, Effect, Fiber, FiberRef, Layer, Option, Runtime } from "effect"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import { stripAnsi, textConsole } from "./CommandConsole.js"
import { type AdminFile, adminFile, isForwardable, runningHostIn, sendToHost, writeToProcess } from "./HostClient.js"

export { isForwardable }

/*
 * The CLI beside a running host (docs/decisions.md, "The CLI beside a running host"). PGlite is
 * one process's database: while `birzha serve` holds it, a command that needs the database runs
 * inside that process instead, the same command, parsed and run by the same code on the host's
 * database. The host listens for such commands on a loopback port named in
 * `BIRZHA_DATA_DIR/admin.json` (mode 0600) with a random token; whoever can read that file could
 * open the database directory anyway.
 */

type DatabaseServices = Layer.Layer.Success<typeof DatabaseLive>

/** On the host, while it runs a forwarded command: its own database. */
const hostDatabase = FiberRef.unsafeMake<Option.Option<Layer.Layer<DatabaseServices>>>(Option.none())

/**
 * The database a command uses: the configured one (`DatabaseLive`), or, when the command runs
 * inside `birzha serve` for the CLI, the host's open database.
 */
export const CommandDatabase: typeof DatabaseLive = Layer.unwrapEffect(
  Effect.map(FiberRef.get(hostDatabase), Option.getOrElse((): typeof DatabaseLive => DatabaseLive))
)

/** Where a command's exit code goes: the process's, or the forwarded command's answer. */
const exitCodeSink = FiberRef.unsafeMake<(code: number) => void>((code) => {
  process.exitCode = code
})

/** Ends the command with this exit code (once it returns). */
export const setExitCode = (code: number) => Effect.flatMap(FiberRef.get(exitCodeSink), (sink) => Effect.sync(() => sink(code)))

/** One line of a forwarded command's answer (NDJSON): output, then the exit code. */
type AnswerLine = { readonly out: string } | { readonly err: string } | { readonly exit: number }

const maxRequestBytes = 64 * 1024

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolveBody, reject) => {
    let size = 0
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxRequestBytes) {
        reject(new Error("too large"))
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on("end", () => resolveBody(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const sameToken = (given: string, token: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

const isArgs = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.length <= 100 && value.every((arg) => typeof arg === "string" && arg.length <= 10_000)

/**
 * Runs one command of the CLI (`run`, argv as `process.argv`) in this process: what it prints goes
 * to `write`, the exit code it would end with is the result (1 for a wrong argument or a failure,
 * whose cause is written as `birzha: <failed>: …`). The host runs forwarded commands so, and the
 * CLI's own tests run its commands so instead of starting Node for each.
 */
export const runCommandInProcess = <E>(
  run: (argv: ReadonlyArray<string>) => Effect.Effect<void, E, CliApp.CliApp.Environment>,
  args: ReadonlyArray<string>,
  write: (stream: "out" | "err", text: string) => void,
  failed = "the command failed"
): Effect.Effect<number> => {
  let exitCode = 0
  return run(["node", "birzha", ...args]).pipe(
    Effect.catchIf(ValidationError.isValidationError, () => Effect.sync(() => (exitCode = 1))),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.void : Effect.sync(() => {
        write("err", `birzha: ${failed}: ${Cause.pretty(cause)}\n`)
        exitCode = 1
      })
    ),
    Effect.provide(NodeContext.layer),
    Effect.withConsole(textConsole(write)),
    Effect.locally(exitCodeSink, (code) => {
      exitCode = code
    }),
    Effect.map(() => exitCode)
  )
}

/**
 * `birzha serve` on the embedded database: the loopback endpoint that runs the CLI's commands in
 * this process, on its database. `run` is the CLI (argv as `process.argv`); what the command prints
 * streams back line by line, then its exit code. A client that goes away interrupts the command.
 */
export const HostCommandsLive = <E>(run: (argv: ReadonlyArray<string>) => Effect.Effect<void, E, CliApp.CliApp.Environment>) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const { dataDir } = yield* DatabaseConfig
    const database = Layer.succeedContext(yield* Effect.context<DatabaseServices>())
    const runtime = yield* Effect.runtime<never>()
    const token = randomBytes(32).toString("base64url")

    const runCommand = (args: ReadonlyArray<string>, send: (line: AnswerLine) => void) =>
      runCommandInProcess(
        run,
        args,
        (stream, text) => send(stream === "out" ? { out: stripAnsi(text) } : { err: stripAnsi(text) }),
        "the command failed on the host"
      ).pipe(
        Effect.locally(hostDatabase, Option.some(database)),
        Effect.annotateLogs("cliCommand", args.slice(0, 2).join(" ")),
        Effect.flatMap((exit) => Effect.sync(() => send({ exit })))
      )

    const server: Server = createServer((req, res) => {
      const refuse = (status: number, message: string) => {
        res.writeHead(status, { "content-type": "text/plain; charset=utf-8" })
        res.end(message)
      }
      if (req.method !== "POST" || req.url !== "/commands") return refuse(404, "not found")
      if (!sameToken(req.headers.authorization ?? "", `Bearer ${token}`)) return refuse(401, "the token of admin.json is required")
      readBody(req).then((body) => {
        let args: unknown
        try {
          args = (JSON.parse(body) as { args?: unknown }).args
        } catch {
          return refuse(400, "expected {\"args\": [...]}")
        }
        if (!isArgs(args) || !isForwardable(args)) return refuse(400, "not a command the host runs")
        res.writeHead(200, { "content-type": "application/x-ndjson" })
        const fiber = Runtime.runFork(runtime)(
          runCommand(args, (line) => {
            if (!res.writableEnded) res.write(`${JSON.stringify(line)}\n`)
          })
        )
        fiber.addObserver(() => res.end())
        res.on("close", () => {
          if (!res.writableFinished) Runtime.runFork(runtime)(Fiber.interrupt(fiber))
        })
      }, () => refuse(413, "too large"))
    })

    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () => Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const file = adminFile(dataDir)
    const content: AdminFile = { url: `http://127.0.0.1:${port}`, token, pid: process.pid }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        // Written whole under another name, then renamed: a reader never sees half of it. The
        // temporary name is created afresh (`wx`: never an existing file or a link someone left
        // there, whose mode or target the token would otherwise take) with mode 0600.
        rmSync(`${file}.tmp`, { force: true })
        writeFileSync(`${file}.tmp`, JSON.stringify(content), { mode: 0o600, flag: "wx" })
        renameSync(`${file}.tmp`, file)
      }),
      () =>
        Effect.sync(() => {
          try {
            if ((JSON.parse(readFileSync(file, "utf8")) as AdminFile).token === token) unlinkSync(file)
          } catch {
            // Already gone.
          }
        })
    )
    yield* Effect.logInfo("CLI commands on the embedded database run in this process").pipe(Effect.annotateLogs("adminFile", file))
  }))

/**
 * Runs `local` unless a host on the embedded database is running and the command needs the
 * database: then the host runs it and this process relays the output and the exit code.
 */
export const besideRunningHost = <A, E, R>(args: ReadonlyArray<string>, local: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    if (!isForwardable(args)) return yield* local
    const settings = yield* Effect.option(DatabaseConfig)
    const host = Option.isSome(settings) && Option.isNone(settings.value.url) ? runningHostIn(settings.value.dataDir, isProcessRunning) : undefined
    if (host === undefined) return yield* local
    const exit = yield* Effect.promise(() => sendToHost(host, args, writeToProcess))
    if (exit === undefined) return yield* local
    process.exitCode = exit
  }).pipe(Effect.asVoid)
