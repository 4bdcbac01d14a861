// quire/ndjson.h — streaming NDJSON (FHIR Bulk Data exports): one resource per line, read and
// validated line by line from chunks of any size, with bounded memory.
//
//   quire::ndjson::reader r;                       // longest line 16 MiB by default
//   auto visit = [](const quire::ndjson::line_result &l) { ...; return true; };
//   while (more) if (auto s = r.feed(next_chunk(), visit); !s) return s.error();
//   r.finish(visit);
//   r.counts().by_type                             // {"Patient": 13, ...}
//
// Blank lines (empty, whitespace-only, and \r\n line ends) are skipped, as Bulk Data clients are
// asked to tolerate. A line that cannot be read (not JSON, not a resource, too long) is an error
// carrying its line number; by default it stops the stream, with continue_on_error it is reported
// and reading goes on with the next line.
//
// Memory: the reader holds at most one incomplete line (bounded by max_line_bytes) plus the
// resource being read. Lines wholly inside a chunk are read in place, without a copy.
//
// IMPORTANT: lifetime. Everything a line_result points at (text, resource, issues, error) is valid
// only during the callback that receives it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/fhir.h"
#include "quire/platform.h"
#include "quire/result.h"

namespace quire::ndjson {

/// The longest line every NDJSON reader in core holds by default (ndjson::reader, the view
/// runner and table_writer, format's NDJSON input, the CLI): LINE_TOO_LONG beyond.
inline constexpr uint64_t DEFAULT_MAX_LINE_BYTES = uint64_t{16} << 20;  // 16 MiB

/// One line cut by a line_feeder.
struct line {
  std::string_view text;  ///< without its line end (`\n`, and one `\r` before it)
  uint64_t offset = 0;    ///< stream offset of its first byte
  uint64_t number = 0;    ///< 1-based line number in the stream
  uint64_t bytes = 0;     ///< its length with a `\r` before the `\n`: what max_line_bytes bounds

  /// Empty, or only spaces, tabs and CRs: every reader skips such a line (Bulk Data clients are
  /// asked to tolerate blank lines).
  bool blank() const noexcept;
};

/// Cuts bytes arriving in pieces of any size into whole lines: the one line cutter of every
/// NDJSON reader in core. A line wholly inside a piece is handed out in place; only a line split
/// across pieces is gathered, never beyond max_line_bytes (checked as its bytes arrive, so memory
/// stays bounded). A line of more than max_line_bytes bytes (a `\r` before its `\n` counted, a
/// blank one too) is LINE_TOO_LONG, `line` its number, `offset` its first byte, the message
/// `line N is longer than max_line_bytes (M bytes)`; after it the feeder skips the rest of that
/// line, so a caller may go on with the next one. A last line without a line end is a line once
/// the piece that ends the stream is fed with `last`.
///
///   line_feeder lines;
///   lines.feed(piece);                       // or feed(piece, true) for the last one
///   while (true) {
///     auto l = lines.next();
///     if (!l) return l.error();              // LINE_TOO_LONG, OUT_OF_MEMORY
///     if (!*l) break;                        // the piece is used up: feed the next one
///     if (!(*l)->blank()) use((*l)->text, (*l)->number, (*l)->offset);
///   }
///
/// IMPORTANT: lifetime. A line's text points into the piece fed or into the feeder: valid until
/// the next call to next(), feed() or restart(). The piece must stay valid while next() is called.
class line_feeder {
 public:
  explicit line_feeder(uint64_t max_line_bytes = DEFAULT_MAX_LINE_BYTES) noexcept : max_(max_line_bytes) {}

