import { BirzhaApi } from "@birzha/domain"
import { FetchHttpClient, type HttpApi, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Effect, Layer } from "effect"

export interface BirzhaClientOptions {
  /** Where the service answers, e.g. `https://birzha.example`. */
  readonly baseUrl: string | URL
  /** A bearer key from the integrations page; omit for public reads. */
  readonly apiKey?: string | undefined
  /**
   * Extra headers on every request: a proxy's, or a session cookie for a server-side tool (which
   * must then send `Origin: <the service's public origin>` too: a change made with the cookie
   * without it is refused with 403 `forbidden_origin`).
   */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

type Api = typeof BirzhaApi
type Parts = Api extends HttpApi.HttpApi<string, infer Groups, infer E, infer _R> ? { readonly groups: Groups; readonly error: E } : never

/**
 * The client of the whole catalog, named: the catalog grew past what the compiler will write out
 * as an inferred type (TS7056), so the type is spelled from the API's groups and errors.
 */
export interface BirzhaClient extends HttpApiClient.Client<Parts["groups"], Parts["error"], never> {}

/** Creates the Effect client of the whole catalog: one method per operation id. */
export const makeBirzhaClient = (options: BirzhaClientOptions): Effect.Effect<BirzhaClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(BirzhaApi, {
    baseUrl: options.baseUrl,
    transformClient: (client) => {
      const withHeaders = options.headers === undefined
        ? client
        : HttpClient.mapRequest(client, HttpClientRequest.setHeaders(options.headers))
      return options.apiKey === undefined
        ? withHeaders
        : HttpClient.mapRequest(withHeaders, HttpClientRequest.bearerToken(options.apiKey))
    }
  })

/** The client as a service, for Effect programs: `yield* Birzha` then `client["events.types"]()`. */
export class Birzha extends Context.Tag("@birzha/client/Birzha")<Birzha, BirzhaClient>() {
  static readonly layer = (options: BirzhaClientOptions): Layer.Layer<Birzha, never, HttpClient.HttpClient> =>
    Layer.effect(Birzha, makeBirzhaClient(options))

  /** Same, over the platform's `fetch`. */
  static readonly layerFetch = (options: BirzhaClientOptions): Layer.Layer<Birzha> =>
    Birzha.layer(options).pipe(Layer.provide(FetchHttpClient.layer))
}
