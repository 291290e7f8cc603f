import { href } from "../../components/Layout.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"messages">, "texts">) => texts.t("messages.title")

/** The person's threads, the latest first, with unread counts. */
export default function MessagesPage({ data, texts }: PageProps<"messages">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("messages.title")}</h1>
      {data.threads.length === 0 ? <p>{t("messages.none")}</p> : (
        <ul className="rows">
          {data.threads.map((thread) => (
            <li key={thread.uuid} className="row">
              <div>
                <h2 className="row__title"><a href={href(`/messages/${thread.uuid}`, language)}>{t("messages.with", { name: thread.with })}</a></h2>
                {thread.lastMessage === undefined ? null : <p className="muted">{thread.lastMessage.slice(0, 140)}</p>}
              </div>
              <p className="card__meta">
                {thread.unread > 0 ? <span className="tag">{t("messages.unread", { n: thread.unread })}</span> : null}
                {thread.lastMessageAt === undefined ? null : <span>{texts.date(thread.lastMessageAt)}</span>}
              </p>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
