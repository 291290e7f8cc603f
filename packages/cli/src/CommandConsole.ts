import { Console, Effect } from "effect"
import { Console as NodeConsole } from "node:console"
import { Writable } from "node:stream"

/** ANSI escape sequences (colours, cursor moves) as @effect/cli's help writes them. */
const ansi = /\u001b\[[0-9;?]*[ -/]*[@-~]/g

export const stripAnsi = (text: string): string => text.replace(ansi, "")

/**
 * An Effect `Console` writing through `write`: what a command prints, as text, to one of its two
 * streams. Built on Node's `Console` over two writable streams, so every method formats as
 * `console.log` does.
 */
export const textConsole = (write: (stream: "out" | "err", text: string) => void): Console.Console => {
  const sink = (stream: "out" | "err") =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        write(stream, chunk.toString())
        callback()
      }
    })
  const unsafe = new NodeConsole({ stdout: sink("out"), stderr: sink("err"), colorMode: false })
  return {
    [Console.TypeId]: Console.TypeId,
    assert: (condition, ...args) => Effect.sync(() => unsafe.assert(condition, ...args)),
    clear: Effect.sync(() => unsafe.clear()),
    count: (label) => Effect.sync(() => unsafe.count(label)),
    countReset: (label) => Effect.sync(() => unsafe.countReset(label)),
    debug: (...args) => Effect.sync(() => unsafe.debug(...args)),
    dir: (item, options) => Effect.sync(() => unsafe.dir(item, options)),
    dirxml: (...args) => Effect.sync(() => unsafe.dirxml(...args)),
    error: (...args) => Effect.sync(() => unsafe.error(...args)),
    group: (options) => Effect.sync(() => options?.collapsed === true ? unsafe.groupCollapsed(options.label) : unsafe.group(options?.label)),
    groupEnd: Effect.sync(() => unsafe.groupEnd()),
    info: (...args) => Effect.sync(() => unsafe.info(...args)),
    log: (...args) => Effect.sync(() => unsafe.log(...args)),
    table: (data, properties) => Effect.sync(() => unsafe.table(data, properties)),
    time: (label) => Effect.sync(() => unsafe.time(label)),
    timeEnd: (label) => Effect.sync(() => unsafe.timeEnd(label)),
    timeLog: (label, ...args) => Effect.sync(() => unsafe.timeLog(label, ...args)),
    trace: (...args) => Effect.sync(() => unsafe.trace(...args)),
    warn: (...args) => Effect.sync(() => unsafe.warn(...args)),
    unsafe
  }
}

/**
 * The command's own terminal: colour (help's) only when the stream is a terminal and `NO_COLOR`
 * is not set (https://no-color.org), plain text otherwise.
 */
export const processConsole = (): Console.Console => {
  const plain = (stream: NodeJS.WriteStream) =>
    stream.isTTY !== true || (process.env["NO_COLOR"] ?? "") !== ""
  const plainOut = plain(process.stdout)
  const plainErr = plain(process.stderr)
  return textConsole((stream, text) =>
    stream === "out"
      ? process.stdout.write(plainOut ? stripAnsi(text) : text)
      : process.stderr.write(plainErr ? stripAnsi(text) : text)
  )
}
