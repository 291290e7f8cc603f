import { useEffect, useRef, useState } from "react"
import { href } from "../../components/Layout.js"
import { RelationHead } from "../../components/RelationHead.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { RelationItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"responses">, "texts">) => texts.t("responses.title")

/**
 * An offer's answer with other terms (a counter-offer): a new offer to the sender about the same
 * publication, referring to theirs, which is then declined; the sender accepts or declines it.
 */
const CounterForm = ({ item, texts }: { readonly item: RelationItem; readonly texts: PageProps<"responses">["texts"] }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [open, setOpen] = useState(false)
  const terms = useRef<HTMLTextAreaElement>(null)
  // The button that opened the form is gone: the keyboard goes on in the form's first field.
  useEffect(() => {
    if (open) terms.current?.focus()
  }, [open])
  const id = `counter-${item.uuid}`
  if (!open) {
    return <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => setOpen(true)}>{t("offer.counter")}</button>
  }
  return (
    <form
      className="stack counter"
      aria-label={t("offer.counter")}
      onSubmit={(event) => {
        event.preventDefault()
        const values = new FormData(event.currentTarget)
        const field = (name: string) => String(values.get(name) ?? "").trim()
        void run(async (api) => {
          await api["offers.create"]({
            payload: {
              requestUuid: requestUuid(), recipientProfileUuid: item.counterpart.profileUuid, body: field("body"),
              ...(item.publication === null ? {} : { publicationUuid: item.publication.uuid }),
              ...(field("budget") === "" ? {} : { budget: field("budget") }),
              ...(field("deadline") === "" ? {} : { deadline: field("deadline") }),
              references: [{ kind: "relation", uuid: item.uuid }]
            }
          })
          await api["offers.decline"]({ payload: { requestUuid: requestUuid(), relationUuid: item.uuid, expectedRevision: item.revision, reason: t("offer.counteredReason") } })
        })
      }}
    >
      <label htmlFor={`${id}-body`}>{t("offer.counterBody")}</label>
      <textarea ref={terms} id={`${id}-body`} name="body" rows={3} maxLength={5000} required />
      <label htmlFor={`${id}-budget`}>{t("offer.budget")}</label>
      <input id={`${id}-budget`} name="budget" maxLength={80} defaultValue={item.budget ?? ""} />
      <label htmlFor={`${id}-deadline`}>{t("offer.deadline")}</label>
      <input id={`${id}-deadline`} name="deadline" maxLength={120} />
      <p className="actions">
        <button type="submit" className="button" disabled={!hydrated || busy}>{t("offer.sendCounter")}</button>
        <button type="button" className="button button--secondary" disabled={busy} onClick={() => setOpen(false)}>{t("offer.cancel")}</button>
      </p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </form>
  )
}

/**
 * Responses received (to the person's tasks: accept or decline) and sent (withdraw), with what each
 * allows now; then job contacts (responses to vacancies: the employer accepts or declines, the
 * candidate withdraws, each through job_contacts.status).
 */
