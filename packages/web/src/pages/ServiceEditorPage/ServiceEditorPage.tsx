import { type FormEvent, useRef, useState } from "react"
import { ContentEditor, contentDraftOf, contentOf } from "../../components/ContentEditor.js"
import { Choice, EditorActions, EditorHead, EditorStatus, formValues, objectAt, over, savePublication, TextArea, TextField } from "../../components/EditorForm.js"
import { href } from "../../components/Layout.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"serviceEditor">, "data" | "texts">) =>
  texts.t(data.service === undefined ? "service.newTitle" : "service.editTitle")

/** The service fields services.save accepts (ServiceDetails in @birzha/domain), in its order. */
const currencies = ["RUB", "USD", "EUR"] as const
const priceUnits = ["fixed", "hour", "day", "month"] as const

/**
 * The service editor: title, field, description, the price (its currency and unit), the
 * delivery time and the content document; the whole draft saved (services.save) or sent to
 * moderation (services.save, then services.submit at the saved revision).
 */
export default function ServiceEditorPage({ data, texts }: PageProps<"serviceEditor">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const service = data.service
  const draft = service?.draft ?? {}
  const { busy, message, setMessage, run } = useAction()
  const [content, setContent] = useState(() => contentDraftOf(draft))
  const form = useRef<HTMLFormElement>(null)

  const save = (submit: boolean) => (event?: FormEvent) => {
    event?.preventDefault()
    if (!form.current!.reportValidity()) return
    const v = formValues(form.current!)
    const price = v.whole("price", 0, 1_000_000_000)
    const days = v.whole("deliveryDays", 1, 365)
    if (price === null || days === null) return setMessage("service.badNumbers")
    const made = contentOf(content, objectAt(draft, "content"))
    if (made.problem !== undefined) return setMessage(made.problem)
    const whole = over(draft, {
      title: v.raw("title").trim(),
      category: v.text("category"),
      description: v.raw("description"),
      content: made.content,
      service: over(objectAt(draft, "service"), { price, currency: v.text("currency"), priceUnit: v.text("priceUnit"), deliveryDays: days })
    })
    void run((api) => savePublication(api, "services", service, whole, submit), () => location.assign(href("/publications", language)))
  }

  return (
    <div className="editor">
      <EditorHead heading={title({ data, texts })} status={service?.status} texts={texts} />
      <form ref={form} onSubmit={save(false)} className="stack" id="service-form">
        <TextField name="title" label={t("task.field.title")} value={service?.title} required minLength={3} maxLength={160} />
        <TextField name="category" label={t("vacancy.field.category")} value={service?.category} maxLength={80} />
        <TextArea name="description" label={t("task.field.description")} value={service?.description} maxLength={20000} />
        <fieldset>
          <legend>{t("field.price")}</legend>
          <TextField name="price" label={t("service.field.price")} value={service?.price} maxLength={13} numeric />
          <Choice name="currency" label={t("vacancy.field.currency")} options={currencies} value={service?.currency} labelOf={(c) => c} />
          <Choice name="priceUnit" label={t("service.field.priceUnit")} options={priceUnits} value={service?.priceUnit} labelOf={(u) => t(`service.unit.${u}` as "service.unit.fixed")} />
        </fieldset>
        <TextField name="deliveryDays" label={t("service.field.deliveryDays")} value={service?.deliveryDays} maxLength={3} numeric />
        <ContentEditor value={content} onChange={setContent} texts={texts} onProblem={setMessage} />
        <EditorActions texts={texts} disabled={!hydrated || busy} onSubmit={() => save(true)()} />
      </form>
      <EditorStatus message={message} texts={texts} />
    </div>
  )
}
