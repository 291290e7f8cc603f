/**
 * Where to return after signing in: a path of this site only (one leading `/`, no scheme, host,
 * backslash, white space or control character, at most 2048 characters), as its path and query;
 * anything else is none (the account page), so `next` can never send anyone to another site.
 */
export const safeNext = (value: string | null | undefined): string | undefined => {
  if (value === null || value === undefined || value.length === 0 || value.length > 2048) return undefined
  if (!value.startsWith("/") || value.startsWith("//") || /[\\\s\u0000-\u001f\u007f]/u.test(value)) return undefined
  const url = new URL(value, "http://birzha.invalid")
  if (url.origin !== "http://birzha.invalid") return undefined
  // Checked again after normalising: dot segments can make a path of `//host` (`/..//evil.com`),
  // which a browser reads as another site.
  const path = url.pathname + url.search
  return path.startsWith("/") && !path.startsWith("//") && !path.includes("\\") ? path : undefined
}
