// Writes the generated parts of docs/areas/*.md from the code's own data: the state machines
// (the transition tables of packages/domain/src), the operations of each group with who may call
// them (the catalog's declared policy, the learning permission table and enrollment rules), the
// events each area emits (the event catalog) and the learning roles' atoms.
//
// A generated part sits between `<!-- generated: <directive> -->` and `<!-- end generated -->`;
// the text around it is written by hand. Directives:
//   machine <name>              a transition table of `machines` below
//   states <module>#<export>    the values of a Schema.Literal (a record's states)
//   operations <group>[,…]      the operations of catalog groups (packages/domain/src/api/BirzhaApi.ts)
//   events <kind>[,…]           the event types about these aggregate kinds (events/EventCatalog.ts)
//   atoms                       the learning staff roles and the atoms each holds (learning/Permissions.ts)
//
//   node scripts/docs-state-machines.mjs           rewrite the generated parts
//   node scripts/docs-state-machines.mjs --check   exit 1 when a file is stale (what the test checks)
//
// The sources are TypeScript: the script loads them through Vite (a dependency of vitest) with the
// workspace's `source` condition, as the tests do.
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

export const root = join(dirname(fileURLToPath(import.meta.url)), "..")
export const areasDir = join(root, "docs", "areas")
const domain = "packages/domain/src"

/**
 * Every transition table of the domain, by the name the docs use. `key`: the header of the
 * record's key column for tables written as records (`{ trigger: { from, to } }`).
 */
export const machines = {
  relation: { module: "relations/Transitions.ts", export: "transitions" },
  "relation-system": { module: "relations/Transitions.ts", export: "systemTransitions", key: "transition" },
  course: { module: "learning/courses/Courses.ts", export: "courseTransitions", key: "operation" },
  run: { module: "learning/courses/Runs.ts", export: "runTransitions", key: "trigger" },
  enrollment: { module: "learning/enrollments/EnrollmentMachine.ts", export: "enrollmentTransitions", key: "transition" },
  step: { module: "learning/steps/StepStates.ts", export: "stepTransitions", key: "from" },
  submission: { module: "learning/steps/SubmissionMachine.ts", export: "submissionTransitions", key: "trigger" },
  checker: { module: "learning/grading/Checkers.ts", export: "checkerTransitions", key: "trigger" },
  "review-assignment": { module: "learning/reviews/ReviewAssignments.ts", export: "assignmentTransitions", key: "trigger" },
  extension: { module: "learning/corrections/Extensions.ts", export: "extensionTransitions", key: "transition" },
  appeal: { module: "learning/corrections/Appeals.ts", export: "appealTransitions" },
  staff: { module: "learning/staff/Staff.ts", export: "staffTransitions" },
  "email-invitation": { module: "learning/staff/EmailInvitations.ts", export: "emailTransitions" },
  ownership: { module: "learning/staff/Ownership.ts", export: "ownershipTransitions" },
  group: { module: "learning/staff/Groups.ts", export: "groupTransitions" },
  "community-thread": { module: "learning/community/Community.ts", export: "threadTransitions" }
}

/** `export const xxxTransitions` in the domain's sources (tests aside): what `machines` must cover. */
export const declaredTransitionTables = () => {
  const found = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
        for (const match of readFileSync(path, "utf8").matchAll(/^export const (\w+Transitions)\b/gm)) {
          found.push({ module: relative(join(root, domain), path).split("\\").join("/"), export: match[1] })
        }
      }
    }
  }
  walk(join(root, domain))
  return found
}

const code = (value) => `\`${value}\``
const cell = (text) => String(text).replace(/\|/g, "\\|").replace(/\n/g, " ")
const table = (headers, rows) =>
  [`| ${headers.join(" | ")} |`, `|${headers.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`)].join("\n")

