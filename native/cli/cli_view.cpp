// `quire view run` and `quire fhirpath`: SQL on FHIR ViewDefinitions and FHIRPath expressions over
// resources, Bundles and NDJSON from the command line.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_dataset.h"
#include "cli_parquet.h"
#include "quire/detect.h"
#include "quire/fhirpath.h"
#include "quire/file_source.h"
#include "quire/json.h"
#include "quire/ndjson.h"
#include "quire/platform.h"
#include "quire/view.h"

namespace quire::cli {
namespace {

// now(), today() and timeOfDay() give the system's time, read here: core reads no clock.
fhirpath::clock_reading read_clock() {
  auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return {std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count(), 0};
}

/// Bytes of an input read at a time.
constexpr size_t PIECE_BYTES = size_t{1} << 20;

/// An input file, or standard input for `-`, read in pieces: a file through the native file
/// source in `ranges` mode (nothing of it held), standard input with fread.
class piece_reader {
 public:
  result<void> open(const std::string &path) {
    if (path == "-") return {};
    auto f = native::open_file(path, {.mode = native::load_mode::ranges});
    if (!f) return f.error();
    file_ = std::move(f).value();
    return {};
  }
  /// The next piece; empty at the end.
  result<std::string_view> next() {
    if (!file_) {
      size_t n = std::fread(buffer_.data(), 1, buffer_.size(), stdin);
      if (n == 0 && std::ferror(stdin)) return quire::error(error_code::IO_ERROR, "cannot read standard input");
      bytes_ += n;
      return std::string_view(buffer_.data(), n);
    }
    const uint64_t stop = std::min(file_->size(), end_);
    const uint64_t left = at_ < stop ? stop - at_ : 0;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), left));
    if (n == 0) return std::string_view();
    auto r = file_->read_at(at_, std::span<uint8_t>(reinterpret_cast<uint8_t *>(buffer_.data()), n));
    if (!r) return std::move(r).error();
    at_ += n;
    bytes_ += n;
    return std::string_view(buffer_.data(), n);
  }
  uint64_t bytes() const { return bytes_; }
  /// The open file (null for standard input).
  const byte_source *file() const { return file_.get(); }
  /// Reads only [r.start, r.end) from now on.
  void limit(const ndjson::byte_range &r) {
    at_ = r.start;
    end_ = r.end;
  }

 private:
  std::unique_ptr<byte_source> file_;
  std::vector<char> buffer_ = std::vector<char>(PIECE_BYTES);
  uint64_t at_ = 0;
  uint64_t end_ = UINT64_MAX;
  uint64_t bytes_ = 0;
};

/// What to do with an input: its NDJSON in pieces (then an end), or one whole JSON document.
struct input_handlers {
  std::function<result<void>(std::string_view)> ndjson_piece;
  std::function<result<void>()> ndjson_end;
  std::function<result<void>(const json::value &)> document;
};

/// Reads one input; core's rule (quire/detect.h: the name, then the first line) says what it is.
/// NDJSON (and an input of white space only, which gives nothing) goes on piece by piece as it is
/// read, never held; anything else is read whole as one JSON document, whose errors say what is
/// wrong with it. Returns the bytes read.
result<uint64_t> read_input(const std::string &path, const input_handlers &h) {
  piece_reader in;
  if (auto ok = in.open(path); !ok) return ok.error();
  input_kind kind = detect_input({}, false, path).kind;
  std::string head;  // the start of the input while its kind is not known, or the whole document
  auto lines_from_head = [&]() -> result<void> {
    auto ok = h.ndjson_piece(head);
    head.clear();
    head.shrink_to_fit();
    return ok;
  };
  while (true) {
    auto piece = in.next();
    if (!piece) return piece.error();
    if (piece->empty()) break;
    if (kind == input_kind::ndjson) {
      if (auto ok = h.ndjson_piece(*piece); !ok) return ok.error();
      continue;
    }
    if (head.size() + piece->size() > json::limits::DEFAULT_MAX_DOCUMENT_BYTES) {
      std::string m = "a JSON document larger than ";
      m += std::to_string(json::limits::DEFAULT_MAX_DOCUMENT_BYTES);
      m += " bytes (write large inputs as NDJSON: one resource a line)";
      return quire::error(error_code::DOCUMENT_TOO_LARGE, std::move(m));
    }
    head.append(*piece);
    if (kind == input_kind::need_more) {
      kind = detect_input(head, false).kind;
      if (kind == input_kind::ndjson)
        if (auto ok = lines_from_head(); !ok) return ok.error();
    }
  }
  if (kind == input_kind::need_more) kind = detect_input(head, true).kind;
  if (kind == input_kind::ndjson || kind == input_kind::empty) {
    if (!head.empty())
      if (auto ok = lines_from_head(); !ok) return ok.error();
    if (auto ok = h.ndjson_end(); !ok) return ok.error();
    return in.bytes();
  }
  auto doc = json::parse(head);
  if (!doc) return doc.error();
  if (auto ok = h.document(doc->root()); !ok) return ok.error();
  return in.bytes();
}

