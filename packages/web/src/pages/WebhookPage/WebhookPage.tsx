import { type FormEvent, useState } from "react"
import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { answerLabel, deliveryStatusLabel, endpointStateLabel, eventTypeLabel, SecretBox, VerificationGuide } from "../../components/webhooks.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { WebhookDeliveryView, WebhookEndpointView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"webhook">, "texts">) => texts.t("hooks.endpointTitle")

type Api = typeof import("../../browserApi.js")["api"]

const asJson = <A,>(value: unknown): A => JSON.parse(JSON.stringify(value)) as A
const finished = (delivery: WebhookDeliveryView) => delivery.status !== "pending" && delivery.status !== "delivering"

/** Deliveries read at once (server/webhooks.ts reads as many). */
const shown = 50

/** Why the service cancelled a delivery, in words, for the reasons it writes (packages/domain/src/webhooks/WebhookEndpoints.ts). */
const cancelKey = (reason: string): MessageKey => {
  if (reason === "endpoint paused") return "hooks.cancel.paused"
  if (reason === "endpoint disabled") return "hooks.cancel.disabled"
  if (reason === "endpoint changed" || reason.startsWith("the endpoint changed")) return "hooks.cancel.changed"
  if (reason.startsWith("the event is no longer visible")) return "hooks.cancel.invisible"
  return "hooks.cancel.other"
}

/** What became of a test or replay the page watched, in a sentence. */
const Outcome = ({ texts, delivery }: { readonly texts: Texts; readonly delivery: WebhookDeliveryView | "waiting" }) => {
  const { t } = texts
  if (delivery === "waiting") return <>{t("hooks.result.waiting")}</>
  const last = delivery.attempts.at(-1)
  const answer = last === undefined ? t("hooks.noAnswer") : answerLabel(texts, last)
  const what = t(delivery.kind === "test" ? "hooks.result.test" : "hooks.result.event")
  if (!finished(delivery)) return <>{what} {t("hooks.result.pending", { answer })}</>
  if (delivery.status === "succeeded") {
    return <>{what} {t("hooks.result.succeeded", { answer, ms: last?.durationMs ?? 0 })}</>
  }
  return <>{what} {t("hooks.result.failed", { answer })}{last?.error === undefined ? null : <> <code className="wrap">{last.error}</code></>}</>
}

const Delivery = ({ texts, delivery, busy, onReplay }: {
  readonly texts: Texts
  readonly delivery: WebhookDeliveryView
  readonly busy: boolean
  readonly onReplay: (delivery: WebhookDeliveryView) => void
}) => {
  const { t } = texts
  return (
    <li className="row row--stacked delivery" data-uuid={delivery.uuid} data-status={delivery.status} data-kind={delivery.kind}>
      <p className="row__title">
        {delivery.kind === "test" ? t("hooks.testDelivery") : eventTypeLabel(texts, delivery.eventType)} <code className="scope-name">{delivery.eventType}</code>
      </p>
      <p className="card__meta">
        <span className={`delivery-status delivery-status--${delivery.status}`}>{deliveryStatusLabel(texts, delivery.status)}</span>
        <span>{t("hooks.queued")} <LocalTime value={delivery.createdAt} texts={texts} /></span>
        {delivery.nextAttemptAt === undefined ? null : <span className="next-attempt">{t("hooks.nextAttempt")} <LocalTime value={delivery.nextAttemptAt} texts={texts} relative /></span>}
        {delivery.cancelReason === undefined ? null : <span>{t(cancelKey(delivery.cancelReason))}</span>}
        <span>webhook-id <code className="wrap">{delivery.eventUuid}</code></span>
      </p>
      {delivery.attempts.length === 0
        ? <p className="muted">{t("hooks.noAttempts")}</p>
        : (
          <ol className="attempts" aria-label={t("hooks.attempts")}>
            {delivery.attempts.map((attempt) => (
              <li key={attempt.uuid} className="attempt" data-succeeded={String(attempt.succeeded)} data-code={attempt.statusCode ?? ""}>
                <LocalTime value={attempt.attemptedAt} texts={texts} /> · <strong className="attempt__answer">{answerLabel(texts, attempt)}</strong> · {t("hooks.took", { ms: attempt.durationMs })}
                {attempt.error === undefined ? null : <> · <code className="wrap">{attempt.error}</code></>}
                {attempt.responseExcerpt === "" ? null : <> · <code className="wrap attempt__excerpt">{attempt.responseExcerpt.slice(0, 200)}</code></>}
              </li>
            ))}
          </ol>
        )}
      {finished(delivery)
        ? (
          <div className="actions">
            <button type="button" className="button button--secondary replay" disabled={busy} onClick={() => onReplay(delivery)}>{t("hooks.replay")}</button>
          </div>
        )
        : null}
    </li>
  )
}

