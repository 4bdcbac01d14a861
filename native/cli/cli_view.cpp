// `quire view run` and `quire fhirpath`: SQL on FHIR ViewDefinitions and FHIRPath expressions over
// resources, Bundles and NDJSON from the command line.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cli.h"
#include "quire/fhirpath.h"
#include "quire/file_source.h"
#include "quire/json.h"
#include "quire/platform.h"
#include "quire/spill_file.h"
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

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

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
    const uint64_t left = file_->size() - at_;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), left));
    if (n == 0) return std::string_view();
    auto r = file_->read_at(at_, std::span<uint8_t>(reinterpret_cast<uint8_t *>(buffer_.data()), n));
    if (!r) return std::move(r).error();
    at_ += n;
    bytes_ += n;
    return std::string_view(buffer_.data(), n);
  }
  uint64_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<byte_source> file_;
  std::vector<char> buffer_ = std::vector<char>(PIECE_BYTES);
  uint64_t at_ = 0;
  uint64_t bytes_ = 0;
};

/// What to do with an input: its NDJSON in pieces (then an end), or one whole JSON document.
struct input_handlers {
  std::function<result<void>(std::string_view)> ndjson_piece;
  std::function<result<void>()> ndjson_end;
  std::function<result<void>(const json::value &)> document;
};

/// Reads one input and decides what it is. `.ndjson` and `.jsonl` files are NDJSON. Anything else
/// (a `.json` file, standard input) is NDJSON when its first non-blank line is a whole JSON value
/// on its own (a resource or Bundle written on one line reads the same either way), else one JSON
/// document (a pretty-printed resource or Bundle), which is read whole. NDJSON is never held:
/// pieces go on as they are read. Returns the bytes read.
result<uint64_t> read_input(const std::string &path, const input_handlers &h) {
  piece_reader in;
  if (auto ok = in.open(path); !ok) return ok.error();
  bool ndjson = ends_with(path, ".ndjson") || ends_with(path, ".jsonl");
  std::string head;  // the start of the input while its kind is not known, or the whole document
  bool decided = ndjson;
  while (true) {
    auto piece = in.next();
    if (!piece) return piece.error();
    if (piece->empty()) break;
    if (decided && ndjson) {
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
    if (!decided) {
      size_t first = head.find_first_not_of(" \t\r\n");
      if (first == std::string::npos) continue;
      size_t nl = head.find('\n', first);
      if (nl == std::string::npos) continue;
      decided = true;
      ndjson = json::check(std::string_view(head).substr(first, nl - first)).ok();
      if (ndjson) {
        if (auto ok = h.ndjson_piece(head); !ok) return ok.error();
        head.clear();
        head.shrink_to_fit();
      }
    }
  }
  if (!decided) {
    // No line end after the first value: one line, which NDJSON and a document read alike; as
    // NDJSON, blank input gives nothing rather than EMPTY_INPUT.
    ndjson = true;
    if (auto ok = h.ndjson_piece(head); !ok) return ok.error();
  }
  if (ndjson) {
    if (auto ok = h.ndjson_end(); !ok) return ok.error();
    return in.bytes();
  }
  auto doc = json::parse(head);
  if (!doc) return doc.error();
  if (auto ok = h.document(doc->root()); !ok) return ok.error();
  return in.bytes();
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

bool parse_count(const std::optional<std::string> &text, uint64_t &out) {
  if (!text) return true;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), out);
  return ec == std::errc() && p == text->data() + text->size();
}

