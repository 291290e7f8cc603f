import type { MailMessage } from "../mail/Mailer.js"
import type { DisabledReason } from "./WebhookEndpoint.js"

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const utcTime = (date: Date): string => `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`

/**
 * The notice to an endpoint's owner that the service disabled it (Russian first, then English,
 * text and HTML with inline styles only): which URL, why, when, and how to turn it back on.
 */
export const webhookDisabledEmail = (input: {
  readonly to: string
  readonly endpointUuid: string
  readonly url: string
  readonly reason: DisabledReason
  readonly at: Date
}): MailMessage => {
  const when = utcTime(input.at)
  const ru = {
    lines: [
      "Биржа отключила ваш вебхук.",
      `Адрес: ${input.url}`,
      `Причина: ${input.reason === "gone" ? "получатель ответил 410 Gone: адрес больше не принимает события" : "все попытки доставки на этот адрес завершались ошибкой больше 5 дней"}.`,
      `Когда: ${when}`,
      "Ожидавшие доставки отменены. Чтобы включить вебхук снова, измените его с paused: false " +
        `(PATCH /api/v1/webhook-endpoints/${input.endpointUuid}) и отправьте тестовую доставку; неудавшиеся доставки можно повторить (recover).`
    ]
  }
  const en = {
    lines: [
      "Birzha disabled your webhook.",
      `URL: ${input.url}`,
      `Reason: ${input.reason === "gone" ? "the receiver answered 410 Gone: the URL no longer takes events" : "every delivery attempt to this URL failed for more than 5 days"}.`,
      `When: ${when}`,
      "Pending deliveries were cancelled. To turn the webhook back on, update it with paused: false " +
        `(PATCH /api/v1/webhook-endpoints/${input.endpointUuid}) and send a test delivery; failed deliveries can then be sent again (recover).`
    ]
  }
  const text = [...ru.lines, "", "—", "", ...en.lines, ""].join("\n")
  const paragraphs = (lines: ReadonlyArray<string>) =>
    lines.map((line) => `<p style="margin:0 0 12px">${escapeHtml(line)}</p>`).join("")
  const html = `<!doctype html><html><body style="font-family:Arial,sans-serif;font-size:15px;color:#222">` +
    `<div lang="ru">${paragraphs(ru.lines)}</div><hr style="border:0;border-top:1px solid #ddd;margin:20px 0">` +
    `<div lang="en">${paragraphs(en.lines)}</div></body></html>`
  return { to: input.to, subject: "Вебхук отключён · Webhook disabled", text, html }
}
