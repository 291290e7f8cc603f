import { WebhookSettings } from "@birzha/domain/internal"
import { booleanFlag } from "@birzha/infrastructure"
import { Effect, Layer } from "effect"

/** What webhook commands read from the host's settings, with approval pages under `linkBase`; the approval page uses it too. */
export const WebhookSettingsLive = (linkBase: string) =>
  Layer.effect(
    WebhookSettings,
    Effect.map(booleanFlag("BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK"), (allowHttpLoopback) => ({ publicOrigin: linkBase, allowHttpLoopback }))
  )
