import type { OpenApi } from "@effect/platform"

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c] ?? c)

type Operation = OpenApi.OpenAPISpecOperation & { readonly "x-scopes"?: ReadonlyArray<string>; readonly "x-approval"?: boolean }

/**
 * The readable API reference at /api/docs, rendered on the server from the same OpenAPI document
 * (no script, no CDN: it works offline and under a strict CSP).
 */
export const renderDocsPage = (spec: OpenApi.OpenAPISpec): string => {
  const byTag = new Map<string, Array<{ method: string; path: string; op: Operation }>>()
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      const tag = op.tags?.[0] ?? "other"
      const list = byTag.get(tag) ?? []
      list.push({ method: method.toUpperCase(), path, op })
      byTag.set(tag, list)
    }
  }
  const tagDescriptions = new Map((spec.tags ?? []).map((t) => [t.name, t.description ?? ""]))
  const sections = [...byTag.entries()].map(([tag, ops]) => {
    const rows = ops.map(({ method, op, path }) => {
      const params = (op.parameters ?? []).map((p) =>
        `<code>${escapeHtml(p.name)}</code> (${escapeHtml(p.in)}${p.required ? ", required" : ""})`
      )
      const responses = Object.keys(op.responses ?? {}).join(", ")
      return `<tr id="${escapeHtml(op.operationId)}">
<td><code>${escapeHtml(op.operationId)}</code>${op.summary ? `<br><small>${escapeHtml(op.summary)}</small>` : ""}</td>
<td><span class="m m-${method.toLowerCase()}">${method}</span> <code>${escapeHtml(path)}</code></td>
<td>${params.join("<br>") || "—"}${op.requestBody ? "<br>JSON body" : ""}</td>
<td>${(op["x-scopes"] ?? []).map((s) => `<code>${escapeHtml(s)}</code>`).join(" ") || "—"}</td>
<td>${op["x-approval"] ? "yes" : "no"}</td>
<td>${escapeHtml(responses)}</td>
</tr>`
    })
    return `<section><h2 id="tag-${escapeHtml(tag)}">${escapeHtml(tag)}</h2>
<p>${escapeHtml(tagDescriptions.get(tag) ?? "")}</p>
<table><thead><tr><th>Operation</th><th>Method and path</th><th>Input</th><th>Scopes</th><th>Approval</th><th>Responses</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table></section>`
  })
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(spec.info.title)} reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%;margin-bottom:2rem}th,td{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}
code{font-family:ui-monospace,monospace;font-size:.9em}.m{font-weight:600;font-family:ui-monospace,monospace}
.m-get{color:#0a6b2d}.m-post{color:#8a4b00}.m-patch{color:#5b2a86}.m-delete{color:#a01c1c}
</style></head>
<body><main>
<h1>${escapeHtml(spec.info.title)} <small>${escapeHtml(spec.info.version)}</small></h1>
<p>${escapeHtml(spec.info.description ?? "")}</p>
<p>Machine-readable document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI ${escapeHtml(spec.openapi)}).
Errors always answer with <code>{"error":{"code","message"}}</code>.</p>
<nav><ul>${[...byTag.keys()].map((t) => `<li><a href="#tag-${escapeHtml(t)}">${escapeHtml(t)}</a></li>`).join("")}</ul></nav>
${sections.join("\n")}
</main></body></html>`
}
