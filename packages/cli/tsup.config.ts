import { readFileSync, rmSync } from "node:fs"
import { defineConfig } from "tsup"

// The four configurations below run at once and write their shared chunks into one folder, so none
// of them may clean it (each would delete the others' output, and tsup's per-configuration `clean`
// patterns left every earlier build's chunks behind, which a pack from this folder would carry).
// The folder is emptied once here, as tsup loads this file, before any of them starts.
rmSync(new URL("./dist", import.meta.url), { recursive: true, force: true })

const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string }

const common = {
  format: ["esm" as const],
  sourcemap: true,
  target: "node20",
  tsconfig: "tsconfig.build.json",
  define: { __BIRZHA_VERSION__: JSON.stringify(version) }
}

/** A program of the command: its dependencies inside, but PGlite and pg's optional native binding. */
const command = {
  ...common,
  // Everything but PGlite (`noExternal` wins over `external` in tsup, so the pattern leaves it out).
  noExternal: [/^(?!@electric-sql\/pglite(\/|$)|pg-native$)/],
  external: ["@electric-sql/pglite", "pg-native"],
  // Bundled CommonJS dependencies (pg, nodemailer) call `require` for Node's built-ins.
  banner: { js: "import { createRequire as __birzhaCreateRequire } from \"node:module\"; const require = __birzhaCreateRequire(import.meta.url);" }
}

export default defineConfig([
  // The library entry keeps its dependencies external: a program that imports it shares their
  // single copies (one `effect`).
  { ...common, entry: ["src/index.ts"], dts: { entry: "src/index.ts" } },
  // `birzha` itself: a small module that answers the overview and the version from text written at
  // build time, and loads mail.js or main.js for every other command (bin.ts).
  { ...common, entry: ["src/bin.ts"], external: ["./main.js", "./mail.js"] },
  // The command is one file with its dependencies inside: Node loads and compiles one
  // module instead of about two thousand, which takes less than half the CPU at every start
  // (`birzha moderation list`: ~1.5 s instead of ~3.5 s of CPU on the 2-core test machine).
  // PGlite stays outside (it loads its WebAssembly and data files next to its own module), and
  // so does pg's optional native binding. Once built, its `--help` is written to help.txt.
  { ...command, entry: ["src/main.ts"], onSuccess: "node dist/main.js --help > dist/help.txt" },
  // `birzha mail`: the same command as in main.js (MailCommand.ts), built on its own from the
  // workspace packages' sources, so that only the modules it reaches are inside: the mailbox and
  // the database. (Their dist shares one chunk of the whole domain, and a bundle that also holds
  // the hosts runs all of the domain's modules as soon as one is imported.)
  {
    ...command,
    entry: ["src/mail.ts"],
    splitting: false,
    esbuildOptions: (options) => {
      options.conditions = ["source"]
    }
  }
])
