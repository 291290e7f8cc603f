import { useEffect, useState } from "react"
import type { MessageKey } from "../../i18n.js"
import { nextKey } from "../SignInPage/SignInPage.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"signInLink">, "texts">) => texts.t("link.title")

/**
 * The emailed link's page. The challenge and token are in the fragment, which no server ever
 * sees; signing in happens only on the button's click (a POST), never on opening the page, so a
 * mail scanner that fetches links signs nobody in.
 */
export default function SignInLinkPage({ texts }: PageProps<"signInLink">) {
  const { t } = texts
  const [link, setLink] = useState<{ readonly challengeUuid: string; readonly token: string } | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<MessageKey | undefined>(undefined)

  useEffect(() => {
    const params = new URLSearchParams(location.hash.slice(1))
    const challengeUuid = params.get("challenge")
    const token = params.get("token")
    // Switching language keeps the fragment (it is never sent to any server).
    const languageSwitch = document.getElementById("language-switch")
    if (languageSwitch instanceof HTMLAnchorElement) languageSwitch.href = languageSwitch.href.split("#")[0] + location.hash
    if (challengeUuid === null || challengeUuid === "" || token === null || token === "") setMessage("error.linkMissing")
    else setLink({ challengeUuid, token })
  }, [])

  const signIn = async () => {
    if (link === undefined) return
    setBusy(true)
    setMessage(undefined)
    const { api, messageOf } = await import("../../browserApi.js")
    try {
      await api["auth.email.link"]({ payload: link })
      // Where this browser's sign-in page was asked to return (checked there; checked again here).
      const next = localStorage.getItem(nextKey) ?? ""
      localStorage.removeItem(nextKey)
      location.assign(next.charAt(0) === "/" && next.charAt(1) !== "/" && encodeURI(next) === next ? next : "/account")
    } catch (error) {
      setMessage(messageOf(error))
      setBusy(false)
    }
  }

  return (
    <div className="narrow">
      <h1>{t("link.title")}</h1>
      <p>{t("link.explain")}</p>
      {link === undefined ? null : <button type="button" className="button" onClick={signIn} disabled={busy}>{t("link.button")}</button>}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
