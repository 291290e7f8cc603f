import { fileURLToPath } from "node:url"
import { defaultClientConditions, defaultServerConditions, defineConfig } from "vite"

const nodeShim = fileURLToPath(new URL("./src/nodeShim.ts", import.meta.url))

/**
 * One configuration for both builds (scripts/build.mjs): the browser's (`dist/client`, hashed
 * files, a manifest the server reads to name them, one chunk per page) and the server's
 * (`dist/server/entry-server.js`, everything bundled in, so the host loads one file and no
 * dependency of this package needs resolving at run time). Workspace packages are built from
 * their TypeScript sources (the `source` condition), as the client SDK's own build does.
 */
export default defineConfig(({ isSsrBuild }) => ({
  base: "/app/",
  resolve: {
    conditions: ["source", ...defaultClientConditions],
    // The browser's stand-ins for Node's built-ins (src/nodeShim.ts); the server keeps the real ones.
    alias: isSsrBuild === true ? [] : [{ find: /^node:(crypto|fs|zlib)$/, replacement: nodeShim }]
  },
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: "dist/client",
    manifest: true,
    target: "es2022",
    rolldownOptions: { input: "src/entry-client.tsx" }
  },
  ssr: {
    noExternal: true,
    resolve: { conditions: ["source", ...defaultServerConditions], externalConditions: ["source", "node"] },
    target: "node"
  }
}))
