/**
 * The brand the application shows: name, logo and colours. The defaults are Birzha's; an operator
 * overrides any of them with a JSON file named by `BIRZHA_WEB_THEME` (read by the HTTP host and
 * passed to `createWebApp`), see README.md.
 */
export interface Theme {
  /** The service's name per language (header, titles). */
  readonly name: { readonly ru: string; readonly en: string }
  /** The logo's address: a path of this site (`/app/logo.svg`) or an `https:` URL. */
  readonly logoUrl: string
  readonly colors: {
    /** Links, buttons, focus ring. */
    readonly primary: string
    /** Text on `primary`. */
    readonly onPrimary: string
    readonly background: string
    readonly surface: string
    readonly text: string
    readonly muted: string
    readonly border: string
  }
}

export const defaultTheme: Theme = {
  name: { ru: "Биржа", en: "Birzha" },
  logoUrl: "/app/logo.svg",
  colors: {
    primary: "#1d4ed8",
    onPrimary: "#ffffff",
    background: "#f6f7f9",
    surface: "#ffffff",
    text: "#1a1d23",
    muted: "#4b5563",
    border: "#d5d9e0"
  }
}

const colorPattern = /^(#[0-9a-fA-F]{3,8}|[a-z]{3,20}|(rgb|hsl)a?\([0-9.,%\s]{5,40}\))$/
const logoPattern = /^(\/[A-Za-z0-9._~/-]{1,200}|https:\/\/[A-Za-z0-9.-]{1,200}(\/[A-Za-z0-9._~/%-]{0,300})?)$/

const text = (value: unknown, max: number): string | undefined =>
  typeof value === "string" && value.trim() !== "" && value.length <= max && !/[<>{}\\]/.test(value) ? value.trim() : undefined

/**
 * The default theme with what `overrides` (parsed JSON, untrusted) gives that is well formed; a
 * malformed entry is named in `problems` and left at its default, so a typo never breaks pages.
 */
export const themeOf = (overrides: unknown): { readonly theme: Theme; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  if (overrides === undefined || overrides === null) return { theme: defaultTheme, problems }
  if (typeof overrides !== "object" || Array.isArray(overrides)) return { theme: defaultTheme, problems: ["the theme is not a JSON object"] }
  const given = overrides as Record<string, unknown>
  const name = typeof given["name"] === "object" && given["name"] !== null ? given["name"] as Record<string, unknown> : {}
  const colors = typeof given["colors"] === "object" && given["colors"] !== null ? given["colors"] as Record<string, unknown> : {}
  const pick = <A>(value: unknown, check: (value: unknown) => A | undefined, fallback: A, field: string): A => {
    if (value === undefined) return fallback
    const checked = check(value)
    if (checked === undefined) problems.push(`${field} is not valid`)
    return checked ?? fallback
  }
  const color = (value: unknown) => typeof value === "string" && colorPattern.test(value.trim()) ? value.trim() : undefined
  const theme: Theme = {
    name: {
      ru: pick(name["ru"], (v) => text(v, 60), defaultTheme.name.ru, "name.ru"),
      en: pick(name["en"], (v) => text(v, 60), defaultTheme.name.en, "name.en")
    },
    logoUrl: pick(given["logoUrl"], (v) => typeof v === "string" && logoPattern.test(v) ? v : undefined, defaultTheme.logoUrl, "logoUrl"),
    colors: Object.fromEntries(
      Object.entries(defaultTheme.colors).map(([key, fallback]) => [key, pick(colors[key], color, fallback, `colors.${key}`)])
    ) as unknown as Theme["colors"]
  }
  return { theme, problems }
}

/** The theme's colours as CSS custom properties (in each page's inline style, allowed by its hash; also served as /app/theme.css). */
export const themeCss = (theme: Theme): string =>
  `:root {\n${Object.entries(theme.colors).map(([key, value]) => `  --${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: ${value};`).join("\n")}\n}\n`
