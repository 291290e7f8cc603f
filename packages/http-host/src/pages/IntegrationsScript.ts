/**
 * The page's script: it calls the keys operations with `fetch` (same origin: the browser sends
 * `Origin` and the cookie). A secret exists only in the create or reissue answer and is put in the
 * page with `textContent`; it is never in the HTML the server renders, nor kept anywhere.
 */
export const integrationsScript = `async function send(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin"
  })
  let data
  try { data = await response.json() } catch (_) { data = undefined }
  return { response, data, error: response.ok ? undefined : data && data.error }
}
function field(form, name) {
  return form.querySelector("[name=" + name + "]")
}
function scopesOf(form) {
  return Array.from(form.querySelectorAll("input[name=scope]:checked"), (box) => box.value)
}
document.addEventListener("DOMContentLoaded", () => {
  const main = document.getElementById("main")
  const status = document.getElementById("status")
  const reauth = document.getElementById("reauth")
  const secretBox = document.getElementById("secret-box")
  const secretValue = document.getElementById("secret-value")
  const createForm = document.getElementById("create-form")
  const fail = (result) => {
    const code = result.error ? result.error.code : ""
    if (code === "reauthentication_required") { reauth.hidden = false; createForm.hidden = true; status.textContent = ""; return }
    if (result.response.status === 503) { status.textContent = main.dataset.unavailable; return }
    if (code === "invalid_scope") { status.textContent = main.dataset.invalidScope; return }
    if (code === "revision_conflict") { status.textContent = main.dataset.conflict; return }
    status.textContent = main.dataset.failed
  }
  const reveal = (secret) => {
    secretValue.textContent = secret
    secretBox.hidden = false
    createForm.hidden = true
    for (const form of document.querySelectorAll("form.key")) form.hidden = true
    secretBox.scrollIntoView()
  }
  document.getElementById("secret-done").addEventListener("click", () => {
    secretValue.textContent = ""
    location.reload()
  })
  createForm.addEventListener("submit", async (event) => {
    event.preventDefault()
    status.textContent = ""
    const result = await send("POST", "/api/v1/keys", {
      requestUuid: crypto.randomUUID(),
      name: field(createForm, "name").value,
      profileUuid: field(createForm, "profileUuid").value,
      scopes: scopesOf(createForm),
      httpEnabled: field(createForm, "httpEnabled").checked,
      mcpEnabled: field(createForm, "mcpEnabled").checked,
      lifetimeDays: Number(field(createForm, "lifetimeDays").value)
    })
    if (!result.response.ok) { fail(result); return }
    reveal(result.data.secret)
  })
  for (const form of document.querySelectorAll("form.key")) {
    const path = "/api/v1/keys/" + form.dataset.keyUuid
    form.addEventListener("submit", async (event) => {
      event.preventDefault()
      status.textContent = ""
      const result = await send("PUT", path, {
        requestUuid: crypto.randomUUID(),
        expectedRevision: Number(form.dataset.revision),
        name: field(form, "name").value,
        scopes: scopesOf(form),
        httpEnabled: field(form, "httpEnabled").checked,
        mcpEnabled: field(form, "mcpEnabled").checked
      })
      if (!result.response.ok) { fail(result); return }
      location.reload()
    })
    const reissue = form.querySelector("button[data-action=reissue]")
    if (reissue) reissue.addEventListener("click", async () => {
      if (reissue.dataset.confirm && !confirm(main.dataset.confirmReissue)) return
      status.textContent = ""
      const result = await send("POST", path + "/reissue")
      if (!result.response.ok) { fail(result); return }
      reveal(result.data.secret)
    })
    const revoke = form.querySelector("button[data-action=revoke]")
    if (revoke) revoke.addEventListener("click", async () => {
      if (!confirm(main.dataset.confirmRevoke)) return
      status.textContent = ""
      const result = await send("POST", path + "/revoke")
      if (!result.response.ok) { fail(result); return }
      location.reload()
    })
  }
})
`
