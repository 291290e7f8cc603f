/**
 * The pages' own scripts and stylesheet, served from /assets/ (CSP `script-src 'self'`). Small,
 * dependency-free, and they only call the public API with `fetch` (same origin, so the browser
 * sends `Origin` and the session cookie).
 */
import { integrationsScript } from "./IntegrationsScript.js"

const post = `async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin"
  })
  let error
  if (!response.ok && response.status !== 204) {
    try { error = (await response.json()).error } catch (_) { error = undefined }
  }
  return { response, error }
}
function message(main, result) {
  const code = result.error ? result.error.code : ""
  const key = { invalid_email: "invalidEmail", invalid_code: "invalidCode", invalid_link: "invalidLink", rate_limited: "rateLimited" }[code]
  if (result.response.status === 410) return main.dataset.accountGone
  if (result.response.status === 503) return main.dataset.unavailable
  const text = key ? main.dataset[key] : main.dataset.failed
  return text.replace("{s}", result.response.headers.get("retry-after") || "60")
}
`

const account = `${post}
document.addEventListener("DOMContentLoaded", () => {
  const main = document.getElementById("main")
  const status = document.getElementById("status")
  for (const button of document.querySelectorAll("button[data-profile-uuid]")) {
    button.addEventListener("click", async () => {
      const result = await post("/api/v1/commands/profiles.switch", { profileUuid: button.dataset.profileUuid })
      if (!result.response.ok) { status.textContent = message(main, result); return }
      location.reload()
    })
  }
  document.getElementById("sign-out").addEventListener("click", async () => {
    const result = await post("/api/v1/auth/logout")
    if (!result.response.ok) { status.textContent = message(main, result); return }
    location.assign("/sign-in")
  })
})
`

const css = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { max-width: 36rem; margin: 0 auto; padding: 1rem; }
header { display: flex; justify-content: space-between; margin-bottom: 2rem; }
.brand { font-weight: 700; text-decoration: none; }
form { display: grid; gap: 0.75rem; margin: 1rem 0; }
label { font-weight: 600; }
input, button { font: inherit; padding: 0.5rem 0.75rem; }
button { cursor: pointer; }
#status { min-height: 1.5rem; color: #b00020; }
ul.profiles { list-style: none; padding: 0; }
ul.profiles li { display: flex; justify-content: space-between; align-items: center; padding: 0.5rem 0; border-bottom: 1px solid #8884; }
[hidden] { display: none !important; }
ul.keys, ul.scopes { list-style: none; padding: 0; }
fieldset { display: grid; gap: 0.5rem; }
#secret-value { word-break: break-all; font-size: 1.1em; }
`

export const assets: Readonly<Record<string, { readonly body: string; readonly contentType: string }>> = {
  "account.js": { body: account, contentType: "text/javascript; charset=utf-8" },
  "integrations.js": { body: integrationsScript, contentType: "text/javascript; charset=utf-8" },
  "site.css": { body: css, contentType: "text/css; charset=utf-8" }
}
