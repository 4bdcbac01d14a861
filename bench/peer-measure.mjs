// How a peer case is measured, in Node (bench/peers.mjs) and in the browser runner's page
// (bench/browser/peers-duckdb.mjs): the same method as the C++ runner (batched samples of at least
// 1 ms, percentiles by nearest rank), and the peers' own checksum. No Node module is imported here.

function nearestRank(sorted, p) {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** FNV-1a over a string, as 16 hex digits (peers' own checksums: not comparable to quire's). */
export function fnv(text) {
  // 64-bit FNV-1a in two unsigned 32-bit halves (BigInt arithmetic is ten times slower, and the
  // format peers hash tens of MB): h * (2^40 + 0x1b3) = h * 0x1b3 + (h << 40), all below 2^53.
  let hi = 0xcbf29ce4, lo = 0x84222325;
  for (let i = 0; i < text.length; i++) {
    lo = (lo ^ (text.charCodeAt(i) & 0xff)) >>> 0;
    const t = lo * 0x1b3;
    hi = (hi * 0x1b3 + Math.floor(t / 0x100000000) + ((lo << 8) >>> 0)) >>> 0;
    lo = t >>> 0;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** Measures one peer case; returns a reading case. */
export async function measure(peer, options) {
  const input = peer.input();
  const budgetNs = (options.quick ? 0.25 : options.seconds || 2) * 1e9;
  const minSampleNs = options.quick ? 2e5 : 1e6;
  const now = () => performance.now() * 1e6;
  // A peer whose run() returns a promise (hyparquet reads only asynchronously) is awaited call by
  // call; synchronous peers keep a loop without awaits.
  let t = now();
  let first = peer.run(input);
  const isAsync = typeof first?.then === 'function';
  if (isAsync) first = await first;
  const firstNs = now() - t;
  const checksum = await peer.checksum(first); // a peer's checksum may need to await (DuckDB's row count)
  t = now();
  if (isAsync) await peer.run(input);
  else peer.run(input);
  let estimate = Math.max(1, Math.min(firstNs, now() - t));
  // Warm-up: untimed calls for a quarter of the budget (at most 0.25 s, 0.05 s quick) before the
  // samples, so that V8 has optimized the peer's JavaScript (and tiered up quire's own wasm, for
  // peer.npm) when timing starts, as the C++ runner's doubling batches warm its cases up. Without
  // it, peer.npm.validate on one Observation read 17.7 us in a --seconds 0.5 run and 7.2 us when
  // measured again at once. A call longer than the warm-up is not repeated for it.
  const warmNs = Math.min(budgetNs / 4, options.quick ? 5e7 : 2.5e8);
  if (estimate < warmNs) {
    let calls = 0;
    const warmStart = now();
    while (now() - warmStart < warmNs) {
      if (isAsync) await peer.run(input);
      else peer.run(input);
      ++calls;
    }
    estimate = Math.max(1, Math.min(estimate, (now() - warmStart) / calls));
  }
  const k = estimate >= minSampleNs ? 1 : Math.ceil(minSampleNs / estimate);
  const minSamples = estimate > 1e8 ? (options.quick ? 1 : 3) : options.quick ? 5 : 10;
  const samples = Math.min(options.quick ? 200 : 1000, Math.max(minSamples, Math.floor(budgetNs / (estimate * k))));
  const perCall = [];
  for (let s = 0; s < samples; s++) {
    t = now();
    if (isAsync) for (let j = 0; j < k; j++) await peer.run(input);
    else for (let j = 0; j < k; j++) peer.run(input);
    perCall.push((now() - t) / k);
  }
  perCall.sort((a, b) => a - b);
  const median = nearestRank(perCall, 50);
  return {
    name: peer.name,
    op: peer.op,
    shape: peer.shape,
    peer: peer.peer,
    mirrors: peer.mirrors,
    input_bytes: input.length,
    // Resources (or records) in one input, when the peer says: resources/s = ops/s × items.
    ...(peer.items ? { items: peer.items } : {}),
    calls: samples * k,
    calls_per_sample: k,
    time_ns: { median, p50: median, p95: nearestRank(perCall, 95), p99: nearestRank(perCall, 99), min: perCall[0], max: perCall[perCall.length - 1] },
    throughput: { ops_per_s: 1e9 / median, bytes_per_s: (1e9 / median) * input.length },
    checksum,
  };
}