  /// Starts again at stream offset `offset` with line number `number`, dropping any held line
  /// (and its memory): a new stream, or the bytes after whole lines read elsewhere.
  void restart(uint64_t offset = 0, uint64_t number = 1);
  /// The next piece of the stream (the previous one must be used up); `last`: the stream ends
  /// with it, so a last line without a line end is a line too.
  void feed(std::string_view piece, bool last = false) noexcept;
  /// The next whole line; nullopt when the piece is used up. Errors: LINE_TOO_LONG (the feeder
  /// goes on after it), OUT_OF_MEMORY (a split line the heap cannot hold).
  result<std::optional<line>> next();
  /// Calls fn(const line &) -> result<void> for every line the piece completes, blank ones
  /// included; stops at the first error (the feeder's or fn's) and returns it.
  template <typename Fn>
  result<void> each(Fn &&fn) {
    while (true) {
      auto l = next();
      if (!l) return std::move(l).error();
      if (!*l) return {};
      if (auto r = fn(**l); !r) return r;
    }
  }

  /// Whether the feeder is inside a line (an incomplete one held, or a too long one skipped).
  bool holding() const noexcept { return !pending_.empty() || discarding_; }
  /// The number the next line will have.
  uint64_t next_number() const noexcept { return number_; }
  uint64_t max_line_bytes() const noexcept { return max_; }

 private:
  line make_line(std::string_view text, uint64_t offset) noexcept;

  uint64_t max_;
  std::string_view piece_;
  size_t pos_ = 0;               // the next byte of piece_ to look at
  uint64_t piece_offset_ = 0;    // stream offset of piece_[0]
  uint64_t next_offset_ = 0;     // stream offset of the next piece
  uint64_t number_ = 1;          // of the next line
  bool last_ = false;            // piece_ ends the stream
  bool discarding_ = false;      // inside a line already reported as too long
  bool release_ = false;         // pending_ was handed out: drop it on the next call
  std::string pending_;          // an incomplete line carried over from earlier pieces
  uint64_t pending_offset_ = 0;  // stream offset of pending_'s first byte
};

struct options {
  static constexpr uint64_t DEFAULT_MAX_LINE_BYTES = ndjson::DEFAULT_MAX_LINE_BYTES;

  uint64_t max_line_bytes = DEFAULT_MAX_LINE_BYTES;  ///< LINE_TOO_LONG beyond
  bool continue_on_error = false;                    ///< report bad lines and go on, instead of stopping
  fhir::options fhir;                                ///< how each line's resource is read (limits, strictness)
};

/// What one non-blank line gave.
struct line_result {
  uint64_t line = 0;                         ///< 1-based line number in the stream
  uint64_t offset = 0;                       ///< byte offset of the line's first byte in the stream
  std::string_view text;                     ///< the line, without its line end
  const fhir::resource *resource = nullptr;  ///< the resource; null when the line could not be read
  const quire::error *error = nullptr;       ///< why the line could not be read (line, column, stream offset)
  /// The resource's validation findings, with `line` set to the stream's line number and `offset`
  /// to the stream offset (column stays the column in the line).
  std::span<const fhir::issue> issues;
};

/// Called for each non-blank line; returning false stops the stream (feed() then returns OK and
/// later calls do nothing).
using line_callback = std::function<bool(const line_result &)>;

/// Counts over a stream.
struct stats {
  uint64_t bytes = 0;
  uint64_t lines = 0;  ///< all lines, blank ones included
  uint64_t blank_lines = 0;
  uint64_t resources = 0;                                ///< lines read as resources
  uint64_t bad_lines = 0;                                ///< lines that could not be read
  uint64_t invalid_resources = 0;                        ///< resources with at least one error issue
  uint64_t issues = 0;                                   ///< validation issues over all resources
  uint64_t longest_line = 0;                             ///< bytes
  std::map<std::string, uint64_t, std::less<>> by_type;  ///< resources by resourceType
};

/// A push-style NDJSON reader: feed it chunks as they arrive.
class reader {
 public:
  explicit reader(const options &opts = {});

