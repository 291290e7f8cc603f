import { readFileSync } from "node:fs"
import { request } from "node:http"
import { join, resolve } from "node:path"

/*
 * The client side of the CLI beside a running host (HostLink.ts has the host's side): whether a
 * command goes to the host that holds the embedded database, and sending it there. Plain Node, no
 * Effect: bin.ts forwards with it before loading the command itself (main.js), so `birzha mail
 * list` beside a running host starts as fast as Node does.
 */

/** The commands a host runs for the CLI: those that need the database. */
export const forwardedCommands: ReadonlySet<string> = new Set(["moderation", "operators", "mail", "accounts", "webhooks", "events", "demo"])

/** Help, the wizard and the version are answered by the CLI itself. */
const localFlags = new Set(["--help", "-h", "--wizard", "--version", "--completions"])

export const isForwardable = (args: ReadonlyArray<string>): boolean =>
  args.length > 0 && forwardedCommands.has(args[0]!) && !args.some((arg) => localFlags.has(arg))

/** What `birzha serve` on the embedded database writes to `BIRZHA_DATA_DIR/admin.json` (mode 0600). */
export interface AdminFile {
  readonly url: string
  readonly token: string
  readonly pid: number
}

export const adminFile = (dataDir: string): string => join(resolve(dataDir), "admin.json")

/**
 * The host that holds the embedded database in `dataDir`, as its admin.json names it (not this
 * process), when `alive` says its process runs. A host that has stopped without removing the file
 * refuses the connection, and the command then runs here.
 */
export const runningHostIn = (dataDir: string, alive: (pid: number) => boolean): AdminFile | undefined => {
  try {
    const found = JSON.parse(readFileSync(adminFile(dataDir), "utf8")) as AdminFile
    return typeof found.url === "string" && typeof found.token === "string" && typeof found.pid === "number" &&
        found.pid !== process.pid && alive(found.pid)
      ? found
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The embedded database's directory when the environment names no Postgres server: read as
 * `DatabaseConfig` (packages/infrastructure/src/database/DatabaseConfig.ts) reads `DATABASE_URL`
 * and `BIRZHA_DATA_DIR`; `undefined` when a server is named or a value is one that configuration
 * refuses (then the command itself says so). HostClient.test.ts holds the two readings together.
 */
export const embeddedDataDirOf = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  if ((env["DATABASE_URL"] ?? "").trim() !== "") return undefined
  const dataDir = env["BIRZHA_DATA_DIR"] ?? "./.birzha"
  return dataDir.trim().length > 0 ? dataDir : undefined
}

/**
 * Sends the command to the host and relays its answer through `write`: the host's exit code, or
 * `undefined` when the host could not be reached (it has just stopped; the command then runs here).
 */
export const sendToHost = (host: AdminFile, args: ReadonlyArray<string>, write: (stream: "out" | "err", text: string) => void): Promise<number | undefined> =>
  new Promise((done) => {
    const body = JSON.stringify({ args })
    const req = request(`${host.url}/commands`, {
      method: "POST",
      headers: { authorization: `Bearer ${host.token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (res) => {
      res.setEncoding("utf8")
      if (res.statusCode !== 200) {
        let message = ""
        res.on("data", (chunk: string) => (message += chunk))
        res.on("end", () => {
          write("err", `birzha: the running host (process ${host.pid}) refused the command: ${res.statusCode} ${message}\n`)
          done(1)
        })
        return
      }
      let pending = ""
      let exit: number | undefined
      res.on("data", (chunk: string) => {
        pending += chunk
        let newline: number
        while ((newline = pending.indexOf("\n")) >= 0) {
          const line = JSON.parse(pending.slice(0, newline)) as Partial<{ out: string; err: string; exit: number }>
          pending = pending.slice(newline + 1)
          if (line.out !== undefined) write("out", line.out)
          if (line.err !== undefined) write("err", line.err)
          if (line.exit !== undefined) exit = line.exit
        }
      })
      res.on("end", () => {
        if (exit === undefined) write("err", `birzha: the running host (process ${host.pid}) stopped before the command finished\n`)
        done(exit ?? 1)
      })
      res.on("error", () => done(1))
    })
    req.on("error", () => done(undefined))
    req.end(body)
  })

/** The process's own streams, as a forwarded command's output goes to them. */
export const writeToProcess = (stream: "out" | "err", text: string): void => {
  ;(stream === "out" ? process.stdout : process.stderr).write(text)
}
