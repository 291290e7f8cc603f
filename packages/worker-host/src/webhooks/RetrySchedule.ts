import { Duration } from "effect"

/**
 * Delays before each retry of an event delivery. The first attempt is immediate; then Svix's
 * schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), stretched with three 15-hour steps to
 * about three days as Stripe retries: 11 attempts over ~72.6 hours before jitter.
 */
export const retryDelays: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(10),
  Duration.hours(15),
  Duration.hours(15),
  Duration.hours(15)
]

/** Attempts of one delivery round (the first plus every retry). */
export const maxAttempts = retryDelays.length + 1

/** Each delay is spread ±20 % so that retries of many deliveries failing together do not arrive together. */
export const jitter = 0.2

/** The longest a `Retry-After` may push an attempt back. */
export const maxRetryAfter = Duration.hours(24)

/**
 * Milliseconds until the next attempt after the `attempts`-th attempt of the round failed, or
 * undefined when the round is exhausted. `random` in [0, 1) picks the jitter.
 */
export const nextRetryDelay = (attempts: number, random: number): number | undefined => {
  const base = retryDelays[attempts - 1]
  if (base === undefined) return undefined
  return Math.round(Duration.toMillis(base) * (1 - jitter + 2 * jitter * random))
}

/** Statuses whose `Retry-After` is honoured (Svix): too many requests, bad gateway, gateway timeout. */
export const honoursRetryAfter = (status: number): boolean => status === 429 || status === 502 || status === 504

/** `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export const retryAfterMillis = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined) return undefined
  const value = header.trim()
  if (/^\d{1,10}$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - now)
}
