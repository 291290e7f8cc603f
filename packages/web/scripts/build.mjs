// Builds the browser's bundle (dist/client) and then the server's render function
// (dist/server/entry-server.js), which reads the browser build's manifest at run time.
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "vite"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const logLevel = process.argv.includes("--silent") ? "warn" : "info"
await build({ root, logLevel, mode: "production" })
await build({
  root,
  logLevel,
  mode: "production",
  // React's production build in the server bundle too: Vite replaces NODE_ENV in the browser's
  // build only, and the host runs without it set (the development build rendered 3× slower).
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: { ssr: "src/entry-server.tsx", outDir: "dist/server", emptyOutDir: true, target: "node20", rolldownOptions: { output: { format: "es" } } }
})
