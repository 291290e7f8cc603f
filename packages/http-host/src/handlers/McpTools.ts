import { catalog, type CatalogEntry } from "@birzha/domain"
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { JSONSchema, Option, Schema, type SchemaAST } from "effect"

/**
 * The MCP tools as an agent sees them: one per operation, named in the characters every model API
 * accepts, with input and output schemas compacted from the declaration; a small default set, the
 * rest by toolsets or through the discovery tool. The transport is handlers/McpRoute.ts.
 */

type JsonObject = { readonly [key: string]: unknown }
type Json = Record<string, unknown>
const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** What the major model APIs accept as a function name. */
export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * A tool's name from its operation id, in one style (snake case): the dots of the id and the
 * humps of a camelCase id become underscores, letters lower case (`tasks.save` → `tasks_save`,
 * `getMyCapabilities` → `get_my_capabilities`, `profiles.get_own` → `profiles_get_own`). It is
 * reversed through the catalog (`entryOfTool`), which the start checks is one-to-one.
 */
export const toolNameOf = (operationId: string): string =>
  operationId.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/\./g, "_").toLowerCase()

/** The discovery tool: not an operation, so its name is none of theirs (checked below). */
export const discoveryToolName = "list_toolsets"

/** Groups that are no tools: the health probes are for load balancers, not agents. */
const notTools: ReadonlySet<string> = new Set(["health"])

/** Every operation an agent may be offered as a tool, in catalog order. */
export const toolEntries: ReadonlyArray<CatalogEntry> = catalog.filter((entry) => !notTools.has(entry.group))

const byToolName: ReadonlyMap<string, CatalogEntry> = (() => {
  const map = new Map<string, CatalogEntry>()
  for (const entry of toolEntries) {
    const name = toolNameOf(entry.id)
    if (!toolNamePattern.test(name)) throw new Error(`MCP: the tool name ${name} of ${entry.id} is not a valid function name`)
    const other = map.get(name)
    if (other !== undefined) throw new Error(`MCP: ${entry.id} and ${other.id} would both be the tool ${name}`)
    map.set(name, entry)
  }
  if (map.has(discoveryToolName)) throw new Error(`MCP: an operation is named like the discovery tool ${discoveryToolName}`)
  return map
})()

/** The operation a tool name stands for (the mapping's reverse). */
export const entryOfTool = (name: string): CatalogEntry | undefined => byToolName.get(name)

/** The approval flow's group: its tools are listed with any toolset, since an approval tool needs commit to finish. */
export const approvalGroup = "integrationCommands"

/**
 * The default tools of a person's agent: find and read publications and profiles, manage own task
 * drafts, respond and message, follow deals and offers, learn as a learner, finish what the owner
 * approved. Everything else is one toolset away (`?toolsets=`, `list_toolsets`).
 */
export const defaultOperations: ReadonlyArray<string> = [
  "getMyCapabilities",
  "getProfile",
  "listProfiles",
  "listPublications",
  "getPublication",
  "tasks.list",
  "tasks.get",
  "tasks.save",
  "tasks.submit",
  "responses.create",
  "responses.list",
  "responses.withdraw",
  "responses.status",
  "offers.list",
  "offers.accept",
  "threads.open",
  "threads.list",
  "threads.messages",
  "messages.send",
  "deals.list",
  "deals.get",
  "deals.results",
  "deals.complete",
  "learning.enrollments.list",
  "learning.enrollments.get",
  "learning.enrollments.enroll",
  "learning.steps.get",
  "learning.drafts.save",
  "learning.submissions.create",
  "learning.submissions.get",
  "integrationCommands.commit"
]
for (const id of defaultOperations) {
  if (!toolEntries.some((entry) => entry.id === id)) throw new Error(`MCP: the default tool ${id} is no operation`)
}
const defaultSet: ReadonlySet<string> = new Set(defaultOperations)

/** The toolsets: one per operation group, in catalog order. */
export const toolsets: ReadonlyArray<string> = [...new Set(toolEntries.map((entry) => entry.group))]

/** What a connection asked for (`/mcp?toolsets=…&readonly=1`). */
export interface Selection {
  /** `undefined`: the default set; otherwise the chosen groups (and the default set when `default` is among them). */
  readonly toolsets: ReadonlySet<string> | undefined
  readonly withDefault: boolean
  /** Only tools that change nothing are listed and run. */
  readonly readOnly: boolean
}

export const defaultSelection: Selection = { toolsets: undefined, withDefault: true, readOnly: false }