/** One value of a transition row as the docs show it. */
const show = (value) => {
  if (value === undefined || value === null) return "—"
  if (value === true) return "yes"
  if (Array.isArray(value)) return value.length === 0 ? "—" : value.map(show).join(", ")
  if (typeof value === "object") {
    if ("type" in value) return value.status === undefined ? code(value.type) : `${code(value.type)} (status ${code(value.status)})`
    return Object.entries(value).map(([k, v]) => `${k}: ${show(v)}`).join("; ")
  }
  return code(value)
}

/** A transition table, whatever its shape: an array of rows, or a record of rows (or of target lists) by key. */
export const renderMachine = (data, key) => {
  const entries = Array.isArray(data)
    ? data.map((row) => ({ ...row }))
    : Object.entries(data).map(([name, row]) => Array.isArray(row) ? { [key]: name, to: row } : { [key]: name, ...row })
  const columns = []
  for (const entry of entries) for (const column of Object.keys(entry)) if (!columns.includes(column)) columns.push(column)
  // A row without a target leaves the status as it is (runs.update, courses.update...).
  return table(columns, entries.map((entry) => columns.map((column) => column === "to" && entry.to === undefined ? "(unchanged)" : show(entry[column]))))
}

const who = (entry, learning) => {
  const parts = [
    entry.access === "public" ? "anyone" : entry.sessionOnly ? "signed in, browser session only" : entry.keyOnly ? "signed in, bearer key only" : "signed in"
  ]
  if (entry.operator) parts.push("operator (CLI)")
  const requirement = learning.requirements[entry.id]
  if (requirement !== undefined) {
    parts.push(
      requirement.kind === "public" ? "course: whoever may see it" :
      requirement.kind === "staff" ? "course: any of its staff" :
      requirement.kind === "member" ? "course: its staff and learners" :
      requirement.kind === "teaching" ? "course: any of its staff (403 to others)" :
      requirement.kind === "owner" ? "course: its owner" :
      `course: staff holding ${code(requirement.atom)}`
    )
  }
  const rule = learning.enrollmentRuleOf(entry.annotations)
  if (rule !== undefined) {
    const staff = rule.staff === undefined ? undefined : rule.staff.kind === "staff" ? "staff in scope of its run" : `staff holding ${code(rule.staff.atom)} in scope`
    parts.push(`enrollment: ${[rule.learner ? "its learner" : undefined, staff].filter(Boolean).join(" or ")}`)
  }
  return parts.join("; ")
}

const approval = (entry) => {
  const widened = Object.entries(entry.widenedBy).map(([field, id]) => `with ${code(`${field}: true`)}: as ${code(id)}`)
  return [entry.approval ? "yes" : undefined, ...widened].filter(Boolean).join("; ") || "—"
}

