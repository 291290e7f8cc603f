/**
 * A strict reader of the Prometheus text exposition format 0.0.4 (what a Prometheus server
 * scrapes), for tests: it throws on anything a scraper would refuse or misread — a malformed
 * line, name, label or value, a sample before its family's `# TYPE`, a family typed twice or
 * interleaved with another, a duplicate series, a histogram whose buckets are not cumulative or
 * whose `+Inf` bucket differs from its `_count`.
 */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Family {
  readonly name: string
  readonly type: "counter" | "gauge" | "histogram" | "summary" | "untyped"
  readonly help: string | undefined
  readonly samples: ReadonlyArray<Sample>
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const floatValue = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/

const parseValue = (text: string, line: number): number => {
  if (!floatValue.test(text)) throw new Error(`line ${line}: ${JSON.stringify(text)} is not a sample value`)
  return text === "+Inf" || text === "Inf" ? Infinity : text === "-Inf" ? -Infinity : Number(text)
}

/** Reads `{a="x",b="y"}` from `text` at `at` (just after the metric name); returns the labels and where they end. */
const parseLabels = (text: string, at: number, line: number): { labels: Record<string, string>; end: number } => {
  const labels: Record<string, string> = {}
  let i = at + 1
  for (;;) {
    if (text[i] === "}") return { labels, end: i + 1 }
    const nameEnd = text.indexOf("=", i)
    if (nameEnd < 0) throw new Error(`line ${line}: a label without "="`)
    const name = text.slice(i, nameEnd)
    if (!labelName.test(name) || name.startsWith("__")) throw new Error(`line ${line}: bad label name ${JSON.stringify(name)}`)
    if (name in labels) throw new Error(`line ${line}: label ${name} twice`)
    if (text[nameEnd + 1] !== "\"") throw new Error(`line ${line}: label ${name} is not quoted`)
    let value = ""
    let j = nameEnd + 2
    for (;; j++) {
      const char = text[j]
      if (char === undefined) throw new Error(`line ${line}: unterminated label value`)
      if (char === "\"") break
      if (char === "\n") throw new Error(`line ${line}: raw newline in a label value`)
      if (char === "\\") {
        const next = text[++j]
        if (next === "\\") value += "\\"
        else if (next === "\"") value += "\""
        else if (next === "n") value += "\n"
        else throw new Error(`line ${line}: bad escape \\${next ?? ""} in a label value`)
      } else value += char
    }
    labels[name] = value
    i = j + 1
    if (text[i] === ",") i++
    else if (text[i] !== "}") throw new Error(`line ${line}: expected "," or "}" after label ${name}`)
  }
}

/** The family a sample name belongs to: its own, or a histogram's or summary's without the suffix. */
const familyOf = (name: string, families: Map<string, { type: Family["type"] }>) => {
  if (families.has(name)) return name
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.slice(0, -suffix.length)
    if (name.endsWith(suffix) && (families.get(base)?.type === "histogram" || (suffix !== "_bucket" && families.get(base)?.type === "summary"))) return base
  }
  return undefined
}

