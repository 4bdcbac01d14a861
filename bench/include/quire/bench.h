// quire/bench.h — the benchmark harness: cases registered in C++, one runner that measures them
// the same way on every target (native, wasm in Node, wasm in a browser), and the reading it writes.
//
// A case builds its input deterministically in code (seeded), then runs one operation on it and
// returns a checksum of the result, so two readings of the same case prove they did the same work.
//
//   static quire::bench::registration r{{"json.check", "records-1mib", 1 << 20, [] { return make_input(); },
//                                        [](std::string_view in) -> quire::result<uint64_t> { ... }}};
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/result.h"

namespace quire::bench {

/// One benchmark case: an operation on a shape of input.
struct case_def {
  std::string op;     ///< "json.check", "fhir.validate", "format.find"...
  std::string shape;  ///< "records-1mib", "transaction-bundle-1000"...
  /// Builds the input (deterministic: same bytes on every target). Called once per run.
  std::function<std::string()> make_input;
  /// Runs the operation once; returns a checksum of its result. An error fails the case.
  std::function<result<uint64_t>(std::string_view input)> run;
  uint64_t items = 0;           ///< records, entries or messages in one input (0 when not meaningful)
  bool large = false;           ///< only with run_options::large (slow or memory-hungry)
  bool opaque_payload = false;  ///< mostly one large opaque value (base64): the peak-memory budget is 3x, not 20x
  /// A peer library measured by a C++ case (natively only, e.g. SQLite): its name and version, and
  /// the quire case it is compared with. Empty for quire's own cases.
  std::string peer{}, mirrors{};
  /// For a case whose input is only a parameter and which generates its data inside the call (the
  /// wide write: its input is the row count, it writes ~100 MB): the bytes the call generated,
  /// asked once after the first call. The peak-memory budget compares with these, not with the
  /// input's few bytes. Empty for cases whose input is their data.
  std::function<uint64_t()> generated_bytes{};
  /// For a JavaScript peer doing the same work (bench/peers_*.mjs, through the benchmark module):
  /// what it needs beside the input (a ViewDefinition's JSON), and the case's result as text for
  /// the peer's to be checked against (a view's rows, one JSON object a line). Empty when the case
  /// has none.
  std::string peer_spec{};
  std::function<result<std::string>(std::string_view input)> answer{};
  /// Peer cases (JS libraries in Node) are registered outside C++ and carry their own names.
  std::string name() const { return op + "/" + shape; }
};

/// Registers a case at static-initialisation time (bench/cases/*.cpp).
struct registration {
  explicit registration(case_def c);
};

/// All registered cases, in registration order.
const std::vector<case_def> &all_cases();

/// Timing figures of one case, in nanoseconds per call; percentiles by nearest rank.
struct timing {
  double median = 0, p50 = 0, p95 = 0, p99 = 0, min = 0, max = 0;
};

/// What one case measured.
struct case_reading {
  std::string name, op, shape;
  uint64_t input_bytes = 0;
  uint64_t generated_bytes = 0;  ///< case_def::generated_bytes after the first call (0: none)
  uint64_t items = 0;
  uint64_t calls = 0;             ///< timed calls behind the figures
  uint64_t calls_per_sample = 0;  ///< calls batched into each timed sample (fast cases)
  timing time_ns;
  double ops_per_s = 0, bytes_per_s = 0;
  bool alloc_counted = false;  ///< false when the allocator hooks are not linked in
  double alloc_calls_per_op = 0, alloc_bytes_per_op = 0;
  uint64_t alloc_peak_bytes = 0;  ///< peak live bytes during one call, above the bytes live before it
  uint64_t heap_flat_calls = 0;
  double heap_flat_bytes_per_call = 0;
  bool opaque_payload = false;
  std::string peer, mirrors;  ///< as in case_def (empty for quire's own cases)
  std::string checksum;       ///< 16 hex digits
  std::string error;          ///< non-empty when the case failed (its figures are then zero)
};

struct run_options {
  std::string filter;             ///< substring of the case name; empty = all (comma separates alternatives)
  bool quick = false;             ///< short budgets, for CI smoke runs
  bool large = false;             ///< include large cases
  double seconds_per_case = 2.0;  ///< time budget of the timed samples of one case (quick: 0.25)
  /// Called before each case: (index, count, name). Used for a progress line.
  std::function<void(size_t, size_t, const std::string &)> progress;
};

/// Threads a case that can spread its work may use (the view cases: view::run_options::threads
/// with the target's task runner): 0, the default, as many as the task runner runs at once
/// (natively the hardware's threads; in wasm 1). Set by `quire-bench --threads N`.
void set_case_threads(unsigned threads) noexcept;
unsigned case_threads() noexcept;

/// Runs the cases that match `options`, measuring each with the same code on every target.
std::vector<case_reading> run_cases(const run_options &options);

/// Describes the run for the reading: everything but the cases (target, runtime, build, machine,
/// startup), as a JSON object text written by the runner of each target.
/// Returns the whole reading: `meta_json` with a "cases" array added (schema quire-reading/1).
std::string reading_json(std::string_view meta_json, const std::vector<case_reading> &cases);

/// Allocation counters, fed by the allocator hooks (bench/alloc_hooks.cpp) when they are linked
/// into the binary: `quire-bench` and the benchmark module (quire-bench.wasm). Tests and the
/// sanitizer builds do not link them.
struct alloc_counters {
  uint64_t calls = 0;  ///< allocations since reset
  uint64_t bytes = 0;  ///< bytes allocated since reset (usable sizes)
  uint64_t live = 0;   ///< bytes live now
  uint64_t peak = 0;   ///< highest `live` since reset
};
/// Whether allocator hooks are linked in.
bool alloc_hooks_installed() noexcept;
/// The counters now.
alloc_counters alloc_now() noexcept;
/// Zeroes calls and bytes, and sets peak to the bytes live now.
void alloc_reset() noexcept;

namespace detail {
// Called by the hooks.
void alloc_hooks_present() noexcept;
void count_alloc(uint64_t size) noexcept;
void count_free(uint64_t size) noexcept;
}  // namespace detail

/// A scaling gate: the cost of `op` at four times the input must be `floor` to `ceiling` times its
/// cost at the base size (1.5 to 8 for work linear in the input). `quadratic` is its twin: work on
/// the same inputs whose ratio must exceed `ceiling`, which proves the fixtures are large enough for
/// the gate to fail. A sublinear gate (a lookup: floor 0, ceiling 2.5) has a linear scan as its twin.
struct gate_def {
  std::string name;                                       ///< "json.check/records"
  std::function<std::string(uint64_t scale)> make_input;  ///< input at a scale (1 = base, 4 = four times)
  std::function<result<uint64_t>(std::string_view)> linear;
  std::function<result<uint64_t>(std::string_view)> quadratic;
  double floor = 1.5;
  double ceiling = 8;
};
struct gate_registration {
  explicit gate_registration(gate_def g);
};
const std::vector<gate_def> &all_gates();

struct gate_result {
  std::string name;
  double base_ns = 0, four_ns = 0, ratio = 0;                 ///< the gate
  double twin_base_ns = 0, twin_four_ns = 0, twin_ratio = 0;  ///< its quadratic self-check
  double floor = 1.5, ceiling = 8;                            ///< the gate's bounds (gate_def)
  bool passed = false;                                        ///< floor <= ratio <= ceiling
  bool twin_failed = false;                                   ///< twin_ratio > ceiling, as designed
  std::string error;
};
/// Runs the gates that match `filter` (substring; empty = all).
std::vector<gate_result> run_gates(const std::string &filter, const std::function<void(const std::string &)> &progress);

inline constexpr uint64_t FNV_PRIME = 1099511628211ull;

/// A 64-bit digest for checksums: FNV-1a's algorithm with quire's own default seed (not FNV's offset basis).
/// Inline, like mix(): the cases call both once per value they fold (every string and number of a
/// JSON walk), mostly on a few bytes, where a call costs more than the bytes; in wasm a string_view
/// argument also goes through the stack in memory.
inline uint64_t digest(std::string_view bytes, uint64_t seed = 1469598103934665603ull) noexcept {
  // Four bytes per step: the multiplications are still one chain (FNV-1a's steps cannot be
  // reordered), but the loop's own work per byte goes. The same value as the byte loop below.
  const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
  size_t n = bytes.size();
  uint64_t h = seed;
  for (; n >= 4; n -= 4, p += 4) {
    h = (h ^ p[0]) * FNV_PRIME;
    h = (h ^ p[1]) * FNV_PRIME;
    h = (h ^ p[2]) * FNV_PRIME;
    h = (h ^ p[3]) * FNV_PRIME;
  }
  for (; n > 0; --n, ++p) h = (h ^ *p) * FNV_PRIME;
  return h;
}
/// A faster digest for large results (files, row sets of megabytes): FNV-1a's step applied to each
/// 8-byte little-endian word, then to the remaining bytes one by one. Same value on every target.
uint64_t digest_words(std::string_view bytes, uint64_t seed = 1469598103934665603ull) noexcept;
/// Mixes a value into a digest: FNV-1a's step on its eight bytes, least significant first.
inline uint64_t mix(uint64_t d, uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) d = (d ^ ((value >> (8 * i)) & 0xff)) * FNV_PRIME;
  return d;
}

