// Bytes of a V8 sampling heap profile (.heapprofile: HeapProfiler.stopSampling's `profile`) by the
// function that allocated them and by package, with frames of a bundle mapped to their original
// source through its source map (`<file>.map` beside it), as bench/allocations.bench.mjs prints them.
import { packageOf, sourceFrames } from "./source-frames.mjs"

/** `{ total, byFunction, byPackage }`, the lists as `[name, bytes]` from the largest. */
export const allocationsByFrame = (profile, repoRoot) => {
  const { frameOf } = sourceFrames(repoRoot)
  const byFunction = new Map()
  const byPackage = new Map()
  let total = 0
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes)
  const visit = (node) => {
    if (node.selfSize > 0) {
      const frame = frameOf(node.callFrame)
      add(byFunction, `${frame.name} ${frame.source === "" ? "(native)" : `${frame.source}:${frame.line}`}`, node.selfSize)
      add(byPackage, packageOf(frame.source), node.selfSize)
      total += node.selfSize
    }
    for (const child of node.children ?? []) visit(child)
  }
  visit(profile.head)
  const sorted = (map) => [...map].sort((a, b) => b[1] - a[1])
  return { total, byFunction: sorted(byFunction), byPackage: sorted(byPackage) }
}
