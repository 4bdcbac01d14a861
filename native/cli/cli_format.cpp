// `quire convert`, `quire query` and `quire inspect`: .quire files from the command line.
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "quire/file_source.h"
#include "quire/format.h"
#include "quire/json.h"
#include "quire/spill_file.h"

namespace quire::cli {
namespace {

bool parse_number(const std::optional<std::string> &text, uint64_t &out) {
  if (!text) return true;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), out);
  return ec == std::errc() && p == text->data() + text->size();
}

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

bool ends_with(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run_convert(arguments &args) {
  auto from = args.option("--from");
  auto sort = args.option("--sort");
  auto index_specs = args.options("--index");
  auto spill_dir = args.option("--spill-dir");
  uint64_t chunk_rows = format::DEFAULT_CHUNK_ROWS, page_bytes = format::DEFAULT_PAGE_BYTES,
           level = format::DEFAULT_COMPRESSION_LEVEL;
  bool quiet = args.flag("--quiet");
  if (!parse_number(args.option("--chunk-rows"), chunk_rows) ||
      !parse_number(args.option("--page-bytes"), page_bytes) || !parse_number(args.option("--level"), level)) {
    return usage_error("convert", "--chunk-rows, --page-bytes and --level take a whole number");
  }
  auto files = args.positional();
  if (!args.error().empty()) return usage_error("convert", args.error());
  if (files.size() != 2) return usage_error("convert", "needs INPUT and OUTPUT.quire");
  std::string kind = from.value_or("");
  if (kind.empty()) {
    if (ends_with(files[0], ".csv")) kind = "csv";
    else if (ends_with(files[0], ".ndjson") || ends_with(files[0], ".jsonl") || ends_with(files[0], ".json"))
      kind = "ndjson";
    else return usage_error("convert", "cannot tell the input's format from its name: add --from csv or --from ndjson");
  }
  if (kind != "csv" && kind != "ndjson") return usage_error("convert", "--from takes csv or ndjson");
  format::write_options opts;
  opts.chunk_rows = static_cast<uint32_t>(std::min<uint64_t>(chunk_rows, UINT32_MAX));
  opts.page_bytes = static_cast<uint32_t>(std::min<uint64_t>(page_bytes, UINT32_MAX));
  opts.compression_level = static_cast<int>(std::min<uint64_t>(level, 100));
  if (sort) opts.sorted_by = *sort;
  for (const auto &spec : index_specs) {
    auto colon = spec.rfind(':');
    auto k = colon == std::string::npos ? std::optional<format::index_kind>()
                                        : format::parse_index_kind(spec.substr(colon + 1));
    if (!k) return usage_error("convert", "--index takes COLUMN:sorted, COLUMN:hash or COLUMN:text");
    opts.indexes.push_back({spec.substr(0, colon), *k});
  }
  // The input is read range by range (nothing of it is held), twice.
  auto input = native::open_file(files[0], {.mode = native::load_mode::ranges});
  if (!input) { return fail(files[0], input.error()); }
  // Sort runs beyond the sort budget go to an unnamed temporary file, not to memory.
  std::unique_ptr<native::spill_file> spill;
  if (!opts.sorted_by.empty() || !opts.indexes.empty()) {
    auto s = native::spill_file::create(spill_dir.value_or(""));
    if (!s) { return fail(spill_dir.value_or("--spill-dir"), s.error()); }
    spill = std::move(s).value();
    opts.spill = spill.get();
  }
  temp_file_sink sink(files[1]);
  if (!sink.opened()) {
    return fail(files[1], quire::error(error_code::IO_ERROR, "cannot create " + sink.temp_path()));
  }
  // Two passes over the file, in pieces: the schema from every row (as write_ndjson / write_csv
  // infer it), then the rows; memory holds one piece and one line, never the whole input.
  const auto text_kind = kind == "csv" ? format::text_format::csv : format::text_format::ndjson;
  std::vector<uint8_t> piece(CONVERT_PIECE_BYTES);
  format::input_options in;
  {
    auto inferrer = format::schema_inferrer::create(text_kind);
    if (!inferrer) { return fail(files[0], inferrer.error()); }
    auto read = read_pieces(*input.value(), piece, [&](std::string_view p) { return inferrer.value()->feed(p); });
    if (!read) { return fail(files[0], read.error()); }
    auto inferred = inferrer.value()->finish();
    if (!inferred) { return fail(files[0], inferred.error()); }
    in.schema = std::move(inferred).value();
  }
  // Usage mistakes in options (a sort or index column that does not exist) are still the input's
  // fault from the tool's view: the error says which.
  auto writer = format::text_writer::create(text_kind, opts, sink, in);
  if (!writer) { return fail(files[0], writer.error()); }
  auto input_bytes = read_pieces(*input.value(), piece, [&](std::string_view p) { return writer.value()->feed(p); });
  if (!input_bytes) { return fail(files[0], input_bytes.error()); }
  auto rows = writer.value()->finish();
  if (!rows) { return fail(files[0], rows.error()); }
  auto committed = sink.commit();
  if (!committed) { return fail(files[1], committed.error()); }
  if (!quiet) {
    struct stat st {};
    uint64_t size = ::stat(files[1].c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    std::printf("%s: %llu rows, %llu bytes (%s input: %llu bytes, %.1fx smaller)\n", files[1].c_str(),
                static_cast<unsigned long long>(*rows), static_cast<unsigned long long>(size), kind.c_str(),
                static_cast<unsigned long long>(*input_bytes),
                size ? static_cast<double>(*input_bytes) / static_cast<double>(size) : 0.0);
  }
  return EXIT_OK;
}

result<std::unique_ptr<byte_source>> open_source(const std::string &path, const std::optional<std::string> &load) {
  native::open_options opts;
  if (load) {
    auto mode = native::parse_load_mode(*load);
    if (!mode) return quire::error(error_code::INVALID_ARGUMENT, "--load takes read, mmap, prewarm or ranges");
    opts.mode = *mode;
  }
  return native::open_file(path, opts);
}

int run_query(arguments &args) {
  auto find = args.option("--find");
  auto where = args.option("--where");
  auto columns = args.option("--columns");
  auto sum = args.option("--sum");
  auto order = args.option("--order");
  auto load = args.option("--load");
  bool count = args.flag("--count");
  bool desc = args.flag("--desc");
  bool explain = args.flag("--explain");
  bool analyze = args.flag("--analyze");
  uint64_t limit = UINT64_MAX, offset = 0;
  if (!parse_number(args.option("--limit"), limit) || !parse_number(args.option("--offset"), offset)) {
    return usage_error("query", "--limit and --offset take a whole number");
  }
  auto files = args.positional();
  if (!args.error().empty()) return usage_error("query", args.error());
  if (files.size() != 1) return usage_error("query", "needs one FILE.quire");
  if (find && where) return usage_error("query", "--find and --where cannot be combined");
  if (find && find->find('=') == std::string::npos) return usage_error("query", "--find takes COLUMN=VALUE");
  if (load && !native::parse_load_mode(*load))
    return usage_error("query", "--load takes read, mmap, prewarm or ranges");
  auto source = open_source(files[0], load);
  if (!source) { return fail(files[0], source.error()); }
  auto f = format::file::open(std::move(source).value());
  if (!f) { return fail(files[0], f.error()); }
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
    auto key = format::parse_key_text(f->schema(), column, find->substr(eq + 1));
    if (!key) { return fail("--find", key.error()); }
    if (!explain && !count && !sum && !order && offset == 0 && limit == UINT64_MAX) {
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
  if (explain) {
    auto e = f->explain(q, analyze);
    if (!e) { return fail(files[0], e.error()); }
    std::printf("%s\n", format::to_json(*e).c_str());
    return EXIT_OK;
  }
  if (count) {
    auto n = f->count(q);
    if (!n) { return fail(files[0], n.error()); }
    std::printf("%llu\n", static_cast<unsigned long long>(*n));
    return EXIT_OK;
  }
  if (sum) {
    auto a = f->aggregate(*sum, q);
    if (!a) { return fail(files[0], a.error()); }
    std::printf("%s\n", format::to_json(*a).c_str());
    return EXIT_OK;
  }
  auto rows = f->query(q);
  if (!rows) { return fail(files[0], rows.error()); }
  std::fwrite(rows->json.data(), 1, rows->json.size(), stdout);
  return EXIT_OK;
}

int run_inspect(arguments &args) {
  auto load = args.option("--load");
  auto chunks_of = args.option("--chunks");
  bool as_json = args.flag("--json");
  bool verify = args.flag("--verify");
  auto files = args.positional();
  if (!args.error().empty()) return usage_error("inspect", args.error());
  if (files.size() != 1) return usage_error("inspect", "needs one FILE.quire");
  if (load && !native::parse_load_mode(*load))
    return usage_error("inspect", "--load takes read, mmap, prewarm or ranges");
  auto source = open_source(files[0], load);
  if (!source) { return fail(files[0], source.error()); }
  std::string kind(source.value()->kind());
  auto f = format::file::open(std::move(source).value());
  if (!f) { return fail(files[0], f.error()); }
  auto st = f->storage();
  if (!st) { return fail(files[0], st.error()); }
  if (verify) {
    auto v = f->verify();
    if (!v) { return fail(files[0], v.error()); }
    if (!as_json) std::printf("verified: %llu pages, every checksum matches\n", static_cast<unsigned long long>(*v));
  }
  if (chunks_of) {
    auto c = f->chunk_statistics(*chunks_of);
    if (!c) { return fail(files[0], c.error()); }
    std::printf("%s\n", format::to_json(*c, f->schema().columns[*f->schema().find(*chunks_of)].type).c_str());
    return EXIT_OK;
  }
  if (as_json) std::printf("%s\n", format::to_json(*st).c_str());
  else std::fputs(format::to_text(*st, files[0], kind).c_str(), stdout);
  return EXIT_OK;
}

registration format_convert{
    {"convert", "",
     "INPUT OUTPUT.quire [--from csv|ndjson] [--sort COL] [--index COL:sorted|hash|text]... [--chunk-rows N] "
     "[--page-bytes N] [--level N] [--spill-dir DIR] [--quiet]",
     "Write CSV or NDJSON as a .quire file (schema inferred; the input read in pieces, twice; sort runs beyond the "
     "budget go to an unnamed file in DIR, default $TMPDIR or /tmp; written to a temporary name, then renamed).",
     run_convert}};
registration format_query{
    {"query", "",
     "FILE.quire [--find COL=V | --where EXPR] [--columns A,B] [--count | --sum COL | --explain [--analyze]] [--order "
     "COL [--desc]] [--limit N] [--offset M] [--load read|mmap|prewarm|ranges]",
     "Query a .quire file; rows print as NDJSON. EXPR: country = 'NA' and age > 80, name contains 'Okafor' "
     "(docs/format.md).",
     run_query}};
registration format_inspect{{"inspect", "",
                             "FILE.quire [--json] [--verify] [--chunks COL] [--load read|mmap|prewarm|ranges]",
                             "Schema, chunks, indexes and storage by column and index of a .quire file.", run_inspect}};

}  // namespace
}  // namespace quire::cli