  /// Reads every line the chunk completes. Errors: the first bad line's error when
  /// continue_on_error is false (the reader is then stopped: later calls return the same error).
  result<void> feed(std::string_view chunk, const line_callback &visit);
  /// Ends the stream: reads a last line that has no line end.
  result<void> finish(const line_callback &visit);
  /// Counts so far.
  const ndjson::stats &counts() const noexcept { return stats_; }
  /// Whether the reader stopped (a bad line without continue_on_error, or a callback said stop).
  bool stopped() const noexcept { return stopped_; }

 private:
  bool process(const line &l, const line_callback &visit);
  result<void> line_too_long(quire::error e, const line_callback &visit);
  result<void> read_lines(const line_callback &visit);

  options opts_;
  ndjson::stats stats_;
  line_feeder lines_;
  bool stopped_ = false;
  quire::error stop_error_;
};

/// Reads a whole byte source as NDJSON (in place when it is contiguous, else in 1 MiB chunks).
result<ndjson::stats> read_all(const byte_source &source, const line_callback &visit, const options &opts = {});

// --- JSON texts (ndjson_json.cpp) ---------------------------------------------------------------

/// How stats_json names its keys: the npm package's `stats` (camelCase: blankLines, byType...) or
/// `quire ndjson stats --json` (snake_case: blank_lines, by_type...), each a documented shape.
enum class key_case : uint8_t { camel, snake };

/// The counts as one JSON object: bytes, lines, blank lines, resources, bad lines, invalid
/// resources, issues, longest line, then resources by type (`{"Patient":13}`), keys named by
/// `names`. With `file`, a first member `"file":` names the input (the CLI's line).
std::string stats_json(const ndjson::stats &s, key_case names, std::optional<std::string_view> file = std::nullopt);

/// The JSON text of what one feed() or finish() gave, as the npm package's NdjsonStream reads it:
/// `{"items":[...],"error":null|{...}}`, each item `{"line":N,"offset":N,"resource":{...}}` (the
/// line's own text), `{"line":N,"issue":{...}}` (one per validation issue) or
/// `{"line":N,"error":{...}}`; an error is `{"code","message","offset" (-1 when none),"line",
/// "column","path","text" (error::describe())}`.
class feed_json {
 public:
  /// Starts the text of a new feed.
  void begin();
  /// Appends the items of one line (call it from the feed's line_callback).
  void add(const line_result &l);
  /// Ends the text with the feed's outcome; returns it (the writer is then ready for begin()).
  std::string end(const result<void> &outcome);

 private:
  void item_start(uint64_t line);
  std::string out_;
  bool first_ = true;
};

// --- byte ranges: one input cut among tasks -------------------------------------------------------

/// Bytes [start, end) of an input.
struct byte_range {
  uint64_t start = 0;
  uint64_t end = 0;
  bool operator==(const byte_range &) const = default;
};

/// The bytes that hold exactly the lines starting inside `asked` (a line starts at 0 and after
/// each `\n`): from the first line start at or after asked.start to the first at or after
/// asked.end (or the input's end). Ranges that meet — [0, a), [a, b), [b, size) — so give every
/// line to exactly one of them, wherever a and b fall, with no byte copied: N tasks given N
/// ranges of one file run each line once. Reads only the bytes from each bound to the next line
/// end, in 64 KiB blocks (a line too long for a reader is the reader's LINE_TOO_LONG, found when
/// it reads the range). An end past the input's size means its end; a start past the end is
/// INVALID_ARGUMENT; IO_ERROR from the source.
result<byte_range> line_range(const byte_source &input, byte_range asked);

/// `parts` ranges (1..65536) that meet at line starts, each near size / parts bytes, covering the
/// input in order (`quire split`); a range is empty when a line longer than a part covers it.
result<std::vector<byte_range>> split_lines(const byte_source &input, uint64_t parts);

/// "START:END" (decimal byte offsets, START <= END), as `--range` takes it; INVALID_ARGUMENT else.
result<byte_range> parse_byte_range(std::string_view text);

/// `{"part":N,"start":S,"end":E,"bytes":B}`: a line of `quire split`'s output.
std::string byte_range_json(const byte_range &r, uint64_t part);

}  // namespace quire::ndjson