/**
 * One webhook: its state and the next step (approve, test, resume), its deliveries with every
 * attempt (status, answer, timing, next retry), replay of one and recovery since a moment, pause
 * and resume, deletion, and the signing secret's rotation with the 24-hour overlap shown. Commands
 * go through the browser's client; the page reads the endpoint and its deliveries again after each.
 */
export default function WebhookPage({ data, texts }: PageProps<"webhook">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, setMessage, run } = useAction()
  const [endpoint, setEndpoint] = useState<WebhookEndpointView>(data.endpoint)
  const [deliveries, setDeliveries] = useState<ReadonlyArray<WebhookDeliveryView>>(data.deliveries)
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [watched, setWatched] = useState<WebhookDeliveryView | "waiting" | undefined>(undefined)
  const [recovered, setRecovered] = useState<number | undefined>(undefined)
  const uuid = endpoint.uuid
  const disabled = !hydrated || busy

  // The deliveries first, then the endpoint: a finished test is then never shown beside the state from before it.
  const read = async (api: Api) => {
    const page = await api["webhooks.deliveries"]({ path: { uuid }, urlParams: { limit: shown } })
    const list = await api["webhooks.list"]()
    const found = list.items.find((item) => item.uuid === uuid)
    if (found !== undefined) setEndpoint(asJson<WebhookEndpointView>(found))
    const items = asJson<ReadonlyArray<WebhookDeliveryView>>(page.items)
    setDeliveries(items)
    return items
  }
  const refresh = () => void run(read, () => undefined)

  /** Reads again every second until the delivery is finished (a generous minute at most). */
  const watch = async (api: Api, deliveryUuid: string) => {
    setWatched("waiting")
    for (let i = 0; i < 60; i++) {
      const items = await read(api)
      const found = items.find((item) => item.uuid === deliveryUuid)
      if (found !== undefined) setWatched(found)
      if (found !== undefined && finished(found)) return
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }

  const sendTest = () =>
    void run(async (api) => {
      const answer = await api["webhooks.test"]({ path: { uuid }, payload: { requestUuid: requestUuid() } })
      await watch(api, answer.delivery.uuid)
    }, () => undefined)

  const replay = (delivery: WebhookDeliveryView) =>
    void run(async (api) => {
      await api["webhooks.replay"]({ path: { uuid: delivery.uuid }, payload: { requestUuid: requestUuid() } })
      await watch(api, delivery.uuid)
    }, () => undefined)

  const setPaused = (paused: boolean) =>
    void run(async (api) => {
      await api["webhooks.update"]({ path: { uuid }, payload: { requestUuid: requestUuid(), expectedRevision: endpoint.revision, paused } })
      await read(api)
    }, () => undefined)

  const remove = () => {
    if (!confirm(t("hooks.confirmDelete"))) return
    void run((api) => api["webhooks.delete"]({ path: { uuid } }), () => location.assign(href("/settings/webhooks", language)))
  }

  const rotate = () => {
    if (!confirm(t("hooks.confirmRotate"))) return
    void run((api) => api["webhooks.rotate"]({ path: { uuid }, payload: { requestUuid: requestUuid() } }), (answer) => {
      setEndpoint(asJson<WebhookEndpointView>(answer.endpoint))
      setSecret(answer.secret)
    })
  }

  const recover = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const since = new Date(String(new FormData(event.currentTarget).get("since") ?? ""))
    if (Number.isNaN(since.getTime())) {
      setMessage("hooks.pickMoment")
      return
    }
    setRecovered(undefined)
    void run(async (api) => {
      const answer = await api["webhooks.recover"]({ path: { uuid }, payload: { requestUuid: requestUuid(), since } })
      setRecovered(answer.queued)
      await read(api)
    }, () => undefined)
  }

  if (secret !== undefined) {
    return (
      <div className="narrow-wide">
        <h1>{t("hooks.endpointTitle")}</h1>
        <p className="lead"><code className="wrap">{endpoint.url}</code></p>
        <SecretBox texts={texts} secret={secret} rotated onDone={() => setSecret(undefined)} />
      </div>
    )
  }

  const overlapUntil = endpoint.previousSecretExpiresAt
  const overlapping = overlapUntil !== undefined && new Date(overlapUntil).getTime() > Date.now()
  const canTest = endpoint.state === "awaiting_test" || endpoint.state === "active"
  return (
    <div className="narrow-wide">
      <p><a href={href("/settings/webhooks", language)}>{t("hooks.title")}</a></p>
      <h1>{t("hooks.endpointTitle")}</h1>
      <p className="lead"><code id="webhook-url" className="wrap">{endpoint.url}</code></p>
      {endpoint.description === "" ? null : <p>{endpoint.description}</p>}

      <section className="panel webhook-panel" aria-labelledby="state-heading">
        <h2 id="state-heading">{t("hooks.stateTitle")}: <span id="webhook-state" data-state={endpoint.state}>{endpointStateLabel(texts, endpoint.state)}</span></h2>
        <p id="next-step">
          {t(`hooks.next.${endpoint.state}` as MessageKey)}
          {endpoint.state === "disabled" && endpoint.disabledReason !== undefined ? <> {t(`hooks.disabled.${endpoint.disabledReason}` as MessageKey)}</> : null}
        </p>
        {endpoint.failingSince === undefined ? null : <p>{t("hooks.failingSince")} <LocalTime value={endpoint.failingSince} texts={texts} /></p>}
        <div className="actions">
          {endpoint.state === "prepared"
            ? <a id="approve-link" className="button" href={href(`/webhooks/${uuid}/approve`, language)}>{t("hooks.approveUrl")}</a>
            : null}
          {canTest ? <button type="button" id="send-test" className="button" disabled={disabled} onClick={sendTest}>{t("hooks.sendTest")}</button> : null}
          {endpoint.state === "paused" || endpoint.state === "disabled"
            ? <button type="button" id="resume" className="button" disabled={disabled} onClick={() => setPaused(false)}>{t("hooks.resume")}</button>
            : <button type="button" id="pause" className="button button--secondary" disabled={disabled} onClick={() => setPaused(true)}>{t("hooks.pause")}</button>}
          <button type="button" id="delete" className="button button--secondary" disabled={disabled} onClick={remove}>{t("hooks.delete")}</button>
        </div>
        <p id="delivery-result" role="status" aria-live="polite">{watched === undefined ? "" : <Outcome texts={texts} delivery={watched} />}</p>
        <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </section>

      <dl className="facts">
        <div>
          <dt>{t("hooks.events")}</dt>
          <dd id="webhook-events">{endpoint.eventTypes.map((type, index) => <span key={type}>{index === 0 ? "" : ", "}{eventTypeLabel(texts, type)} <code>{type}</code></span>)}</dd>
        </div>
        <div><dt>{t("hooks.payload")}</dt><dd>{t(`hooks.mode.${endpoint.payloadMode}` as MessageKey)}</dd></div>
        <div><dt>{t("hooks.created")}</dt><dd><LocalTime value={endpoint.createdAt} texts={texts} /></dd></div>
        {endpoint.approvedAt === undefined ? null : <div><dt>{t("hooks.approvedAt")}</dt><dd><LocalTime value={endpoint.approvedAt} texts={texts} /></dd></div>}
        {endpoint.verifiedAt === undefined ? null : <div><dt>{t("hooks.verifiedAt")}</dt><dd><LocalTime value={endpoint.verifiedAt} texts={texts} /></dd></div>}
      </dl>

      <section aria-labelledby="secret-section">
        <h2 id="secret-section">{t("hooks.secretTitle")}</h2>
        <p>
          {endpoint.secretRotatedAt === undefined
            ? t("hooks.secretSince")
            : <>{t("hooks.secretRotatedAt")} <LocalTime value={endpoint.secretRotatedAt} texts={texts} /></>}
        </p>
        {overlapping
          ? <p id="overlap" className="panel">{t("hooks.overlap")} <strong><LocalTime value={overlapUntil} texts={texts} relative /></strong></p>
          : null}
        <p>{t("hooks.rotateExplain")}</p>
        <div className="actions">
          <button type="button" id="rotate" className="button button--secondary" disabled={disabled} onClick={rotate}>{t("hooks.rotate")}</button>
        </div>
        <VerificationGuide texts={texts} />
      </section>

      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">{t("hooks.deliveries")}</h2>
        <p className="hint">{t("hooks.deliveriesHelp")}</p>
        <div className="actions">
          <button type="button" id="refresh" className="button button--secondary" disabled={disabled} onClick={refresh}>{t("hooks.refresh")}</button>
        </div>
        {deliveries.length === 0
          ? <p id="no-deliveries" className="muted">{t("hooks.noDeliveries")}</p>
          : <ul id="deliveries" className="rows">{deliveries.map((delivery) => <Delivery key={delivery.uuid} texts={texts} delivery={delivery} busy={disabled} onReplay={replay} />)}</ul>}
        {endpoint.state === "active"
          ? (
            <form id="recover-form" className="stack panel" onSubmit={recover}>
              <h3>{t("hooks.recoverTitle")}</h3>
              <p className="hint" id="recover-help">{t("hooks.recoverExplain")}</p>
              <label htmlFor="recover-since">{t("hooks.since")}</label>
              <input id="recover-since" name="since" type="datetime-local" required aria-describedby="recover-help" />
              <button type="submit" className="button button--secondary" disabled={disabled}>{t("hooks.recover")}</button>
              <p id="recovered" role="status" aria-live="polite">{recovered === undefined ? "" : t("hooks.recovered", { n: recovered })}</p>
            </form>
          )
          : null}
      </section>
    </div>
  )
}
