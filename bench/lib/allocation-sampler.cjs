// Preloaded into a host by bench/lib/allocation-profile.mjs (`node -r`): the first SIGUSR2 starts
// V8's sampling heap profiler, counting objects that garbage collections already freed too (what a
// request allocates, not what stays); the second stops it and writes the profile to the file named
// by BENCH_ALLOCATION_PROFILE, then "written" to that file's name + ".done".
const { writeFileSync } = require("node:fs")
const { Session } = require("node:inspector")

let session
process.on("SIGUSR2", () => {
  if (session === undefined) {
    session = new Session()
    session.connect()
    session.post("HeapProfiler.enable", () =>
      session.post("HeapProfiler.startSampling", {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      }))
    return
  }
  const current = session
  session = undefined
  current.post("HeapProfiler.stopSampling", (error, result) => {
    const file = process.env.BENCH_ALLOCATION_PROFILE
    if (error === null && result !== undefined) writeFileSync(file, JSON.stringify(result.profile))
    writeFileSync(`${file}.done`, error === null ? "written" : String(error.message))
    current.disconnect()
  })
})