/** Reads `toolsets` and `readonly` of the connection's URL; a problem is a message for the 400. */
export const selectionOf = (params: URLSearchParams): { readonly selection: Selection } | { readonly problem: string } => {
  const readonlyParam = params.get("readonly")
  if (readonlyParam !== null && !["1", "true", "0", "false", ""].includes(readonlyParam)) {
    return { problem: "readonly: 1 or true for a read-only connection, 0 or false (the default) otherwise" }
  }
  const readOnly = readonlyParam === "1" || readonlyParam === "true"
  const selected = params.get("toolsets")
  if (selected === null || selected.trim() === "") return { selection: { ...defaultSelection, readOnly } }
  const names = selected.split(",").map((name) => name.trim()).filter((name) => name !== "")
  if (names.includes("all")) return { selection: { toolsets: new Set(toolsets), withDefault: true, readOnly } }
  const unknown = names.filter((name) => name !== "default" && !toolsets.includes(name))
  if (unknown.length > 0) {
    return { problem: `toolsets: no toolset ${unknown.join(", ")}; known: default, all, ${toolsets.join(", ")}` }
  }
  return { selection: { toolsets: new Set(names.filter((name) => name !== "default")), withDefault: names.includes("default"), readOnly } }
}

const changesNothing = (entry: CatalogEntry) => entry.method === "GET"

/** Whether the connection may run the tool at all (read-only refuses what changes data). */
export const runnable = (entry: CatalogEntry, selection: Selection) => !selection.readOnly || changesNothing(entry)

/** Whether the connection lists the tool (of those the key may run). */
export const listed = (entry: CatalogEntry, selection: Selection) =>
  runnable(entry, selection) && (
    selection.toolsets === undefined
      ? defaultSet.has(entry.id)
      : (selection.withDefault && defaultSet.has(entry.id)) || selection.toolsets.has(entry.group) || entry.group === approvalGroup
  )

// ---------------------------------------------------------------------------------------------
// Schemas

/**
 * Effect's constraint filters describe themselves ("a string at most 80 character(s) long", "an
 * integer", "a Universally Unique Identifier"): the JSON Schema keyword beside it says the same,
 * so only a description of meaning (a sentence of the declaration, capitalised) is kept.
 */
const generatedDescription = /^an? /

const jsonOf = (ast: SchemaAST.AST): { readonly schema: JsonObject; readonly defs: JsonObject } | undefined => {
  const made: unknown = JSONSchema.make(Schema.make(ast))
  if (!isObject(made)) return undefined
  const { $defs, $schema: _schema, ...top } = made
  return { schema: top, defs: isObject($defs) ? $defs : {} }
}

/** `jsonOf` of an answer: one that has no JSON Schema (an empty answer) has no output schema. */
const answerJsonOf = (ast: SchemaAST.AST) => {
  try {
    return jsonOf(ast)
  } catch {
    return undefined
  }
}

const refName = (value: unknown) => typeof value === "string" && value.startsWith("#/$defs/") ? value.slice("#/$defs/".length) : undefined

/**
 * A schema as an agent reads it: generated titles and descriptions left out, a reference to a
 * definition that is no object (a uuid, an integer, an enum) written in place, a lone `allOf`
 * reference with a description merged into one. Object definitions stay referenced in `$defs`.
 */
const compact = (schema: unknown, defs: JsonObject, open: boolean, depth = 0): unknown => {
  if (!isObject(schema) || depth > 40) return schema
  let node: Json = { ...schema }
  const ref = refName(node["$ref"])
  if (ref !== undefined) {
    const target = defs[ref]
    if (isObject(target) && target["type"] !== "object" && target["$ref"] === undefined && target["anyOf"] === undefined) {
      const { $ref: _ref, ...siblings } = node
      node = { ...target, ...siblings }
    }
  }
  const allOf = node["allOf"]
  if (Array.isArray(allOf) && allOf.length === 1 && isObject(allOf[0])) {
    const { allOf: _allOf, ...siblings } = node
    const inner = compact(allOf[0], defs, open, depth + 1)
    if (isObject(inner)) node = { ...inner, ...siblings }
  }
  delete node["title"]
  delete node["$id"]
  // `format: uuid` says what the uuid pattern spells out.
  if (node["format"] === "uuid") delete node["pattern"]
  // An answer may gain members (additive changes): its schema does not close it.
  if (open && node["additionalProperties"] === false) delete node["additionalProperties"]
  if (typeof node["description"] === "string" && generatedDescription.test(node["description"])) delete node["description"]
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if ((key === "properties" || key === "$defs" || key === "patternProperties") && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, member]) => [name, compact(member, defs, open, depth + 1)]))
    } else if ((key === "anyOf" || key === "oneOf" || key === "allOf" || key === "prefixItems") && Array.isArray(value)) {
      out[key] = value.map((member) => compact(member, defs, open, depth + 1))
    } else if ((key === "items" || key === "additionalProperties" || key === "not") && isObject(value)) {
      out[key] = compact(value, defs, open, depth + 1)
    } else {
      out[key] = value
    }
  }
  return out
}

