import { WebhookSettings } from "@birzha/domain/internal"
import { booleanFlag } from "@birzha/infrastructure"
import { Effect, Layer } from "effect"
import { HostSettings } from "./HostSettings.js"

/** What webhook commands read from the host's settings; the approval page uses it too. */
export const WebhookSettingsLive = Layer.effect(
  WebhookSettings,
  Effect.gen(function*() {
    const { publicOrigin } = yield* HostSettings
    return { publicOrigin, allowHttpLoopback: yield* booleanFlag("BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK") }
  })
)
