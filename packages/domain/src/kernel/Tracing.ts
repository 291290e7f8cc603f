import { Effect, FiberRef, HashMap, Option, Tracer } from "effect"

/**
 * Whether the service exports traces (`TracingLive` of `@birzha/infrastructure` sets it when an
 * OTLP endpoint is configured). Off, nothing below builds a span or reads a clock: the hosts run
 * their requests and worker loops with Effect's tracer disabled, so off costs nothing measurable
 * (bench/tracing.bench.mjs).
 */
export const tracingOn: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** The request an outbox event, and so the worker's work on it, came from. */
export interface TraceCause {
  /** W3C `traceparent` of the span that wrote it (`00-<trace id>-<span id>-01`), when traced. */
  readonly traceParent: string | null
  /** The `x-request-id` of the HTTP request that wrote it, when there was one. */
  readonly requestId: string | null
}

/** Whether the running fiber records spans: tracing on and the fiber's tracer enabled. */
export const isTracing: Effect.Effect<boolean> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(fiber.getFiberRef(tracingOn) && fiber.getFiberRef(FiberRef.currentTracerEnabled))
)

/** The request id the fiber's log lines carry (`requestId`: an operation's fiber starts with it, `callStartRefs` in operations/Operations.ts; the host's other routes annotate it). */
export const currentRequestId: Effect.Effect<string | null> = Effect.map(Effect.logAnnotations, (annotations) => {
  const id = HashMap.get(annotations, "requestId")
  return Option.isSome(id) && typeof id.value === "string" ? id.value : null
})

const hex = /^[0-9a-f]+$/

/** The span as a W3C `traceparent`, or null for a span that is not exported (noop, native ids). */
export const traceParentOf = (span: Tracer.AnySpan): string | null =>
  span.traceId.length === 32 && span.spanId.length === 16 && hex.test(span.traceId) && hex.test(span.spanId)
    ? `00-${span.traceId}-${span.spanId}-01`
    : null

/** The span a `traceparent` names, as the parent (or link) of work done later elsewhere. */
export const spanOfTraceParent = (traceParent: string | null | undefined): Tracer.ExternalSpan | undefined => {
  const match = traceParent === null || traceParent === undefined
    ? null
    : /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(traceParent)
  return match === null ? undefined : Tracer.externalSpan({ traceId: match[1]!, spanId: match[2]!, sampled: true })
}

/** What a write in the running fiber records as its cause (store/Outbox.ts). */
export const currentTraceCause: Effect.Effect<TraceCause> = Effect.flatMap(currentRequestId, (requestId) =>
  Effect.flatMap(isTracing, (tracing) =>
    tracing
      ? Effect.map(Effect.option(Effect.currentSpan), (span): TraceCause => ({
        traceParent: Option.isSome(span) ? traceParentOf(span.value) : null,
        requestId
      }))
      : Effect.succeed<TraceCause>({ traceParent: null, requestId })))

export interface JobSpanOptions {
  readonly attributes?: Readonly<Record<string, unknown>>
  /** The request (or event) the work was caused by: the span joins its trace, the logs name its request. */
  readonly cause?: TraceCause | undefined
}

/**
 * A unit of background work (a webhook attempt, an automation execution, a grading job, a
 * sequencing batch) as a span of its own with its SQL statements as children, when tracing is on;
 * the effect as it is otherwise. The worker loops run with the tracer disabled (polls build no
 * spans: WorkerLoop.ts), so the unit enables it for itself. Its log lines name the causing
 * request's id either way.
 */
export const jobSpan = (name: string, options: JobSpanOptions = {}) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const requestId = options.cause?.requestId ?? null
  const logged = requestId === null ? effect : Effect.annotateLogs(effect, "requestId", requestId)
  return Effect.withFiberRuntime((fiber) => {
    if (!fiber.getFiberRef(tracingOn)) return logged
    const parent = spanOfTraceParent(options.cause?.traceParent)
    return logged.pipe(
      Effect.withSpan(name, {
        kind: "internal",
        attributes: { ...options.attributes, ...(requestId === null ? {} : { "birzha.request_id": requestId }) },
        ...(parent === undefined ? { root: true } : { parent })
      }),
      Effect.withTracerEnabled(true)
    )
  })
}
