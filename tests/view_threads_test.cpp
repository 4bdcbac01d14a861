// NDJSON spread over threads (view::run_options): runner::run_ndjson and table_writer::feed_ndjson
// give the rows, the output bytes, the counts and the errors one thread gives, wherever a line
// that fails falls among the tasks, however the input is cut into pieces, and in whatever order
// the tasks run. A task runner that runs its tasks last to first on the calling thread makes every
// cut happen on both targets (wasm's own task runner runs one task); natively the platform's
// threads run too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "quire/platform.h"
#include "quire/view.h"
#include "test_support.h"
#include "view_shapes.h"  // bench/shapes: the synthetic Bulk Data export

using namespace quire;

namespace {

// concurrency() tasks at once on paper; run one after the other, the last first.
class last_first final : public task_runner {
 public:
  explicit last_first(unsigned n) : n_(n) {}
  unsigned concurrency() const noexcept override { return n_; }
  void run(size_t count, const std::function<void(size_t)> &work) const override {
    for (size_t i = count; i-- > 0;) work(i);
  }

 private:
  unsigned n_;
};

const char *VIEW = R"j({"resourceType":"ViewDefinition","resource":"Patient","select":[{"column":[
  {"name":"id","path":"id","type":"id"},
  {"name":"gender","path":"gender","type":"code"},
  {"name":"active","path":"active","type":"boolean"},
  {"name":"family","path":"name.first().family","type":"string"}]},
  {"forEach":"address","column":[{"name":"city","path":"city","type":"string"}]}]})j";

view::compiled_view compile(const char *text) {
  auto v = view::compile(text);
  REQUIRE(v);
  return std::move(v).value();
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

// 300 Patients of the synthetic export, with blank lines, CRLF line ends, resources of another
// type and Bundles of Patients among them; `bad` replaces line `at` (1-based) when not empty.
std::string mixed_input(const std::string &bad = "", size_t at = 0) {
  static const std::vector<std::string> patients = lines_of(bench::shapes::view_export_patients(1500));
  std::string out;
  for (size_t i = 0; i < 300; ++i) {
    const size_t line = i + 1;
    if (line == at) out += bad;
    else if (i % 37 == 5) out += "   ";
    else if (i % 41 == 7) out += R"({"resourceType":"Observation","id":"o1","status":"final"})";
    else if (i % 43 == 9) {
      out += R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":)" + patients[i] +
             R"(},{"fullUrl":"x"},{"resource":)" + patients[(i + 1) % patients.size()] + "}]}";
    } else {
      out += patients[i % patients.size()];
    }
    out += i % 11 == 3 ? "\r\n" : "\n";
  }
  return out;
}

// The lines that replace one line of the input, each failing in its own way.
struct bad_line {
  const char *what;
  std::string text;
  bool runner_fails;  // runner::run_ndjson fails too (else only the table_writer's column check)
};
std::vector<bad_line> bad_lines() {
  return {{"not JSON", R"({"resourceType":"Patient","id":)", true},
          {"a column given two values", R"({"resourceType":"Patient","id":"two","gender":["male","female"]})", true},
          {"a string in a boolean column",
           R"({"resourceType":"Patient","id":"s","active":"yes","address":[{"city":"X"}]})", false},
          {"a Bundle entry with a string in a boolean column",
           R"({"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","id":"b1"}},)"
           R"({"resource":{"resourceType":"Patient","id":"b2","active":"no","address":[{"city":"Y"}]}}]})",
           false},
          {"a Bundle whose entry is not an array", R"({"resourceType":"Bundle","entry":{}})", true}};
}

struct run_outcome {
  std::string rows;   // every row appended, as JSON
  std::string error;  // describe(), or "" on success
};

run_outcome run_ndjson(const view::compiled_view &v, const std::string &input, const view::run_options &o) {
  view::runner run(v, o);
  std::vector<view::row> rows;
  auto ok = run.run_ndjson(input, rows);
  return {view::rows_to_json(v, rows), ok ? std::string() : ok.error().describe()};
}

struct write_outcome {
  std::vector<uint8_t> bytes;
  std::string error;
  uint64_t rows = 0, resources = 0;
};

write_outcome write(const view::compiled_view &v, view::output_kind kind, const std::string &input, size_t piece,
                    const view::run_options &o) {
  write_outcome w;
  format::vector_sink out;
  auto tw = view::table_writer::create(v, kind, {}, out, o);
  REQUIRE(tw);
  if (piece == 0) piece = input.size() + 1;
  result<void> ok;
  for (size_t at = 0; at < input.size() && ok; at += piece)
    ok = tw.value()->feed_ndjson(std::string_view(input).substr(at, piece));
  if (ok) {
    auto n = tw.value()->finish();
    if (!n) ok = n.error();
  }
  w.error = ok ? std::string() : ok.error().describe();
  w.bytes = out.bytes;
  w.rows = tw.value()->rows();
  w.resources = tw.value()->resources();
  return w;
}

// The ways of running many tasks the tests compare with one thread.
struct spread {
  const char *name;
  view::run_options options;
};
std::vector<spread> spreads() {
  static const last_first two(2), seven(7);
  std::vector<spread> s = {{"2 tasks, last first", {.tasks = &two, .min_parallel_bytes = 0}},
                           {"7 tasks, last first", {.tasks = &seven, .min_parallel_bytes = 0}},
                           {"3 of 7, last first", {.tasks = &seven, .threads = 3, .min_parallel_bytes = 0}}};
  if (default_task_runner().concurrency() > 1) {
    s.push_back({"the platform's threads", {.tasks = &default_task_runner(), .min_parallel_bytes = 0}});
    s.push_back({"5 platform threads", {.tasks = &default_task_runner(), .threads = 5, .min_parallel_bytes = 0}});
  }
  return s;
}

}  // namespace

