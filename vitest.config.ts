import { defineConfig } from "vitest/config"

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources, so tests need no build first.
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"]
  }
})
