#include "quire/error.h"

#include <string>

namespace quire {

std::string_view error_name(error_code code) noexcept {
  switch (code) {
#define QUIRE_ERROR_CODE(NAME, VALUE, DOC) \
  case error_code::NAME:                   \
    return #NAME;
#include "quire/error_list.h"
#undef QUIRE_ERROR_CODE
  }
  return "UNKNOWN";
}

std::string_view error_meaning(error_code code) noexcept {
  switch (code) {
#define QUIRE_ERROR_CODE(NAME, VALUE, DOC) \
  case error_code::NAME:                   \
    return DOC;
#include "quire/error_list.h"
#undef QUIRE_ERROR_CODE
  }
  return "";
}

std::optional<error_code> parse_error_name(std::string_view name) noexcept {
  // A linear scan: the list is short and a name is parsed rarely (once per record crossing a boundary).
  for (error_code code : ALL_ERROR_CODES)
    if (error_name(code) == name) return code;
  return std::nullopt;
}

std::string error::describe() const {
  std::string out(error_name(code));
  if (offset != NO_OFFSET) {
    out += " at offset " + std::to_string(offset);
    if (line) out += ", line " + std::to_string(line) + ", column " + std::to_string(column);
  }
  if (!path.empty()) out += " (" + path + ")";
  if (!message.empty()) out += ": " + message;
  return out;
}

void locate(error &e, std::string_view text) noexcept {
  if (e.offset == error::NO_OFFSET) return;
  size_t end = e.offset < text.size() ? static_cast<size_t>(e.offset) : text.size();
  uint32_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  e.line = line;
  e.column = static_cast<uint32_t>(end - line_start + 1);
}

}  // namespace quire
