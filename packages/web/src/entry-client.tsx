import { hydrateRoot } from "react-dom/client"
import { App } from "./App.js"
import { type Catalog, type Language, provideCatalogs } from "./i18n.js"
import type { AppState } from "./model.js"
import { pageModules } from "./pages/lazy.js"
import "./styles.css"

/** The page's language's messages, a chunk of their own (the server preloads it: entry-server.tsx). */
const catalogOf = async (language: Language): Promise<Catalog> =>
  language === "ru"
    ? (await import("./translations/ru.json", { with: { type: "json" } })).default
    : (await import("./translations/en.json", { with: { type: "json" } })).default

// The state the server rendered from, in the page as JSON (not a script the CSP would have to allow).
const state = JSON.parse(document.getElementById("birzha-state")?.textContent ?? "null") as AppState | null
const root = document.getElementById("root")
if (state !== null && root !== null) {
  void Promise.all([pageModules[state.data.page](), catalogOf(state.language)]).then(([page, catalog]) => {
    provideCatalogs({ [state.language]: catalog })
    hydrateRoot(root, <App state={state} page={page} />)
  })
}
