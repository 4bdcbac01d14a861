// Embind bindings of partitioned datasets (quire/dataset.h): the manifest's text in, each file
// opened through a JavaScript opener (`opener.open(path)` gives a reader as bind_sources.h reads
// it, or null when there is no such file), results out as core's text.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "../core/src/common/alloc.h"
#include "bind_sources.h"
#include "bind_support.h"
#include "quire/dataset.h"

namespace {

using quire::wasm::error_record;
namespace ds = quire::dataset;
namespace fmt = quire::format;

struct dataset_text {
  error_record error;
  std::string text;
};

struct dataset_number {
  error_record error;
  double value = 0;
};

/// A file of the dataset read through its JavaScript reader, closed (reader.close()) when the
/// query is done with it.
class opened_file final : public quire::byte_source {
 public:
  opened_file(double size, emscripten::val reader) : reader_(reader), source_(size, reader) {}
  ~opened_file() override {
    if (reader_["close"].typeOf().as<std::string>() == "function") reader_.call<void>("close");
  }
  uint64_t size() const noexcept override { return source_.size(); }
  quire::result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    return source_.read_at(offset, out);
  }
  std::string_view kind() const noexcept override { return "range"; }

 private:
  emscripten::val reader_;
  quire::wasm::js_range_source source_;
};

quire::result<fmt::query> parse_query(const std::string &query_json) {
  if (query_json.empty()) return fmt::query();
  return fmt::parse_query_json(query_json);
}

class dataset_handle {
 public:
  dataset_handle(const std::string &manifest_text, emscripten::val opener) {
    auto m = ds::parse_manifest(manifest_text);
    if (!m) {
      error_ = quire::wasm::to_record(m.error());
      return;
    }
    info_ = ds::to_json(*m);
    reader_ = std::make_unique<ds::reader>(
        std::move(m).value(), [opener](std::string_view path) -> quire::result<std::unique_ptr<quire::byte_source>> {
          emscripten::val r = opener.call<emscripten::val>("open", std::string(path));
          if (r.isNull() || r.isUndefined()) {
            return quire::error(quire::error_code::FILE_NOT_FOUND, "no file " + std::string(path) + " in the dataset");
          }
          return std::unique_ptr<quire::byte_source>(std::make_unique<opened_file>(r["size"].as<double>(), r));
        });
  }

  error_record error() const { return error_; }
  /// The manifest as core writes it.
  std::string info() const { return info_; }

  dataset_text query(const std::string &query_json, const std::string &form) {
    dataset_text out;
    auto q = parse_query(query_json);
    auto f = fmt::row_text_named(form);
    if (!q || !f) {
      out.error = quire::wasm::to_record(!q ? q.error() : f.error());
      return out;
    }
    auto rows = reader_->query(*q, *f);
    if (!rows) {
      out.error = quire::wasm::to_record(rows.error());
      return out;
    }
    if (rows->json.size() >= quire::detail::PROBE_THRESHOLD && !quire::detail::can_allocate(rows->json.size() + 16)) {
      out.error = quire::wasm::to_record(quire::detail::out_of_memory(rows->json.size(), "a result's text"));
      return out;
    }
    out.text = std::move(rows->json);
    return out;
  }

  dataset_number count(const std::string &query_json) {
    dataset_number out;
    auto q = parse_query(query_json);
    if (!q) {
      out.error = quire::wasm::to_record(q.error());
      return out;
    }
    auto n = reader_->count(*q);
    if (!n) {
      out.error = quire::wasm::to_record(n.error());
      return out;
    }
    out.value = static_cast<double>(*n);
    return out;
  }

  dataset_text explain(const std::string &query_json) {
    dataset_text out;
    auto q = parse_query(query_json);
    if (!q) {
      out.error = quire::wasm::to_record(q.error());
      return out;
    }
    auto e = reader_->explain(*q);
    if (!e) {
      out.error = quire::wasm::to_record(e.error());
      return out;
    }
    out.text = std::move(e).value();
    return out;
  }

 private:
  error_record error_;
  std::string info_;
  std::unique_ptr<ds::reader> reader_;
};

}  // namespace

QUIRE_BINDINGS(dataset) {
  using namespace emscripten;
  value_object<dataset_text>("DatasetTextResult")
      .field("error", &dataset_text::error)
      .field("text", &dataset_text::text);
  value_object<dataset_number>("DatasetNumberResult")
      .field("error", &dataset_number::error)
      .field("value", &dataset_number::value);
  class_<dataset_handle>("QuireDataset")
      .constructor<std::string, val>()
      .function("error", &dataset_handle::error)
      .function("info", &dataset_handle::info)
      .function("query", &dataset_handle::query)
      .function("count", &dataset_handle::count)
      .function("explain", &dataset_handle::explain);
}