/** The definitions a schema still refers to, directly or through each other, compacted. */
const usedDefs = (root: unknown, defs: JsonObject, open: boolean): Json => {
  const kept: Json = {}
  const visit = (value: unknown) => {
    if (Array.isArray(value)) return value.forEach(visit)
    if (!isObject(value)) return
    const ref = refName(value["$ref"])
    if (ref !== undefined && !(ref in kept) && ref in defs) {
      kept[ref] = compact(defs[ref], defs, open)
      visit(kept[ref])
    }
    for (const member of Object.values(value)) visit(member)
  }
  visit(root)
  return kept
}

/** The body a prepared command takes without: the server fixes them (prepare refuses them). */
export const serverFixed: ReadonlyArray<string> = ["requestUuid", "profileUuid"]

/**
 * A tool's input: one object of the fields the operation reads, from its own schemas (path,
 * query, body merged, as the approval flow's flat `arguments`), only those it declares it uses
 * (`UsedFields`), each with the description its schema carries. A body of several shapes (a union)
 * is kept whole under `allOf`. An approval tool leaves out what the server fixes.
 */
export const inputSchemaOf = (entry: CatalogEntry): Tool["inputSchema"] => {
  const properties: Json = {}
  const required: Array<string> = []
  const allOf: Array<unknown> = []
  let defs: Json = {}
  for (const part of [entry.schemas.path, entry.schemas.urlParams, entry.schemas.payload]) {
    if (Option.isNone(part)) continue
    const made = jsonOf(part.value)
    if (made === undefined) continue
    defs = { ...defs, ...made.defs }
    // A named schema (a class, an identifier) comes as a reference to its definition: use the definition.
    const ref = refName(made.schema["$ref"])
    const target = ref === undefined ? undefined : defs[ref]
    const json: JsonObject = isObject(target) ? target : made.schema
    if (json["type"] === "object" && isObject(json["properties"]) && json["anyOf"] === undefined) {
      for (const [name, schema] of Object.entries(json["properties"])) {
        if (entry.usedFields !== undefined && !entry.usedFields.includes(name)) continue
        properties[name] = schema
      }
      if (Array.isArray(json["required"])) {
        required.push(...json["required"].filter((name): name is string => typeof name === "string" && name in properties))
      }
    } else {
      allOf.push(json)
    }
  }
  if (entry.approval) for (const name of serverFixed) delete properties[name]
  const needed = entry.approval ? required.filter((name) => !serverFixed.includes(name)) : required
  const body = compact({
    type: "object",
    properties,
    ...(needed.length > 0 ? { required: needed } : {}),
    ...(allOf.length > 0 ? { allOf } : {})
  }, defs, false) as Json
  const kept = usedDefs(body, defs, false)
  return { ...body, type: "object", ...(Object.keys(kept).length > 0 ? { $defs: kept } : {}) } as Tool["inputSchema"]
}

/**
 * How deep an answer's schema is spelled out: its members with their types (a page's `items`, and
 * the sole member of a wrapper such as `{ command }`, are spelled out as the answer itself is); an
 * object or array among them is given by its type alone.
 * The text content holds the whole answer, and the tool's HTTP route its whole schema (OpenAPI).
 */
const answerDepth = 0

/**
 * An answer's schema within `answerDepth`: definitions written in place, and a value nested
 * deeper only by its type (an object, an array), so a list's tools stay small; a value still
 * validates against it.
 */
