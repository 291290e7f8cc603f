import { type FormEvent, useState } from "react"
import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { endpointStateLabel, eventTypeLabel, SecretBox } from "../../components/webhooks.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { WebhookEndpointView, WebhookEventTypeView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"webhooks">, "texts">) => texts.t("hooks.title")

/** The catalog's types in three areas, by the first part of their name. */
const areaOf = (type: string): "learning" | "deals" | "publications" =>
  type.startsWith("learning.")
    ? "learning"
    : /^(response|offer|deal|job_|message|review|complaint)/.test(type) ? "deals" : "publications"
const areas = ["publications", "deals", "learning"] as const

const EventTypePicker = ({ texts, catalog, chosen, onToggle }: {
  readonly texts: Texts
  readonly catalog: ReadonlyArray<WebhookEventTypeView>
  readonly chosen: ReadonlyArray<string>
  readonly onToggle: (type: string, on: boolean) => void
}) => {
  const { t } = texts
  const all = chosen.includes("*")
  return (
    <fieldset id="event-types" className="webhook-types">
      <legend>{t("hooks.events")}</legend>
      <p className="hint">{t("hooks.eventsHelp")}</p>
      <span className="check">
        <input type="checkbox" id="type-all" checked={all} onChange={(event) => onToggle("*", event.currentTarget.checked)} />{" "}
        <label htmlFor="type-all">{t("hooks.allEvents")} <code className="scope-name">*</code></label>
      </span>
      {areas.map((area) => {
        const types = catalog.filter((entry) => areaOf(entry.type) === area)
        const picked = types.filter((entry) => chosen.includes(entry.type)).length
        return (
          <details key={area} className="webhook-area" id={`area-${area}`}>
            <summary>{t(`hooks.area.${area}` as MessageKey)} ({t("hooks.chosen", { n: picked })})</summary>
            <ul className="scope-list">
              {types.map((entry) => (
                <li key={entry.type} className="webhook-type">
                  <span className="check">
                    <input
                      type="checkbox"
                      id={`type-${entry.type}`}
                      value={entry.type}
                      disabled={all}
                      checked={all || chosen.includes(entry.type)}
                      onChange={(event) => onToggle(entry.type, event.currentTarget.checked)}
                    />{" "}
                    <label htmlFor={`type-${entry.type}`}>{eventTypeLabel(texts, entry.type)} <code className="scope-name">{entry.type}</code></label>
                  </span>
                  <details className="webhook-sample">
                    <summary>{t("hooks.sample")}</summary>
                    <pre className="raw">{entry.sample}</pre>
                  </details>
                </li>
              ))}
            </ul>
          </details>
        )
      })}
    </fieldset>
  )
}

const EndpointRow = ({ texts, endpoint }: { readonly texts: Texts; readonly endpoint: WebhookEndpointView }) => {
  const { t, language } = texts
  return (
    <li className="row row--stacked webhook-row" data-uuid={endpoint.uuid} data-state={endpoint.state}>
      <p className="row__title"><a href={href(`/settings/webhooks/${endpoint.uuid}`, language)}><code className="wrap">{endpoint.url}</code></a></p>
      {endpoint.description === "" ? null : <p>{endpoint.description}</p>}
      <p className="card__meta">
        <span className={`webhook-state webhook-state--${endpoint.state}`}>{endpointStateLabel(texts, endpoint.state)}</span>
        <span>{t("hooks.eventCount", { n: endpoint.eventTypes.length })}</span>
        <span>{t("hooks.created")} <LocalTime value={endpoint.createdAt} texts={texts} /></span>
      </p>
      {endpoint.state === "prepared"
        ? <p><a className="button button--secondary" href={href(`/webhooks/${endpoint.uuid}/approve`, language)}>{t("hooks.approveUrl")}</a></p>
        : null}
    </li>
  )
}

/**
 * The profile's webhooks (webhooks.list) and a new one (webhooks.create) with its event types
 * picked from the catalog (events.catalog: each type said in words, with a sample envelope) and
 * the payload mode explained. The answer's signing secret is shown once, with what comes next:
 * approve the exact URL, then a test delivery on the webhook's own page.
 */
