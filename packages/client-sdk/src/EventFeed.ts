import type { EventEnvelope } from "@birzha/domain"
import { Chunk, Duration, Effect, Option, Stream } from "effect"
import { Birzha } from "./BirzhaClient.js"
import type { BirzhaPromiseClient } from "./PromiseClient.js"

/** Which events to read and how. */
export interface EventFeedOptions {
  /** A `nextCursor` kept from before; absent: from the oldest event the service keeps. */
  readonly cursor?: string | undefined
  /** Event types, `*` wildcards allowed (`["publication.*", "profile.updated"]`). */
  readonly types?: ReadonlyArray<string> | undefined
  readonly aggregateKind?: string | undefined
  readonly aggregateUuid?: string | undefined
  /** Events per request, 1 to 100 (the service's default when absent). */
  readonly limit?: number | undefined
  /** Once caught up, keep polling for new events instead of ending. */
  readonly follow?: boolean | undefined
}

const urlParams = (options: EventFeedOptions, cursor: string | undefined) => ({
  ...(cursor === undefined ? {} : { cursor }),
  ...(options.types === undefined ? {} : { types: options.types.join(",") }),
  ...(options.aggregateKind === undefined ? {} : { aggregateKind: options.aggregateKind }),
  ...(options.aggregateUuid === undefined ? {} : { aggregateUuid: options.aggregateUuid }),
  ...(options.limit === undefined ? {} : { limit: options.limit })
})

const defaultPollInterval = Duration.seconds(2)

/**
 * The caller's events as an Effect `Stream`, page after page along the cursor; with `follow` it
 * never ends and polls every `pollInterval` once caught up. A cursor older than 30 days fails the
 * stream with `ResyncRequired` (410): read the current records again and start without a cursor.
 */
export const eventStream = (options: EventFeedOptions & { readonly pollInterval?: Duration.DurationInput | undefined } = {}) =>
  Stream.unwrap(Effect.map(Birzha, (client) =>
    Stream.paginateChunkEffect(
      { cursor: options.cursor, wait: false },
      (state) =>
        Effect.gen(function*() {
          if (state.wait) yield* Effect.sleep(options.pollInterval ?? defaultPollInterval)
          const page = yield* client["events.list"]({ urlParams: urlParams(options, state.cursor) })
          const next = page.hasMore || options.follow === true
            ? Option.some({ cursor: page.nextCursor, wait: !page.hasMore })
            : Option.none()
          return [Chunk.fromIterable(page.items), next] as const
        })
    )))

/**
 * The caller's events as an async iterable for the Promise client:
 *
 * ```ts
 * const feed = followEvents(client, { types: ["publication.*"], follow: true })
 * for await (const event of feed) { await queue.add(event.uuid); save(feed.cursor) }
 * ```
 *
 * `cursor` is where to resume: it moves to a page's `nextCursor` once every event of that page
 * was handed out, so resuming from it may repeat the events of an unfinished page, never skip
 * one. A cursor older than 30 days rejects with `ResyncRequiredError`. `signal` ends a following
 * iteration (also while it waits for the next poll).
 */
export class EventFeed implements AsyncIterable<EventEnvelope> {
  #cursor: string | undefined

  constructor(
    private readonly client: BirzhaPromiseClient,
    private readonly options: EventFeedOptions & {
      /** Milliseconds between polls once caught up (follow only); 2000 when absent. */
      readonly pollIntervalMs?: number | undefined
      readonly signal?: AbortSignal | undefined
    } = {}
  ) {
    this.#cursor = options.cursor
  }

  /** Pass as `cursor` to a later feed to continue from here. */
  get cursor(): string | undefined {
    return this.#cursor
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<EventEnvelope, void, undefined> {
    const { signal } = this.options
    for (;;) {
      if (signal?.aborted === true) return
      const page = await this.client["events.list"]({ urlParams: urlParams(this.options, this.#cursor) })
      for (const event of page.items) yield event
      this.#cursor = page.nextCursor
      if (page.hasMore) continue
      if (this.options.follow !== true) return
      await pause(this.options.pollIntervalMs ?? Duration.toMillis(defaultPollInterval), signal)
    }
  }
}

/** `new EventFeed(client, options)`, for `for await (const event of followEvents(client, { follow: true }))`. */
export const followEvents = (client: BirzhaPromiseClient, options: ConstructorParameters<typeof EventFeed>[1] = {}): EventFeed =>
  new EventFeed(client, options)

const pause = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted === true) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener("abort", done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener("abort", done, { once: true })
  })
