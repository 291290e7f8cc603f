#!/usr/bin/env node
// Does type-checking one HttpApi grow superlinearly with its endpoints?
//
// Generates a throwaway project inside packages/domain (so it resolves the same packages and the
// domain's own `operation`, `wire`, `Authentication` and `implement`) with N endpoints shaped like
// the catalog's (groups of 6: a public read, an authenticated list, and four authenticated
// mutations with path, payload, own success and error schemas), all added to ONE HttpApi and each
// group implemented through `implement(Group)`, then runs `tsc --extendedDiagnostics` on it and
// prints the check time and instantiation count per size. Linear growth shows as a constant
// "per endpoint" column.
//
//   node scripts/typecheck-scale.mjs            # 48 96 192 288 endpoints
//   node scripts/typecheck-scale.mjs 100 300
import { execFileSync } from "node:child_process"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const domain = join(root, "packages/domain")
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const runs = sizes.length > 0 ? sizes : [48, 96, 192, 288]
const tsc = join(root, "node_modules/typescript/bin/tsc")

const groupSource = (g) => {
  const id = `g${g}`
  const s = (name) => `${name}${g}`
  return `
const ${s("Item")} = Schema.Struct({ uuid: Schema.String, title: Schema.String.pipe(Schema.maxLength(160)), n${g}: Schema.Number })
const ${s("Path")} = Schema.Struct({ uuid: Schema.UUID })
const ${s("Input")} = Schema.Struct({ title: Schema.String, tags: Schema.Array(Schema.String), x${g}: Schema.optional(Schema.Boolean) })
export const Group${g} = HttpApiGroup.make("${id}", { topLevel: true })
  .add(operation("GET", "${id}.get", "/api/v1/${id}/:uuid", { extension: true }).setPath(${s("Path")}).addSuccess(${s("Item")}).addError(wire(NotFound)))
  .add(operation("GET", "${id}.list", "/api/v1/${id}", { extension: true, scopes: ["${id}:read"] }).middleware(Authentication).addSuccess(Schema.Struct({ items: Schema.Array(${s("Item")}) })))
  .add(operation("POST", "${id}.create", "/api/v1/${id}", { extension: true, scopes: ["${id}:write"], sameOrigin: true }).middleware(Authentication).setPayload(${s("Input")}).addSuccess(${s("Item")}, { status: 201 }).addError(wire(Forbidden)).addError(wire(InvalidState)))
  .add(operation("PUT", "${id}.update", "/api/v1/${id}/:uuid", { extension: true, scopes: ["${id}:write"], sameOrigin: true }).middleware(Authentication).setPath(${s("Path")}).setPayload(${s("Input")}).addSuccess(${s("Item")}).addError(wire(NotFound)).addError(wire(RevisionConflict)))
  .add(operation("POST", "${id}.submit", "/api/v1/${id}/:uuid/submit", { extension: true, scopes: ["${id}:submit"], approval: true, sameOrigin: true }).middleware(Authentication).setPath(${s("Path")}).addSuccess(${s("Item")}).addError(wire(NotFound)).addError(wire(InvalidState)))
  .add(operation("POST", "${id}.archive", "/api/v1/${id}/:uuid/archive", { extension: true, scopes: ["${id}:write"], sameOrigin: true }).middleware(Authentication).setPath(${s("Path")}).addSuccess(${s("Item")}).addError(wire(NotFound)))
const ${s("item")} = (uuid: string) => ({ uuid, title: "t", n${g}: ${g} })
export const Group${g}Operations = implement(Group${g})({
  "${id}.get": ({ path }) => Effect.succeed(${s("item")}(path.uuid)),
  "${id}.list": (_, actor) => Effect.succeed({ items: [${s("item")}(actor.profileUuid)] }),
  "${id}.create": ({ payload }) => payload.tags.length > 9 ? Effect.fail(new Forbidden({ message: "no" })) : Effect.succeed(${s("item")}(payload.title)),
  "${id}.update": ({ path, payload }) => Effect.succeed({ ...${s("item")}(path.uuid), title: payload.title }),
  "${id}.submit": ({ path }) => Effect.succeed(${s("item")}(path.uuid)),
  "${id}.archive": ({ path }) => Effect.succeed(${s("item")}(path.uuid))
})
`
}

const measure = (endpoints) => {
  const groups = Math.ceil(endpoints / 6)
  const dir = join(domain, `.typecheck-scale-${process.pid}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir)
  try {
    const body = Array.from({ length: groups }, (_, g) => groupSource(g)).join("")
    writeFileSync(
      join(dir, "scale.ts"),
      `import { HttpApi, HttpApiGroup } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Forbidden, InvalidState, NotFound, RevisionConflict, wire } from "../src/api/ApiError.js"
import { Authentication } from "../src/api/Authentication.js"
import { operation } from "../src/api/Operation.js"
import { implement } from "../src/operations/Implementation.js"
${body}
export class ScaleApi extends HttpApi.make("scale")${Array.from({ length: groups }, (_, g) => `.add(Group${g})`).join("")} {}
`
    )
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ extends: "../../../tsconfig.base.json", compilerOptions: { noEmit: true, noUnusedLocals: false, noUnusedParameters: false }, files: ["scale.ts"] })
    )
    const out = execFileSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json"), "--extendedDiagnostics"], {
      encoding: "utf8"
    })
    const read = (label) => Number((out.match(new RegExp(`^${label}:\\s+([\\d.]+)`, "m")) ?? [])[1])
    return { endpoints: groups * 6, check: read("Check time"), instantiations: read("Instantiations") }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// The domain's own sources are part of every size (imports); measure them alone to subtract.
const base = measure(0)
console.log(`baseline (imports only): check ${base.check.toFixed(2)} s, ${base.instantiations} instantiations`)
console.log("endpoints  check s  (minus base)  per endpoint ms  instantiations  per endpoint")
for (const n of runs) {
  const r = measure(n)
  const own = r.check - base.check
  const inst = r.instantiations - base.instantiations
  console.log(
    `${String(r.endpoints).padStart(9)}  ${r.check.toFixed(2).padStart(7)}  ${own.toFixed(2).padStart(12)}  ${(
      (own * 1000) / r.endpoints
    ).toFixed(1).padStart(15)}  ${String(inst).padStart(14)}  ${(inst / r.endpoints).toFixed(0).padStart(12)}`
  )
}
