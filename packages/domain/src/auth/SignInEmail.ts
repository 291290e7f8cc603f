import type { MailMessage } from "../mail/Mailer.js"

export interface SignInEmailInput {
  readonly to: string
  /** The six-digit code. */
  readonly code: string
  /** The one-time link; its token is in the `#` fragment, kept exactly as given. */
  readonly link: string
  readonly expiresAt: Date
  /** How long the code and the link live, for the "valid for N minutes" line. */
  readonly minutes: number
}

// Every value that reaches the HTML goes through this: text and attribute values alike, so a
// quote or `<` in a link or an address cannot leave its attribute or open an element.
const escapeHtml = (value: string): string =>
  value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;")

/** `2026-05-01 14:32 UTC`: mail clients show no time zone, so the expiry names its own. */
const utcTime = (date: Date): string => `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`

// Russian picks the noun form by the last digits: 1 минуту, 2 минуты, 5 минут, 11 минут, 21 минуту.
const minutesRu = (n: number): string => {
  const tens = n % 100
  const ones = n % 10
  const word = tens >= 11 && tens <= 14 ? "минут" : ones === 1 ? "минуту" : ones >= 2 && ones <= 4 ? "минуты" : "минут"
  return `${n} ${word}`
}

// The code leads the subject, so a notification that shows only the subject is enough to sign in.
const subjectOf = (code: string): string => `${code} — код входа в Birzha · Birzha sign-in code`

const minutesEn = (n: number): string => `${n} ${n === 1 ? "minute" : "minutes"}`

/**
 * The sign-in email: Russian first, then English, as plain text and as HTML (inline styles, no
 * external images or fonts, so it reads the same in every client and loads nothing). It carries
 * the code, the one-time link, how long both stay valid, and that it can be ignored.
 */
export const signInEmail = (input: SignInEmailInput): MailMessage => {
  const until = utcTime(input.expiresAt)
  const ru = {
    intro: "Чтобы войти в Birzha, введите этот код:",
    orLink: "Или откройте ссылку для входа:",
    button: "Войти в Birzha",
    validity: `Код и ссылка действуют ${minutesRu(input.minutes)}, до ${until}, и подходят только для одного входа.`,
    secret: "Никому не сообщайте этот код.",
    ignore: "Если вы не запрашивали вход, просто проигнорируйте это письмо.",
    sentTo: "Письмо отправлено на адрес"
  }
  const en = {
    intro: "To sign in to Birzha, enter this code:",
    orLink: "Or open this link to sign in:",
    button: "Sign in to Birzha",
    validity: `The code and the link are valid for ${minutesEn(input.minutes)}, until ${until}, and work for one sign-in only.`,
    secret: "Do not share this code with anyone.",
    ignore: "If you did not ask to sign in, you can ignore this message.",
    sentTo: "This message was sent to"
  }

  const textPart = (t: typeof ru): string =>
    [t.intro, "", `    ${input.code}`, "", t.orLink, input.link, "", t.validity, t.secret, t.ignore].join("\n")
  const text = [textPart(ru), "", "———", "", textPart(en), "", "———", `${ru.sentTo} ${input.to} · ${en.sentTo} ${input.to}`, ""].join("\n")

  const p = "margin:0 0 16px 0;font-size:15px;line-height:1.5;color:#1f2328;"
  const small = "margin:0 0 8px 0;font-size:13px;line-height:1.5;color:#59636e;"
  const link = escapeHtml(input.link)
  const htmlPart = (t: typeof ru, lang: string): string => `
<div lang="${lang}" style="padding:24px 0;">
  <p style="${p}">${escapeHtml(t.intro)}</p>
  <p style="margin:0 0 20px 0;font-family:Menlo,Consolas,'Courier New',monospace;font-size:32px;font-weight:bold;letter-spacing:6px;color:#1f2328;">${escapeHtml(input.code)}</p>
  <p style="${p}">${escapeHtml(t.orLink)}</p>
  <p style="margin:0 0 16px 0;"><a href="${link}" style="display:inline-block;padding:10px 20px;border-radius:6px;background:#1f6feb;color:#ffffff;font-size:15px;font-weight:bold;text-decoration:none;">${escapeHtml(t.button)}</a></p>
  <p style="${small}word-break:break-all;"><a href="${link}" style="color:#1f6feb;">${link}</a></p>
  <p style="${small}">${escapeHtml(t.validity)}</p>
  <p style="${small}">${escapeHtml(t.secret)} ${escapeHtml(t.ignore)}</p>
</div>`
  const html = `<!doctype html>
<html lang="ru">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(subjectOf(input.code))}</title>
</head>
<body style="margin:0;padding:0;background:#f6f8fa;">
<div style="max-width:560px;margin:0 auto;padding:24px;background:#ffffff;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;">
${htmlPart(ru, "ru")}
<hr style="border:none;border-top:1px solid #d1d9e0;margin:0;">
${htmlPart(en, "en")}
<hr style="border:none;border-top:1px solid #d1d9e0;margin:0 0 16px 0;">
<p style="${small}">${escapeHtml(ru.sentTo)} ${escapeHtml(input.to)} · ${escapeHtml(en.sentTo)} ${escapeHtml(input.to)}</p>
</div>
</body>
</html>
`
  return { to: input.to, subject: subjectOf(input.code), text, html }
}
