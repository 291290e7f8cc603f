import { useState } from "react"
import type { MessageKey } from "../i18n.js"

type Api = typeof import("../browserApi.js")["api"]

/**
 * A signed-in page's command: the browser's client (loaded on demand) calls the API with the
 * session cookie and `Origin`; a refusal becomes the page's status message in its language.
 */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<MessageKey | undefined>(undefined)
  const run = async <A>(call: (api: Api) => Promise<A>, then: (value: A) => void = () => location.reload()) => {
    setBusy(true)
    setMessage(undefined)
    const { api, messageOf } = await import("../browserApi.js")
    try {
      then(await call(api))
    } catch (error) {
      setMessage(messageOf(error))
    } finally {
      setBusy(false)
    }
  }
  return { busy, message, setMessage, run }
}

/** A fresh `requestUuid` for one command (retries of it would reuse it). */
export const requestUuid = () => crypto.randomUUID()

/**
 * Uploads one file through files.prepare, the PUT of its bytes to the one-time address (an
 * XMLHttpRequest: `fetch` reports no upload progress) and files.complete; its uuid once ready.
 */
export const uploadFile = async (
  api: Api,
  file: File,
  purpose: "publication_asset" | "publication_file",
  onProgress: (fraction: number) => void
): Promise<string> => {
  const prepared = await api["files.prepare"]({
    payload: { requestUuid: requestUuid(), name: file.name.slice(0, 200) || "file", mimeType: file.type as "image/png", size: file.size, purpose }
  })
  const upload = prepared.upload
  if (upload !== undefined) {
    await new Promise<void>((resolve, reject) => {
      const request = new XMLHttpRequest()
      request.open("PUT", upload.url)
      for (const [name, value] of Object.entries(upload.headers)) request.setRequestHeader(name, value)
      request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total)
      request.onload = () => request.status < 300 ? resolve() : reject(new Error(`upload: ${request.status}`))
      request.onerror = () => reject(new Error("upload failed"))
      request.send(file)
    })
  }
  onProgress(1)
  const ready = await api["files.complete"]({ path: { uuid: prepared.uuid } })
  return ready.uuid
}
