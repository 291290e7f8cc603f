// What the run's global setup (testing/globalSetup.ts) provides to every test file through vitest's
// `inject`. A module of its own, imported by each file that provides or injects these, so that a
// package's own type check (packages/*/tsconfig.json), which does not include the global setup,
// knows the keys too.

declare module "vitest" {
  export interface ProvidedContext {
    /** A directory for this run's shared test fixtures (the PGlite template), removed at the end. */
    readonly runDir: string
    /** The run's one Chromium, which page tests connect to (testing/browser.ts); absent when the run has none. */
    readonly chromiumEndpoint: string | undefined
    /** A database with every migration applied, which `createTestDatabase(label, { migrated: true })` copies (testing/postgres.ts). */
    readonly migratedDatabase: string
    /** What the names of this run's databases end with (before their own 8 hex digits): the end of the run drops them all. */
    readonly testRunToken: string
  }
}

export {}
