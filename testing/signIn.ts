import type Pg from "pg"

export interface SignedIn {
  readonly email: string
  /** `__Host-birzha_session=<token>`, ready for a `cookie` header. */
  readonly cookie: string
  readonly accountUuid: string
  readonly profileUuid: string
}

let counter = 0

/**
 * Signs in for real through the running host: `start`, the code from the development mailbox
 * (read through `db`), `verify`. Each call uses a new address and a new forwarded client IP
 * (the host must trust the proxy header) so the per-address and per-IP limits never interfere.
 */
export const signIn = async (
  options: { readonly url: string; readonly origin: string; readonly db: Pg.Client; readonly email?: string }
): Promise<SignedIn> => {
  const n = ++counter
  const email = options.email ?? `user.${n}.${process.pid}.${Date.now()}@example.com`
  const headers = {
    "content-type": "application/json",
    origin: options.origin,
    "x-forwarded-for": `10.${process.pid % 250}.${Math.floor(n / 250) % 250}.${n % 250 + 1}`
  }
  const started = await fetch(`${options.url}/api/v1/auth/email/start`, { method: "POST", headers, body: JSON.stringify({ email }) })
  if (started.status !== 200) throw new Error(`sign-in start answered ${started.status}: ${await started.text()}`)
  const { challengeUuid } = (await started.json()) as { challengeUuid: string }
  const { rows } = await options.db.query<{ text_body: string }>(
    "SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1",
    [email]
  )
  const code = rows[0]?.text_body.match(/\b(\d{6})\b/)?.[1]
  if (code === undefined) throw new Error(`no sign-in code was mailed to ${email}`)
  const verified = await fetch(`${options.url}/api/v1/auth/email/verify`, {
    method: "POST",
    headers,
    body: JSON.stringify({ challengeUuid, code })
  })
  if (verified.status !== 200) throw new Error(`sign-in verify answered ${verified.status}: ${await verified.text()}`)
  const cookie = verified.headers.get("set-cookie")!.split(";")[0]!
  const session = (await verified.json()) as { user: { uuid: string }; profile: { uuid: string } }
  return { email, cookie, accountUuid: session.user.uuid, profileUuid: session.profile.uuid }
}
