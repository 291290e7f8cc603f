import { type FormEvent, useRef, useState } from "react"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"signIn">, "texts">) => texts.t("signIn.title")

/** Kept where the emailed link, opened in this browser, finds it (SignInLinkPage reads it once). */
export const nextKey = "birzha-next"

/** A path of this site only, checked again in the browser before going there. */
const isLocalPath = (path: string) => path.charAt(0) === "/" && path.charAt(1) !== "/" && !path.includes("\\")

export default function SignInPage({ data, texts }: PageProps<"signIn">) {
  const { t } = texts
  const hydrated = useHydrated()
  const [step, setStep] = useState<"email" | "code">("email")
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<MessageKey | undefined>(undefined)
  const [challengeUuid, setChallengeUuid] = useState("")
  const codeInput = useRef<HTMLInputElement>(null)
  const emailInput = useRef<HTMLInputElement>(null)

  const sendCode = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    setMessage(undefined)
    setBusy(true)
    try {
      const { api } = await import("../../browserApi.js")
      const challenge = await api["auth.email.start"]({ payload: { email: (emailInput.current?.value ?? "").trim() } })
      setChallengeUuid(challenge.challengeUuid)
      if (data.next !== "/account") localStorage.setItem(nextKey, data.next)
      else localStorage.removeItem(nextKey)
      setStep("code")
      setTimeout(() => codeInput.current?.focus(), 0)
    } catch (error) {
      const { messageOf } = await import("../../browserApi.js")
      setMessage(messageOf(error))
    } finally {
      setBusy(false)
    }
  }

  const signIn = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    setMessage(undefined)
    setBusy(true)
    try {
      const { api } = await import("../../browserApi.js")
      await api["auth.email.verify"]({ payload: { challengeUuid, code: (codeInput.current?.value ?? "").trim() } })
      localStorage.removeItem(nextKey)
      location.assign(isLocalPath(data.next) ? data.next : "/account")
    } catch (error) {
      const { messageOf } = await import("../../browserApi.js")
      setMessage(messageOf(error))
      setBusy(false)
    }
  }

  return (
    <div className="narrow">
      <h1>{t("signIn.title")}</h1>
      <noscript><p role="alert">{t("signIn.noScript")}</p></noscript>
      {step === "email"
        ? (
          <form onSubmit={sendCode} noValidate className="stack">
            <label htmlFor="email">{t("signIn.email")}</label>
            <input id="email" ref={emailInput} name="email" type="email" autoComplete="email" maxLength={254} required />
            <button type="submit" className="button" disabled={!hydrated || busy}>{t("signIn.send")}</button>
          </form>
        )
        : (
          <>
            <p>{t("signIn.sent")}</p>
            <form onSubmit={signIn} className="stack">
              <label htmlFor="code">{t("signIn.code")}</label>
              <input id="code" ref={codeInput} name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required />
              <button type="submit" className="button" disabled={busy}>{t("signIn.submit")}</button>
              <button
                type="button"
                className="button button--secondary"
                onClick={() => {
                  setStep("email")
                  setMessage(undefined)
                }}
              >
                {t("signIn.otherEmail")}
              </button>
            </form>
          </>
        )}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
