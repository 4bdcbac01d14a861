// `quire convert`, `quire query` and `quire inspect`: .quire files from the command line.
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_dataset.h"
#include "cli_store.h"
#include "quire/detect.h"
#include "quire/file_source.h"
#include "quire/format.h"
#include "quire/json.h"

namespace quire::cli {
namespace {

std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

/// Bytes of the input read and fed to the writer at a time.
constexpr size_t CONVERT_PIECE_BYTES = size_t{1} << 20;

/// Reads the whole input in pieces into `feed`; returns the bytes read.
template <typename Feed>
result<uint64_t> read_pieces(const byte_source &in, std::vector<uint8_t> &piece, Feed feed) {
  for (uint64_t at = 0; at < in.size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(piece.size(), in.size() - at));
    if (auto r = in.read_at(at, std::span<uint8_t>(piece.data(), n)); !r) return std::move(r).error();
    auto fed = feed(std::string_view(reinterpret_cast<const char *>(piece.data()), n));
    if (!fed) return std::move(fed).error();
    at += n;
  }
  return in.size();
}

/// What core's rule (quire/detect.h) says the input is, from its name and its first bytes. A first
/// line longer than DETECT_BYTES is read on until it ends; one longer than any NDJSON line a
/// reader takes is NDJSON, so that the line feeder reports it as LINE_TOO_LONG.
result<input_detection> detect_file(const byte_source &in, const std::string &name) {
  std::string head;
  size_t want = DETECT_BYTES;
  while (true) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(want, in.size()));
    const size_t have = head.size();
    head.resize(n);
    auto r = in.read_at(have, std::span<uint8_t>(reinterpret_cast<uint8_t *>(head.data()) + have, n - have));
    if (!r) return std::move(r).error();
    auto d = detect_input(head, n == in.size(), name);
    if (d.kind != input_kind::need_more) return d;
    if (n > format::DEFAULT_MAX_LINE_BYTES)
      return input_detection{input_kind::ndjson, "a first line longer than max_line_bytes"};
    want = std::min(want * 2, format::DEFAULT_MAX_LINE_BYTES + 1);
  }
}