TEST_CASE("view threads: how many tasks a text is cut into", "[view][threads]") {
  last_first four(4), one(1);
  CHECK(view::parallel_parts({}, 100 << 20) == 1);  // no task runner: the calling thread alone
  CHECK(view::parallel_parts({.tasks = &four}, 100 << 20) == 4);
  CHECK(view::parallel_parts({.tasks = &four}, view::run_options::DEFAULT_MIN_PARALLEL_BYTES - 1) == 1);
  CHECK(view::parallel_parts({.tasks = &four, .threads = 9}, 100 << 20) == 9);
  CHECK(view::parallel_parts({.tasks = &four, .threads = 100000}, 100 << 20) == view::run_options::MAX_THREADS);
  CHECK(view::parallel_parts({.tasks = &one, .threads = 8}, 100 << 20) == 1);
  CHECK(default_task_runner().concurrency() >= 1);
}

TEST_CASE("view threads: run_ndjson gives one thread's rows and errors", "[view][threads]") {
  const auto v = compile(VIEW);
  const std::string input = mixed_input();
  const run_outcome one = run_ndjson(v, input, {});
  REQUIRE(one.error.empty());
  REQUIRE(one.rows.size() > 10000);
  for (const auto &s : spreads()) {
    INFO(s.name);
    const run_outcome many = run_ndjson(v, input, s.options);
    CHECK(many.error == one.error);
    CHECK(many.rows == one.rows);
  }
  // A failing line at the start, inside and at the end of the tasks' runs.
  for (const auto &bad : bad_lines()) {
    if (!bad.runner_fails) continue;
    for (size_t at : {size_t{1}, size_t{2}, size_t{99}, size_t{150}, size_t{151}, size_t{299}, size_t{300}}) {
      INFO(bad.what << " at line " << at);
      const std::string text = mixed_input(bad.text, at);
      const run_outcome want = run_ndjson(v, text, {});
      REQUIRE(!want.error.empty());
      CHECK(want.error.find("line " + std::to_string(at)) != std::string::npos);
      for (const auto &s : spreads()) {
        INFO(s.name);
        const run_outcome got = run_ndjson(v, text, s.options);
        CHECK(got.error == want.error);
        CHECK(got.rows == want.rows);
      }
    }
  }
}

