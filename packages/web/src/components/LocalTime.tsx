import { useHydrated } from "../hydrated.js"
import type { Texts } from "../i18n.js"

const locales = { ru: "ru-RU", en: "en-GB" } as const

/**
 * A moment as the reader's own clock shows it. The server does not know the reader's time zone, so
 * it writes UTC (marked so); once the page's script runs, the browser writes its local time, and,
 * with `relative`, how far away it is ("in 42 minutes").
 */
export const LocalTime = ({ value, texts, relative = false, id }: {
  readonly value: string
  readonly texts: Texts
  readonly relative?: boolean
  readonly id?: string
}) => {
  const hydrated = useHydrated()
  const at = new Date(value)
  if (Number.isNaN(at.getTime())) return <time id={id}>{value}</time>
  const locale = locales[texts.language]
  const text = hydrated
    ? new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short" }).format(at)
    : `${new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(at)} UTC`
  const minutes = Math.round((at.getTime() - Date.now()) / 60_000)
  return (
    <time id={id} dateTime={at.toISOString()}>
      {text}
      {hydrated && relative
        ? ` (${new Intl.RelativeTimeFormat(locale, { numeric: "auto" }).format(Math.abs(minutes) < 120 ? minutes : Math.round(minutes / 60), Math.abs(minutes) < 120 ? "minute" : "hour")})`
        : null}
    </time>
  )
}
