import { useState } from "react"
import { href } from "../../components/Layout.js"
import { profileTypeLabel } from "../../components/format.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"account">, "texts">) => texts.t("account.title")

/** The signed-in account: its address, its profiles (switching the acting one), its pages, signing out. */
export default function AccountPage({ data, texts }: PageProps<"account">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<MessageKey | undefined>(undefined)

  const act = async (call: (api: typeof import("../../browserApi.js")["api"]) => Promise<unknown>, then: () => void) => {
    setBusy(true)
    setMessage(undefined)
    const { api, messageOf } = await import("../../browserApi.js")
    try {
      await call(api)
      then()
    } catch (error) {
      setMessage(messageOf(error))
      setBusy(false)
    }
  }

  return (
    <div className="narrow">
      <h1>{t("account.title")}</h1>
      <p>{t("account.signedInAs")} <strong id="signed-in-email">{data.email}</strong></p>
      <h2>{t("account.profiles")}</h2>
      <ul className="profiles">
        {data.profiles.map((profile) => (
          <li key={profile.uuid}>
            <span>
              {profile.name} · {profileTypeLabel(texts, profile.type)}
              {profile.current ? <> · <strong>{t("account.acting")}</strong></> : null}
            </span>
            {profile.current ? null : (
              <button
                type="button"
                className="button button--secondary button--small"
                disabled={!hydrated || busy}
                onClick={() => act((api) => api["profiles.switch"]({ payload: { profileUuid: profile.uuid } }), () => location.reload())}
              >
                {t("account.switch", { name: profile.name })}
              </button>
            )}
          </li>
        ))}
      </ul>
      <p><a href={href("/settings/profile", language)}>{t("account.settings")}</a></p>
      <p><a href={href("/approvals", language)}>{t("account.approvals")}</a></p>
      <p><a href={href("/settings/integrations", language)}>{t("account.integrations")}</a></p>
      <button
        type="button"
        className="button"
        disabled={!hydrated || busy}
        onClick={() => act((api) => api["auth.logout"](), () => location.assign(href("/sign-in", language)))}
      >
        {t("account.signOut")}
      </button>
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
