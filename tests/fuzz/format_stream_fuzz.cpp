// Fuzz target for the streaming text input: NDJSON or CSV fed to text_writer and schema_inferrer
// in pieces of pseudo-random sizes must give exactly what the whole-text calls give — the same
// bytes, or the same error at the same line, column and offset — and never crash.
//
// Input: byte 0 picks the format (bit 0: CSV) and whether inference may stop early (bit 1);
// byte 1 seeds the piece sizes; the rest is the text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "quire/format.h"

namespace {

using namespace quire::format;

struct outcome {
  quire::error_code code = quire::error_code::OK;
  uint64_t offset = 0;
  uint32_t line = 0, column = 0;
  std::vector<uint8_t> bytes;
};

outcome of(const quire::error &e) { return {e.code, e.offset, e.line, e.column, {}}; }

bool same(const outcome &a, const outcome &b) {
  return a.code == b.code && a.offset == b.offset && a.line == b.line && a.column == b.column && a.bytes == b.bytes;
}

/// Piece sizes from 1 to 64 bytes, from a small linear congruential generator.
struct pieces {
  uint32_t state;
  size_t next() {
    state = state * 1103515245u + 12345u;
    return 1 + (state >> 16) % 64;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const text_format kind = data[0] & 1 ? text_format::csv : text_format::ndjson;
  const bool early = data[0] & 2;
  const uint32_t seed = data[1];
  std::string_view text(reinterpret_cast<const char *>(data + 2), size - 2);
  input_options in;
  in.csv.max_columns = 64;
  in.csv.max_field_bytes = 4096;
  write_options opts;
  opts.chunk_rows = 16;
  opts.page_bytes = 512;

  outcome whole;
  {
    vector_sink sink;
    auto n = kind == text_format::csv ? write_csv(text, opts, sink, in) : write_ndjson(text, opts, sink, in);
    if (n) whole.bytes = std::move(sink.bytes);
    else whole = of(n.error());
  }
  if (early) in.infer_rows = 2;
  outcome streamed;
  {
    vector_sink sink;
    auto w = text_writer::create(kind, opts, sink, in);
    if (!w) std::abort();  // no schema and valid options: creating cannot fail
    pieces p{seed};
    quire::result<void> fed;
    for (size_t at = 0; fed && at < text.size();) {
      size_t n = std::min(p.next(), text.size() - at);
      fed = w.value()->feed(text.substr(at, n));
      at += n;
    }
    auto n = fed ? w.value()->finish() : quire::result<uint64_t>(fed.error());
    if (n) streamed.bytes = std::move(sink.bytes);
    else streamed = of(n.error());
  }
  // Inferring from the first rows only may refuse a later row, or pick other types: then only
  // the absence of a crash is checked. Inferring from every row must agree exactly.
  if (!early && !same(whole, streamed)) std::abort();
  if (early && whole.code == quire::error_code::OK && streamed.code == quire::error_code::OK) {
    auto f = file::open(quire::borrow_bytes(streamed.bytes));
    if (!f) std::abort();  // quire must read what it wrote
  }

  auto expected = kind == text_format::csv ? infer_csv_schema(text, in) : infer_ndjson_schema(text, in);
  auto inf = schema_inferrer::create(kind, in);
  if (!inf) std::abort();
  pieces p{seed + 1};
  quire::result<void> fed;
  for (size_t at = 0; fed && at < text.size();) {
    size_t n = std::min(p.next(), text.size() - at);
    fed = inf.value()->feed(text.substr(at, n));
    at += n;
  }
  auto got = fed ? inf.value()->finish() : quire::result<schema>(fed.error());
  if (expected.ok() != got.ok()) std::abort();
  if (!expected) {
    if (!same(of(expected.error()), of(got.error()))) std::abort();
  } else {
    if (expected->columns.size() != got->columns.size()) std::abort();
    for (size_t i = 0; i < got->columns.size(); ++i) {
      if (expected->columns[i].name != got->columns[i].name || expected->columns[i].type != got->columns[i].type)
        std::abort();
    }
  }
  return 0;
}
