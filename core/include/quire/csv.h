// quire/csv.h — an RFC 4180 CSV reader: quoted fields, doubled quotes, embedded newlines, CRLF or
// LF line ends, a header row. Used by the .quire writer (format::write_csv) and usable alone.
//
//   quire::csv::reader r(text);
//   std::vector<std::string_view> fields;
//   while (true) {
//     auto more = r.next(fields);
//     if (!more) return more.error();   // INVALID_CSV with line and column
//     if (!*more) break;                 // end of input
//     ...
//   }
//
// IMPORTANT: lifetime. The reader does not copy its input; fields point into the input when they
// need no unescaping, or into the reader's own buffer when they do. Both stay valid until the
// next call to next() (and the input must outlive the reader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quire/result.h"

namespace quire::csv {

/// Default of options::max_field_bytes (16 MiB). A longer field is LINE_TOO_LONG.
inline constexpr size_t DEFAULT_MAX_FIELD_BYTES = size_t{16} << 20;
/// Default of options::max_columns. More fields in a row is INVALID_CSV.
inline constexpr size_t DEFAULT_MAX_COLUMNS = 4096;

struct options {
  char delimiter = ',';
  size_t max_field_bytes = DEFAULT_MAX_FIELD_BYTES;
  size_t max_columns = DEFAULT_MAX_COLUMNS;
};

/// Reads records one at a time. The first record is an ordinary record: the caller decides that it
/// is a header. A leading UTF-8 byte order mark is skipped. A last line without a line end is
/// read; empty lines (outside quotes) are skipped, never records.
class reader {
 public:
  explicit reader(std::string_view input, const options &opts = {});

  /// Reads the next record into `fields` (cleared first). Returns true when a record was read,
  /// false at the end of the input. Errors: INVALID_CSV (a quote inside an unquoted field, text
  /// after a closing quote, a quoted field with no end, more than max_columns fields),
  /// LINE_TOO_LONG (a field over max_field_bytes) — with the byte offset, line and column (the
  /// 1-based field number) where it was found.
  result<bool> next(std::vector<std::string_view> &fields);

  /// 1-based line where the record last returned by next() began.
  uint32_t record_line() const noexcept { return record_line_; }
  /// Byte offset where the record last returned by next() began.
  uint64_t record_offset() const noexcept { return record_offset_; }

 private:
  std::string_view input_;
  options opts_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t record_line_ = 0;
  uint64_t record_offset_ = 0;
  std::string unescaped_;
};

/// The feeding side of `reader`: finds where records end in CSV that arrives in pieces, by the
/// reader's rules (a line end ends a record unless it is inside quotes), scanning every byte once
/// whatever the pieces. A caller holds the bytes, calls find_end() as more arrive, and hands each
/// complete record (or the last one, at the end of the input) to a `reader`. Where the input is
/// not valid CSV the scanner still ends the record somewhere; the reader then reports the error.
class record_scanner {
 public:
  explicit record_scanner(char delimiter = ',') noexcept : delimiter_(delimiter) {}

  /// Scans text[from, text.size()) from where the last call stopped (the bytes before `from` were
  /// scanned already). Returns the index just past the '\n' that ends the current record, or
  /// std::string_view::npos when the text ends first (the scan goes on from text.size()).
  size_t find_end(std::string_view text, size_t from) noexcept;
  /// Line ends ('\n') in the record scanned so far, its last one included once it has ended.
  uint32_t newlines() const noexcept { return newlines_; }
  /// Starts the next record: the count of line ends goes back to zero.
  void next_record() noexcept { newlines_ = 0; }

 private:
  enum class state : uint8_t { field_start, unquoted, quoted, after_quote };
  char delimiter_;
  state state_ = state::field_start;
  uint32_t newlines_ = 0;
};

/// Builds an INVALID_CSV error for the record at `line`, field `column` (1-based), with a message.
quire::error make_error(std::string message, uint64_t offset, uint32_t line, uint32_t column);

}  // namespace quire::csv
