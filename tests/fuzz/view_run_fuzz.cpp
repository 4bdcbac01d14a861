// Fuzz target for running ViewDefinitions into tables: the input is NDJSON, run through a few fixed
// views (flat columns, forEach, repeat, unionAll, where) by table_writer into NDJSON, CSV and
// .quire. Invariants: nothing crashes; feeding in pieces (sizes taken from the input) gives the
// same bytes and the same error as feeding whole; so does spreading the lines over three tasks
// (run_options, here run one after the other, the last first), for the table_writer and for
// runner::run_ndjson; every kind writes the same number of rows and fails alike (the column checks
// are the same for all), and the .quire file opens with that many rows.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/platform.h"
#include "quire/view.h"

namespace {

const char *const VIEWS[] = {
    // flat, typed columns
    R"j({"resource":"Patient","select":[{"column":[{"name":"id","path":"id","type":"id"},
      {"name":"active","path":"active","type":"boolean"},{"name":"births","path":"multipleBirth","type":"integer"},
      {"name":"birth","path":"birthDate","type":"date"},{"name":"n","path":"name.first()","type":"HumanName"}]}]})j",
    // forEach with a collection column, and an untyped column
    R"j({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]},
      {"forEach":"name","column":[{"name":"family","path":"family"},
      {"name":"given","path":"given","collection":true}]}]})j",
    // repeat over nested items, with a decimal
    R"j({"resource":"QuestionnaireResponse","select":[{"repeat":["item","answer.item"],
      "column":[{"name":"link","path":"linkId"},{"name":"v","path":"answer.value.ofType(decimal).first()","type":"decimal"}]}]})j",
    // unionAll of two branches
    R"j({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]},{"unionAll":[
      {"forEach":"telecom","column":[{"name":"v","path":"value"},{"name":"s","path":"system"}]},
      {"forEach":"address","column":[{"name":"v","path":"city"},{"name":"s","path":"country"}]}]}]})j",
    // where, and forEachOrNull
    R"j({"resource":"Observation","where":[{"path":"status = 'final'"}],"select":[{"column":[
      {"name":"id","path":"id"},{"name":"q","path":"value.ofType(Quantity).value","type":"decimal"}]},
      {"forEachOrNull":"component","column":[{"name":"code","path":"code.coding.code.first()"}]}]})j",
};

struct outcome {
  std::vector<uint8_t> bytes;
  bool ok = false;
  quire::error_code code = quire::error_code::OK;
  uint32_t line = 0;
  uint64_t rows = 0;
};

// Three tasks on paper, run on the calling thread the last first: every cut of the lines, on any
// target, without the timing of real threads.
class last_first final : public quire::task_runner {
 public:
  unsigned concurrency() const noexcept override { return 3; }
  void run(size_t count, const std::function<void(size_t)> &work) const override {
    for (size_t i = count; i-- > 0;) work(i);
  }
};
const last_first three_tasks;
const quire::view::run_options SPREAD{.tasks = &three_tasks, .min_parallel_bytes = 0};

outcome write(const quire::view::compiled_view &v, quire::view::output_kind kind, std::string_view input, size_t piece,
              const quire::view::run_options &run = {}) {
  quire::format::vector_sink sink;
  quire::format::write_options options;
  options.chunk_rows = 4;
  // Every view's first column is a string: a hash index on it exercises the index writer.
  if (kind == quire::view::output_kind::quire)
    options.indexes = {{v.columns()[0].name, quire::format::index_kind::hash}};
  auto w = quire::view::table_writer::create(v, kind, options, sink, run);
  if (!w) std::abort();  // the views are fixed and valid
  outcome o;
  quire::result<void> fed;
  for (size_t at = 0; at < input.size() && fed; at += piece) fed = w.value()->feed_ndjson(input.substr(at, piece));
  if (fed) {
    auto done = w.value()->finish();
    o.ok = done.ok();
    if (!done) {
      o.code = done.error().code;
      o.line = done.error().line;
    } else if (*done != w.value()->rows()) {
      std::abort();
    }
  } else {
    o.code = fed.error().code;
    o.line = fed.error().line;
  }
  o.rows = w.value()->rows();
  o.bytes = std::move(sink.bytes);
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  static const std::vector<quire::view::compiled_view> views = [] {
    std::vector<quire::view::compiled_view> out;
    for (const char *text : VIEWS) {
      auto v = quire::view::compile(text);
      if (!v) std::abort();
      out.push_back(std::move(v).value());
    }
    return out;
  }();
  const auto &v = views[data[0] % std::size(VIEWS)];
  const size_t piece = data[0] / std::size(VIEWS) % 13 + 1;
  std::string_view input(reinterpret_cast<const char *>(data) + 1, size - 1);

  uint64_t rows = 0;
  bool first = true, ok = false;
  quire::error_code code = quire::error_code::OK;
  for (auto kind : {quire::view::output_kind::ndjson, quire::view::output_kind::csv, quire::view::output_kind::quire}) {
    outcome whole = write(v, kind, input, input.size() ? input.size() : 1);
    outcome pieces = write(v, kind, input, piece);
    if (whole.ok != pieces.ok || whole.code != pieces.code || whole.line != pieces.line || whole.rows != pieces.rows) {
      std::abort();
    }
    if (whole.ok && whole.bytes != pieces.bytes) std::abort();
    outcome spread = write(v, kind, input, input.size() ? input.size() : 1, SPREAD);
    if (spread.ok != whole.ok || spread.code != whole.code || spread.line != whole.line || spread.rows != whole.rows ||
        spread.bytes != whole.bytes) {
      std::abort();
    }
    if (first) {
      rows = whole.rows;
      ok = whole.ok;
      code = whole.code;
      first = false;
    } else if (whole.rows != rows || whole.ok != ok || whole.code != code) {
      std::abort();
    }
    if (kind == quire::view::output_kind::quire && whole.ok) {
      auto f = quire::format::file::open(quire::borrow_bytes(whole.bytes));
      if (!f || f->row_count() != rows) std::abort();
    }
  }
  // The runner alone: the same rows and the same error on three tasks as on one.
  std::vector<quire::view::row> one_rows, spread_rows;
  quire::view::runner one(v), spread(v, SPREAD);
  auto a = one.run_ndjson(input, one_rows);
  auto b = spread.run_ndjson(input, spread_rows);
  if (a.ok() != b.ok() || (!a && a.error().describe() != b.error().describe())) std::abort();
  if (quire::view::rows_to_json(v, one_rows) != quire::view::rows_to_json(v, spread_rows)) std::abort();
  return 0;
}
