import { BirzhaError, createBirzhaClient } from "@birzha/client"
import type { MessageKey } from "./i18n.js"

/**
 * The browser's client of the service: `@birzha/client` on this origin, so `fetch` sends the
 * session cookie and `Origin` itself. Loaded on demand (a dynamic import), so a public page's
 * first load carries none of it.
 */
export const api = createBirzhaClient({ baseUrl: location.origin })

/** The message of a refused call, by the service's error code. */
export const messageOf = (error: unknown): MessageKey => {
  if (!(error instanceof BirzhaError)) return "error.failed"
  if (error.status === 410) return "error.accountGone"
  if (error.status === 503) return "error.unavailable"
  switch (error.code) {
    case "invalid_email":
      return "error.invalidEmail"
    case "invalid_code":
      return "error.invalidCode"
    case "invalid_link":
      return "error.invalidLink"
    case "rate_limited":
      return "error.rateLimited"
    case "invalid_task":
      return "error.invalidTask"
    case "invalid_state":
      return "error.changed"
    // A save or step at a revision read before someone else's save (409): the editors explain it.
    case "revision_conflict":
      return "error.stale"
    case "invalid_publication":
      return "error.invalidPublication"
    case "invalid_file":
      return "content.badFile"
    case "forbidden":
      return "error.forbidden"
    default:
      return "error.failed"
  }
}
