#include "quire/error.h"

#include <string>

namespace quire {

std::string_view error_name(error_code code) noexcept {
  switch (code) {
#define QUIRE_NAME(c) case error_code::c: return #c;
    QUIRE_NAME(OK)
    QUIRE_NAME(IO_ERROR)
    QUIRE_NAME(FILE_NOT_FOUND)
    QUIRE_NAME(NOT_A_FILE)
    QUIRE_NAME(EMPTY_INPUT)
    QUIRE_NAME(OUT_OF_MEMORY)
    QUIRE_NAME(OUT_OF_RANGE)
    QUIRE_NAME(INVALID_ARGUMENT)
    QUIRE_NAME(MAX_DEPTH_EXCEEDED)
    QUIRE_NAME(DOCUMENT_TOO_LARGE)
    QUIRE_NAME(LINE_TOO_LONG)
    QUIRE_NAME(INVALID_JSON)
    QUIRE_NAME(INVALID_UTF8)
    QUIRE_NAME(INVALID_STRING)
    QUIRE_NAME(INVALID_NUMBER)
    QUIRE_NAME(TRAILING_CONTENT)
    QUIRE_NAME(WRONG_TYPE)
    QUIRE_NAME(NO_SUCH_KEY)
    QUIRE_NAME(UNKNOWN_ELEMENT)
    QUIRE_NAME(INVALID_RESOURCE)
    QUIRE_NAME(INVALID_HL7)
    QUIRE_NAME(INVALID_ESCAPE)
    QUIRE_NAME(FRAME_TOO_LARGE)
    QUIRE_NAME(NOT_A_QUIRE_FILE)
    QUIRE_NAME(UNSUPPORTED_VERSION)
    QUIRE_NAME(CORRUPT_FILE)
    QUIRE_NAME(CORRUPT_BLOCK)
    QUIRE_NAME(WRONG_KEY)
    QUIRE_NAME(INVALID_CSV)
    QUIRE_NAME(SCHEMA_MISMATCH)
    QUIRE_NAME(INVALID_QUERY)
    QUIRE_NAME(TOO_MANY_CONTAINED)
    QUIRE_NAME(NO_SUCH_COLUMN)
    QUIRE_NAME(INVALID_FHIRPATH)
    QUIRE_NAME(UNKNOWN_FUNCTION)
    QUIRE_NAME(FHIRPATH_TYPE_ERROR)
    QUIRE_NAME(INVALID_VIEW)
#undef QUIRE_NAME
  }
  return "UNKNOWN";
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
    if (text[i] == '\n') { ++line; line_start = i + 1; }
  }
  e.line = line;
  e.column = static_cast<uint32_t>(end - line_start + 1);
}

}  // namespace quire
