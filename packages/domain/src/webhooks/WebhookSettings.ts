import { Context } from "effect"

/** What webhook commands need from the host's settings. */
export interface WebhookSettingsShape {
  /** `BIRZHA_PUBLIC_ORIGIN`: the approval page is `<origin>/webhooks/<uuid>/approve`. */
  readonly publicOrigin: string
  /** `BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK`: http:// receivers on loopback (tests, local development). */
  readonly allowHttpLoopback: boolean
}

export class WebhookSettings extends Context.Tag("@birzha/domain/WebhookSettings")<WebhookSettings, WebhookSettingsShape>() {}

/** The page where the owner approves an endpoint's exact URL (a browser session only). */
export const approvalPageUrl = (publicOrigin: string, endpointUuid: string): string =>
  `${publicOrigin}/webhooks/${endpointUuid}/approve`