int run_convert(arguments &args) {
  auto from = args.option("--from");
  table_options table(args, {"--sort", "--index", "--chunk-rows", "--page-bytes", "--level"});
  store_flags store(args);
  auto files = args.finish("convert", 2, 2, "needs INPUT and OUTPUT.quire");
  if (!files) return args.exit_status();
  const std::string &input_path = (*files)[0], &output_path = (*files)[1];
  if (from && *from != "csv" && *from != "ndjson") return usage_error("convert", "--from takes csv or ndjson");
  // The input is read range by range (nothing of it is held), twice.
  auto input = native::open_file(input_path, {.mode = native::load_mode::ranges});
  if (!input) { return fail(input_path, input.error()); }
  std::string kind = from.value_or("");
  if (kind.empty()) {
    auto d = detect_file(*input.value(), input_path);
    if (!d) { return fail(input_path, d.error()); }
    if (d->kind == input_kind::empty)
      return fail(input_path, quire::error(error_code::EMPTY_INPUT, "the input is empty: nothing to convert"));
    if (d->kind != input_kind::csv && d->kind != input_kind::ndjson) {
      std::string m = input_path + ": detected ";
      m.append(input_kind_name(d->kind))
          .append(" (")
          .append(d->reason)
          .append("); convert reads CSV or NDJSON: if it is one, say which with --from csv or --from ndjson");
      return usage_error("convert", m);
    }
    kind = input_kind_name(d->kind);
    if (d->kind == input_kind::csv) table.input.csv.delimiter = d->delimiter;
  }
  if (int spilled = table.open_spill(); spilled != EXIT_OK) return spilled;
  for (const auto &d : table.write.indexes) {
    if (!table.quiet && format::answered_by_order(table.write, d))
      std::fprintf(
          stderr,
          "%s: no %s index on %s is written: the file is sorted by it, and its order answers =, in and ranges on it\n",
          output_path.c_str(), std::string(format::index_kind_name(d.kind)).c_str(), d.column.c_str());
  }
  // A version-2 file (cli_store.h) is written from the table in memory; a version-1 file straight
  // to its temporary name.
  std::optional<temp_file_sink> file_sink;
  format::vector_sink memory;
  if (!store.wanted()) {
    file_sink.emplace(output_path);
    if (!file_sink->opened()) return fail(output_path, file_sink->open_error());
  }
  format::byte_sink &sink = store.wanted() ? static_cast<format::byte_sink &>(memory) : *file_sink;
  // Two passes over the file, in pieces: the schema from every row (as write_ndjson / write_csv
  // infer it), then the rows; memory holds one piece and one line, never the whole input.
  const auto text_kind = kind == "csv" ? format::text_format::csv : format::text_format::ndjson;
  std::vector<uint8_t> piece(CONVERT_PIECE_BYTES);
  {
    auto inferrer = format::schema_inferrer::create(text_kind, table.input);
    if (!inferrer) { return fail(input_path, inferrer.error()); }
    auto read = read_pieces(*input.value(), piece, [&](std::string_view p) { return inferrer.value()->feed(p); });
    if (!read) { return fail(input_path, read.error()); }
    auto inferred = inferrer.value()->finish();
    if (!inferred) { return fail(input_path, inferred.error()); }
    table.input.schema = std::move(inferred).value();
  }
  // Usage mistakes in options (a sort or index column that does not exist) are still the input's
  // fault from the tool's view: the error says which.
  auto writer = format::text_writer::create(text_kind, table.write, sink, table.input);
  if (!writer) { return fail(input_path, writer.error()); }
  auto input_bytes = read_pieces(*input.value(), piece, [&](std::string_view p) { return writer.value()->feed(p); });
  if (!input_bytes) { return fail(input_path, input_bytes.error()); }
  auto rows = writer.value()->finish();
  if (!rows) { return fail(input_path, rows.error()); }
  if (store.wanted()) {
    auto table_file = format::file::open(quire::borrow_bytes(memory.bytes));
    if (!table_file) return fail(output_path, table_file.error());
    return write_store(*table_file, table.write, store, output_path, table.quiet);
  }
  auto committed = file_sink->commit();
  if (!committed) { return fail(output_path, committed.error()); }
  if (!table.quiet) {
    struct stat st {};
    uint64_t size = ::stat(output_path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    std::printf("%s: %llu rows, %llu bytes (%s input: %llu bytes, %.1fx smaller)\n", output_path.c_str(),
                static_cast<unsigned long long>(*rows), static_cast<unsigned long long>(size), kind.c_str(),
                static_cast<unsigned long long>(*input_bytes),
                size ? static_cast<double>(*input_bytes) / static_cast<double>(size) : 0.0);
  }
  return EXIT_OK;
}

// A .quire file is read a page at a time (pread): measured on 2,000,000 rows (33.8 MB), a find,
// a filtered count, a sum and a first page each answered fastest and with the least memory this
// way (find: 0.00 s and 5 MB, against 0.04 s and 38 MB read whole; a sum 0.08 s against 0.10 s
// mapped and 0.17 s read whole), and a file cut short by another process while it is read is an
// IO error, where a mapping would die of SIGBUS.
constexpr native::load_mode DEFAULT_LOAD = native::load_mode::ranges;

int run_query(arguments &args) {
  auto find = args.option("--find");
  auto where = args.option("--where");
  auto columns = args.option("--columns");
  auto sum = args.option("--sum");
  auto order = args.option("--order");
  const auto load = args.load_mode(DEFAULT_LOAD);
  bool count = args.flag("--count");
  bool desc = args.flag("--desc");
  bool explain = args.flag("--explain");
  bool analyze = args.flag("--analyze");
  bool csv = args.flag("--csv");
  key_options keys(args);
  uint64_t limit = args.number("--limit").value_or(UINT64_MAX), offset = args.number("--offset").value_or(0);
  auto files = args.finish("query", 1, 1, "needs one FILE.quire");
  if (!files) return args.exit_status();
  if (find && where) return usage_error("query", "--find and --where cannot be combined");
  if (find && find->find('=') == std::string::npos) return usage_error("query", "--find takes COLUMN=VALUE");
  if (csv && (count || sum || explain))
    return usage_error("query", "--csv prints rows: it cannot be combined with --count, --sum or --explain");
  const std::string &path = (*files)[0];
  // A folder is a dataset (cli_dataset.h): its manifest first, then the files it keeps.
  std::optional<dataset::reader> set;
  std::optional<format::file> file;
  if (is_directory(path)) {
    if (sum || order)
      return usage_error("query", "a dataset answers rows, --count and --explain; not --sum or --order");
    auto m = read_manifest(path);
    if (!m) { return fail(path, m.error()); }
    set.emplace(open_dataset(path, std::move(m).value()));
  } else {
    auto source = native::open_file(path, {.mode = load});
    if (!source) { return fail(path, source.error()); }
    format::open_options oo;
    if (int r = keys.load(oo); r != EXIT_OK) return r;
    auto f = format::file::open(std::move(source).value(), oo);
    if (!f) { return fail(path, f.error()); }
    file.emplace(std::move(f).value());
  }
  format::file *f = file ? &*file : nullptr;
  const format::schema &schema = f ? f->schema() : set->description().schema;
  format::query q;
  if (where) {
    auto flt = format::parse_expression(*where);
    if (!flt) { return fail("--where", flt.error()); }
    q.where = std::move(flt).value();
  }
  if (columns) q.columns = split_list(*columns);
  if (find) {
    size_t eq = find->find('=');
    std::string column = find->substr(0, eq);
    auto key = format::parse_key_text(schema, column, find->substr(eq + 1));
    if (!key) { return fail("--find", key.error()); }
    if (f && !explain && !count && !sum && !csv && !order && offset == 0 && limit == UINT64_MAX) {
      // The lookup itself, as the npm package's find() makes it: the same row, the same errors.
      auto row = f->find(column, *key, q.columns);
      if (!row) { return fail("--find", row.error()); }
      if (row->has_value()) std::printf("%s\n", (*row)->c_str());
      return EXIT_OK;
    }
    format::filter flt;
    flt.o = format::filter::op::eq;
    flt.column = column;
    flt.values.push_back(std::move(*key));
    q.where = std::move(flt);
    if (limit == UINT64_MAX) limit = 1;
  }
  if (order) q.order_by = *order;
  q.descending = desc;
  q.limit = limit;
  q.offset = offset;
  if (set) {
    if (explain) {
      auto e = set->explain(q);
      if (!e) { return fail(path, e.error()); }
      std::printf("%s\n", e->c_str());
    } else if (count) {
      auto n = set->count(q);
      if (!n) { return fail(path, n.error()); }
      std::printf("%llu\n", static_cast<unsigned long long>(*n));
    } else {
      auto rows = set->query(q, csv ? format::row_text::csv : format::row_text::ndjson);
      if (!rows) { return fail(path, rows.error()); }
      std::fwrite(rows->json.data(), 1, rows->json.size(), stdout);
    }
    return EXIT_OK;
  }
  if (explain) {
    auto e = f->explain(q, analyze);
    if (!e) { return fail(path, e.error()); }
    std::printf("%s\n", format::to_json(*e).c_str());
    return EXIT_OK;
  }
  if (count) {
    auto n = f->count(q);
    if (!n) { return fail(path, n.error()); }
    std::printf("%llu\n", static_cast<unsigned long long>(*n));
    return EXIT_OK;
  }
  if (sum) {
    auto a = f->aggregate(*sum, q);
    if (!a) { return fail(path, a.error()); }
    std::printf("%s\n", format::to_json(*a).c_str());
    return EXIT_OK;
  }
  auto rows = f->query(q, csv ? format::row_text::csv : format::row_text::ndjson);
  if (!rows) { return fail(path, rows.error()); }
  std::fwrite(rows->json.data(), 1, rows->json.size(), stdout);
  return EXIT_OK;
}

int run_inspect(arguments &args) {
  const auto load = args.load_mode(DEFAULT_LOAD);
  auto chunks_of = args.option("--chunks");
  bool as_json = args.flag("--json");
  bool verify = args.flag("--verify");
  bool storage = args.flag("--storage");
  key_options keys(args);
  auto files = args.finish("inspect", 1, 1, "needs one FILE.quire");
  if (!files) return args.exit_status();
  const std::string &path = (*files)[0];
  auto source = native::open_file(path, {.mode = load});
  if (!source) { return fail(path, source.error()); }
  std::string kind(source.value()->kind());
  format::open_options oo;
  if (int r = keys.load(oo); r != EXIT_OK) return r;
  if (storage) {
    // A version-2 file's commits, partitions, segments and garbage (quire/store.h).
    auto report = format::storage_of_store(*source.value(), oo);
    if (!report) { return fail(path, report.error()); }
    std::printf("%s\n", format::to_json(*report).c_str());
    return EXIT_OK;
  }
  auto f = format::file::open(std::move(source).value(), oo);
  if (!f) { return fail(path, f.error()); }
  auto st = f->storage();
  if (!st) { return fail(path, st.error()); }
  if (verify) {
    auto v = f->verify();
    if (!v) { return fail(path, v.error()); }
    if (!as_json) std::printf("verified: %llu pages, every checksum matches\n", static_cast<unsigned long long>(*v));
  }
  if (chunks_of) {
    auto c = f->chunk_statistics(*chunks_of);
    if (!c) { return fail(path, c.error()); }
    std::printf("%s\n", format::to_json(*c, f->schema().columns[*f->schema().find(*chunks_of)].type).c_str());
    return EXIT_OK;
  }
  if (as_json) std::printf("%s\n", format::to_json(*st).c_str());
  else std::fputs(format::to_text(*st, path, kind).c_str(), stdout);
  return EXIT_OK;
}

registration format_convert{
    {"convert", "",
     "INPUT OUTPUT.quire [--from csv|ndjson] [--sort COL] [--index COL:sorted|hash|text]... [--chunk-rows N] "
     "[--page-bytes N] [--level N] [--spill-dir DIR] [--quiet] [--store] [--partition-by COL] [--owner-key FILE | "
     "--passphrase-file FILE] [--keys-dir DIR]",
     "Write CSV or NDJSON as a .quire file (schema inferred; the input read in pieces, twice; sort runs beyond the "
     "budget go to an unnamed file in DIR, default $TMPDIR or /tmp; written to a temporary name, then renamed). "
     "--store writes version 2 (it can grow: append, update, delete, compact); --owner-key or --passphrase-file "
     "seal it; --partition-by COL with --keys-dir DIR seals each partition under DIR/VALUE.key (made when absent).",
     run_convert}};
registration format_query{
    {"query", "",
     "FILE.quire|DIR [--find COL=V | --where EXPR] [--columns A,B] [--count | --sum COL | --explain [--analyze] | "
     "--csv] [--order COL [--desc]] [--limit N] [--offset M] [--load ranges|mmap|read|prewarm] [--key FILE | "
     "--passphrase-file FILE]",
     "Query a .quire file (read a page at a time unless --load says otherwise); rows print as NDJSON, or with --csv "
     "as CSV (a header row; null an empty field, \"\" quoted). EXPR: country = 'NA' and age > 80, name contains "
     "'Okafor' (docs/format.md). A folder is a dataset: its manifest says which files can match, the others are "
     "skipped (--explain lists them); it answers rows, --count and --explain.",
     run_query}};
registration format_inspect{
    {"inspect", "",
     "FILE.quire [--json] [--verify] [--chunks COL] [--storage] [--key FILE | --passphrase-file FILE] "
     "[--load ranges|mmap|read|prewarm]",
     "Schema, chunks, indexes and storage by column and index of a .quire file.", run_inspect}};

}  // namespace
}  // namespace quire::cli
