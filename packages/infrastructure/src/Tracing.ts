import { tracingOn } from "@birzha/domain/internal"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { FetchHttpClient } from "@effect/platform"
import { Config, type ConfigError, Duration, Effect, Either, Layer, Option } from "effect"
import { invalidSetting } from "./ConfigProblem.js"

/** Where and how traces are exported, from the standard `OTEL_*` variables; `undefined` when off. */
export interface TracingSettings {
  /** The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  /** How long spans wait in the batch before they are sent (`OTEL_BSP_SCHEDULE_DELAY`, ms; 5000). */
  readonly scheduleDelayMs: number
}

const optional = (name: string) => Config.option(Config.string(name))

/** `key=value,key=value` with percent-encoded values (the OTLP exporter specification's form). */
const parseHeaders = (name: string, text: string): Either.Either<Record<string, string>, ConfigError.ConfigError> => {
  const headers: Record<string, string> = {}
  for (const part of text.split(",")) {
    if (part.trim() === "") continue
    const at = part.indexOf("=")
    if (at <= 0) return Either.left(invalidSetting(name, "expected key=value pairs separated by commas"))
    try {
      headers[decodeURIComponent(part.slice(0, at).trim()).toLowerCase()] = decodeURIComponent(part.slice(at + 1).trim())
    } catch {
      return Either.left(invalidSetting(name, "a value is not valid percent-encoding"))
    }
  }
  return Either.right(headers)
}

/**
 * The standard variables the service honours (docs/operations.md): on when an OTLP endpoint is
 * set, unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Only OTLP over HTTP is
 * spoken (protobuf, the specification's default, or JSON); `grpc` is refused at start.
 */
export const TracingConfig: Config.Config<TracingSettings | undefined> = Config.all({
  disabled: Config.withDefault(Config.boolean("OTEL_SDK_DISABLED"), false),
  exporter: optional("OTEL_TRACES_EXPORTER"),
  endpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT"),
  tracesEndpoint: optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  protocol: optional("OTEL_EXPORTER_OTLP_PROTOCOL"),
  tracesProtocol: optional("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
  headers: optional("OTEL_EXPORTER_OTLP_HEADERS"),
  tracesHeaders: optional("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
  serviceName: Config.withDefault(Config.string("OTEL_SERVICE_NAME"), "birzha"),
  scheduleDelayMs: Config.withDefault(Config.integer("OTEL_BSP_SCHEDULE_DELAY"), 5000)
}).pipe(
  Config.mapOrFail((c): Either.Either<TracingSettings | undefined, ConfigError.ConfigError> => {
    const exporter = Option.getOrUndefined(c.exporter)?.trim()
    if (c.disabled || exporter === "none") return Either.right(undefined)
    if (exporter !== undefined && exporter !== "" && exporter !== "otlp") {
      return Either.left(invalidSetting("OTEL_TRACES_EXPORTER", "only otlp (or none) is supported"))
    }
    const traces = Option.getOrUndefined(c.tracesEndpoint)?.trim()
    const base = Option.getOrUndefined(c.endpoint)?.trim()
    const url = traces !== undefined && traces !== ""
      ? traces
      : base !== undefined && base !== "" ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined
    if (url === undefined) return Either.right(undefined)
    if (!/^https?:\/\/[^\s]+$/.test(url)) {
      return Either.left(invalidSetting(traces !== undefined ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT", "expected an http:// or https:// URL"))
    }
    const protocolName = Option.isSome(c.tracesProtocol) ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL"
    const protocol = Option.getOrUndefined(Option.orElse(c.tracesProtocol, () => c.protocol))?.trim() || "http/protobuf"
    if (protocol !== "http/protobuf" && protocol !== "http/json") {
      return Either.left(invalidSetting(protocolName, "expected http/protobuf or http/json (grpc is not supported)"))
    }
    if (c.scheduleDelayMs < 0) return Either.left(invalidSetting("OTEL_BSP_SCHEDULE_DELAY", "expected milliseconds, 0 or more"))
    const common = Option.isSome(c.headers) ? parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", c.headers.value) : Either.right({})
    if (Either.isLeft(common)) return Either.left(common.left)
    const own = Option.isSome(c.tracesHeaders) ? parseHeaders("OTEL_EXPORTER_OTLP_TRACES_HEADERS", c.tracesHeaders.value) : Either.right({})
    if (Either.isLeft(own)) return Either.left(own.left)
    return Either.right({
      url,
      protocol,
      headers: { ...common.right, ...own.right },
      serviceName: c.serviceName,
      scheduleDelayMs: c.scheduleDelayMs
    })
  })
)

/**
 * Exports the service's spans over OTLP/HTTP at 100 % sampling (`OtlpTracer` of
 * `@effect/opentelemetry`, batched, flushed when the service stops) and turns `tracingOn` on for
 * everything built on this layer (kernel/Tracing.ts of the domain). Off, it provides nothing:
 * requests and worker loops keep Effect's tracer disabled and no span is built.
 */
export const tracingLayer = (settings: TracingSettings | undefined): Layer.Layer<never> =>
  settings === undefined
    ? Layer.empty
    : Layer.merge(
      OtlpTracer.layer({
        url: settings.url,
        headers: settings.headers,
        resource: { serviceName: settings.serviceName },
        exportInterval: Duration.millis(settings.scheduleDelayMs),
        shutdownTimeout: Duration.seconds(3)
      }).pipe(
        Layer.provide(settings.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(FetchHttpClient.layer)
      ),
      Layer.locallyScoped(tracingOn, true)
    )

/** `tracingLayer` from the environment (`TracingConfig`); a bad value fails the start naming its variable. */
export const TracingLive: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(Effect.map(TracingConfig, tracingLayer))