TEST_CASE("view threads: a runner reused over texts of different lengths", "[view][threads]") {
  const auto v = compile(VIEW);
  last_first three(3);
  view::runner many(v, {.tasks = &three, .min_parallel_bytes = 0});
  view::runner one(v);
  for (const std::string &text : {mixed_input(), std::string(), std::string("\n\n"), mixed_input().substr(0, 5000),
                                  mixed_input("{", 17), mixed_input()}) {
    std::vector<view::row> a, b;
    auto ra = many.run_ndjson(text, a);
    auto rb = one.run_ndjson(text, b);
    CHECK(ra.ok() == rb.ok());
    if (!ra && !rb) CHECK(ra.error().describe() == rb.error().describe());
    CHECK(view::rows_to_json(v, a) == view::rows_to_json(v, b));
  }
}

TEST_CASE("view threads: table_writer writes one thread's bytes, counts and errors", "[view][threads]") {
  const auto v = compile(VIEW);
  const std::string input = mixed_input();
  for (auto kind : {view::output_kind::ndjson, view::output_kind::csv, view::output_kind::quire}) {
    for (size_t piece : {size_t{0}, size_t{65536}, size_t{7777}}) {
      INFO(view::output_kind_name(kind) << " in pieces of " << piece);
      const write_outcome one = write(v, kind, input, piece, {});
      REQUIRE(one.error.empty());
      REQUIRE(one.rows > 250);
      for (const auto &s : spreads()) {
        INFO(s.name);
        const write_outcome many = write(v, kind, input, piece, s.options);
        CHECK(many.error == one.error);
        CHECK(many.bytes == one.bytes);
        CHECK(many.rows == one.rows);
        CHECK(many.resources == one.resources);
      }
    }
  }
  for (const auto &bad : bad_lines()) {
    for (size_t at : {size_t{1}, size_t{2}, size_t{150}, size_t{151}, size_t{300}}) {
      const std::string text = mixed_input(bad.text, at);
      for (size_t piece : {size_t{0}, size_t{50000}}) {
        INFO(bad.what << " at line " << at << ", pieces of " << piece);
        const write_outcome want = write(v, view::output_kind::ndjson, text, piece, {});
        REQUIRE(!want.error.empty());
        CHECK(want.error.find("line " + std::to_string(at)) != std::string::npos);
        for (const auto &s : spreads()) {
          INFO(s.name);
          const write_outcome got = write(v, view::output_kind::ndjson, text, piece, s.options);
          CHECK(got.error == want.error);
          CHECK(got.bytes == want.bytes);
          CHECK(got.rows == want.rows);
          CHECK(got.resources == want.resources);
        }
      }
    }
  }
}

TEST_CASE("view threads: a line too long is refused where one thread refuses it", "[view][threads]") {
  const auto v = compile(VIEW);
  std::string text = mixed_input().substr(0, 20000);
  text = text.substr(0, text.rfind('\n') + 1);
  const size_t long_line = 1 + static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  text += R"({"resourceType":"Patient","id":")" + std::string(view::table_writer::MAX_LINE_BYTES, 'x') + "\"}\n";
  text += mixed_input().substr(0, 3000);
  last_first three(3);
  const write_outcome want = write(v, view::output_kind::csv, text, 0, {});
  CHECK(want.error.find("LINE_TOO_LONG") != std::string::npos);
  CHECK(want.error.find("line " + std::to_string(long_line)) != std::string::npos);
  const write_outcome got = write(v, view::output_kind::csv, text, 0, {.tasks = &three, .min_parallel_bytes = 0});
  CHECK(got.error == want.error);
  CHECK(got.bytes == want.bytes);
  CHECK(got.rows == want.rows);
}