export default function ResponsesPage({ data, texts }: PageProps<"responses">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const transition = (item: RelationItem, operation: "responses.status" | "responses.withdraw", status?: "accepted" | "declined") =>
    void run((api) =>
      operation === "responses.withdraw"
        ? api["responses.withdraw"]({ payload: { requestUuid: requestUuid(), relationUuid: item.uuid, expectedRevision: item.revision } })
        : api["responses.status"]({ payload: { requestUuid: requestUuid(), relationUuid: item.uuid, expectedRevision: item.revision, status: status! } })
    )
  const offerStep = (item: RelationItem, operation: "offers.accept" | "offers.decline" | "offers.withdraw") =>
    void run((api) => api[operation]({ payload: { requestUuid: requestUuid(), relationUuid: item.uuid, expectedRevision: item.revision } }))
  const offers = (
    <section aria-labelledby="offers-heading">
      <h2 id="offers-heading">{t("offers.title")}</h2>
      {data.offers.length === 0 ? <p>{t("responses.none")}</p> : (
        <ul className="rows">
          {data.offers.map((item) => (
            <li key={item.uuid} className="row row--stacked" data-uuid={item.uuid}>
              <RelationHead item={item} texts={texts} />
              <div className="actions">
                {item.allowedActions.includes("offers.accept")
                  ? <button type="button" className="button" disabled={!hydrated || busy} onClick={() => offerStep(item, "offers.accept")}>{t("responses.accept")}</button>
                  : null}
                {item.allowedActions.includes("offers.decline")
                  ? <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => offerStep(item, "offers.decline")}>{t("responses.decline")}</button>
                  : null}
                {item.allowedActions.includes("offers.decline") ? <CounterForm item={item} texts={texts} /> : null}
                {item.allowedActions.includes("offers.withdraw")
                  ? <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => offerStep(item, "offers.withdraw")}>{t("responses.withdraw")}</button>
                  : null}
                {item.status === "accepted" ? <a href={href("/deals", language)}>{t("responses.toDeal")}</a> : null}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
  const jobStatus = (item: RelationItem, status: "accepted" | "declined" | "withdrawn") =>
    void run((api) => api["job_contacts.status"]({ payload: { requestUuid: requestUuid(), relationUuid: item.uuid, expectedRevision: item.revision, status } }))
  const jobs = (heading: "jobs.received" | "jobs.sent", items: ReadonlyArray<RelationItem>) => (
    <section aria-labelledby={heading.replace(".", "-")}>
      <h2 id={heading.replace(".", "-")}>{t(heading)}</h2>
      {items.length === 0 ? <p>{t("responses.none")}</p> : (
        <ul className="rows">
          {items.map((item) => (
            <li key={item.uuid} className="row row--stacked" data-uuid={item.uuid}>
              <RelationHead item={item} texts={texts} />
              {item.allowedActions.includes("job_contacts.status") && (item.status === "applied" || item.status === "invited") ? (
                <div className="actions">
                  {item.role === "employer" || item.status === "invited" ? (
                    <>
                      <button type="button" className="button" disabled={!hydrated || busy} onClick={() => jobStatus(item, "accepted")}>{t("responses.accept")}</button>
                      <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => jobStatus(item, "declined")}>{t("responses.decline")}</button>
                    </>
                  ) : <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => jobStatus(item, "withdrawn")}>{t("responses.withdraw")}</button>}
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
  const section = (heading: "responses.received" | "responses.sent", items: ReadonlyArray<RelationItem>) => (
    <section aria-labelledby={heading.replace(".", "-")}>
      <h2 id={heading.replace(".", "-")}>{t(heading)}</h2>
      {items.length === 0 ? <p>{t("responses.none")}</p> : (
        <ul className="rows">
          {items.map((item) => (
            <li key={item.uuid} className="row row--stacked" data-uuid={item.uuid}>
              <RelationHead item={item} texts={texts} />
              <div className="actions">
                {item.allowedActions.includes("responses.status") && item.status !== "accepted" ? (
                  <>
                    <button type="button" className="button" disabled={!hydrated || busy} onClick={() => transition(item, "responses.status", "accepted")}>{t("responses.accept")}</button>
                    <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => transition(item, "responses.status", "declined")}>{t("responses.decline")}</button>
                  </>
                ) : null}
                {item.allowedActions.includes("responses.withdraw")
                  ? <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => transition(item, "responses.withdraw")}>{t("responses.withdraw")}</button>
                  : null}
                {item.status === "accepted" ? <a href={href("/deals", language)}>{t("responses.toDeal")}</a> : null}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
  return (
    <div>
      <h1>{t("responses.title")}</h1>
      {section("responses.received", data.items.filter((item) => item.role === "customer"))}
      {section("responses.sent", data.items.filter((item) => item.role !== "customer"))}
      {offers}
      {jobs("jobs.received", data.jobContacts.filter((item) => item.role === "employer"))}
      {jobs("jobs.sent", data.jobContacts.filter((item) => item.role !== "employer"))}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