/// A small seeded generator (splitmix64): the same sequence on every target.
class rng {
 public:
  explicit rng(uint64_t seed) : state_(seed) {}
  uint64_t next() noexcept;
  /// Uniform in [0, n).
  uint64_t below(uint64_t n) noexcept { return n ? next() % n : 0; }

 private:
  uint64_t state_;
};

}  // namespace quire::bench

namespace quire::bench {

/// One reading to compare: its JSON text and a label (its target unless two share one).
struct labelled_reading {
  std::string label;
  std::string text;
};

/// The comparison of readings, case by case.
struct comparison {
  std::string table;              ///< the printed table, budgets and notes
  bool checksums_differ = false;  ///< some case computed different results on different readings
  size_t missing = 0;             ///< cases absent from some reading
};

/// Compares readings: each case's median and p99 in each, the ratio of each median to the first
/// reading's, allocations and peak memory, cases missing from a reading, and checksums that differ
/// (an error: the targets computed different results). Budgets (advisory) are printed after the
/// table: peak memory of one call under 20x the input (3x for opaque payloads; for a case that
/// reports generated_bytes, 20x the data it generated), and the wasm/native median ratios.
/// INVALID_JSON when a reading is not a reading.
result<comparison> compare_readings(const std::vector<labelled_reading> &readings);

}  // namespace quire::bench
