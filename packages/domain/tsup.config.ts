import { defineConfig } from "tsup"

export default defineConfig({
  entry: { index: "src/index.ts", "store/index": "src/store/index.ts", server: "src/server.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  tsconfig: "tsconfig.build.json"
})
