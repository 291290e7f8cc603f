import { HttpServerResponse } from "@effect/platform"

/** 303 to `location`, never cached: a page that stands for another, or to the sign-in page. */
export const seeOther = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers: { "cache-control": "no-store" } })