const bounded = (schema: unknown, defs: JsonObject, depth: number): unknown => {
  if (!isObject(schema)) return schema
  const ref = refName(schema["$ref"])
  if (ref !== undefined && isObject(defs[ref])) {
    const { $ref: _ref, ...siblings } = schema
    return bounded({ ...(defs[ref] as JsonObject), ...siblings }, defs, depth)
  }
  if (depth > answerDepth && (schema["type"] === "object" || schema["type"] === "array" || schema["anyOf"] !== undefined)) {
    const kinds = schema["anyOf"] === undefined
      ? schema["type"]
      : [...new Set((schema["anyOf"] as ReadonlyArray<unknown>).flatMap((member) => isObject(member) && typeof member["type"] === "string" ? [member["type"]] : []))]
    const known = typeof kinds === "string" ? kinds : Array.isArray(kinds) && kinds.length > 0 && !(kinds.length === 1 && kinds[0] === "null") ? kinds : undefined
    return {
      ...(known !== undefined ? { type: Array.isArray(known) && known.length === 1 ? known[0] : known } : {}),
      ...(typeof schema["description"] === "string" ? { description: schema["description"] } : {})
    }
  }
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, member]) => [
        name,
        bounded(member, defs, depth === 0 && (name === "items" || Object.keys(value).length === 1) ? depth : depth + 1)
      ]))
    } else if ((key === "anyOf" || key === "oneOf") && Array.isArray(value)) {
      out[key] = value.map((member) => bounded(member, defs, depth))
    } else if (key === "items" && isObject(value)) {
      out[key] = bounded(value, defs, depth)
    } else if (key === "required" && Array.isArray(value) && value.length === 0) {
      continue
    } else {
      out[key] = value
    }
  }
  return out
}

/** An operation's answer as an object schema, or `undefined` when it answers no object (204, a bare list). */
const answerSchemaOf = (entry: CatalogEntry): Json | undefined => {
  if (entry.successStatus === 204) return undefined
  const made = answerJsonOf(entry.schemas.success)
  if (made === undefined) return undefined
  const ref = refName(made.schema["$ref"])
  const target = ref === undefined ? made.schema : made.defs[ref]
  if (!isObject(target) || target["type"] !== "object") return undefined
  const defs = Object.fromEntries(Object.entries(made.defs).map(([name, def]) => [name, compact(def, made.defs, true)]))
  return bounded(compact(made.schema, made.defs, true), defs, 0) as Json
}

const prepareEntry = catalog.find((entry) => entry.id === "integrationCommands.prepare")
const preparedSchema = prepareEntry === undefined ? undefined : answerSchemaOf(prepareEntry)

/** Merges object schemas' definitions into one `$defs` (same names are the same definitions). */
const withMergedDefs = (schemas: ReadonlyArray<Json>) => {
  let defs: Json = {}
  const bare = schemas.map((schema) => {
    const { $defs, ...rest } = schema
    if (isObject($defs)) defs = { ...defs, ...$defs }
    return rest
  })
  return { bare, defs }
}

/**
 * A tool's `outputSchema`: what its `structuredContent` holds. An approval tool answers the
 * prepared command (prepare's answer); a tool a flag widens into an approval (tasks.save with
 * `submit: true`) answers either.
 */
export const outputSchemaOf = (entry: CatalogEntry): Tool["outputSchema"] => {
  const own = answerSchemaOf(entry)
  if (entry.approval) return preparedSchema as Tool["outputSchema"]
  const widensToApproval = Object.values(entry.widenedBy).some((id) => catalog.find((other) => other.id === id)?.approval === true)
  if (own === undefined || !widensToApproval || preparedSchema === undefined) return own as Tool["outputSchema"]
  const { bare, defs } = withMergedDefs([own, preparedSchema])
  return { type: "object", anyOf: bare, ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) } as Tool["outputSchema"]
}

// ---------------------------------------------------------------------------------------------
// Descriptions

const destructive = /\.(delete|remove|revoke|hide|archive|withdraw|cancel|close|terminate|decline|reply_remove)/i
const destructiveOf = (entry: CatalogEntry) => entry.method === "DELETE" || destructive.test(entry.id)

const sentence = (text: string) => /[.!?]$/.test(text) ? text : `${text}.`

const commitTool = toolNameOf("integrationCommands.commit")

/**
 * A tool's description from its declaration, kept short (the default list has a byte budget):
 * what it does (the declared summary), whether it changes data and removes or hides something,
 * whether it needs the owner's approval (nothing said: it runs at once), the scopes it needs; the
 * HTTP route last, for reference.
 */
export const descriptionOf = (entry: CatalogEntry): string => {
  const changes = changesNothing(entry)
    ? "Read-only."
    : `Changes data${destructiveOf(entry) ? ": removes, hides or ends something" : ""}.`
  const approval = entry.approval
    ? ` Needs the owner's approval: returns a prepared command with its approvalUrl for the owner; once approved, run it with ${commitTool}.`
    : ""
  const widenedNote = `, which needs the owner's approval: the call then returns a prepared command with its approvalUrl, to run with ${commitTool} once approved`
  const widened = Object.entries(entry.widenedBy).map(([field, id]) => {
    const other = catalog.find((candidate) => candidate.id === id)
    return ` With ${field}: true it also does ${toolNameOf(id)}${other?.approval ? widenedNote : ""}.`
  }).join("")
  const scopes = entry.scopes.length === 0 ? "" : ` Needs the scope ${entry.scopes.join(" or ")}.`
  return `${sentence(entry.summary)} ${changes}${approval}${widened}${scopes} (HTTP: ${entry.method} ${entry.path})`
}

