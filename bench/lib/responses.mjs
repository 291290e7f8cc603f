// Comparing the host's answer with a baseline's: the same bytes and the same headers, so that the
// baseline does exactly the work of sending what the host sends and nothing less.

/** Headers node:http adds by itself on both sides (and Date, which changes every second). */
const automatic = new Set(["date", "connection", "keep-alive"])

/** The response's headers as raw name/value pairs, less the ones node adds itself: what a baseline replays. */
export const replayableHeaders = (res) => {
  const pairs = []
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    if (!automatic.has(res.rawHeaders[i].toLowerCase())) pairs.push(res.rawHeaders[i], res.rawHeaders[i + 1])
  }
  return pairs
}

/** `name: value` lines of every header but Date, lowercased names, sorted. */
const headerLines = (res) => {
  const lines = []
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i].toLowerCase()
    if (name !== "date") lines.push(`${name}: ${res.rawHeaders[i + 1]}`)
  }
  return lines.sort()
}

/** Header lines one answer has and the other lacks (Date aside); empty when the headers are the same. */
export const headerDifferences = (host, baseline, name = "baseline") => {
  const a = headerLines(host)
  const b = headerLines(baseline)
  return [...a.filter((line) => !b.includes(line)).map((line) => `host only: ${line}`), ...b.filter((line) => !a.includes(line)).map((line) => `${name} only: ${line}`)]
}

/** The header names of an answer, in order, for the log. */
export const headerNames = (res) => {
  const names = []
  for (let i = 0; i < res.rawHeaders.length; i += 2) names.push(res.rawHeaders[i].toLowerCase())
  return names.join(", ")
}

/**
 * Throws unless the baseline answers the same status, bytes and headers as the host (Date aside;
 * `allowedDifferences`: header names that may differ, each said in the log; `name`: what the
 * messages call the baseline).
 */
export const assertSameAnswer = (what, host, baseline, log, { allowedDifferences = [], name = "baseline" } = {}) => {
  if (host.status !== baseline.status) throw new Error(`${what}: host answered ${host.status}, ${name} ${baseline.status}`)
  if (!host.body.equals(baseline.body)) {
    throw new Error(`${what}: host and ${name} answer different bytes:\n  host:     ${host.body.toString("utf8").slice(0, 600)}\n  ${name}: ${baseline.body.toString("utf8").slice(0, 600)}`)
  }
  const differences = headerDifferences(host, baseline, name)
  const allowed = differences.filter((line) => allowedDifferences.some((name) => line.includes(`: ${name}: `)))
  const other = differences.filter((line) => !allowed.includes(line))
  if (other.length > 0) throw new Error(`${what}: host and ${name} headers differ:\n  ${other.join("\n  ")}`)
  log(`  ${what}: host and ${name} answer the same ${host.body.length} bytes and headers (${headerNames(host)})${allowed.length > 0 ? `; allowed differences: ${allowed.join("; ")}` : ""}`)
}
