// Embind bindings of the benchmark harness: the same runner and cases as `quire-bench`, started
// from JavaScript (bench/bench-module.mjs, for bench/run.mjs in Node and bench/browser/ in a Web
// Worker). Linked into the benchmark module (quire-bench.mjs/.wasm), never into the shipped one.
// Results leave as one JSON text per call; progress is one callback per case.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdio>

#include "quire/bench.h"
#include "quire/json.h"

namespace {

std::string list_cases() {
  std::string out = "[";
  bool first = true;
  for (const auto &c : quire::bench::all_cases()) {
    if (!first) out += ',';
    first = false;
    out += "{\"name\":";
    quire::json::append_quoted(out, c.name());
    out += c.large ? ",\"large\":true" : ",\"large\":false";
    out += ",\"items\":";
    out += std::to_string(c.items);
    out += '}';
  }
  return out + "]";
}

std::string run_cases(const std::string &filter, bool quick, bool large, double seconds, const std::string &meta_json,
                      emscripten::val progress) {
  quire::bench::run_options opts;
  opts.filter = filter;
  opts.quick = quick;
  opts.large = large;
  if (seconds > 0) opts.seconds_per_case = seconds;
  if (!progress.isUndefined() && !progress.isNull()) {
    opts.progress = [progress](size_t i, size_t n, const std::string &name) {
      progress(static_cast<double>(i), static_cast<double>(n), name);
    };
  }
  return quire::bench::reading_json(meta_json, quire::bench::run_cases(opts));
}

std::string run_gates(const std::string &filter, emscripten::val progress) {
  auto results = quire::bench::run_gates(filter, [progress](const std::string &name) {
    if (!progress.isUndefined() && !progress.isNull()) progress(name);
  });
  std::string out = "[";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto &r = results[i];
    if (i) out += ',';
    char buf[512];
    std::snprintf(
        buf, sizeof buf,
        "{\"baseNs\":%.0f,\"fourNs\":%.0f,\"ratio\":%.4f,\"twinBaseNs\":%.0f,\"twinFourNs\":%.0f,\"twinRatio\":%.4f,"
        "\"floor\":%.2f,\"ceiling\":%.2f,\"passed\":%s,\"twinFailed\":%s,\"name\":",
        r.base_ns, r.four_ns, r.ratio, r.twin_base_ns, r.twin_four_ns, r.twin_ratio, r.floor, r.ceiling,
        r.passed ? "true" : "false", r.twin_failed ? "true" : "false");
    out += buf;
    quire::json::append_quoted(out, r.name);
    out += ",\"error\":";
    quire::json::append_quoted(out, r.error);
    out += '}';
  }
  return out + "]";
}

// A case's input, for peer libraries measured on the very same bytes in JavaScript.
emscripten::val case_input(const std::string &name) {
  for (const auto &c : quire::bench::all_cases()) {
    if (c.name() == name) {
      std::string input = c.make_input();
      auto view = emscripten::typed_memory_view(input.size(), reinterpret_cast<const uint8_t *>(input.data()));
      return emscripten::val::global("Uint8Array").new_(view);  // a copy: the view dies with `input`
    }
  }
  return emscripten::val::undefined();
}

// What a case hands a JavaScript peer beside its input (case_def::peer_spec): "" for none.
std::string case_spec(const std::string &name) {
  for (const auto &c : quire::bench::all_cases()) {
    if (c.name() == name) return c.peer_spec;
  }
  return {};
}

// A case's result as text (case_def::answer), computed on its input, for a peer's answer to be
// checked against: undefined when the case has none, an Error when the case fails.
emscripten::val case_answer(const std::string &name) {
  for (const auto &c : quire::bench::all_cases()) {
    if (c.name() != name || !c.answer) continue;
    auto text = c.answer(c.make_input());
    if (!text) return emscripten::val::global("Error").new_(std::string(text.error().message));
    return emscripten::val(*text);
  }
  return emscripten::val::undefined();
}

}  // namespace

EMSCRIPTEN_BINDINGS(quire_bench) {
  emscripten::function("benchInput", &case_input);
  emscripten::function("benchList", &list_cases);
  emscripten::function("benchRun", &run_cases);
  emscripten::function("benchGates", &run_gates);
  emscripten::function("benchSpec", &case_spec);
  emscripten::function("benchAnswer", &case_answer);
}