export default function WebhooksPage({ data, texts }: PageProps<"webhooks">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, setMessage, run } = useAction()
  const [chosen, setChosen] = useState<ReadonlyArray<string>>([])
  const [mode, setMode] = useState<"reference" | "current">("reference")
  const [created, setCreated] = useState<{ readonly endpoint: WebhookEndpointView; readonly secret: string } | undefined>(undefined)

  const toggle = (type: string, on: boolean) =>
    setChosen((now) => type === "*" ? (on ? ["*"] : []) : on ? [...now.filter((s) => s !== type), type] : now.filter((s) => s !== type))

  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    if (chosen.length === 0) {
      setMessage("hooks.pickEvents")
      return
    }
    void run(
      (api) =>
        api["webhooks.create"]({
          payload: {
            requestUuid: requestUuid(),
            url: String(form.get("url") ?? "").trim(),
            eventTypes: [...chosen],
            payloadMode: mode,
            description: String(form.get("description") ?? "").trim()
          }
        }).catch((error: unknown) => {
          // 400: the address is not one the service sends to (https, a public host, no credentials).
          if ((error as { readonly status?: unknown }).status !== 400) throw error
          setMessage("hooks.badUrl")
          return undefined
        }),
      (answer) => answer === undefined ? undefined : setCreated({ endpoint: JSON.parse(JSON.stringify(answer.endpoint)) as WebhookEndpointView, secret: answer.secret })
    )
  }

  if (created !== undefined) {
    const uuid = created.endpoint.uuid
    return (
      <div className="narrow-wide">
        <h1>{t("hooks.title")}</h1>
        <p className="lead">{t("hooks.createdLead")} <code className="wrap">{created.endpoint.url}</code></p>
        <ol className="webhook-steps">
          <li>{t("hooks.step.secret")}</li>
          <li>{t("hooks.step.approve")}</li>
          <li>{t("hooks.step.test")}</li>
        </ol>
        <SecretBox texts={texts} secret={created.secret} rotated={false} onDone={() => location.assign(href(`/webhooks/${uuid}/approve`, language))} />
        <p className="actions">
          <a id="approve-link" className="button" href={href(`/webhooks/${uuid}/approve`, language)}>{t("hooks.approveUrl")}</a>
          <a className="button button--secondary" href={href(`/settings/webhooks/${uuid}`, language)}>{t("hooks.open")}</a>
        </p>
      </div>
    )
  }

  const full = data.endpoints.length >= data.limit
  return (
    <div className="narrow-wide">
      <h1>{t("hooks.title")}</h1>
      <p className="lead">{t("hooks.intro")}</p>
      <p><a href={href("/settings/integrations", language)}>{t("account.integrations")}</a> · <a href={href("/settings/events", language)}>{t("eventLog.title")}</a></p>
      <h2>{t("hooks.yours")}</h2>
      {data.endpoints.length === 0
        ? <p id="no-webhooks" className="muted">{t("hooks.none")}</p>
        : <ul id="webhooks" className="rows">{data.endpoints.map((endpoint) => <EndpointRow key={endpoint.uuid} texts={texts} endpoint={endpoint} />)}</ul>}
      <h2 id="new-heading">{t("hooks.new")}</h2>
      {full
        ? <p className="muted">{t("hooks.full", { n: data.limit })}</p>
        : (
          <form id="create-form" className="stack panel" aria-labelledby="new-heading" onSubmit={create}>
            <label htmlFor="new-url">{t("hooks.url")}</label>
            <input id="new-url" name="url" type="url" inputMode="url" required maxLength={2048} placeholder="https://" aria-describedby="new-url-help" />
            <small id="new-url-help" className="hint">{t("hooks.urlHelp")}</small>
            <label htmlFor="new-description">{t("hooks.description")}</label>
            <input id="new-description" name="description" maxLength={500} />
            <EventTypePicker texts={texts} catalog={data.catalog} chosen={chosen} onToggle={toggle} />
            <fieldset id="payload-mode" className="presets">
              <legend>{t("hooks.payload")}</legend>
              {(["reference", "current"] as const).map((value) => (
                <div key={value} className="preset check">
                  <input type="radio" id={`mode-${value}`} name="payloadMode" value={value} checked={mode === value} onChange={() => setMode(value)} aria-describedby={`mode-${value}-help`} />
                  <label htmlFor={`mode-${value}`}>{t(`hooks.mode.${value}` as MessageKey)}</label>
                  <small id={`mode-${value}-help`} className="muted">{t(`hooks.mode.${value}.help` as MessageKey)}</small>
                </div>
              ))}
            </fieldset>
            <button type="submit" className="button" disabled={!hydrated || busy}>{t("hooks.create")}</button>
          </form>
        )}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