export const parsePrometheusText = (text: string): Map<string, Family> => {
  if (text !== "" && !text.endsWith("\n")) throw new Error("the exposition does not end with a line feed")
  const families = new Map<string, { type: Family["type"]; help: string | undefined; samples: Array<Sample>; typed: boolean }>()
  const series = new Set<string>()
  const closed = new Set<string>()
  let current: string | undefined
  const open = (name: string, line: number) => {
    if (current !== name) {
      if (closed.has(name)) throw new Error(`line ${line}: family ${name} continues after another family`)
      if (current !== undefined) closed.add(current)
      current = name
    }
    let family = families.get(name)
    if (family === undefined) {
      family = { type: "untyped", help: undefined, samples: [], typed: false }
      families.set(name, family)
    }
    return family
  }
  const lines = text === "" ? [] : text.slice(0, -1).split("\n")
  lines.forEach((raw, index) => {
    const line = index + 1
    if (raw.trim() === "") throw new Error(`line ${line}: empty line`)
    if (raw.startsWith("#")) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw)
      if (match === null) return // a plain comment
      const [, keyword, name, rest] = match as unknown as [string, "HELP" | "TYPE", string, string]
      if (!metricName.test(name)) throw new Error(`line ${line}: bad metric name ${JSON.stringify(name)}`)
      const family = open(name, line)
      if (keyword === "HELP") {
        if (family.help !== undefined) throw new Error(`line ${line}: second HELP for ${name}`)
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ""))) throw new Error(`line ${line}: bad escape in HELP`)
        family.help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"))
      } else {
        if (family.typed) throw new Error(`line ${line}: second TYPE for ${name}`)
        if (family.samples.length > 0) throw new Error(`line ${line}: TYPE of ${name} after its samples`)
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) throw new Error(`line ${line}: unknown type ${rest}`)
        family.type = rest as Family["type"]
        family.typed = true
      }
      return
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw)
    if (nameMatch === null) throw new Error(`line ${line}: bad sample ${JSON.stringify(raw)}`)
    const name = nameMatch[0]
    let at = name.length
    let labels: Record<string, string> = {}
    if (raw[at] === "{") ({ labels, end: at } = parseLabels(raw, at, line))
    if (raw[at] !== " ") throw new Error(`line ${line}: expected one space before the value`)
    const parts = raw.slice(at + 1).split(" ")
    if (parts.length > 2 || (parts.length === 2 && !/^-?\d+$/.test(parts[1]!))) throw new Error(`line ${line}: bad value or timestamp`)
    const value = parseValue(parts[0]!, line)
    const familyName = familyOf(name, families) ?? name
    const family = open(familyName, line)
    if (family.type === "counter" && !(value >= 0)) throw new Error(`line ${line}: negative counter`)
    if (name.endsWith("_bucket") && family.type === "histogram" && labels["le"] === undefined) throw new Error(`line ${line}: bucket without le`)
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`
    if (series.has(key)) throw new Error(`line ${line}: series ${key} twice`)
    series.add(key)
    family.samples.push({ name, labels, value })
  })
  // Histograms: per label set (le aside), buckets cumulative in le order, +Inf equal to _count.
  for (const [name, family] of families) {
    if (family.type !== "histogram") continue
    const groups = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>()
    for (const sample of family.samples) {
      const { le, ...rest } = sample.labels
      const key = JSON.stringify(Object.entries(rest).sort())
      const group = groups.get(key) ?? { buckets: [] }
      groups.set(key, group)
      if (sample.name === `${name}_bucket`) group.buckets.push([parseValue(le!, 0), sample.value])
      else if (sample.name === `${name}_count`) group.count = sample.value
      else if (sample.name === `${name}_sum`) group.sum = sample.value
      else throw new Error(`histogram ${name} has a sample ${sample.name}`)
    }
    for (const [key, group] of groups) {
      const sorted = [...group.buckets].sort((a, b) => a[0] - b[0])
      if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`histogram ${name}${key} has no +Inf bucket`)
      sorted.forEach(([, count], i) => {
        if (i > 0 && count < sorted[i - 1]![1]) throw new Error(`histogram ${name}${key}: buckets are not cumulative`)
      })
      if (group.count === undefined || group.sum === undefined) throw new Error(`histogram ${name}${key} lacks _count or _sum`)
      if (sorted.at(-1)![1] !== group.count) throw new Error(`histogram ${name}${key}: +Inf bucket differs from _count`)
    }
  }
  return new Map([...families].map(([name, family]) => [name, { name, type: family.type, help: family.help, samples: family.samples }]))
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none matches. */
export const sampleValue = (families: Map<string, Family>, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined => {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) return sample.value
    }
  }
  return undefined
}
