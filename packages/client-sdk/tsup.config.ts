import { fileURLToPath } from "node:url"
import { defineConfig } from "tsup"

// The published client stands alone: what it uses of @birzha/domain (the catalog's declarations,
// its schemas and error classes) is bundled into its JavaScript and its declarations, so it
// depends only on `effect` and `@effect/platform` (docs/decisions.md, "Client SDK package").
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  noExternal: [/^@birzha\//],
  // From the domain's sources, so only what the client reaches is bundled (its dist shares chunks
  // with the server entry).
  esbuildOptions: (options) => {
    options.conditions = ["source"]
  },
  dts: {
    resolve: [/^@birzha\//],
    compilerOptions: { paths: { "@birzha/domain": [fileURLToPath(new URL("../domain/src/index.ts", import.meta.url))] } }
  },
  sourcemap: true,
  clean: true,
  target: "node20",
  tsconfig: "tsconfig.build.json"
})
