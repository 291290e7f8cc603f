import { defineConfig } from "vitest/config"
import { SlowFirst } from "./testing/sequencer.js"

/** Test files at a time (see `maxWorkers`). */
const workers = Number(process.env["BIRZHA_TEST_WORKERS"] ?? 4)

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources, so tests need no build first.
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "examples/*/*.test.ts", "examples/*/src/**/*.test.ts", "scripts/*.test.ts", "scripts/*.test.mjs", "testing/*.test.ts"],
    // The packed-client example runs in the release checks (`pnpm test:release`,
    // scripts/release-dry-run.mjs) on the tarball the dry run packed, not in the test command.
    exclude: ["**/node_modules/**", ...(process.env["BIRZHA_RELEASE_CHECKS"] === "1" ? [] : ["examples/packed-client/**"])],
    globalSetup: ["testing/globalSetup.ts"],
    // Liveness bounds, not speed limits: a test that hangs fails, one slowed by a busy machine
    // does not (speed is measured in bench/). Ten minutes: with a second copy of the suite beside it
    // on two cores (load average 20–24), a test of the CLI's that starts three processes took over
    // two, and an embedded host's first start over four. A test states a shorter bound only where
    // the bound is what it tests.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: "forks",
    // Four files at once on two cores: most of a test's time is waiting (Postgres, child
    // processes, a browser, timers); a run of the suite used about a third of two cores with two
    // files at a time. A worker keeps its loaded modules from file to file instead of loading
    // Effect and the whole domain again for each: every file makes its own database, service and
    // scope. In such a worker `vi.setConfig` reaches only its first file, so slow suites pass
    // `{ timeout }` to `describe`. `BIRZHA_TEST_WORKERS` overrides the number.
    maxWorkers: workers,
    // As many from the start. Without it, on this two-core machine a run of three or more files at
    // once ended with tinypool's "Terminating worker thread", an unhandled rejection that fails the
    // run although every test passed (seen with Contract, i18n and docs-state-machines together).
    minWorkers: workers,
    isolate: false,
    sequence: { sequencer: SlowFirst },
    reporters: ["default"]
  }
})
