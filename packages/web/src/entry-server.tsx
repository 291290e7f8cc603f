import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { renderToString } from "react-dom/server"
import { App } from "./App.js"
import { type Theme, themeCss, themeOf } from "./config/theme.js"
import { type Language, languageOf, provideCatalogs, textsOf } from "./i18n.js"
import type { AppState } from "./model.js"
import { pages } from "./pages/eager.js"
import { pageSources } from "./pages/registry.js"
import { safeNext } from "./safeNext.js"
import { makeServerApi, type ReadFailure, type ServerApi } from "./server/api.js"
import { load, type Loaded, sessionOf } from "./server/loaders.js"
import en from "./translations/en.json" with { type: "json" }
import ru from "./translations/ru.json" with { type: "json" }

// The server renders in either language; the browser loads its page's own (entry-client.tsx).
provideCatalogs({ ru, en })

export { defaultTheme, type Theme, themeOf } from "./config/theme.js"
export { makeServerApi, type ReadFailure, type ServerApi } from "./server/api.js"

export interface PageRequest {
  /** The request's path, without the query. */
  readonly path: string
  /** The query, without `?`. */
  readonly query: string
  readonly acceptLanguage?: string | undefined
  /** The request's Cookie header: its session (if any) goes with the reads, for the sign-in indicator. */
  readonly cookie?: string | undefined
}

export interface RenderedPage {
  readonly status: number
  readonly html: string
  /** A 303's target (a signed-in page asked for without a session: to sign in). */
  readonly location?: string
  /**
   * A 503's failed read, for the host to log: this module may run on its own copy of `effect`
   * (packages/cli/tsup.config.ts bundles the host's), so it hands the failure over rather than log it.
   */
  readonly failedRead?: ReadFailure
}

export interface WebApp {
  /** Renders the page at the request's path: its own, or the 404 page when the application has none there. */
  readonly render: (request: PageRequest) => Promise<RenderedPage>
  /** The client build: `/app/*` is served from here (hashed files under `assets/`). */
  readonly clientDir: string
  /** The theme's colours as a stylesheet, served at `/app/theme.css`. */
  readonly themeCss: string
  /** What of the operator's theme was malformed and left at its default (for the host's log). */
  readonly themeProblems: ReadonlyArray<string>
  /** The hashes (`'sha256-…'`) of the pages' inline `<style>`, for the pages' CSP `style-src`. */
  readonly styleSources: ReadonlyArray<string>
}

export interface WebAppOptions {
  /** Where the server's client reaches the service's API: the host's own listener. */
  readonly apiBaseUrl: string
  /** The operator's theme (parsed JSON, checked here); the defaults otherwise. */
  readonly theme?: unknown
  /** Replaces the client over `apiBaseUrl` (tests, benchmarks). */
  readonly api?: ServerApi
}

interface ManifestChunk {
  readonly file: string
  readonly css?: ReadonlyArray<string>
  readonly imports?: ReadonlyArray<string>
  readonly isEntry?: boolean
}

const sessionCookie = "__Host-birzha_session"

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** JSON that stays inside its `<script type="application/json">` whatever the strings hold. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

/**
 * The `<head>` tags of a page: the entry's script and styles, and its page's chunk with what it
 * imports, preloaded. With `inlineStyle` (the entry's stylesheet and the theme's colours, read
 * once) the styles are in the page itself: no stylesheet request holds up the first paint
 * (bench/web-lcp.bench.mjs: they were the largest part of the publication page's LCP after the
 * HTML); the page's CSP allows that one `<style>` by its hash (`styleSources`).
 */
const assetTags = (manifest: Readonly<Record<string, ManifestChunk>>, inlineStyle: string | undefined) => {
  const entry = Object.values(manifest).find((chunk) => chunk.isEntry === true)
  const chunkFiles = (key: string, seen: Set<string>): ReadonlyArray<string> => {
    if (seen.has(key)) return []
    seen.add(key)
    const chunk = manifest[key]
    if (chunk === undefined) return []
    return [chunk.file, ...(chunk.imports ?? []).flatMap((name) => chunkFiles(name, seen))]
  }
  const entryKey = Object.keys(manifest).find((key) => manifest[key] === entry)
  const entryFiles = new Set(entryKey === undefined ? [] : chunkFiles(entryKey, new Set()))
  const tags = new Map<string, string>()
  for (const [page, source] of Object.entries(pageSources)) {
    const css = [...(inlineStyle === undefined ? entry?.css ?? [] : []), ...(manifest[source]?.css ?? [])]
    const preload = chunkFiles(source, new Set()).filter((file) => !entryFiles.has(file))
    tags.set(page, [
      ...(inlineStyle === undefined ? [] : [`<style>${inlineStyle}</style>`]),
      ...css.map((file) => `<link rel="stylesheet" href="/app/${file}">`),
      ...(inlineStyle === undefined ? [`<link rel="stylesheet" href="/app/theme.css">`] : []),
      entry === undefined ? "" : `<script type="module" src="/app/${entry.file}"></script>`,
      ...preload.map((file) => `<link rel="modulepreload" href="/app/${file}">`)
    ].join("\n"))
  }
  return tags
}

