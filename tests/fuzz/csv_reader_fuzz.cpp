// Fuzz target for CSV input: the reader, schema inference and writing a .quire file from it must
// agree (what is written reads back with the same row count) and never crash.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "quire/csv.h"
#include "quire/format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  quire::csv::options copts;
  copts.max_columns = 64;
  copts.max_field_bytes = 4096;
  quire::csv::reader r(text, copts);
  std::vector<std::string_view> fields;
  uint64_t records = 0;
  while (true) {
    auto more = r.next(fields);
    if (!more || !*more) break;
    ++records;
  }
  quire::format::input_options in;
  in.csv = copts;
  quire::format::write_options opts;
  opts.chunk_rows = 16;
  opts.page_bytes = 512;
  quire::format::vector_sink sink;
  auto written = quire::format::write_csv(text, opts, sink, in);
  if (!written) return 0;
  if (*written + 1 != records) std::abort();  // every record but the header is a row
  auto f = quire::format::file::open(quire::borrow_bytes(sink.bytes));
  if (!f) std::abort();  // quire must read what it wrote
  auto n = f->count();
  if (!n || *n != *written) std::abort();
  auto rows = f->query({});
  if (!rows || rows->count != *written) std::abort();
  return 0;
}