int run_view(arguments &args) {
  auto out_path = args.option("--out");
  auto index_specs = args.options("--index");
  auto spill_dir = args.option("--spill-dir");
  bool quiet = args.flag("--quiet");
  uint64_t chunk_rows = format::DEFAULT_CHUNK_ROWS;
  if (!parse_count(args.option("--chunk-rows"), chunk_rows)) {
    return usage_error("view run", "--chunk-rows takes a whole number");
  }
  // NDJSON lines run on this many threads (0, the default: one per hardware thread).
  uint64_t threads = 0;
  if (!parse_count(args.option("--threads"), threads) || threads > view::run_options::MAX_THREADS) {
    return usage_error("view run", "--threads takes a whole number from 0 to 256");
  }
  auto files = args.positional();
  if (!args.error().empty()) return usage_error("view run", args.error());
  if (files.size() < 2) return usage_error("view run", "needs VIEW.json and at least one INPUT (- for standard input)");
  view::output_kind kind = view::output_kind::ndjson;
  if (out_path) {
    auto k = view::output_kind_for_path(*out_path);
    if (!k) return usage_error("view run", "--out takes a file ending in .ndjson, .jsonl, .csv or .quire");
    kind = *k;
  }
  format::write_options opts;
  opts.chunk_rows = static_cast<uint32_t>(std::min<uint64_t>(chunk_rows, UINT32_MAX));
  for (const auto &spec : index_specs) {
    auto colon = spec.rfind(':');
    auto k = colon == std::string::npos ? std::optional<format::index_kind>()
                                        : format::parse_index_kind(spec.substr(colon + 1));
    if (!k) return usage_error("view run", "--index takes COLUMN:sorted, COLUMN:hash or COLUMN:text");
    opts.indexes.push_back({spec.substr(0, colon), *k});
  }
  if (!opts.indexes.empty() && kind != view::output_kind::quire) {
    return usage_error("view run", "--index needs --out FILE.quire (NDJSON and CSV hold no index)");
  }

  auto view_text = read_view_text(files[0]);
  if (!view_text) return fail(files[0], view_text.error());
  auto v = view::compile(*view_text);
  if (!v) return fail(files[0], v.error());

  // Sort runs of the indexes beyond the sort budget go to an unnamed temporary file.
  std::unique_ptr<native::spill_file> spill;
  if (!opts.indexes.empty()) {
    auto s = native::spill_file::create(spill_dir.value_or(""));
    if (!s) return fail(spill_dir.value_or("--spill-dir"), s.error());
    spill = std::move(s).value();
    opts.spill = spill.get();
  }
  stdout_sink to_stdout;
  std::unique_ptr<temp_file_sink> to_file;
  if (out_path) {
    to_file = std::make_unique<temp_file_sink>(*out_path);
    if (!to_file->opened()) {
      std::string m = "cannot create ";
      m += to_file->temp_path();
      return fail(*out_path, quire::error(error_code::IO_ERROR, std::move(m)));
    }
  }
  counting_sink sink(to_file ? static_cast<format::byte_sink &>(*to_file) : to_stdout);
  const std::string &target = out_path ? *out_path : std::string("-");
  view::run_options run{
      .tasks = &default_task_runner(), .threads = static_cast<unsigned>(threads), .now = read_clock()};
  auto w = view::table_writer::create(*v, kind, opts, sink, run);
  if (!w) return fail(target, w.error());
  view::table_writer &tw = *w.value();

  const auto started = std::chrono::steady_clock::now();
  uint64_t input_bytes = 0;
  input_handlers h;
  h.ndjson_piece = [&](std::string_view p) { return tw.feed_ndjson(p); };
  h.ndjson_end = [&]() { return tw.end_ndjson(); };
  h.document = [&](const json::value &d) { return tw.add_resource(d); };
  for (size_t i = 1; i < files.size(); ++i) {
    auto read = read_input(files[i], h);
    if (!read) return fail(files[i], read.error());
    input_bytes += *read;
  }
  auto rows = tw.finish();
  if (!rows) return fail(target, rows.error());
  if (to_file) {
    auto committed = to_file->commit();
    if (!committed) return fail(*out_path, committed.error());
  }
  std::fflush(stdout);
  if (!quiet) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "%s: %llu resources, %llu rows, %llu bytes (%s; %llu input bytes in %.2f s)\n", target.c_str(),
                 static_cast<unsigned long long>(tw.resources()), static_cast<unsigned long long>(*rows),
                 static_cast<unsigned long long>(sink.count), view::output_kind_name(kind).data(),
                 static_cast<unsigned long long>(input_bytes), seconds);
  }
  return EXIT_OK;
}

int run_fhirpath(arguments &args) {
  auto words = args.positional();
  if (!args.error().empty()) return usage_error("fhirpath", args.error());
  if (words.size() != 2) return usage_error("fhirpath", "needs EXPR and FILE (- for standard input)");
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
  // NDJSON lines are split here (a line at a time; only an incomplete one is held).
  std::string pending;
  uint64_t line = 1;
  uint64_t line_start = 0, position = 0;
  auto run_line = [&](std::string_view l) -> result<void> {
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.find_first_not_of(" \t") == std::string_view::npos) return {};
    auto doc = json::parse(l);
    quire::error e;
    if (doc) {
      auto ok = evaluate(doc->root());
      if (ok) return {};
      e = ok.error();
    } else {
      e = std::move(doc).error();
      if (e.offset != quire::error::NO_OFFSET) e.offset += line_start;
    }
    e.line = static_cast<uint32_t>(line);
    return e;
  };
  input_handlers h;
  h.ndjson_piece = [&](std::string_view p) -> result<void> {
    size_t pos = 0;
    while (pos < p.size()) {
      size_t nl = p.find('\n', pos);
      size_t end = nl == std::string_view::npos ? p.size() : nl;
      std::string_view seg = p.substr(pos, end - pos);
      if (pending.size() + seg.size() > view::table_writer::MAX_LINE_BYTES) {
        quire::error e(error_code::LINE_TOO_LONG, "a line longer than the limit", line_start);
        e.line = static_cast<uint32_t>(line);
        return e;
      }
      position += seg.size();
      if (nl == std::string_view::npos) {
        pending.append(seg);
        break;
      }
      std::string_view l = seg;
      if (!pending.empty()) {
        pending.append(seg);
        l = pending;
      }
      if (auto ok = run_line(l); !ok) return ok;
      pending.clear();
      position += 1;
      ++line;
      line_start = position;
      pos = nl + 1;
    }
    return {};
  };
  h.ndjson_end = [&]() -> result<void> {
    if (!pending.empty()) {
      if (auto ok = run_line(pending); !ok) return ok;
      pending.clear();
    }
    return {};
  };
  h.document = evaluate;
  auto read = read_input(words[1], h);
  if (!read) return fail(words[1], read.error());
  return EXIT_OK;
}

registration view_run{
    {"view", "run",
     "VIEW.json INPUT... [--out ROWS.ndjson|ROWS.csv|TABLE.quire] [--index COL:sorted|hash|text]... [--chunk-rows N] "
     "[--threads N] [--spill-dir DIR] [--quiet]",
     "Run a SQL on FHIR ViewDefinition over resources, Bundles or NDJSON (- for standard input); rows go to "
     "standard output as NDJSON, or to --out as NDJSON, CSV or an indexed .quire table (kind from the extension; "
     "written to a temporary name, then renamed). NDJSON lines run on --threads threads (default: one per "
     "hardware thread; the output is the same for any number). A summary line goes to standard error.",
     run_view}};
registration fhirpath_eval{{"fhirpath", "", "EXPR FILE",
                            "Evaluate a FHIRPath expression over a resource, a Bundle (as one resource) or each line "
                            "of NDJSON (- for standard input); prints each result collection as a JSON array, one a "
                            "line.",
                            run_fhirpath}};

}  // namespace
}  // namespace quire::cli
