import { type FormEvent, useRef } from "react"
import { href } from "../../components/Layout.js"
import { profileTypeLabel } from "../../components/format.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { OwnProfileEdit } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"profileSettings">, "texts">) => texts.t("settings.title")

/** The profile types profiles.update accepts (ProfileType in @birzha/domain), in its order. */
const profileTypes = ["Физлицо", "Самозанятый", "ИП", "Компания"] as const
type ProfileType = typeof profileTypes[number]

/** "Go, 5; React" → skills; a skill's years are kept from the profile when its name stays. */
const skillsOf = (text: string, before: OwnProfileEdit["skills"]) =>
  text.split(",").map((name) => name.trim()).filter((name) => name !== "").slice(0, 50).map((name) => {
    const kept = before.find((skill) => skill.name === name)
    return kept?.years === undefined ? { name } : { name, years: kept.years }
  })

/**
 * The acting profile's settings: its name, type, about, skills, contacts and whether it is public
 * (profiles.update sends the whole data, so what this page does not edit is sent back as it was);
 * the account's other profiles (switch), and a new one (profiles.create).
 */
export default function ProfileSettingsPage({ state, data, texts }: PageProps<"profileSettings">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const form = useRef<HTMLFormElement>(null)
  const created = useRef<HTMLFormElement>(null)
  const profile = data.profile
  const notice = new URLSearchParams(state.query).get("saved")

  const save = (event: FormEvent) => {
    event.preventDefault()
    const values = new FormData(form.current!)
    const field = (name: string) => String(values.get(name) ?? "")
    void run(
      (api) =>
        api["profiles.update"]({
          payload: {
            requestUuid: requestUuid(),
            profileUuid: profile.uuid,
            expectedRevision: profile.revision,
            data: {
              name: field("name").trim(),
              type: field("type") as ProfileType,
              isPublic: values.get("isPublic") === "on",
              showContacts: values.get("showContacts") === "on",
              ...(profile.avatarUrl === undefined ? {} : { avatarUrl: profile.avatarUrl }),
              about: field("about"),
              categories: profile.categories,
              contacts: field("contacts"),
              networks: profile.networks,
              skills: skillsOf(field("skills"), profile.skills),
              structuredContacts: profile.structuredContacts
            }
          }
        }),
      () => location.assign(href("/settings/profile", language, { saved: "profile" }))
    )
  }

  const create = (event: FormEvent) => {
    event.preventDefault()
    const values = new FormData(created.current!)
    void run(
      (api) =>
        api["profiles.create"]({
          payload: {
            requestUuid: requestUuid(),
            // The client encodes the whole data (the fields with defaults too): a new profile starts empty and private.
            data: {
              name: String(values.get("newName") ?? "").trim(), type: String(values.get("newType")) as ProfileType, isPublic: false, showContacts: false,
              about: "", categories: [], contacts: "", networks: [], skills: [], structuredContacts: []
            }
          }
        }),
      () => location.assign(href("/settings/profile", language, { saved: "created" }))
    )
  }

  return (
    <div className="editor">
      <h1>{t("settings.title")}</h1>
      <p id="notice" role="status" className="notice">
        {notice === "profile" ? t("settings.saved") : notice === "created" ? t("settings.created") : ""}
      </p>
      <form ref={form} onSubmit={save} className="stack" aria-labelledby="profile-heading">
        <h2 id="profile-heading">{t("settings.acting", { name: profile.name })}</h2>
        <label htmlFor="name">{t("settings.field.name")}</label>
        <input id="name" name="name" required maxLength={160} defaultValue={profile.name} autoComplete="name" />
        <label htmlFor="type">{t("profile.type")}</label>
        <select id="type" name="type" defaultValue={profile.type}>
          {profileTypes.map((type) => <option key={type} value={type}>{profileTypeLabel(texts, type)}</option>)}
        </select>
        <label htmlFor="about">{t("settings.field.about")}</label>
        <textarea id="about" name="about" rows={6} maxLength={5000} defaultValue={profile.about} />
        <label htmlFor="skills">{t("profile.skills")}</label>
        <input id="skills" name="skills" maxLength={4000} aria-describedby="skills-hint" defaultValue={profile.skills.map((skill) => skill.name).join(", ")} />
        <p id="skills-hint" className="hint">{t("settings.skillsHint")}</p>
        <label htmlFor="contacts">{t("profile.contacts")}</label>
        <textarea id="contacts" name="contacts" rows={3} maxLength={1000} defaultValue={profile.contacts} />
        <div className="check">
          <input id="showContacts" name="showContacts" type="checkbox" defaultChecked={profile.showContacts} />
          <label htmlFor="showContacts">{t("settings.field.showContacts")}</label>
        </div>
        <div className="check">
          <input id="isPublic" name="isPublic" type="checkbox" defaultChecked={profile.isPublic} aria-describedby="public-hint" />
          <label htmlFor="isPublic">{t("settings.field.isPublic")}</label>
        </div>
        <p id="public-hint" className="hint">{t("settings.publicHint")}</p>
        <div className="actions">
          <button type="submit" className="button" disabled={!hydrated || busy}>{t("settings.save")}</button>
          {profile.isPublic ? <a href={href(`/u/${profile.uuid}`, language)}>{t("settings.viewPublic")}</a> : null}
        </div>
      </form>
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      {profile.customerAlias === undefined ? null : (
        <p id="customer-reputation">
          {t("customer.ownHint")} <a href={href(`/customers/${profile.customerAlias}`, language)}>{t("customer.ownLink")}</a>
        </p>
      )}
      <section aria-labelledby="profiles-heading">
        <h2 id="profiles-heading">{t("account.profiles")}</h2>
        <ul className="profiles">
          {data.profiles.map((other) => (
            <li key={other.uuid}>
              <span>
                {other.name} · {profileTypeLabel(texts, other.type)}
                {other.current ? <> · <strong>{t("account.acting")}</strong></> : null}
              </span>
              {other.current ? null : (
                <button
                  type="button"
                  className="button button--secondary button--small"
                  disabled={!hydrated || busy}
                  onClick={() => void run((api) => api["profiles.switch"]({ payload: { profileUuid: other.uuid } }))}
                >
                  {t("account.switch", { name: other.name })}
                </button>
              )}
            </li>
          ))}
        </ul>
        <form ref={created} onSubmit={create} className="stack" aria-labelledby="new-heading">
          <h3 id="new-heading">{t("settings.newProfile")}</h3>
          <label htmlFor="newName">{t("settings.field.name")}</label>
          <input id="newName" name="newName" required maxLength={160} />
          <label htmlFor="newType">{t("profile.type")}</label>
          <select id="newType" name="newType" defaultValue="Самозанятый">
            {profileTypes.map((type) => <option key={type} value={type}>{profileTypeLabel(texts, type)}</option>)}
          </select>
          <div className="actions">
            <button type="submit" className="button button--secondary" disabled={!hydrated || busy}>{t("settings.create")}</button>
          </div>
        </form>
      </section>
    </div>
  )
}