/// The kind of a file core's rule gives from its name and first bytes (read until the rule is
/// sure, or the file ends).
result<input_kind> detect_file(const std::string &path, piece_reader &in) {
  input_kind kind = detect_input({}, false, path).kind;
  std::string head;
  while (kind == input_kind::need_more) {
    auto piece = in.next();
    if (!piece) return piece.error();
    head.append(*piece);
    kind = detect_input(head, piece->empty(), path).kind;
    if (piece->empty()) break;
  }
  return kind;
}

/// Runs the NDJSON lines that start inside `range` of the file at `path` (core's line_range: N
/// tasks given meeting ranges run every line once); the file must be NDJSON. Returns the bytes
/// read. Line numbers in errors count from the range's first line.
result<uint64_t> read_range(const std::string &path, const ndjson::byte_range &range, const input_handlers &h) {
  if (path == "-") return quire::error(error_code::INVALID_ARGUMENT, "--range needs a file, not standard input");
  piece_reader in;
  if (auto ok = in.open(path); !ok) return ok.error();
  auto kind = detect_file(path, in);
  if (!kind) return kind.error();
  if (*kind != input_kind::ndjson && *kind != input_kind::empty) {
    return quire::error(error_code::INVALID_ARGUMENT, "--range needs NDJSON (one resource a line), and this input is " +
                                                          std::string(input_kind_name(*kind)));
  }
  auto lines = ndjson::line_range(*in.file(), range);
  if (!lines) return lines.error();
  in.limit(*lines);
  const uint64_t before = in.bytes();
  while (true) {
    auto piece = in.next();
    if (!piece) return piece.error();
    if (piece->empty()) break;
    if (auto ok = h.ndjson_piece(*piece); !ok) return ok.error();
  }
  if (auto ok = h.ndjson_end(); !ok) return ok.error();
  return in.bytes() - before;
}

/// Counts the bytes on their way to another sink (the summary line).
class counting_sink final : public format::byte_sink {
 public:
  explicit counting_sink(format::byte_sink &to) : to_(to) {}
  result<void> write(std::span<const uint8_t> bytes) override {
    auto ok = to_.write(bytes);
    if (ok) count += bytes.size();
    return ok;
  }
  uint64_t count = 0;

 private:
  format::byte_sink &to_;
};

class stdout_sink final : public format::byte_sink {
 public:
  result<void> write(std::span<const uint8_t> bytes) override {
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
      return quire::error(error_code::IO_ERROR, "cannot write standard output");
    return {};
  }
};

// Every INPUT (files[1...]) into the table writer, or the one range of the one INPUT; EXIT_OK or
// the failing input's exit code. `input_bytes` counts what was read.
int feed_inputs(const std::vector<std::string> &files, const std::optional<ndjson::byte_range> &range,
                view::table_writer &tw, uint64_t &input_bytes) {
  input_handlers h;
  h.ndjson_piece = [&](std::string_view p) { return tw.feed_ndjson(p); };
  h.ndjson_end = [&]() { return tw.end_ndjson(); };
  h.document = [&](const json::value &d) { return tw.add_resource(d); };
  for (size_t i = 1; i < files.size(); ++i) {
    auto read = range ? read_range(files[i], *range, h) : read_input(files[i], h);
    if (!read) return fail(files[i], read.error());
    input_bytes += *read;
  }
  return EXIT_OK;
}

