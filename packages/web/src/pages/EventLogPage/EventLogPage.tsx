import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { EventLogItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"eventLog">, "texts">) => texts.t("eventLog.title")

/** An event type as this application names it (`event.<type>`, as the notifications say it), else the type itself. */
const typeLabel = (texts: Texts, type: string) => {
  const key = `event.${type}` as MessageKey
  const said = texts.t(key)
  return said === key ? type : said
}

const Event = ({ item, texts }: { readonly item: EventLogItem; readonly texts: Texts }) => (
  <li className="row row--stacked event" data-uuid={item.uuid} data-type={item.type}>
    <p className="row__title">{typeLabel(texts, item.type)} <code className="scope-name">{item.type}</code></p>
    <p className="card__meta">
      <LocalTime value={item.occurredAt} texts={texts} />
      <span>{item.aggregate.kind} <code className="wrap">{item.aggregate.uuid}</code> · {texts.t("eventLog.revision", { n: item.aggregate.revision })}</span>
    </p>
    <details>
      <summary>{texts.t("eventLog.envelope")}</summary>
      <pre className="raw">{item.envelope}</pre>
    </details>
  </li>
)

/**
 * The events the signed-in profile may read (events.list), newest first, filtered by type; the
 * cursor after them is shown, so a program can resume from where the person stopped reading.
 */
export default function EventLogPage({ data, texts }: PageProps<"eventLog">) {
  const { t, language } = texts
  const kept: Record<string, string> = data.type === "" ? {} : { type: data.type }
  return (
    <div className="narrow-wide">
      <h1>{t("eventLog.title")}</h1>
      <p className="lead">{t("eventLog.intro")}</p>
      <form method="get" action="/settings/events" role="search" className="search">
        <input type="hidden" name="lang" value={language} />
        <div className="field field--wide">
          <label htmlFor="event-type">{t("eventLog.type")}</label>
          <select id="event-type" name="type" defaultValue={data.type}>
            <option value="">{t("eventLog.allTypes")}</option>
            {data.types.map((type) => <option key={type} value={type}>{typeLabel(texts, type)}</option>)}
          </select>
        </div>
        <button type="submit" className="button">{t("eventLog.show")}</button>
      </form>
      {data.cursorProblem === "" ? null : (
        <p id="cursor-problem" className="panel">{t(data.cursorProblem === "expired" ? "eventLog.expired" : "eventLog.invalid")} <a href={href("/settings/events", language)}>{t("eventLog.fromStart")}</a></p>
      )}
      {data.items.length === 0
        ? (data.cursorProblem !== "" ? null : <p id="no-events" className="muted">{t(data.type === "" ? "eventLog.none" : "eventLog.noneOfType")}</p>)
        : <ul id="events" className="rows">{data.items.map((item) => <Event key={item.uuid} item={item} texts={texts} />)}</ul>}
      {data.cursorProblem !== "" ? null : (
        <section className="panel" aria-labelledby="cursor-heading">
          <h2 id="cursor-heading">{t("eventLog.resume")}</h2>
          <p>{t("eventLog.resumeExplain")}</p>
          <p><code id="resume-cursor" className="wrap">{data.nextCursor}</code></p>
          <nav className="pager" aria-label={t("eventLog.title")}>
            {data.cursor === "" ? null : <a href={href("/settings/events", language, kept)}>{t("eventLog.fromStart")}</a>}
            <a id="after" rel="next" className="button button--secondary" href={href("/settings/events", language, { ...kept, cursor: data.nextCursor })}>
              {t(data.hasMore ? "eventLog.more" : "eventLog.newer")}
            </a>
          </nav>
        </section>
      )}
      <p><a href={href("/settings/integrations", language)}>{t("account.integrations")}</a></p>
    </div>
  )
}
