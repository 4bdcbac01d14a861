// Fuzz target for the JSON layer: parse (tape), check (counts) and write back must agree, the fast
// tape builder must agree with the reference simdjson walk (it may decline, never differ), the walk
// on the baseline kernel with the walk on the kernel in use (haswell natively on an AVX2 CPU), and
// nothing may crash. Build with -DQUIRE_FUZZ=ON and clang; run `make fuzz`.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "../../core/src/json/json_internal.h"
#include "quire/json.h"

namespace {

bool same_tape(const quire::json::detail::tape_data &a, const quire::json::detail::tape_data &b) {
  if (a.value_count != b.value_count || a.max_depth != b.max_depth || a.strings != b.strings ||
      a.tape.size() != b.tape.size()) {
    return false;
  }
  for (size_t i = 0; i < a.tape.size(); ++i) {
    const auto &x = a.tape[i];
    const auto &y = b.tape[i];
    if (x.offset != y.offset || x.start != y.start || x.length != y.length || x.next != y.next || x.type != y.type ||
        x.flag != y.flag) {
      return false;
    }
  }
  return true;
}

bool same_error(const quire::error &a, const quire::error &b) {
  return a.code == b.code && a.offset == b.offset && a.message == b.message && a.line == b.line && a.column == b.column;
}

bool same_stats(const quire::json::stats &a, const quire::json::stats &b) {
  return a.nulls == b.nulls && a.booleans == b.booleans && a.numbers == b.numbers && a.strings == b.strings &&
         a.arrays == b.arrays && a.objects == b.objects && a.keys == b.keys && a.max_depth == b.max_depth &&
         a.bytes == b.bytes;
}

// The fast builder alone either declines or builds the reference's tape; parse() (fast, then the
// walk for what it declines) gives the reference's tape or its error, byte for byte; and the same
// for check().
void differential(std::string_view input, const quire::json::limits &lim) {
  using quire::json::tape_path;
  quire::json::detail::tape_data reference, fast, automatic, baseline;
  auto r = quire::json::parse_tape(reference, input, lim, tape_path::reference_only);
  auto f = quire::json::parse_tape(fast, input, lim, tape_path::fast_only);
  auto a = quire::json::parse_tape(automatic, input, lim, tape_path::automatic);
  if (f && (!r || !same_tape(reference, fast))) std::abort();
  if (a.ok() != r.ok()) std::abort();
  if (a && !same_tape(reference, automatic)) std::abort();
  if (!a && !same_error(a.error(), r.error())) std::abort();
  // The walk on the baseline kernel against the one in use (haswell on an AVX2 CPU).
  auto b = quire::json::parse_tape(baseline, input, lim, tape_path::baseline_only);
  if (b.ok() != r.ok()) std::abort();
  if (b && !same_tape(reference, baseline)) std::abort();
  if (!b && !same_error(b.error(), r.error())) std::abort();
  auto cr = quire::json::check_with(input, lim, tape_path::reference_only);
  auto cf = quire::json::check_with(input, lim, tape_path::fast_only);
  auto ca = quire::json::check_with(input, lim, tape_path::automatic);
  if (cf.ok() != f.ok()) std::abort();
  if (cf && (!cr || !same_stats(cf.value(), cr.value()))) std::abort();
  if (ca.ok() != cr.ok()) std::abort();
  if (ca && !same_stats(ca.value(), cr.value())) std::abort();
  if (!ca && !same_error(ca.error(), cr.error())) std::abort();
  auto cb = quire::json::check_with(input, lim, tape_path::baseline_only);
  if (cb.ok() != cr.ok()) std::abort();
  if (cb && !same_stats(cb.value(), cr.value())) std::abort();
  if (!cb && !same_error(cb.error(), cr.error())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  quire::json::limits lim;
  lim.max_depth = 256;
  differential(input, lim);
  auto doc = quire::json::parse(input, lim);
  auto stats = quire::json::check(input, lim);
  if (doc.ok() != stats.ok()) std::abort();  // the two walks must agree on validity
  if (!doc) {
    if (doc.code() != stats.code()) std::abort();
    return 0;
  }
  if (doc->value_count() != stats->values()) std::abort();
  // Writing back and parsing again gives the same text.
  std::string once = quire::json::to_json(doc->root());
  auto again = quire::json::parse(once, lim);
  if (!again || quire::json::to_json(again->root()) != once) std::abort();
  // ... and the same value: as many values, and a written document passes the counting walk too.
  if (again->value_count() != doc->value_count()) std::abort();
  auto counted = quire::json::check(once, lim);
  if (!counted || counted->values() != doc->value_count()) std::abort();
  return 0;
}