// `view run ... --out DIR --partition-by COL [--part NAME]`: a part file per partition value under
// DIR, then this writer's fragment; with no --part (one writer) the manifest is merged at once.
int run_view_dataset(arguments &, table_options &table, const std::vector<std::string> &files, const std::string &dir,
                     const std::string &column, const std::string &part, bool merge_now,
                     const std::optional<ndjson::byte_range> &range, unsigned threads, bool parquet) {
  auto view_text = read_view_text(files[0]);
  if (!view_text) return fail(files[0], view_text.error());
  auto v = view::compile(*view_text);
  if (!v) return fail(files[0], v.error());
  auto schema = view::table_schema(*v);
  if (!schema) return fail(files[0], schema.error());
  if (int spilled = table.open_spill(); spilled != EXIT_OK) return spilled;
  // claim() makes the folder (several writers may start at once: one that finds it made goes on).
  dataset_parts parts(dir, part);
  if (auto ok = parts.claim(); !ok) return fail(dir, ok.error());
  view::run_options run{.tasks = &default_task_runner(), .threads = threads, .now = read_clock()};
  auto w = view::table_writer::create_partitioned(*v, column, table.write, parts, run);
  if (!w) return fail(files[0], w.error());
  view::table_writer &tw = *w.value();
  const auto started = std::chrono::steady_clock::now();
  uint64_t input_bytes = 0;
  if (int read = feed_inputs(files, range, tw, input_bytes); read != EXIT_OK) return read;
  auto rows = tw.finish();
  if (!rows) return fail(dir, rows.error());
  std::vector<dataset::input_range> ranges;
  if (range) {
    // The range as asked (its end at most the input's size): the merge checks the writers' ranges
    // of one input meet, each byte in one.
    struct stat st {};
    if (::stat(files[1].c_str(), &st) != 0) return fail(files[1], quire::error(error_code::IO_ERROR, "cannot stat"));
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    const size_t slash = files[1].rfind('/');
    ranges.push_back({.input = slash == std::string::npos ? files[1] : files[1].substr(slash + 1),
                      .input_bytes = size,
                      .start = std::min(range->start, size),
                      .end = std::min(range->end, size),
                      .part = part});
  }
  auto fragment = parts.commit(tw, *schema, column, parquet, std::move(ranges));
  if (!fragment) return fail(dir, fragment.error());
  if (merge_now) {
    auto merged = merge_dataset(dir);
    if (!merged) return fail(dir, merged.error());
  }
  if (!table.quiet) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(
        stderr, "%s: %llu resources, %llu rows in %zu partitions of %s (part %s; %llu input bytes in %.2f s)\n",
        dir.c_str(), static_cast<unsigned long long>(tw.resources()), static_cast<unsigned long long>(*rows),
        tw.partitions().size(), column.c_str(), part.c_str(), static_cast<unsigned long long>(input_bytes), seconds);
  }
  return EXIT_OK;
}

