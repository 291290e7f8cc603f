import { hydrateRoot } from "react-dom/client"
import { App } from "./App.js"
import type { AppState } from "./model.js"
import { pageModules } from "./pages/lazy.js"
import "./styles.css"

// The state the server rendered from, in the page as JSON (not a script the CSP would have to allow).
const state = JSON.parse(document.getElementById("birzha-state")?.textContent ?? "null") as AppState | null
const root = document.getElementById("root")
if (state !== null && root !== null) {
  void pageModules[state.data.page]().then((page) => hydrateRoot(root, <App state={state} page={page} />))
}