const buildTool = (entry: CatalogEntry): Tool => {
  const output = outputSchemaOf(entry)
  return {
    name: toolNameOf(entry.id),
    description: descriptionOf(entry),
    inputSchema: inputSchemaOf(entry),
    ...(output !== undefined ? { outputSchema: output } : {}),
    annotations: {
      readOnlyHint: changesNothing(entry),
      destructiveHint: destructiveOf(entry),
      idempotentHint: entry.method === "GET" || entry.method === "PUT" || entry.method === "DELETE"
    }
  }
}

/** Every tool, built once: on the first MCP request (`buildTools`), or one by one as asked (`toolOf`). */
const tools = new Map<string, Tool>()
let building: Promise<void> | undefined

/**
 * Builds every tool, once, before the first MCP exchange uses them (handlers/McpSession.ts), not
 * when the host loads: a host that serves no agent does not hold them (bench/README.md, `memory`).
 * Building them all takes a second or more of CPU on a busy machine, so it yields to the event
 * loop every 10 ms and the other connections are answered meanwhile.
 */
export const buildTools = (): Promise<void> =>
  building ??= (async () => {
    let slice = performance.now()
    for (const entry of toolEntries) {
      toolOf(entry)
      if (performance.now() - slice > 10) {
        await new Promise((resolve) => setImmediate(resolve))
        slice = performance.now()
      }
    }
  })()

/** The tool of an operation. */
export const toolOf = (entry: CatalogEntry): Tool => {
  const built = tools.get(entry.id)
  if (built !== undefined) return built
  const tool = buildTool(entry)
  tools.set(entry.id, tool)
  return tool
}

// ---------------------------------------------------------------------------------------------
// Discovery

/** The discovery tool: the toolsets and their tools, and one toolset's whole tools on demand. */
export const discoveryTool: Tool = {
  name: discoveryToolName,
  description: "Lists every toolset this key may use, with its tools' names and whether this connection lists them. " +
    "With toolset, answers that toolset's tools whole (description, input and output schemas): call any of them " +
    "directly by name, or reconnect with /mcp?toolsets=<name>,default to have them listed. Read-only: changes nothing.",
  inputSchema: {
    type: "object",
    properties: {
      toolset: { type: "string", description: "A toolset's name from this tool's answer: its tools are answered whole." }
    },
    additionalProperties: false
  },
  outputSchema: {
    type: "object",
    properties: {
      toolsets: {
        type: "array",
        description: "The toolsets this key may use.",
        items: {
          type: "object",
          properties: {
            name: { type: "string", description: "The toolset's name, for ?toolsets= and for toolset." },
            description: { type: "string", description: "What the toolset's operations are about." },
            tools: { type: "array", items: { type: "string" }, description: "Its tools' names." },
            listed: { type: "boolean", description: "Whether this connection lists all of its tools." }
          },
          required: ["name", "description", "tools", "listed"]
        }
      },
      howToEnable: { type: "string", description: "How to have more tools listed." },
      tools: { type: "array", items: { type: "object" }, description: "With toolset: its tools, whole." }
    },
    required: ["toolsets", "howToEnable"]
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true }
}

/** The discovery tool's answer for the tools a key may run on this connection. */
export const discoveryAnswer = (runnableEntries: ReadonlyArray<CatalogEntry>, selection: Selection, toolset: string | undefined) => {
  const sets = toolsets.flatMap((name) => {
    const members = runnableEntries.filter((entry) => entry.group === name)
    if (members.length === 0) return []
    return [{
      name,
      description: members[0]?.groupDescription ?? "",
      tools: members.map((entry) => toolNameOf(entry.id)),
      listed: members.every((entry) => listed(entry, selection))
    }]
  })
  const howToEnable = "Every tool named here can be called on this connection as it is. To have a toolset's tools listed, connect to " +
    "/mcp?toolsets=default,<name>[,<name>…] (default keeps the default tools; all lists everything); add readonly=1 for a connection " +
    "that only reads."
  return {
    toolsets: sets,
    howToEnable,
    ...(toolset === undefined ? {} : { tools: runnableEntries.filter((entry) => entry.group === toolset).map(toolOf) })
  }
}
