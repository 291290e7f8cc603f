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

const signIn = `${post}
document.addEventListener("DOMContentLoaded", () => {
  const main = document.getElementById("main")
  const emailForm = document.getElementById("email-form")
  const codeForm = document.getElementById("code-form")
  const status = document.getElementById("status")
  let challengeUuid = ""
  emailForm.addEventListener("submit", async (event) => {
    event.preventDefault()
    status.textContent = ""
    const result = await post("/api/v1/auth/email/start", { email: emailForm.email.value.trim() })
    if (!result.response.ok) { status.textContent = message(main, result); return }
    challengeUuid = (await result.response.json()).challengeUuid
    // The emailed link opened in this browser returns there too (link.js reads it once).
    if (main.dataset.next && main.dataset.next !== "/account") localStorage.setItem("birzha-next", main.dataset.next)
    else localStorage.removeItem("birzha-next")
    emailForm.hidden = true
    codeForm.hidden = false
    document.getElementById("sent").hidden = false
    codeForm.code.focus()
  })
  codeForm.addEventListener("submit", async (event) => {
    event.preventDefault()
    status.textContent = ""
    const result = await post("/api/v1/auth/email/verify", { challengeUuid, code: codeForm.code.value.trim() })
    if (!result.response.ok) { status.textContent = message(main, result); return }
    // data-next is a path of this site the server checked (an approval opened while signed out).
    localStorage.removeItem("birzha-next")
    const next = main.dataset.next || ""
    location.assign(next.charAt(0) === "/" && next.charAt(1) !== "/" && next.indexOf("\\\\") < 0 ? next : "/account")
  })
  document.getElementById("other-email").addEventListener("click", () => {
    codeForm.hidden = true
    document.getElementById("sent").hidden = true
    emailForm.hidden = false
    status.textContent = ""
  })
})
`

const link = `${post}
document.addEventListener("DOMContentLoaded", () => {
  const main = document.getElementById("main")
  const status = document.getElementById("status")
  const button = document.getElementById("sign-in")
  const params = new URLSearchParams(location.hash.slice(1))
  const challengeUuid = params.get("challenge")
  const token = params.get("token")
  // Switching language keeps the fragment; it is never sent to any server.
  for (const a of document.querySelectorAll("a[hreflang]")) a.href = a.href.split("#")[0] + location.hash
  if (!challengeUuid || !token) { status.textContent = main.dataset.linkMissing; return }
  button.hidden = false
  // Posting happens only on this click: opening the page never signs anybody in.
  button.addEventListener("click", async () => {
    button.disabled = true
    status.textContent = ""
    const result = await post("/api/v1/auth/email/link", { challengeUuid, token })
    if (!result.response.ok) { status.textContent = message(main, result); button.disabled = false; return }
    // Where the sign-in page of this browser was asked to return (checked there; checked again here).
    const next = localStorage.getItem("birzha-next") || ""
    localStorage.removeItem("birzha-next")
    // Only a plain path of this site: one leading slash, nothing encodeURI would change (no space, backslash, %).
    location.assign(next.charAt(0) === "/" && next.charAt(1) !== "/" && encodeURI(next) === next ? next : "/account")
  })
})
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
  "sign-in.js": { body: signIn, contentType: "text/javascript; charset=utf-8" },
  "link.js": { body: link, contentType: "text/javascript; charset=utf-8" },
  "account.js": { body: account, contentType: "text/javascript; charset=utf-8" },
  "integrations.js": { body: integrationsScript, contentType: "text/javascript; charset=utf-8" },
  "site.css": { body: css, contentType: "text/css; charset=utf-8" }
}
