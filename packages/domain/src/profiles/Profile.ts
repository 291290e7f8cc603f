import { Schema } from "effect"
import { maxChars, minChars } from "../kernel/Common.js"

/** The spec's profile types: individual, self-employed, sole trader, company. */
export const ProfileType = Schema.Literal("Физлицо", "Самозанятый", "ИП", "Компания").annotations({
  identifier: "ProfileType"
})
export type ProfileType = typeof ProfileType.Type

const text = (min: number, max: number) =>
  Schema.String.pipe(minChars(min), maxChars(max))

/** A trimmed, non-blank line of text between `min` and `max` characters. */
const line = (min: number, max: number) =>
  Schema.Trim.pipe(Schema.compose(text(min, max)))

const HttpsUrl = Schema.String.pipe(
  maxChars(2048),
  Schema.filter((value) => URL.canParse(value) && new URL(value).protocol === "https:", {
    message: () => "expected an https:// URL of at most 2048 characters"
  })
).annotations({ jsonSchema: { type: "string", format: "uri", maxLength: 2048, pattern: "^https://" } })

export const ProfileNetwork = Schema.Struct({
  kind: line(1, 40),
  url: HttpsUrl
}).annotations({ identifier: "ProfileNetwork" })

export const ProfileSkill = Schema.Struct({
  name: line(1, 80),
  years: Schema.optional(Schema.Int.pipe(Schema.between(0, 80)))
}).annotations({ identifier: "ProfileSkill" })

export const StructuredContact = Schema.Struct({
  kind: Schema.Literal("email", "phone", "telegram", "whatsapp", "website", "other"),
  value: line(1, 254)
}).annotations({ identifier: "StructuredContact" })

/**
 * What an owner sets on a profile: the whole editable state (save replaces, it does not patch).
 * Bounds are ours (the spec shows none); docs/decisions.md lists them.
 */
export const ProfileData = Schema.Struct({
  name: line(1, 160),
  type: ProfileType,
  isPublic: Schema.Boolean,
  showContacts: Schema.Boolean,
  avatarUrl: Schema.optional(HttpsUrl),
  about: Schema.optionalWith(text(0, 5000), { default: () => "" }),
  categories: Schema.optionalWith(Schema.Array(line(1, 80)).pipe(Schema.maxItems(20)), { default: () => [] }),
  contacts: Schema.optionalWith(text(0, 1000), { default: () => "" }),
  networks: Schema.optionalWith(Schema.Array(ProfileNetwork).pipe(Schema.maxItems(10)), { default: () => [] }),
  skills: Schema.optionalWith(Schema.Array(ProfileSkill).pipe(Schema.maxItems(50)), { default: () => [] }),
  structuredContacts: Schema.optionalWith(Schema.Array(StructuredContact).pipe(Schema.maxItems(10)), { default: () => [] })
}).annotations({ identifier: "ProfileData", parseOptions: { onExcessProperty: "error" } })
export type ProfileData = typeof ProfileData.Type

/**
 * The public view (spec: Profile). An allowlist: only these fields leave the server, and
 * `contacts` and `structuredContacts` are empty unless `showContacts` is true.
 */
export const Profile = Schema.Struct({
  uuid: Schema.UUID,
  id: Schema.String,
  name: Schema.String,
  type: ProfileType,
  showContacts: Schema.Boolean,
  avatarUrl: Schema.optional(Schema.String),
  about: Schema.String,
  categories: Schema.Array(Schema.String),
  contacts: Schema.String,
  networks: Schema.Array(ProfileNetwork),
  skills: Schema.Array(ProfileSkill),
  structuredContacts: Schema.Array(StructuredContact)
  // Spec: "extra properties allowed": clients must accept fields added later.
}).annotations({ identifier: "Profile", jsonSchema: { additionalProperties: true } })
export type Profile = typeof Profile.Type

const DateTime = Schema.Date.annotations({ jsonSchema: { type: "string", format: "date-time" } })

/** The owner's view: everything, with the revision to edit against. */
export const OwnProfile = Schema.Struct({
  ...Profile.fields,
  contacts: Schema.String,
  isPublic: Schema.Boolean,
  current: Schema.Boolean,
  revision: Schema.Int,
  createdAt: DateTime,
  updatedAt: DateTime,
  /** The profile's customer alias, once it has been a relation's customer: its reputation at customers.get. */
  customerAlias: Schema.optional(Schema.String)
}).annotations({ identifier: "OwnProfile" })
export type OwnProfile = typeof OwnProfile.Type
