import { type FormEvent, useRef } from "react"
import { href } from "../../components/Layout.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"serviceEditor">, "data" | "texts">) =>
  texts.t(data.service === undefined ? "service.newTitle" : "service.editTitle")

/** The service fields services.save accepts (ServiceDetails in @birzha/domain), in its order. */
const currencies = ["RUB", "USD", "EUR"] as const
const priceUnits = ["fixed", "hour", "day", "month"] as const

/**
 * The service editor: title, field, description, the price (its currency and unit) and the
 * delivery time; saved as a draft (services.save) or sent to moderation (services.save, then
 * services.submit at the saved revision).
 */
export default function ServiceEditorPage({ data, texts }: PageProps<"serviceEditor">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const service = data.service
  const { busy, message, setMessage, run } = useAction()
  const form = useRef<HTMLFormElement>(null)

  const save = (submit: boolean) => (event?: FormEvent) => {
    event?.preventDefault()
    if (!form.current!.reportValidity()) return
    const values = new FormData(form.current!)
    const field = (name: string) => String(values.get(name) ?? "").trim()
    const whole = (name: string, max: number): number | undefined | null => {
      const digits = field(name).replace(/[\s\u00a0]/g, "")
      if (digits === "") return undefined
      const n = Number(digits)
      return Number.isSafeInteger(n) && n >= 0 && n <= max ? n : null
    }
    const price = whole("price", 1_000_000_000)
    const days = whole("deliveryDays", 365)
    if (price === null || days === null || days === 0) return setMessage("service.badNumbers")
    void run(
      async (api) => {
        const saved = await api["services.save"]({
          payload: {
            requestUuid: requestUuid(),
            ...(service === undefined ? {} : { publicationUuid: service.uuid, expectedRevision: service.revision }),
            data: {
              title: field("title"),
              ...(field("category") === "" ? {} : { category: field("category") }),
              description: String(values.get("description") ?? ""),
              files: [],
              service: {
                ...(price === undefined ? {} : { price }),
                currency: field("currency") as typeof currencies[number],
                priceUnit: field("priceUnit") as typeof priceUnits[number],
                ...(days === undefined ? {} : { deliveryDays: days })
              }
            }
          }
        })
        if (submit) await api["services.submit"]({ payload: { requestUuid: requestUuid(), publicationUuid: saved.uuid, expectedRevision: saved.revision } })
      },
      () => location.assign(href("/publications", language))
    )
  }

  return (
    <div className="editor">
      <h1>{title({ data, texts })}</h1>
      {service === undefined ? null : <p>{t("task.status")}: <strong>{t(`status.${service.status}` as "status.draft")}</strong></p>}
      <form ref={form} onSubmit={save(false)} className="stack" id="service-form">
        <label htmlFor="title">{t("task.field.title")}</label>
        <input id="title" name="title" required minLength={3} maxLength={160} defaultValue={service?.title ?? ""} />
        <label htmlFor="category">{t("vacancy.field.category")}</label>
        <input id="category" name="category" maxLength={80} defaultValue={service?.category ?? ""} />
        <label htmlFor="description">{t("task.field.description")}</label>
        <textarea id="description" name="description" rows={8} maxLength={20000} defaultValue={service?.description ?? ""} />
        <fieldset>
          <legend>{t("field.price")}</legend>
          <label htmlFor="price">{t("service.field.price")}</label>
          <input id="price" name="price" inputMode="numeric" pattern="[0-9 ]*" maxLength={13} defaultValue={service?.price ?? ""} />
          <label htmlFor="currency">{t("vacancy.field.currency")}</label>
          <select id="currency" name="currency" defaultValue={service?.currency ?? "RUB"}>
            {currencies.map((c) => <option key={c} value={c}>{c}</option>)}
          </select>
          <label htmlFor="priceUnit">{t("service.field.priceUnit")}</label>
          <select id="priceUnit" name="priceUnit" defaultValue={service?.priceUnit ?? "fixed"}>
            {priceUnits.map((u) => <option key={u} value={u}>{t(`service.unit.${u}` as "service.unit.fixed")}</option>)}
          </select>
        </fieldset>
        <label htmlFor="deliveryDays">{t("service.field.deliveryDays")}</label>
        <input id="deliveryDays" name="deliveryDays" inputMode="numeric" pattern="[0-9]*" maxLength={3} defaultValue={service?.deliveryDays ?? ""} />
        <div className="actions">
          <button type="submit" className="button button--secondary" disabled={!hydrated || busy}>{t("task.saveDraft")}</button>
          <button type="button" className="button" disabled={!hydrated || busy} onClick={() => save(true)()}>{t("task.submit")}</button>
        </div>
      </form>
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
