// Preloaded into a server by bench/allocations.bench.mjs (`node -r`): the first SIGUSR2 starts
// V8's sampling heap profiler, counting objects that garbage collections already freed too (what a
// request allocates, not what stays), and writes `<file>.started`; the second stops it, writes the
// profile to the file named by BENCH_ALLOCATION_PROFILE and then `<file>.done` ("written" or the
// error), each marker renamed into place whole.
const { renameSync, writeFileSync } = require("node:fs")
const { Session } = require("node:inspector")

const file = process.env.BENCH_ALLOCATION_PROFILE
const mark = (suffix, text) => {
  writeFileSync(`${file}${suffix}.tmp`, text)
  renameSync(`${file}${suffix}.tmp`, `${file}${suffix}`)
}

const promotedOnly = process.env.BENCH_ALLOCATION_PROMOTED === "1"
const collectYoung = () => {
  require("node:v8").setFlagsFromString("--expose-gc")
  require("node:vm").runInNewContext("gc")({ type: "minor" })
}

let session
process.on("SIGUSR2", () => {
  if (session === undefined) {
    session = new Session()
    session.connect()
    session.post("HeapProfiler.enable", () =>
      session.post("HeapProfiler.startSampling", {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        // BENCH_ALLOCATION_PROMOTED=1: only what no young collection freed (what went to the old generation).
        includeObjectsCollectedByMinorGC: !promotedOnly
      }, (error) => mark(".started", error === null ? "started" : String(error.message))))
    return
  }
  const current = session
  session = undefined
  // Promoted mode: a young collection first, so what the young generation still holds, dead or
  // not, is not counted as promoted (up to a semi-space's worth otherwise).
  if (promotedOnly) collectYoung()
  current.post("HeapProfiler.stopSampling", (error, result) => {
    if (error === null && result !== undefined) writeFileSync(file, JSON.stringify(result.profile))
    mark(".done", error === null ? "written" : String(error.message))
    current.disconnect()
  })
})
