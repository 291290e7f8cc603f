import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * The fresh-clone start test alone, after the rest of the suite (`npm test`): it measures the
 * README's first command and a restart against issue 20's budgets (90 s, 15 s), which a test
 * file running beside it on the two cores would distort.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["packages/cli/src/FreshStart.test.ts"],
    exclude: ["**/node_modules/**"],
    maxWorkers: 1
  }
})