int run_view(arguments &args) {
  auto out_path = args.option("--out");
  table_options table(args, {"--index", "--chunk-rows"});
  // NDJSON lines run on this many threads (0, the default: one per hardware thread).
  const uint64_t threads = args.number("--threads").value_or(0);
  auto range_text = args.option("--range");
  auto partition_by = args.option("--partition-by");
  auto part_name = args.option("--part");
  const bool with_parquet = args.flag("--parquet");
  auto positional =
      args.finish("view run", 2, SIZE_MAX, "needs VIEW.json and at least one INPUT (- for standard input)");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &files = *positional;
  if (threads > view::run_options::MAX_THREADS)
    return usage_error("view run", "--threads takes a whole number from 0 to 256");
  std::optional<ndjson::byte_range> range;
  if (range_text) {
    auto r = ndjson::parse_byte_range(*range_text);
    if (!r) return fail("--range", r.error());
    if (files.size() != 2) return usage_error("view run", "--range takes one INPUT");
    range = *r;
  }
  if ((part_name || with_parquet) && !partition_by)
    return usage_error("view run", "--part and --parquet are for a dataset's parts: give --partition-by");
  if (partition_by) {
    if (!out_path) return usage_error("view run", "--partition-by needs --out DIR, the dataset's folder");
    if (auto ok = dataset::check_part_name(part_name.value_or("00000")); !ok) return fail("--part", ok.error());
    return run_view_dataset(args, table, files, *out_path, *partition_by, part_name.value_or("00000"), !part_name,
                            range, static_cast<unsigned>(threads), with_parquet);
  }
  view::output_kind kind = view::output_kind::ndjson;
  // Parquet: core writes its CSV to a temporary file, DuckDB makes the Parquet from it (cli_parquet.h).
  const bool arrow = out_path && is_arrow_path(*out_path);
  const bool parquet = out_path && (is_parquet_path(*out_path) || arrow);
  if (out_path) {
    auto k = parquet ? std::optional(view::output_kind::csv) : view::output_kind_for_path(*out_path);
    if (!k)
      return usage_error("view run", "--out takes a file ending in .ndjson, .jsonl, .csv, .quire, .parquet or .arrow");
    kind = *k;
  }
  if (!table.write.indexes.empty() && (kind != view::output_kind::quire || parquet)) {
    return usage_error("view run", "--index needs --out FILE.quire (NDJSON and CSV hold no index)");
  }

  auto view_text = read_view_text(files[0]);
  if (!view_text) return fail(files[0], view_text.error());
  auto v = view::compile(*view_text);
  if (!v) return fail(files[0], v.error());

  if (int spilled = table.open_spill(); spilled != EXIT_OK) return spilled;
  stdout_sink to_stdout;
  std::unique_ptr<temp_file_sink> to_file;
  parquet_sink to_parquet;
  if (parquet) {
    auto schema = view::table_schema(*v);
    if (!schema) return fail(files[0], schema.error());
    if (auto ok = to_parquet.start(*schema, *out_path, arrow); !ok) return fail(*out_path, ok.error());
  } else if (out_path) {
    to_file = std::make_unique<temp_file_sink>(*out_path);
    if (!to_file->opened()) return fail(*out_path, to_file->open_error());
  }
  counting_sink sink(parquet   ? static_cast<format::byte_sink &>(to_parquet)
                     : to_file ? static_cast<format::byte_sink &>(*to_file)
                               : to_stdout);
  const std::string &target = out_path ? *out_path : std::string("-");
  view::run_options run{
      .tasks = &default_task_runner(), .threads = static_cast<unsigned>(threads), .now = read_clock()};
  auto w = view::table_writer::create(*v, kind, table.write, sink, run);
  if (!w) return fail(target, w.error());
  view::table_writer &tw = *w.value();
  // Parquet and Arrow hold decimals as DECIMAL(38,18): one that does not fit is core's typed error
  // (the npm package's too), before the helper sees it.
  if (parquet) tw.require_decimal128();

  const auto started = std::chrono::steady_clock::now();
  uint64_t input_bytes = 0;
  if (int read = feed_inputs(files, range, tw, input_bytes); read != EXIT_OK) return read;
  auto rows = tw.finish();
  if (!rows) return fail(target, rows.error());
  if (to_file) {
    auto committed = to_file->commit();
    if (!committed) return fail(*out_path, committed.error());
  }
  if (parquet) {
    if (auto made = to_parquet.finish(); !made) return fail(*out_path, made.error());
  }
  std::fflush(stdout);
  if (!table.quiet) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // Parquet and Arrow: the file's size and kind, not the CSV's that went through the pipe.
    uint64_t bytes = sink.count;
    struct stat st {};
    if (parquet && ::stat(out_path->c_str(), &st) == 0) bytes = static_cast<uint64_t>(st.st_size);
    const char *kind_name = arrow ? "arrow" : parquet ? "parquet" : view::output_kind_name(kind).data();
    std::fprintf(stderr, "%s: %llu resources, %llu rows, %llu bytes (%s; %llu input bytes in %.2f s)\n", target.c_str(),
                 static_cast<unsigned long long>(tw.resources()), static_cast<unsigned long long>(*rows),
                 static_cast<unsigned long long>(bytes), kind_name, static_cast<unsigned long long>(input_bytes),
                 seconds);
  }
  return EXIT_OK;
}

