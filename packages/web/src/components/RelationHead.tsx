import type { Texts } from "../i18n.js"
import type { RelationItem } from "../model.js"
import { href } from "./Layout.js"
import { requestUuid, useAction } from "./useAction.js"

/** The first message of a response or deal that has no thread yet: threads.open, then its page. */
const FirstMessage = ({ item, texts }: { readonly item: RelationItem; readonly texts: Texts }) => {
  const { t, language } = texts
  const { busy, message, run } = useAction()
  const id = `first-${item.uuid}`
  return (
    <details>
      <summary>{t("relation.write")}</summary>
      <form
        className="stack"
        onSubmit={(event) => {
          event.preventDefault()
          const body = String(new FormData(event.currentTarget).get("body") ?? "").trim()
          if (body === "") return
          void run(
            (api) => api["threads.open"]({ payload: { requestUuid: requestUuid(), relationUuid: item.uuid, body } }),
            (opened) => location.assign(href(`/messages/${opened.thread.uuid}`, language))
          )
        }}
      >
        <label htmlFor={id}>{t("messages.write")}</label>
        <textarea id={id} name="body" rows={2} maxLength={5000} required />
        <p><button type="submit" className="button button--small" disabled={busy}>{t("messages.send")}</button></p>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </form>
    </details>
  )
}

/** A response's or deal's heading: what it is about, the other party, its state and its thread. */
export const RelationHead = ({ item, texts }: { readonly item: RelationItem; readonly texts: Texts }) => {
  const { t, language } = texts
  return (
    <>
      <h2 className="row__title">
        {item.publication === null ? t("relation.direct") : <a href={href(`/p/${item.publication.uuid}`, language)}>{item.publication.title}</a>}
      </h2>
      <p className="card__meta">
        <span className="tag">{t(`relationStatus.${item.status}` as "relationStatus.pending")}</span>
        <span>{t(`role.${item.role}` as "role.customer")}</span>
        <span>{t("relation.with")} <a href={href(`/u/${item.counterpart.profileUuid}`, language)}>{item.counterpart.name}</a></span>
        {item.counterpart.customerAlias === undefined ? null : (
          <a href={href(`/customers/${item.counterpart.customerAlias}`, language)} aria-label={t("customer.linkOf", { name: item.counterpart.name })}>
            {t("customer.link")}
          </a>
        )}
        {item.budget === undefined || item.budget === "" ? null : <span>{t("field.budget")}: {item.budget}</span>}
        {item.deadline === undefined || item.deadline === "" ? null : <span>{t("field.deadline")}: {item.deadline}</span>}
        {item.threadUuid === undefined ? null : <a href={href(`/messages/${item.threadUuid}`, language)}>{t("relation.thread")}</a>}
      </p>
      {item.body === "" ? null : <p>{item.body}</p>}
      {item.threadUuid === undefined ? <FirstMessage item={item} texts={texts} /> : null}
    </>
  )
}
