import { type FormEvent, useEffect, useRef, useState } from "react"
import { href } from "../../components/Layout.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"thread">, "data" | "texts">) => texts.t("messages.with", { name: data.with })

/** How often the open thread asks for new messages: at most every 2 s (README.md, pages). */
const pollMs = 2000

/** One thread: its messages, oldest first, a form to write; the other's messages appear without reloading. */
export default function ThreadPage({ state, data, texts }: PageProps<"thread">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [messages, setMessages] = useState<ReadonlyArray<MessageItem>>(data.messages)
  const input = useRef<HTMLTextAreaElement>(null)
  const me = state.session?.profileUuid ?? ""

  useEffect(() => {
    let stopped = false
    const poll = async () => {
      const { api } = await import("../../browserApi.js")
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, pollMs))
        if (stopped || document.hidden) continue
        try {
          const page = await api["threads.messages"]({ urlParams: { threadUuid: data.threadUuid, limit: 100 } })
          if (!stopped) {
            setMessages(page.items.map((m) => ({ uuid: m.uuid, mine: m.authorProfileUuid === me, body: m.body, createdAt: new Date(m.createdAt as unknown as string | Date).toISOString() })))
          }
        } catch {
          // A failed poll is tried again at the next tick.
        }
      }
    }
    void poll()
    return () => {
      stopped = true
    }
  }, [data.threadUuid, me])

  const send = (event: FormEvent) => {
    event.preventDefault()
    const body = input.current?.value.trim() ?? ""
    if (body === "") return
    void run(
      (api) => api["messages.send"]({ payload: { requestUuid: requestUuid(), threadUuid: data.threadUuid, body } }),
      (sent) => {
        if (input.current !== null) input.current.value = ""
        setMessages((now) => now.some((m) => m.uuid === sent.uuid) ? now : [...now, { uuid: sent.uuid, mine: true, body: sent.body, createdAt: new Date(sent.createdAt as unknown as string | Date).toISOString() }])
      }
    )
  }

  return (
    <div className="thread">
      <p><a href={href("/messages", language)}>{t("messages.all")}</a></p>
      <h1>{t("messages.with", { name: data.with })}</h1>
      <ol className="messages" aria-live="polite" aria-label={t("messages.list")}>
        {messages.map((m) => (
          <li key={m.uuid} className={m.mine ? "message message--mine" : "message"}>
            <span className="visually-hidden">{m.mine ? t("messages.you") : data.with}: </span>
            <p>{m.body}</p>
            <time dateTime={m.createdAt} className="muted">{texts.date(m.createdAt)}</time>
          </li>
        ))}
      </ol>
      <form onSubmit={send} className="stack">
        <label htmlFor="message">{t("messages.write")}</label>
        <textarea id="message" ref={input} rows={3} maxLength={5000} />
        <p><button type="submit" className="button" disabled={!hydrated || busy}>{t("messages.send")}</button></p>
      </form>
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