/** The generators of each directive, given the loaded modules. */
const directives = {
  machine: async (load, name) => {
    const machine = machines[name]
    if (machine === undefined) throw new Error(`no machine ${name} in scripts/docs-state-machines.mjs`)
    const module = await load(`${domain}/${machine.module}`)
    return `${renderMachine(module[machine.export], machine.key)}\n\nFrom ${code(`${domain}/${machine.module}`)}, ${code(machine.export)}.`
  },
  states: async (load, spec) => {
    const [module, name] = spec.split("#")
    const schema = (await load(`${domain}/${module}`))[name]
    if (schema?.literals === undefined) throw new Error(`${spec} is no Schema.Literal`)
    return `States (${code(`${domain}/${module}`)}, ${code(name)}): ${schema.literals.map(code).join(", ")}.`
  },
  operations: async (load, groups) => {
    const { catalog } = await load(`${domain}/api/BirzhaApi.ts`)
    const learning = {
      requirements: (await load(`${domain}/learning/Permissions.ts`)).requirements,
      enrollmentRuleOf: (await load(`${domain}/learning/enrollments/EnrollmentRule.ts`)).enrollmentRuleOf
    }
    const wanted = groups.split(",")
    const entries = catalog.filter((entry) => wanted.includes(entry.group))
    const missing = wanted.filter((group) => !catalog.some((entry) => entry.group === group))
    if (missing.length > 0) throw new Error(`no catalog group ${missing.join(", ")}`)
    return table(
      ["operation", "what it does", "who may call it", "key scopes", "owner's approval (keys)"],
      entries.map((entry) => [code(entry.id), entry.summary, who(entry, learning), entry.scopes.map(code).join(", ") || "—", approval(entry)])
    )
  },
  events: async (load, kinds) => {
    const { catalog } = await load(`${domain}/api/BirzhaApi.ts`)
    const { eventCatalogOf } = await load(`${domain}/events/EventCatalog.ts`)
    const wanted = kinds.split(",")
    const types = eventCatalogOf(catalog).types.filter((entry) => wanted.includes(entry.aggregateKind))
    if (types.length === 0) throw new Error(`no event about ${kinds}`)
    return table(
      ["event", "record", "data.status", "what happened", "visible to"],
      types.map((entry) => [
        code(entry.type),
        code(entry.aggregateKind),
        entry.fields.find((field) => field.name === "status").values.map(code).join(", "),
        entry.summary,
        entry.permissions.visibleTo
      ])
    )
  },
  atoms: async (load) => {
    const { atoms, roleAtoms, ownerOnlyAtoms, staffRoles } = await load(`${domain}/learning/Permissions.ts`)
    return table(
      ["atom", ...staffRoles],
      atoms.map((atom) => [code(atom) + (ownerOnlyAtoms.includes(atom) ? " (owner only)" : ""), ...staffRoles.map((role) => roleAtoms[role].includes(atom) ? "yes" : "—")])
    ) + `\n\nFrom ${code(`${domain}/learning/Permissions.ts`)}, ${code("roleAtoms")}.`
  }
}

const block = /<!-- generated: ([^>]*?) -->\n[\s\S]*?<!-- end generated -->/g

/** The directives a document holds, in order. */
export const directivesOf = (text) => [...text.matchAll(block)].map((match) => match[1])

/** The document with every generated part written afresh. */
export const regenerate = async (text, load) => {
  let out = ""
  let last = 0
  for (const match of text.matchAll(block)) {
    const [name, ...args] = match[1].split(" ")
    const generate = directives[name]
    if (generate === undefined) throw new Error(`unknown directive: ${match[1]}`)
    const body = await generate(load, args.join(" "))
    out += text.slice(last, match.index) + `<!-- generated: ${match[1]} -->\n${body}\n<!-- end generated -->`
    last = match.index + match[0].length
  }
  return out + text.slice(last)
}

/** docs/areas/*.md, by absolute path. */
export const areaDocs = () =>
  readdirSync(areasDir).filter((name) => name.endsWith(".md")).sort().map((name) => join(areasDir, name))

const main = async () => {
  const check = process.argv.includes("--check")
  const { createViteServer } = await import("vitest/node")
  const server = await createViteServer({
    root,
    configFile: false,
    logLevel: "error",
    appType: "custom",
    server: { middlewareMode: true, hmr: false, ws: false },
    optimizeDeps: { noDiscovery: true, include: [] },
    resolve: { conditions: ["source"] },
    ssr: { resolve: { conditions: ["source"] } }
  })
  const stale = []
  try {
    const load = (path) => server.ssrLoadModule(`/${path}`)
    for (const file of areaDocs()) {
      const text = readFileSync(file, "utf8")
      const fresh = await regenerate(text, load)
      if (fresh === text) continue
      stale.push(relative(root, file))
      if (!check) writeFileSync(file, fresh)
    }
  } finally {
    await server.close()
  }
  if (stale.length === 0) console.log("docs/areas: up to date")
  else if (check) {
    console.error(`stale: ${stale.join(", ")} (run node scripts/docs-state-machines.mjs)`)
    process.exitCode = 1
  } else console.log(`rewrote ${stale.join(", ")}`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main()
