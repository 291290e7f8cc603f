import { href } from "../../components/Layout.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { NotificationItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"notifications">, "texts">) => texts.t("notifications.title")

/**
 * What happened, in the page's language: the event's type as this application names it (the
 * service writes its catalog's English summary), else the notification's own words.
 */
const eventOf = (texts: Texts, item: NotificationItem) => {
  if (item.kind === "automation.paused") return texts.t("notifications.paused")
  if (item.eventType === undefined) return item.body
  const key = `event.${item.eventType}` as MessageKey
  const text = texts.t(key)
  return text === key ? item.body : text
}

const Notification = ({ item, texts }: { readonly item: NotificationItem; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const read = () => void run((api) => api["learning.notifications.read"]({ path: { notification: item.uuid } }))
  // A learning notification's title is the event's English summary: the translated event stands for it.
  const heading = item.kind.startsWith("automation.") ? item.title : eventOf(texts, item)
  return (
    <li className={item.read ? "row notification" : "row notification notification--unread"} data-uuid={item.uuid}>
      <div>
        <h2 className="row__title">{heading}</h2>
        <p className="card__meta">
          {item.read ? null : <span className="tag">{t("notifications.new")}</span>}
          <span>{t(item.kind.startsWith("automation.") ? "notifications.source.automation" : "notifications.source.learning")}</span>
          <time dateTime={item.createdAt}>{texts.date(item.createdAt)}</time>
        </p>
        {item.kind.startsWith("automation.") ? <p>{eventOf(texts, item)}</p> : null}
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </div>
      {item.read ? null : (
        <button type="button" className="button button--secondary button--small" disabled={!hydrated || busy} onClick={read} aria-label={t("notifications.markReadOf", { title: heading })}>
          {t("notifications.markRead")}
        </button>
      )}
    </li>
  )
}

/** The inbox: newest first, the unread marked; each is marked read on its own, or all of this page at once. */
export default function NotificationsPage({ data, texts }: PageProps<"notifications">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const unread = data.items.filter((item) => !item.read)
  const readAll = () =>
    void run(async (api) => {
      for (const item of unread) await api["learning.notifications.read"]({ path: { notification: item.uuid } })
    })
  return (
    <div>
      <h1>{t("notifications.title")}</h1>
      {unread.length === 0 ? null : (
        <div className="actions">
          <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={readAll} id="read-all">{t("notifications.markAllRead")}</button>
          <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
        </div>
      )}
      {data.items.length === 0 ? <p>{t("notifications.none")}</p> : (
        <ul className="rows">{data.items.map((item) => <Notification key={item.uuid} item={item} texts={texts} />)}</ul>
      )}
      {data.cursor === "" && data.nextCursor === undefined ? null : (
        <p className="pager">
          {data.cursor === "" ? null : <a href={href("/notifications", language)}>{t("notifications.newest")}</a>}
          {data.nextCursor === undefined ? null : <a rel="next" href={href("/notifications", language, { cursor: data.nextCursor })}>{t("notifications.older")}</a>}
        </p>
      )}
    </div>
  )
}
