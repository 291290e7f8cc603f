import { defineConfig } from "tsup"

const common = { format: ["esm" as const], sourcemap: true, target: "node20", tsconfig: "tsconfig.build.json" }

export default defineConfig((flags) => [
  // One JavaScript build of the three entries: they share chunks, so each class exists once.
  {
    ...common,
    entry: { index: "src/index.ts", server: "src/server.ts", internal: "src/internal.ts" },
    dts: false,
    clean: true
  },
  // The root entry's declarations on their own, in one file without chunks: @birzha/client bundles
  // them into its own (so it needs no @birzha/domain), and they name nothing server-side. Left out
  // with `--no-dts` (`build:js`), where a declarations-only build would write JavaScript instead.
  ...(flags.dts === false ? [] : [
    { ...common, entry: { index: "src/index.ts" }, dts: { only: true }, clean: false },
    { ...common, entry: { server: "src/server.ts", internal: "src/internal.ts" }, dts: { only: true }, clean: false }
  ])
])
