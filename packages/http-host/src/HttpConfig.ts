import { booleanFlag, invalidSetting, MetricsPortConfig, requireSetting } from "@birzha/infrastructure"
import { Config, Either, Option } from "effect"
import { type ConnectionLimits, ConnectionLimitsConfig } from "./ConnectionLimits.js"

export interface HttpSettings {
  readonly port: number
  readonly host: string
  /** The exact origin browsers use; sign-in requests must carry it in `Origin`. */
  readonly publicOrigin: string
  /** Largest accepted request body; larger ones get 413 before the body is read. */
  readonly maxBodyBytes: number
  /** Read the client address from `X-Forwarded-For` (only behind a trusted proxy). */
  readonly trustProxy: boolean
  /**
   * The development default (no `BIRZHA_PUBLIC_ORIGIN`): a browser that opens the service at
   * another loopback spelling (`http://127.0.0.1:<port>`, the bound address) is redirected to the
   * public origin, where sign-in works. Off whenever the origin is configured.
   */
  readonly redirectLoopbackNavigations?: boolean
  /** Timeouts for slow and silent clients, the connection caps (global and per address); absent: `defaultConnectionLimits`. */
  readonly connections?: ConnectionLimits
  /** `BIRZHA_METRICS_PORT`: Prometheus text at `GET /metrics` on this port of `host` (`MetricsServerLive` of @birzha/infrastructure); absent: no metrics listener. */
  readonly metricsPort?: number
}

const port = Config.integer("BIRZHA_PORT").pipe(
  Config.withDefault(8080),
  requireSetting("BIRZHA_PORT", "expected a TCP port, an integer from 0 to 65535", (n: number) => n >= 0 && n <= 65535)
)

const origin = (name: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((value) => {
      const parsed = URL.canParse(value) ? new URL(value) : undefined
      return parsed !== undefined && (parsed.protocol === "http:" || parsed.protocol === "https:") &&
          parsed.origin === value.replace(/\/$/, "")
        ? Either.right(parsed.origin)
        : Either.left(
          invalidSetting(name, `expected an origin such as https://birzha.example (scheme, host and optional port, no path), got ${JSON.stringify(value)}`)
        )
    })
  )


export const HttpConfig: Config.Config<HttpSettings> = Config.all({
  port,
  host: Config.string("BIRZHA_HOST").pipe(Config.withDefault("127.0.0.1")),
  publicOrigin: Config.option(origin("BIRZHA_PUBLIC_ORIGIN")),
  maxBodyBytes: Config.integer("BIRZHA_MAX_BODY_BYTES").pipe(
    Config.withDefault(10 * 1024 * 1024),
    requireSetting("BIRZHA_MAX_BODY_BYTES", "expected a positive number of bytes", (n: number) => n > 0)
  ),
  trustProxy: booleanFlag("BIRZHA_TRUST_PROXY"),
  connections: ConnectionLimitsConfig,
  metricsPort: MetricsPortConfig
}).pipe(
  Config.map(({ metricsPort, publicOrigin, ...rest }) => ({
    ...rest,
    ...(Option.isSome(metricsPort) ? { metricsPort: metricsPort.value } : {}),
    publicOrigin: Option.getOrElse(publicOrigin, () => `http://localhost:${rest.port}`),
    redirectLoopbackNavigations: Option.isNone(publicOrigin)
  }))
)
