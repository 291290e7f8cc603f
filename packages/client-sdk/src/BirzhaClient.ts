import { BirzhaApi } from "@birzha/domain"
import {
  FetchHttpClient,
  type HttpApi,
  HttpApiClient,
  type HttpApiEndpoint,
  type HttpApiGroup,
  HttpClient,
  type HttpClientError,
  HttpClientRequest
} from "@effect/platform"
import { Context, Effect, Layer, type ParseResult } from "effect"
import { type Groups, withGroups } from "./Groups.js"

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

/** Each endpoint of the catalog with the errors of its group, as `@effect/platform`'s derived client pairs them. */
type EndpointsWithGroupError = Parts["groups"] extends infer Group
  ? Group extends HttpApiGroup.HttpApiGroup<infer _Id, infer Endpoints, infer GroupError, infer _R, infer _TopLevel>
    ? Endpoints extends infer Endpoint ? { readonly endpoint: Endpoint; readonly groupError: GroupError } : never
  : never
  : never

/** What the derived client's method takes, `withResponse` aside. */
type Declared<Request> = Omit<Exclude<Request, void>, "withResponse">

/**
 * An operation's input, `{ path, urlParams, payload, headers }` as it declares them, where a part
 * whose fields are all optional may be left out (`{ urlParams: {} }` is the same as nothing).
 */
export type OperationInput<Request> = Simplify<
  & { readonly [Part in keyof Declared<Request> as {} extends Declared<Request>[Part] ? Part : never]?: Declared<Request>[Part] }
  & { readonly [Part in keyof Declared<Request> as {} extends Declared<Request>[Part] ? never : Part]: Declared<Request>[Part] }
>
type Simplify<A> = { [K in keyof A]: A[K] } & {}

/** Whether an operation may be called with no argument: nothing it takes is required. */
export type TakesNothing<Input> = {} extends Input ? true : false

type Call<Input, Result> = TakesNothing<Input> extends true ? (request?: Input) => Result : (request: Input) => Result

/**
 * One operation's method, spelled from its endpoint as the derived client's (`HttpApiClient.Client`)
 * is: its request as that method takes it, and its value alone (the derived method can also answer
 * `[value, response]` when asked `withResponse: true`; this client never asks). Spelled from the
 * endpoint rather than inferred back from the derived client's generic method: the compiler then
 * works it out once per operation instead of instantiating each generic method
 * (docs/test-suite.md, "Type check time").
 */
type Method<Endpoint, GroupError> = Endpoint extends HttpApiEndpoint.HttpApiEndpoint<
  infer _Name,
  infer _Method,
  infer Path,
  infer UrlParams,
  infer Payload,
  infer Headers,
  infer Success,
  infer Error,
  infer _R,
  infer _RE
> ? Call<
    OperationInput<HttpApiEndpoint.HttpApiEndpoint.ClientRequest<Path, UrlParams, Payload, Headers, boolean>>,
    Effect.Effect<Success, Error | GroupError | Parts["error"] | HttpClientError.HttpClientError | ParseResult.ParseError, never>
  >
  : never

/** Every operation of the catalog by its id: `client["tasks.save"]`. */
export type BirzhaOperations = {
  readonly [Operation in EndpointsWithGroupError as HttpApiEndpoint.HttpApiEndpoint.Name<Operation["endpoint"]>]: Method<
    Operation["endpoint"],
    Operation["groupError"]
  >
}

/**
 * The client of the whole catalog, named: the catalog grew past what the compiler will write out
 * as an inferred type (TS7056), so the type is spelled from the API's groups and errors. Each
 * operation is there by its id (`client["tasks.save"]`) and in its group (`client.tasks.save`).
 */
export interface BirzhaClient extends BirzhaOperations, Groups<BirzhaOperations> {}

// The parts an operation may leave out, when left out: the derived client reads `request.urlParams`
// (and `payload`, `headers`) whenever the operation declares them.
const omittable = { urlParams: {}, payload: {}, headers: {} }

/** The catalog as the platform's functions take any API: its groups and endpoints by name. */
const catalogApi = BirzhaApi as unknown as HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.AnyWithProps, never, never>

/**
 * Creates the Effect client of the whole catalog: one method per operation id. Each method is
 * derived (`HttpApiClient.endpoint`: its path, payload, success and error codecs) on its first call,
 * not all of them when the client is made: deriving every operation's codecs costs about half a
 * second of CPU, which a page that calls one operation paid at every load (bench/README.md,
 * `client-start`).
 */
export const makeBirzhaClient = (options: BirzhaClientOptions): Effect.Effect<BirzhaClient, never, HttpClient.HttpClient> =>
  Effect.map(Effect.context<HttpClient.HttpClient>(), (context) => {
    const given = Context.get(context, HttpClient.HttpClient)
    const withHeaders = options.headers === undefined ? given : HttpClient.mapRequest(given, HttpClientRequest.setHeaders(options.headers))
    const httpClient = options.apiKey === undefined
      ? withHeaders
      : HttpClient.mapRequest(withHeaders, HttpClientRequest.bearerToken(options.apiKey))
    const operations: Record<string, (request?: object) => unknown> = {}
    for (const group of Object.values(catalogApi.groups)) {
      // Every group of the catalog is top-level: an operation is `client[id]`, never `client[group][id]`.
      if (!group.topLevel) throw new Error(`The group ${group.identifier} is not top-level`)
      for (const name of Object.keys(group.endpoints)) {
        let method: ((request: object) => Effect.Effect<unknown, unknown>) | undefined
        // Derived when the first call runs (calling a method still does nothing until its effect
        // runs), in the context the client was made in, as the whole-catalog derivation was.
        operations[name] = (request) =>
          Effect.suspend(() => {
            method ??= Effect.runSync(Effect.provide(
              HttpApiClient.endpoint(catalogApi, { group: group.identifier, endpoint: name, httpClient, baseUrl: options.baseUrl }) as Effect.Effect<
                (request: object) => Effect.Effect<unknown, unknown>
              >,
              context
            ))
            return method({ ...omittable, ...request })
          })
      }
    }
    return withGroups(operations) as unknown as BirzhaClient
  })

/** The client as a service, for Effect programs: `yield* Birzha` then `client["events.types"]()`. */
export class Birzha extends Context.Tag("@birzha/client/Birzha")<Birzha, BirzhaClient>() {
  static readonly layer = (options: BirzhaClientOptions): Layer.Layer<Birzha, never, HttpClient.HttpClient> =>
    Layer.effect(Birzha, makeBirzhaClient(options))

  /** Same, over the platform's `fetch`. */
  static readonly layerFetch = (options: BirzhaClientOptions): Layer.Layer<Birzha> =>
    Birzha.layer(options).pipe(Layer.provide(FetchHttpClient.layer))
}
