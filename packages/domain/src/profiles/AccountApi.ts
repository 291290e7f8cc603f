import { HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OwnProfile, Profile, ProfileData, ProfileType } from "./Profile.js"
import { Forbidden, NotFound, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { AuthSession } from "../auth/AuthApi.js"
import { DateTime, Email, field, RequestUuid, strict } from "../kernel/Common.js"
import { KeyKind } from "../keys/Key.js"
import { anyone, authenticated } from "../kernel/Operation.js"

export const Capabilities = Schema.Struct({
  /** How the caller proved who it is: the session cookie, a bearer key over HTTP, or (later) MCP. */
  authentication: Schema.Literal("session", "key", "mcp"),
  account: Schema.Struct({ uuid: Schema.UUID, email: Schema.String }),
  profile: Schema.Struct({ uuid: Schema.UUID, id: Schema.String, name: Schema.String, type: ProfileType }),
  /** The key, when the caller is one. */
  key: Schema.optional(Schema.Struct({
    uuid: Schema.UUID,
    name: Schema.String,
    kind: KeyKind,
    httpEnabled: Schema.Boolean,
    mcpEnabled: Schema.Boolean,
    expiresAt: DateTime
  })),
  /** When the session or the key's secret stops working. */
  expiresAt: DateTime,
  /** Every scope of the catalog the caller holds: a session holds them all for its own profile; a key its own. */
  scopes: Schema.Array(Schema.String)
}).annotations({ identifier: "Capabilities" })

export const OwnProfiles = Schema.Struct({
  profile: OwnProfile,
  profiles: Schema.Array(OwnProfile)
}).annotations({ identifier: "OwnProfiles" })

export const ProfileUpdate = Schema.Struct({
  requestUuid: RequestUuid,
  profileUuid: Schema.optional(Schema.UUID),
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  data: ProfileData
}).annotations({ identifier: "ProfileUpdate", ...strict })

export const ProfileCreate = Schema.Struct({
  requestUuid: RequestUuid,
  data: ProfileData
}).annotations({ identifier: "ProfileCreate", ...strict })

export const ProfileSwitch = Schema.Struct({ profileUuid: Schema.UUID }).annotations({ identifier: "ProfileSwitch", ...strict })

export const AccountDelete = Schema.Struct({
  /** The account's email again, so a stray call cannot delete an account. */
  confirmEmail: Email
}).annotations({ identifier: "AccountDelete", ...strict })

export const OwnProfileResult = Schema.Struct({ profile: OwnProfile }).annotations({ identifier: "OwnProfileResult" })

export const AccountApi = HttpApiGroup.make("account", { topLevel: true })
  .add(
    authenticated("GET", "getMyCapabilities", "/api/v1/me/capabilities", {
      summary: "The acting profile, how the caller is authenticated, and its rights"
    }).addSuccess(Capabilities)
  )
  .add(
    authenticated("GET", "profiles.get_own", "/api/v1/commands/profiles.get_own", {
      scopes: ["profiles:read"],
      summary: "The acting profile and every profile of the account, owner view"
    }).addSuccess(OwnProfiles)
  )
  .add(
    authenticated("POST", "profiles.update", "/api/v1/commands/profiles.update", {
      scopes: ["profiles:write"],
      summary: "Replace a profile's editable data at expectedRevision"
    }, [wire(RevisionConflict), wire(RequestConflict), wire(NotFound)]).setPayload(ProfileUpdate).addSuccess(OwnProfileResult)
  )
  .add(
    authenticated("POST", "profiles.create", "/api/v1/commands/profiles.create", {
      extension: true,
      scopes: ["profiles:write"],
      summary: "Add another profile (individual, self-employed, sole trader or company) to the account"
    }, [wire(RequestConflict), wire(Forbidden)]).setPayload(ProfileCreate).addSuccess(OwnProfileResult)
  )
  .add(
    authenticated("POST", "profiles.switch", "/api/v1/commands/profiles.switch", {
      extension: true,
      scopes: ["profiles:write"],
      sessionOnly: true,
      summary: "Act as another profile of the account in this session"
    }, [wire(NotFound)]).setPayload(ProfileSwitch).addSuccess(AuthSession)
  )
  .add(
    authenticated("POST", "accounts.delete", "/api/v1/commands/accounts.delete", {
      extension: true,
      scopes: ["account:delete"],
      approval: true,
      summary: "Delete the signed-in account, its profiles and sessions"
    }, [wire(Forbidden)]).setPayload(AccountDelete).addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    anyone("GET", "getProfile", "/api/v1/profiles/:uuid", { summary: "A public profile" }, [wire(NotFound)])
      .setPath(Schema.Struct({ uuid: field(Schema.UUID, "The profile's uuid (from listProfiles or a publication's owner).") }))
      .addSuccess(Profile)
  )
  .annotate(OpenApi.Description, "The account, its profiles and the caller's capabilities")
