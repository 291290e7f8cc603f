/**
 * The pages' own scripts and stylesheet, served from /assets/ (CSP `script-src 'self'`). Small,
 * dependency-free, and they only call the public API with `fetch` (same origin, so the browser
 * sends `Origin` and the session cookie).
 */
import { integrationsScript } from "./IntegrationsScript.js"

const css = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { max-width: 36rem; margin: 0 auto; padding: 1rem; }
header { display: flex; justify-content: space-between; margin-bottom: 2rem; }
.brand { font-weight: 700; text-decoration: none; }
form { display: grid; gap: 0.75rem; margin: 1rem 0; }
label { font-weight: 600; }
input, button { font: inherit; padding: 0.5rem 0.75rem; }
button { cursor: pointer; }
#status { min-height: 1.5rem; color: #b00020; }
[hidden] { display: none !important; }
ul.keys, ul.scopes { list-style: none; padding: 0; }
fieldset { display: grid; gap: 0.5rem; }
#secret-value { word-break: break-all; font-size: 1.1em; }
`

export const assets: Readonly<Record<string, { readonly body: string; readonly contentType: string }>> = {
  "integrations.js": { body: integrationsScript, contentType: "text/javascript; charset=utf-8" },
  "site.css": { body: css, contentType: "text/css; charset=utf-8" }
}