/** The `<head>` tag preloading a language's messages, which the browser loads before hydrating (entry-client.tsx). */
const catalogTags = (manifest: Readonly<Record<string, ManifestChunk>>): Readonly<Record<Language, string>> => {
  const tag = (language: Language) => {
    const chunk = manifest[`src/translations/${language}.json`]
    return chunk === undefined ? "" : `<link rel="modulepreload" href="/app/${chunk.file}">`
  }
  return { ru: tag("ru"), en: tag("en") }
}

/** The web application as the HTTP host uses it: one instance per host, made at its start. */
export const createWebApp = (options: WebAppOptions): WebApp => {
  const { theme, problems } = themeOf(options.theme)
  const api = options.api ?? makeServerApi(options.apiBaseUrl)
  const clientDir = fileURLToPath(new URL("../client/", import.meta.url))
  const manifestFile = `${clientDir}.vite/manifest.json`
  const manifest = existsSync(manifestFile) ? JSON.parse(readFileSync(manifestFile, "utf8")) as Record<string, ManifestChunk> : {}
  const entryCss = Object.values(manifest).find((chunk) => chunk.isEntry === true)?.css ?? []
  const entryStyles = entryCss.map((file) => `${clientDir}${file}`)
  // "</style" would end the element early: then the stylesheets stay links (a build never makes one).
  const inlineStyle = entryStyles.length > 0 && entryStyles.every((file) => existsSync(file))
    ? [...entryStyles.map((file) => readFileSync(file, "utf8")), themeCss(theme)].join("\n")
    : undefined
  const inlined = inlineStyle !== undefined && !/<\/style/i.test(inlineStyle) ? inlineStyle : undefined
  const tags = assetTags(manifest, inlined)
  const catalogTag = catalogTags(manifest)
  const styleSources = inlined === undefined ? [] : [`'sha256-${createHash("sha256").update(inlined, "utf8").digest("base64")}'`]

  const document = (state: AppState, loaded: Loaded, session: AppState["session"]): string => {
    const page = pages[loaded.data.page]
    const texts = textsOf(state.language)
    const full: AppState = { ...state, ...(session === undefined ? {} : { session }) }
    const body = renderToString(<App state={full} page={page} />)
    const title = page.title({ state: full, data: loaded.data, texts })
    const pageTitle = loaded.data.page === "home" ? title : `${title} · ${theme.name[state.language]}`
    return `<!doctype html>
<html lang="${state.language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(pageTitle)}</title>
<link rel="icon" href="/app/favicon.svg" type="image/svg+xml">
${tags.get(loaded.data.page) ?? ""}
${catalogTag[state.language]}
</head>
<body>
<div id="root">${body}</div>
<script type="application/json" id="birzha-state">${scriptJson(full)}</script>
</body>
</html>`
  }

  const render = async (request: PageRequest): Promise<RenderedPage> => {
    const search = new URLSearchParams(request.query)
    const language = languageOf(search, request.acceptLanguage)
    search.delete("lang")
    const found = (request.cookie ?? "").split(/;\s*/).find((part) => part.startsWith(`${sessionCookie}=`))
    const token = found === undefined || found === `${sessionCookie}=` ? undefined : found
    const [loaded, session] = await Promise.all([
      load(api, request.path, new URLSearchParams(request.query), token),
      // Only a request that carries a session asks who it is: anonymous visitors cost no read.
      token === undefined ? Promise.resolve(undefined) : sessionOf(api, token)
    ])
    if (loaded !== undefined && "redirect" in loaded) return { status: 303, html: "", location: `${loaded.redirect}?lang=${language}` }
    if (loaded !== undefined && "signIn" in loaded) {
      const next = safeNext(request.path + (request.query === "" ? "" : `?${request.query}`))
      return {
        status: 303,
        html: "",
        location: `/sign-in?lang=${language}${next === undefined || next === "/account" ? "" : `&next=${encodeURIComponent(next)}`}`
      }
    }
    const page: Loaded = loaded ?? { status: 404, data: { page: "error", status: 404 } }
    const state = (data: Loaded["data"]): AppState => ({
      language,
      path: request.path,
      query: search.toString(),
      brand: { name: theme.name[language], logoUrl: theme.logoUrl },
      data
    })
    try {
      const html = document(state(page.data), page, session)
      return page.failure === undefined ? { status: page.status, html } : { status: page.status, html, failedRead: page.failure }
    } catch (error) {
      // A page that fails to render is a fault of this application: the visitor gets the
      // "temporarily unavailable" page with status 500, the host's log the error.
      console.error("rendering", request.path, "failed:", error)
      const failed: Loaded = { status: 500, data: { page: "error", status: 503 } }
      return { status: 500, html: document(state(failed.data), failed, undefined) }
    }
  }

  return { render, clientDir, themeCss: themeCss(theme), themeProblems: problems, styleSources }
}

export type { Theme as WebTheme }
