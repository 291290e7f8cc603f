import { Context, Duration } from "effect"

/** Where links point, and the spec's limits of email sign-in (Limits table). */
export interface SignInSettings {
  /** `BIRZHA_PUBLIC_ORIGIN`: the sign-in link is `<origin>/auth/link#…`, and sign-in POSTs must carry it as `Origin`. */
  readonly publicOrigin: string
}

export class SignInConfig extends Context.Tag("@birzha/domain/SignInConfig")<SignInConfig, SignInSettings>() {}

export const signInLimits = {
  challengeLifetime: Duration.minutes(10),
  wrongGuesses: 5,
  resendCooldownSeconds: 60,
  emailsPerAddressPerHour: 5,
  emailsPerIpPerHour: 20,
  /** Ours (the spec leaves attempt limits open): failed verify/link attempts per client address per hour. */
  failedAttemptsPerIpPerHour: 60,
  sessionLifetime: Duration.days(30)
} as const
