// One JSON call to a host as a signed-in browser would make it (session cookie and the page's
// Origin), for a benchmark's setup through the real operations; anything but 200 throws.

/** A caller for `origin`: `call(hostUrl, cookie, method, path, body?)` → the parsed answer. */
export const hostCall = (origin) => async (hostUrl, cookie, method, path, body) => {
  const res = await fetch(hostUrl + path, { method, headers: { "content-type": "application/json", origin, cookie }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`)
  return JSON.parse(text)
}
