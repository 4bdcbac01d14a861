// The benchmark runner: the same measuring code on every target. Timing uses steady_clock
// (performance.now() in wasm, whose resolution browsers coarsen, so fast calls are batched into
// samples of at least a millisecond); allocations come from counters the allocator hooks feed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "quire/bench.h"

namespace quire::bench {
namespace {

std::vector<case_def> &case_list() {
  static std::vector<case_def> cases;
  return cases;
}

std::vector<gate_def> &gate_list() {
  static std::vector<gate_def> gates;
  return gates;
}

// Relaxed atomics. The harness's own thread (the one that resets and reads the counters) counts
// straight into the totals, so a call on one thread is counted exactly. Any other thread (the
// tasks a view's run_ndjson starts natively, a prewarm thread) counts into a slot of its own, on
// its own cache line: with one set of shared counters, two threads allocating at once fought over
// one cache line, and count_alloc took 19% of view.observation_coding's time on two threads. A
// slot's allocations and bytes are added up when the counters are read (exact); its live bytes
// move into the totals in steps of SLOT_STEP, so the peak misses at most SLOT_STEP per thread.
std::atomic<bool> hooks_present{false};
std::atomic<uint64_t> counted_calls{0}, counted_bytes{0}, live_bytes{0}, peak_bytes{0};

constexpr int64_t SLOT_STEP = 64 * 1024;
constexpr unsigned SLOTS = 64;
struct alignas(64) slot {
  std::atomic<uint64_t> calls{0}, bytes{0};
  std::atomic<int64_t> unmoved{0};  // live bytes not yet moved into live_bytes (may be negative)
};
slot slots[SLOTS];
std::atomic<unsigned> next_slot{0};
// Trivially destructible thread-locals: the hooks run inside malloc, where a thread-local with a
// destructor would register it, and registering can allocate.
thread_local bool harness_thread = false;
thread_local slot *own_slot = nullptr;

slot &slot_of_this_thread() noexcept {
  if (!own_slot) own_slot = &slots[next_slot.fetch_add(1, std::memory_order_relaxed) % SLOTS];
  return *own_slot;
}

void raise_peak(uint64_t now) noexcept {
  // The totals can dip below zero for a moment (a block another thread counted, freed here before
  // its slot moved it): such a value is no peak.
  if (static_cast<int64_t>(now) < 0) return;
  uint64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
}

// A slot's live change: moved into the totals once it reaches a step either way.
void slot_live(slot &s, int64_t change) noexcept {
  const int64_t u = s.unmoved.fetch_add(change, std::memory_order_relaxed) + change;
  if (u < SLOT_STEP && u > -SLOT_STEP) return;
  s.unmoved.fetch_sub(u, std::memory_order_relaxed);
  raise_peak(live_bytes.fetch_add(static_cast<uint64_t>(u), std::memory_order_relaxed) + static_cast<uint64_t>(u));
}

using clock_type = std::chrono::steady_clock;

double elapsed_ns(clock_type::time_point since) {
  return std::chrono::duration<double, std::nano>(clock_type::now() - since).count();
}

bool matches(const std::string &name, const std::string &filter) {
  if (filter.empty()) return true;
  size_t start = 0;
  while (start <= filter.size()) {
    size_t comma = filter.find(',', start);
    std::string part = filter.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty() && name.find(part) != std::string::npos) return true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return false;
}

// Nearest rank: the smallest value with at least p% of the samples at or below it.
double nearest_rank(const std::vector<double> &sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  if (rank < 1) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

registration::registration(case_def c) { case_list().push_back(std::move(c)); }
const std::vector<case_def> &all_cases() { return case_list(); }
gate_registration::gate_registration(gate_def g) { gate_list().push_back(std::move(g)); }
const std::vector<gate_def> &all_gates() { return gate_list(); }

namespace {
std::atomic<unsigned> threads_for_cases{0};
}
void set_case_threads(unsigned threads) noexcept { threads_for_cases.store(threads, std::memory_order_relaxed); }
unsigned case_threads() noexcept { return threads_for_cases.load(std::memory_order_relaxed); }

bool alloc_hooks_installed() noexcept { return hooks_present.load(std::memory_order_relaxed); }

alloc_counters alloc_now() noexcept {
  harness_thread = true;
  alloc_counters c{counted_calls.load(std::memory_order_relaxed), counted_bytes.load(std::memory_order_relaxed),
                   live_bytes.load(std::memory_order_relaxed), 0};
  for (const slot &s : slots) {
    c.calls += s.calls.load(std::memory_order_relaxed);
    c.bytes += s.bytes.load(std::memory_order_relaxed);
    c.live += static_cast<uint64_t>(s.unmoved.load(std::memory_order_relaxed));
  }
  c.peak = std::max(peak_bytes.load(std::memory_order_relaxed), c.live);
  return c;
}

void alloc_reset() noexcept {
  harness_thread = true;
  counted_calls.store(0, std::memory_order_relaxed);
  counted_bytes.store(0, std::memory_order_relaxed);
  for (slot &s : slots) {
    s.calls.store(0, std::memory_order_relaxed);
    s.bytes.store(0, std::memory_order_relaxed);
  }
  peak_bytes.store(alloc_now().live, std::memory_order_relaxed);
}

namespace detail {
void alloc_hooks_present() noexcept { hooks_present.store(true, std::memory_order_relaxed); }
void count_alloc(uint64_t size) noexcept {
  if (harness_thread) {
    counted_calls.fetch_add(1, std::memory_order_relaxed);
    counted_bytes.fetch_add(size, std::memory_order_relaxed);
    raise_peak(live_bytes.fetch_add(size, std::memory_order_relaxed) + size);
    return;
  }
  slot &s = slot_of_this_thread();
  s.calls.fetch_add(1, std::memory_order_relaxed);
  s.bytes.fetch_add(size, std::memory_order_relaxed);
  slot_live(s, static_cast<int64_t>(size));
}
void count_free(uint64_t size) noexcept {
  if (harness_thread) {
    live_bytes.fetch_sub(size, std::memory_order_relaxed);
    return;
  }
  slot_live(slot_of_this_thread(), -static_cast<int64_t>(size));
}
}  // namespace detail

uint64_t digest_words(std::string_view bytes, uint64_t seed) noexcept {
  uint64_t h = seed;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w = 0;
    for (int b = 7; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(bytes[i + static_cast<size_t>(b)]);
    h ^= w;
    h *= 1099511628211ull;
  }
  for (; i < bytes.size(); ++i) {
    h ^= static_cast<unsigned char>(bytes[i]);
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t rng::next() noexcept {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<case_reading> run_cases(const run_options &options) {
  std::vector<const case_def *> chosen;
  for (const auto &c : all_cases()) {
    if ((options.large || !c.large) && matches(c.name(), options.filter)) chosen.push_back(&c);
  }
  const double budget_ns = (options.quick ? 0.25 : options.seconds_per_case) * 1e9;
  const double min_sample_ns = options.quick ? 2e5 : 1e6;
  std::vector<case_reading> out;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const case_def &c = *chosen[i];
    if (options.progress) options.progress(i, chosen.size(), c.name());
    case_reading r;
    r.name = c.name();
    r.op = c.op;
    r.shape = c.shape;
    r.items = c.items;
    r.opaque_payload = c.opaque_payload;
    r.peer = c.peer;
    r.mirrors = c.mirrors;
    std::string input = c.make_input();
    r.input_bytes = input.size();

    // Warm-up call: its result is the checksum every later call must match.
    auto started = clock_type::now();
    auto first = c.run(input);
    double first_ns = elapsed_ns(started);
    if (!first) {
      r.error = first.error().describe();
      out.push_back(std::move(r));
      continue;
    }
    const uint64_t checksum = first.value();
    r.checksum = hex64(checksum);
    if (c.generated_bytes) r.generated_bytes = c.generated_bytes();

    // One call under the allocation counters.
    r.alloc_counted = alloc_hooks_installed();
    alloc_reset();
    uint64_t live_before = alloc_now().live;
    started = clock_type::now();
    auto counted = c.run(input);
    double second_ns = elapsed_ns(started);
    alloc_counters a = alloc_now();
    r.alloc_calls_per_op = static_cast<double>(a.calls);
    r.alloc_bytes_per_op = static_cast<double>(a.bytes);
    r.alloc_peak_bytes = a.peak > live_before ? a.peak - live_before : 0;
    if (!counted || counted.value() != checksum) {
      r.error = counted ? "checksum differs between calls" : counted.error().describe();
      out.push_back(std::move(r));
      continue;
    }

    // Times n calls into `ns`; false (r.error set) when a call fails or its checksum differs.
    auto time_calls = [&](uint64_t n, double &ns) {
      started = clock_type::now();
      for (uint64_t j = 0; j < n; ++j) {
        auto again = c.run(input);
        if (!again || again.value() != checksum) {
          r.error = again ? "checksum differs between calls" : again.error().describe();
          return false;
        }
      }
      ns = elapsed_ns(started);
      return true;
    };
    // A call shorter than the clock's step reads as 0 ns (a browser coarsens performance.now()
    // to 5-100 us): planning from that asked for 1,000,000 calls a sample and 1,000 samples of a
    // 2 us call, half an hour for one case. So time doubling batches until one lasts a sample.
    // The batch that does is timed twice and the shorter counts: one batch stretched by a few
    // hundred microseconds (on 2 shared cores, a descheduled thread) made a 3 us call plan 2
    // calls a sample in Chromium, which its 5 us clock then read as 5,000 ns.
    auto time_batches = [&]() -> double {
      for (uint64_t batch = 1;; batch *= 2) {
        double t = 0, again = 0;
        if (!time_calls(batch, t)) return 0;
        if (t >= min_sample_ns) {
          if (!time_calls(batch, again)) return 0;
          t = std::min(t, again);
        }
        if (t >= min_sample_ns || batch >= (uint64_t{1} << 24)) return t / static_cast<double>(batch);
      }
    };

    // Samples: batches of k calls each long enough for the clock; a large-case plan (k = 1, a
    // handful of samples) for calls that take long.
    double estimate = std::min(first_ns, second_ns);
    uint64_t k = 1, samples = 0;
    auto plan = [&] {
      estimate = std::max(1.0, estimate);
      k = estimate >= min_sample_ns ? 1 : static_cast<uint64_t>(std::ceil(min_sample_ns / estimate));
      samples = static_cast<uint64_t>(budget_ns / (estimate * static_cast<double>(k)));
      uint64_t min_samples = estimate > 1e8 ? (options.quick ? 1 : 3) : (options.quick ? 5 : 10);
      samples = std::clamp<uint64_t>(samples, min_samples, options.quick ? 200 : 1000);
    };
    if (estimate < min_sample_ns) estimate = time_batches();
    if (!r.error.empty()) {
      out.push_back(std::move(r));
      continue;
    }
    plan();
    // The first sample checks the plan. Both opening calls can be slow for reasons of their own
    // (warm-up or a descheduled thread; not pinned down): in two quick runs of four in Node and
    // one of five in Chromium, both opening calls of a 2-5 us hl7v2 case read over 0.2 ms (about
    // 2 ms in Node), and a plan of single calls then timed each call on its own, which Chromium's
    // 5 us clock reads as 0 or 5,000 ns. A sample under half its intended length means the
    // estimate was over twice too long: time batches and plan again, once. Calls as long as
    // planned keep the plan and their first sample (a long case's plan is what it was).
    double first_sample_ns = 0;
    if (time_calls(k, first_sample_ns) && first_sample_ns < min_sample_ns / 2) {
      estimate = time_batches();
      if (r.error.empty()) {
        plan();
        (void)time_calls(k, first_sample_ns);
      }
    }
    if (!r.error.empty()) {
      out.push_back(std::move(r));
      continue;
    }
    std::vector<double> per_call;
    per_call.reserve(samples);
    per_call.push_back(first_sample_ns / static_cast<double>(k));
    for (uint64_t s = 1; s < samples; ++s) {
      double t = 0;
      if (!time_calls(k, t)) break;
      per_call.push_back(t / static_cast<double>(k));
    }
    if (!r.error.empty()) {
      out.push_back(std::move(r));
      continue;
    }
    std::sort(per_call.begin(), per_call.end());
    r.calls = samples * k;
    r.calls_per_sample = k;
    r.time_ns.p50 = r.time_ns.median = nearest_rank(per_call, 50);
    r.time_ns.p95 = nearest_rank(per_call, 95);
    r.time_ns.p99 = nearest_rank(per_call, 99);
    r.time_ns.min = per_call.front();
    r.time_ns.max = per_call.back();
    r.ops_per_s = r.time_ns.median > 0 ? 1e9 / r.time_ns.median : 0;
    r.bytes_per_s = r.ops_per_s * static_cast<double>(r.input_bytes);

    // The long run: live bytes after warm-up against live bytes after many more calls.
    uint64_t flat_calls = std::clamp<uint64_t>(static_cast<uint64_t>(budget_ns / 2 / estimate), options.quick ? 3 : 10,
                                               options.quick ? 50 : 500);
    uint64_t live_start = alloc_now().live;
    for (uint64_t j = 0; j < flat_calls; ++j) (void)c.run(input);
    r.heap_flat_calls = flat_calls;
    r.heap_flat_bytes_per_call =
        (static_cast<double>(alloc_now().live) - static_cast<double>(live_start)) / static_cast<double>(flat_calls);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// Fastest time of `fn` on `input`, repeated until ~0.4 s or 25 calls (at least 5): on a shared,
// noisy machine the minimum is the figure least disturbed by other work, which a gate needs.
result<double> fastest_ns(const std::function<result<uint64_t>(std::string_view)> &fn, std::string_view input) {
  std::vector<double> times;
  double total = 0;
  while (times.size() < 5 || (total < 4e8 && times.size() < 25)) {
    auto started = clock_type::now();
    auto r = fn(input);
    double t = elapsed_ns(started);
    if (!r) return r.error();
    times.push_back(t);
    total += t;
  }
  return *std::min_element(times.begin(), times.end());
}

}  // namespace

std::vector<gate_result> run_gates(const std::string &filter,
                                   const std::function<void(const std::string &)> &progress) {
  std::vector<gate_result> out;
  for (const auto &g : all_gates()) {
    if (!matches(g.name, filter)) continue;
    if (progress) progress(g.name);
    gate_result r;
    r.name = g.name;
    std::string base = g.make_input(1), four = g.make_input(4);
    (void)g.linear(base);  // warm-up
    auto b = fastest_ns(g.linear, base), f = fastest_ns(g.linear, four);
    auto tb = fastest_ns(g.quadratic, base), tf = fastest_ns(g.quadratic, four);
    if (!b || !f || !tb || !tf) {
      r.error = !b    ? b.error().describe()
                : !f  ? f.error().describe()
                : !tb ? tb.error().describe()
                      : tf.error().describe();
      out.push_back(r);
      continue;
    }
    r.base_ns = b.value();
    r.four_ns = f.value();
    r.ratio = r.four_ns / r.base_ns;
    r.twin_base_ns = tb.value();
    r.twin_four_ns = tf.value();
    r.twin_ratio = r.twin_four_ns / r.twin_base_ns;
    r.floor = g.floor;
    r.ceiling = g.ceiling;
    r.passed = r.ratio >= g.floor && r.ratio <= g.ceiling;
    r.twin_failed = r.twin_ratio > g.ceiling;
    out.push_back(r);
  }
  return out;
}

}  // namespace quire::bench
