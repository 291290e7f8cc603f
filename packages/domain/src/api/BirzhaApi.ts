import { HttpApi, OpenApi } from "@effect/platform"
import { InternalError, InvalidRequest, PayloadTooLarge, ServiceUnavailable, wire } from "./ApiError.js"
import { AccountApi } from "./AccountApi.js"
import { AuthApi } from "./AuthApi.js"
import { EventsApi } from "./EventsApi.js"
import { HealthApi } from "./HealthApi.js"
import { catalogOf } from "./Operation.js"

/** The interface version the spec names; the OpenAPI document carries it as `info.version`. */
export const apiVersion = "2026-10-15"

const frameworkSchemas = ["HttpApiDecodeError", "Issue", "PropertyKey"]
const isFrameworkRef = (schema: unknown) =>
  typeof schema === "object" && schema !== null && "$ref" in schema &&
  schema.$ref === "#/components/schemas/HttpApiDecodeError"

/**
 * Requests failing their schema answer with our `invalid_request` envelope (the host converts the
 * framework's decode error before encoding), so the document must not advertise the framework's shape.
 */
function withoutFrameworkDecodeError(document: Record<string, unknown>): Record<string, unknown> {
  // The transform receives the document this module's own catalog produced.
  const spec = document as unknown as OpenApi.OpenAPISpec
  for (const item of Object.values(spec.paths)) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses)) {
        const content = response.content?.["application/json"]
        const schema = content?.schema
        if (content !== undefined && schema !== undefined && "anyOf" in schema) {
          const at = schema.anyOf.findIndex(isFrameworkRef)
          if (at >= 0) schema.anyOf.splice(at, 1)
        }
      }
    }
  }
  for (const name of frameworkSchemas) delete spec.components.schemas[name]
  return document
}

/**
 * The operation catalog: every operation of the service, declared once. HTTP routes, the OpenAPI
 * document, the SDK, MCP tools, approval and automations are all derived from this value.
 */
export class BirzhaApi extends HttpApi.make("birzha")
  .add(HealthApi)
  .add(AuthApi)
  .add(AccountApi)
  .add(EventsApi)
  .addError(wire(InvalidRequest))
  .addError(wire(PayloadTooLarge))
  .addError(wire(InternalError))
  .addError(wire(ServiceUnavailable))
  .annotate(OpenApi.Title, "Birzha API")
  .annotate(OpenApi.Version, apiVersion)
  .annotate(OpenApi.Transform, withoutFrameworkDecodeError)
  .annotate(
    OpenApi.Description,
    "Marketplace and learning service. Every error answers with {\"error\":{\"code\",\"message\"}}."
  )
{}

export const catalog = catalogOf(BirzhaApi)

/** The OpenAPI 3.1 document of the catalog (served at /api/v1/openapi.json, printed by `birzha openapi`). */
export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(BirzhaApi)
