// quire/error.h — the error type every quire call returns instead of throwing.
//
// Core never throws. A call that can fail returns quire::result<T> (see result.h): a value or a
// quire::error. Error codes are stable: once released, a code keeps its name and its meaning.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace quire {

/// Why a quire call failed. Each value is stable once released; new values are only appended.
enum class error_code : uint16_t {
  OK = 0,                       ///< no error
  // --- input and platform ---
  IO_ERROR,                     ///< the operating system refused a read, open or write
  FILE_NOT_FOUND,               ///< no file at the given path
  NOT_A_FILE,                   ///< the path names a directory or another non-regular file
  EMPTY_INPUT,                  ///< the input holds no bytes (or only whitespace) where a value was expected
  OUT_OF_MEMORY,                ///< an allocation failed
  OUT_OF_RANGE,                 ///< a read past the end of a byte source
  INVALID_ARGUMENT,             ///< the caller passed an option or argument that cannot be used
  // --- limits (hostile input costs a bounded amount) ---
  MAX_DEPTH_EXCEEDED,           ///< nesting deeper than the limit's max_depth
  DOCUMENT_TOO_LARGE,           ///< the input is larger than the limit's max_document_bytes
  LINE_TOO_LONG,                ///< a line is longer than the limit's max_line_bytes
  // --- JSON ---
  INVALID_JSON,                 ///< the bytes are not JSON (structure: brackets, commas, colons, atoms)
  INVALID_UTF8,                 ///< the bytes are not valid UTF-8
  INVALID_STRING,               ///< a string has a bad escape, an unescaped control character or no end
  INVALID_NUMBER,               ///< a number does not follow JSON's number grammar
  TRAILING_CONTENT,             ///< something other than whitespace follows the document's value
  WRONG_TYPE,                   ///< a value was read as a type it does not have (a number as a string...)
  NO_SUCH_KEY,                  ///< an object has no member with that key (only where absence is an error)
  // --- FHIR ---
  UNKNOWN_ELEMENT,              ///< an element not defined for the resource or type (strict mode)
  INVALID_RESOURCE,             ///< a resource that breaks FHIR's rules (missing resourceType...)
  // --- HL7 v2 ---
  INVALID_HL7,                  ///< the bytes are not an HL7 v2 message (no MSH, bad delimiters...)
  INVALID_ESCAPE,               ///< an HL7 v2 escape sequence that is unknown or unterminated (strict mode)
  FRAME_TOO_LARGE,              ///< an MLLP frame larger than the decoder's max_frame_bytes
  // --- the .quire format ---
  NOT_A_QUIRE_FILE,             ///< the magic bytes are wrong
  UNSUPPORTED_VERSION,          ///< the file's format version is newer than this reader
  CORRUPT_FILE,                 ///< the footer or directory is inconsistent (offsets past the end, absurd counts)
  CORRUPT_BLOCK,                ///< a block's checksum does not match its bytes
  WRONG_KEY,                    ///< a key of the wrong type or a column that does not exist
  INVALID_CSV,                  ///< ragged rows or bad quoting in CSV input
  SCHEMA_MISMATCH,              ///< a value does not fit its column's type
  INVALID_QUERY,                ///< a query expression that cannot be parsed or planned
  TOO_MANY_CONTAINED,           ///< a FHIR resource holds more contained resources than the limit's max_contained
  NO_SUCH_COLUMN = 32,          ///< a column name that the table or view does not have
  INVALID_FHIRPATH = 33,        ///< a FHIRPath expression that cannot be parsed (syntax), with the offset in the expression
  UNKNOWN_FUNCTION = 34,        ///< a FHIRPath function name that does not exist, or called with the wrong number of arguments
  FHIRPATH_TYPE_ERROR = 35,     ///< a FHIRPath operand of the wrong type or cardinality (`1 + 'a'`, a list where one item is needed)
  INVALID_VIEW = 36,            ///< a SQL on FHIR ViewDefinition that breaks the specification's rules
};

/// The stable UPPER_SNAKE name of a code ("MAX_DEPTH_EXCEEDED"); "UNKNOWN" for a value out of range.
std::string_view error_name(error_code code) noexcept;

/// What went wrong and where. `offset` is a byte offset into the input (or NO_OFFSET); `line` and
/// `column` are 1-based and 0 when unknown; `path` is a location like `Bundle.entry[3].resource`
/// where one exists.
struct error {
  static constexpr uint64_t NO_OFFSET = UINT64_MAX;

  error_code code = error_code::OK;
  std::string message;
  uint64_t offset = NO_OFFSET;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string path;

  error() = default;
  error(error_code c, std::string msg, uint64_t off = NO_OFFSET) : code(c), message(std::move(msg)), offset(off) {}

  /// One line for people: `CODE at offset N, line L, column C (path): message`.
  std::string describe() const;
};

/// Fills `line` and `column` of `e` from its offset into `text` (counts newlines up to it).
void locate(error &e, std::string_view text) noexcept;

}  // namespace quire
