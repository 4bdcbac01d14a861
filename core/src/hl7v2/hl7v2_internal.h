// hl7v2_internal.h — helpers shared by the hl7v2 implementation files; not part of the public API.
#pragma once

#include <string>
#include <string_view>

#include "quire/hl7v2.h"

namespace quire::hl7v2::detail {

// The only code that fills a message's private index (the readers in hl7v2_reader.cpp).
struct message_builder {
  static result<message> parse_one(std::string_view chunk, uint64_t base_offset, const parse_options &options);
};

// Decodes the escapes of `text` into `out` (appending), or only checks them when out is null.
// Offsets in errors are relative to `text`.
result<void> unescape_into(std::string_view text, const delimiters &delims, bool strict, std::string *out);

// True when `text` is valid UTF-8 (RFC 3629).
bool is_valid_utf8(std::string_view text) noexcept;

// Appends `text` (UTF-8) as a JSON string literal, quotes included.
void append_json_string(std::string &out, std::string_view text);

inline bool is_line_end(char c) noexcept { return c == '\r' || c == '\n'; }
inline bool is_id_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
}

}  // namespace quire::hl7v2::detail
