import { escapeHtml, type Language, type Texts } from "./Language.js"

/** Pages run only the service's own scripts and styles; nothing inline, nothing from elsewhere. */
export const pageSecurityHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

export const layout = (options: {
  readonly language: Language
  readonly texts: Texts
  readonly title: string
  readonly path: string
  readonly body: string
  readonly script?: string
  /** Messages the page's script shows, by key. */
  readonly messages?: Readonly<Record<string, string>>
}): string => {
  const other = options.language === "ru" ? "en" : "ru"
  const messages = Object.entries(options.messages ?? {})
    .map(([key, value]) => ` data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${escapeHtml(value)}"`)
    .join("")
  return `<!doctype html>
<html lang="${options.language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)} · Birzha</title>
<link rel="stylesheet" href="/assets/site.css">
${options.script === undefined ? "" : `<script src="/assets/${options.script}" defer></script>`}
</head>
<body>
<header><a href="/?lang=${options.language}" class="brand">Birzha</a>
<a href="${escapeHtml(options.path)}?lang=${other}" lang="${other}" hreflang="${other}">${options.texts.other}</a></header>
<main id="main"${messages}>
<h1>${escapeHtml(options.title)}</h1>
${options.body}
</main>
</body>
</html>`
}