int run_fhirpath(arguments &args) {
  auto positional = args.finish("fhirpath", 2, 2, "needs EXPR and FILE (- for standard input)");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &words = *positional;
  auto expr = fhirpath::compile(words[0]);
  if (!expr) return fail("EXPR", expr.error());
  fhirpath::evaluator ev;
  std::string out;
  auto evaluate = [&](const json::value &resource) -> result<void> {
    fhirpath::environment env;
    env.now = read_clock();
    env.resource = &resource;
    env.root_resource = &resource;
    auto r = ev.evaluate(*expr, resource, env);
    if (!r) return r.error();
    out = fhirpath::to_json(**r);
    out += '\n';
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size())
      return quire::error(error_code::IO_ERROR, "cannot write standard output");
    return {};
  };
  // NDJSON lines are cut by core's line feeder (a line at a time; only an incomplete one is held).
  ndjson::line_feeder lines;
  auto run_lines = [&]() {
    return lines.each([&](const ndjson::line &l) -> result<void> {
      if (l.blank()) return {};
      auto doc = json::parse(l.text);
      quire::error e;
      if (doc) {
        auto ok = evaluate(doc->root());
        if (ok) return {};
        e = ok.error();
      } else {
        e = std::move(doc).error();
        if (e.offset != quire::error::NO_OFFSET) e.offset += l.offset;
      }
      e.line = static_cast<uint32_t>(l.number);
      return e;
    });
  };
  input_handlers h;
  h.ndjson_piece = [&](std::string_view p) -> result<void> {
    lines.feed(p);
    return run_lines();
  };
  h.ndjson_end = [&]() -> result<void> {
    lines.feed({}, true);
    return run_lines();
  };
  h.document = evaluate;
  auto read = read_input(words[1], h);
  if (!read) return fail(words[1], read.error());
  return EXIT_OK;
}

registration view_run{
    {"view", "run",
     "VIEW.json INPUT... [--out ROWS.ndjson|ROWS.csv|TABLE.quire|ROWS.parquet|ROWS.arrow] [--index "
     "COL:sorted|hash|text]... "
     "[--chunk-rows N] "
     "[--threads N] [--range START:END] [--partition-by COL [--part NAME] [--parquet]] [--spill-dir DIR] [--quiet]",
     "Run a SQL on FHIR ViewDefinition over resources, Bundles or NDJSON (- for standard input); rows go to "
     "standard output as NDJSON, or to --out as NDJSON, CSV, an indexed .quire table, Parquet or an Arrow IPC "
     "file (kind from the extension; written to a temporary name, then renamed; Parquet by DuckDB and Arrow by "
     "apache-arrow, through node). NDJSON lines run on --threads threads (default: one per hardware thread; the output "
     "is the same for any number). --range runs only the lines of one NDJSON INPUT "
     "that start inside bytes [START, END) (quire split prints such ranges). With --partition-by, --out names a "
     "dataset's folder: a .quire part per value, DIR/COL=VALUE/part-NAME.quire (NAME from --part, unique per "
     "writer; default 00000; with --parquet a part-NAME.parquet beside each), staged in DIR/_quire_parts/NAME/ "
     "with the writer's fragment; without --part they are merged at once into place and into the manifest "
     "DIR/_quire_dataset.json, with it `quire dataset merge DIR` does that. A summary line goes to standard "
     "error.",
     run_view}};
registration fhirpath_eval{{"fhirpath", "", "EXPR FILE",
                            "Evaluate a FHIRPath expression over a resource, a Bundle (as one resource) or each line "
                            "of NDJSON (- for standard input); prints each result collection as a JSON array, one a "
                            "line.",
                            run_fhirpath}};

}  // namespace

result<std::string> read_view_text(const std::string &path) {
  piece_reader in;
  if (auto ok = in.open(path); !ok) return ok.error();
  std::string text;
  while (true) {
    auto piece = in.next();
    if (!piece) return piece.error();
    if (piece->empty()) break;
    // The view's own limit: a file past it is refused before it is all read.
    if (text.size() + piece->size() > view::limits::DEFAULT_MAX_VIEW_BYTES + 1) {
      text.append(piece->substr(0, view::limits::DEFAULT_MAX_VIEW_BYTES + 1 - text.size()));
      break;
    }
    text.append(*piece);
  }
  return text;
}
}  // namespace quire::cli
