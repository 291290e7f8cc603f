/** One operation as the spec lists it (docs/spec/operations.json). */
export interface SpecOperation {
  readonly operationId: string | null
  readonly method: string
  readonly path: string
}

export interface CatalogCoverage {
  /** Spec operations that the catalog does not declare yet. */
  readonly missing: ReadonlyArray<SpecOperation>
  /** Declared operations whose method or path differ from the spec's. */
  readonly mismatched: ReadonlyArray<{ readonly id: string; readonly declared: string; readonly spec: string }>
  /** Declared operations the spec does not list (our own, e.g. moderation). */
  readonly extra: ReadonlyArray<string>
  readonly declared: number
}

/** Compares the catalog with the spec's operation list: same ids, same methods, same paths. */
export const coverage = (
  catalog: ReadonlyArray<{ readonly id: string; readonly method: string; readonly path: string; readonly specId: string | null }>,
  spec: ReadonlyArray<SpecOperation>
): CatalogCoverage => {
  const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`
  const bySpecId = new Map(spec.filter((op) => op.operationId !== null).map((op) => [op.operationId, op]))
  const unnamed = new Map(spec.filter((op) => op.operationId === null).map((op) => [key(op.method, op.path), op]))
  const covered = new Set<SpecOperation>()
  const mismatched: Array<{ id: string; declared: string; spec: string }> = []
  const extra: Array<string> = []
  for (const entry of catalog) {
    const declared = key(entry.method, entry.path)
    const match = entry.specId !== null ? bySpecId.get(entry.specId) : unnamed.get(declared)
    if (match === undefined) {
      extra.push(entry.id)
      continue
    }
    covered.add(match)
    if (key(match.method, match.path) !== declared) {
      mismatched.push({ id: entry.id, declared, spec: key(match.method, match.path) })
    }
  }
  return { missing: spec.filter((op) => !covered.has(op)), mismatched, extra, declared: catalog.length }
}
