// The measurement of the learning read benchmarks (calendar, teaching): one read at one connection
// (baseline, then host: the latency target) and at the runner's connections (baseline, host,
// baseline: throughput against the mean of the two baseline runs), printed as one table.

/** Measures `path` on the baseline (no headers) and the host (`headers`); returns the rows, the host's p95 at one connection and the throughput ratio. */
export const latencyAgainstBaseline = async (ctx, { label, path, host, baseline, headers }) => {
  const one = { connections: 1 }
  const single = []
  single.push(await ctx.measure({ ...one, label: `${label} baseline, 1 conn`, url: baseline.url + path, server: baseline }))
  single.push(await ctx.measure({ ...one, label: `${label} host, 1 conn`, url: host.url + path, server: host, headers }))
  const many = []
  many.push(await ctx.measure({ label: `${label} baseline #1`, url: baseline.url + path, server: baseline }))
  many.push(await ctx.measure({ label: `${label} host`, url: host.url + path, server: host, headers }))
  many.push(await ctx.measure({ label: `${label} baseline #2`, url: baseline.url + path, server: baseline }))
  const base = ctx.meanRow(`${label} baseline (mean)`, [many[0], many[2]])
  ctx.printTable([...single, ...many, base])
  return {
    p95: single[1].latencyP95,
    baselineP95: single[0].latencyP95,
    ratio: many[1].requestsPerSecond / base.requestsPerSecond,
    host: many[1],
    baseline: base
  }
}
