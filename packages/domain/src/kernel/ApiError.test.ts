import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { catalog, openApiDocument } from "../api/BirzhaApi.js"
import { InsufficientScope } from "../keys/KeyErrors.js"
import {
  ErrorDetailFields,
  errorDetailNames,
  Forbidden,
  InvalidRequest,
  InvalidState,
  NotFound,
  RateLimited,
  stateRefusal,
  wire
} from "./ApiError.js"

type Json = Record<string, any>
const document = (): Json => JSON.parse(JSON.stringify(openApiDocument()))

describe("the error vocabulary", () => {
  it("every error answer of the document carries only code, message and members of the one vocabulary, typed as ErrorEnvelope types them", () => {
    const schemas = document().components.schemas
    const shared = schemas.ErrorEnvelope.properties.error.properties
    expect(Object.keys(shared)).toEqual(["code", "message", "correlationId", ...errorDetailNames])
    const envelopes = Object.entries(schemas as Record<string, Json>)
      .filter(([, schema]) => typeof schema.description === "string" && schema.description.startsWith("Error envelope with code "))
    expect(envelopes.length).toBeGreaterThan(40)
    let members = 0
    for (const [name, schema] of envelopes) {
      const error = schema.properties.error
      expect(error.required, name).toEqual(["code", "message"])
      for (const [member, type] of Object.entries(error.properties as Record<string, Json>)) {
        if (member === "code") continue
        expect(shared[member], `${name}.${member}`).toEqual(type)
        if (member !== "message") members++
      }
    }
    // The classes that explain themselves: input, state, revision, limit and policy refusals.
    expect(members).toBeGreaterThan(20)
  })

  it("every class a schema violation answers with carries field and rule", () => {
    const classes = new Set(catalog.flatMap((entry) => Object.values(entry.invalidInput)))
    classes.add(InvalidRequest)
    expect(classes.size).toBeGreaterThan(5)
    for (const cls of classes) expect(Object.keys(cls.fields), cls.code).toEqual(expect.arrayContaining(["field", "rule"]))
  })

  it("a record the caller may not see is refused without members: not found and forbidden stay bare", () => {
    expect(Object.keys(NotFound.fields)).toEqual(["_tag", "message"])
    expect(Object.keys(Forbidden.fields)).toEqual(["_tag", "message"])
  })
})

describe("the wire of an error with members", () => {
  const envelope = {
    error: {
      code: "invalid_state",
      message: "tasks.submit is not allowed on a pending task",
      resource: "task",
      uuid: "0b7e8f0e-3c55-4c39-9f3c-3f2b7c1e5a10",
      state: "pending",
      allowed: ["draft", "returned"]
    }
  }

  it("decodes back into the same typed error with the same fields, and encodes to the same envelope", () => {
    const decoded = Schema.decodeUnknownSync(wire(InvalidState))(envelope)
    expect(decoded).toBeInstanceOf(InvalidState)
    const { code: _, ...fields } = envelope.error
    expect({ ...decoded, message: decoded.message }).toEqual({ _tag: "InvalidState", ...fields })
    expect(Schema.encodeSync(wire(InvalidState))(decoded)).toEqual(envelope)
  })

  it("an envelope without members (a server before them) decodes to the bare error", () => {
    const decoded = Schema.decodeUnknownSync(wire(RateLimited))({ error: { code: "rate_limited", message: "later" } })
    expect(decoded).toBeInstanceOf(RateLimited)
    expect([decoded.message, decoded.limit, decoded.retryAfterSeconds]).toEqual(["later", undefined, undefined])
  })

  it("a member of the wrong type is not the declared error", () => {
    expect(() => Schema.decodeUnknownSync(wire(InsufficientScope))({ error: { code: "insufficient_scope", message: "m", scopes: "tasks:write" } })).toThrow()
  })
})

describe("stateRefusal", () => {
  it("a transition refused in the wrong state names the record, its state and the states that allow it, once each", () => {
    const refusal = stateRefusal({
      resource: "email_invitation",
      uuid: "u-1",
      state: "accepted",
      allowed: ["pending", "pending"],
      operation: "learning.staff.email_accept"
    })
    expect(refusal).toBeInstanceOf(InvalidState)
    expect(refusal.message).toBe("learning.staff.email_accept is not allowed on an accepted email invitation; it needs pending")
    expect({ ...refusal }).toEqual({
      _tag: "InvalidState",
      resource: "email_invitation",
      uuid: "u-1",
      state: "accepted",
      allowed: ["pending"]
    })
  })

  it("the vocabulary has one schema per member", () => {
    expect(Object.keys(ErrorDetailFields)).toEqual(errorDetailNames)
  })
})
