import { Context } from "effect"

/**
 * `BIRZHA_PUBLIC_ORIGIN`: the exact origin browsers use. Operations whose answers carry addresses
 * (upload URLs, approval pages) build them on it, whichever transport called.
 */
export class PublicOrigin extends Context.Tag("@birzha/domain/PublicOrigin")<PublicOrigin, string>() {}
