// quire/error_list.h — THE list of quire's error codes: one line per code, its name, its fixed
// numeric value and what it means. Everything else is generated from these lines: the
// quire::error_code enum and error_name() (error.h, error.cpp), the TypeScript ErrorCode type and
// ERROR_CODES map (js/scripts/gen-error-codes.mjs writes js/src/error_codes.ts), and the wasm
// module's errorCodes() list. tests/data/error_codes.tsv pins the values, so a renumbering fails
// a test.
//
// The rules (zstd pins its error values the same way): a released code keeps its name, its value
// and its meaning; a new code is appended with the next value; a value is never reused.
//
// One code a line, however long: js/scripts/gen-error-codes.mjs reads them so.
// clang-format off
// Usage: define QUIRE_ERROR_CODE(NAME, VALUE, DOC), include this file, undefine it. No include
// guard on purpose: each inclusion expands the list again.
//
// The generator reads this file as text: keep each entry on one line, in the shape
//   QUIRE_ERROR_CODE(NAME, VALUE, "one line")
// with no double quote or backslash inside the text.

#ifndef QUIRE_ERROR_CODE
#error "define QUIRE_ERROR_CODE(NAME, VALUE, DOC) before including quire/error_list.h"
#endif

QUIRE_ERROR_CODE(OK, 0, "no error")
// --- input and platform ---
QUIRE_ERROR_CODE(IO_ERROR, 1, "the operating system refused a read, open or write")
QUIRE_ERROR_CODE(FILE_NOT_FOUND, 2, "no file at the given path")
QUIRE_ERROR_CODE(NOT_A_FILE, 3, "the path names a directory or another non-regular file")
QUIRE_ERROR_CODE(EMPTY_INPUT, 4, "the input holds no bytes (or only whitespace) where a value was expected")
QUIRE_ERROR_CODE(OUT_OF_MEMORY, 5, "an allocation failed")
QUIRE_ERROR_CODE(OUT_OF_RANGE, 6, "a read past the end of a byte source")
QUIRE_ERROR_CODE(INVALID_ARGUMENT, 7, "the caller passed an option or argument that cannot be used")
// --- limits (hostile input costs a bounded amount) ---
QUIRE_ERROR_CODE(MAX_DEPTH_EXCEEDED, 8, "nesting deeper than the limit's max_depth")
QUIRE_ERROR_CODE(DOCUMENT_TOO_LARGE, 9, "an input (a document, a message, an expression, a view) is larger than its limit (max_document_bytes, max_message_bytes, max_segments, max_expression_bytes, max_view_bytes)")
QUIRE_ERROR_CODE(LINE_TOO_LONG, 10, "a line is longer than the limit's max_line_bytes")
// --- JSON ---
QUIRE_ERROR_CODE(INVALID_JSON, 11, "the bytes are not JSON (structure: brackets, commas, colons, atoms)")
QUIRE_ERROR_CODE(INVALID_UTF8, 12, "the bytes are not valid UTF-8")
QUIRE_ERROR_CODE(INVALID_STRING, 13, "a string has a bad escape, an unescaped control character or no end")
QUIRE_ERROR_CODE(INVALID_NUMBER, 14, "a number does not follow JSON's number grammar")
QUIRE_ERROR_CODE(TRAILING_CONTENT, 15, "something other than whitespace follows the document's value")
QUIRE_ERROR_CODE(WRONG_TYPE, 16, "a value was read as a type it does not have (a number as a string...)")
QUIRE_ERROR_CODE(NO_SUCH_KEY, 17, "an object has no member with that key (only where absence is an error)")
// --- FHIR ---
QUIRE_ERROR_CODE(UNKNOWN_ELEMENT, 18, "an element not defined for the resource or type (strict mode)")
QUIRE_ERROR_CODE(INVALID_RESOURCE, 19, "a resource that breaks FHIR's rules (missing resourceType...)")
// --- HL7 v2 ---
QUIRE_ERROR_CODE(INVALID_HL7, 20, "the bytes are not an HL7 v2 message (no MSH, bad delimiters...)")
QUIRE_ERROR_CODE(INVALID_ESCAPE, 21, "an HL7 v2 escape sequence that is unknown or unterminated (strict mode)")
QUIRE_ERROR_CODE(FRAME_TOO_LARGE, 22, "an MLLP frame larger than the decoder's max_frame_bytes")
// --- the .quire format ---
QUIRE_ERROR_CODE(NOT_A_QUIRE_FILE, 23, "the magic bytes are wrong")
QUIRE_ERROR_CODE(UNSUPPORTED_VERSION, 24, "the file's format version is newer than this reader")
QUIRE_ERROR_CODE(CORRUPT_FILE, 25, "the footer or directory is inconsistent (offsets past the end, absurd counts)")
QUIRE_ERROR_CODE(CORRUPT_BLOCK, 26, "a block's checksum does not match its bytes")
QUIRE_ERROR_CODE(WRONG_KEY, 27, "a key of the wrong type for its column (find with a key the column cannot hold), or a decryption key that opens nothing in a sealed file")
QUIRE_ERROR_CODE(INVALID_CSV, 28, "ragged rows or bad quoting in CSV input")
QUIRE_ERROR_CODE(SCHEMA_MISMATCH, 29, "a value does not fit its column's type")
QUIRE_ERROR_CODE(INVALID_QUERY, 30, "a query expression that cannot be parsed or planned")
QUIRE_ERROR_CODE(TOO_MANY_CONTAINED, 31, "a FHIR resource holds more contained resources than the limit's max_contained")
QUIRE_ERROR_CODE(NO_SUCH_COLUMN, 32, "a query, filter, projection, order, aggregate, sort or index names a column the table does not have")
// --- FHIRPath and SQL on FHIR ---
QUIRE_ERROR_CODE(INVALID_FHIRPATH, 33, "a FHIRPath expression that cannot be parsed (syntax)")
QUIRE_ERROR_CODE(UNKNOWN_FUNCTION, 34, "a FHIRPath expression or ViewDefinition calls a function that does not exist or is not supported")
QUIRE_ERROR_CODE(FHIRPATH_TYPE_ERROR, 35, "a FHIRPath operation on values of types it does not accept")
QUIRE_ERROR_CODE(INVALID_VIEW, 36, "a SQL on FHIR ViewDefinition that breaks the specification's rules (bad column name, incompatible unionAll...)")
// --- exact arithmetic ---
QUIRE_ERROR_CODE(NUMERIC_OVERFLOW, 37, "an exact result (a decimal sum or average) needs more digits than its limit allows")
// --- FHIRPath, again ---
QUIRE_ERROR_CODE(REGEX_TOO_LARGE, 38, "a regular expression beyond the engine's limits (pattern length, instructions, nesting, a repeat count)")
// --- limits, again ---
QUIRE_ERROR_CODE(RESULT_TOO_LARGE, 39, "what an evaluation makes grew past its limit (max_collection, max_string_bytes, max_comparisons, max_rows_per_resource)")
// --- FHIR XML ---
QUIRE_ERROR_CODE(INVALID_XML, 40, "the bytes are not well-formed XML in UTF-8, or hold a DOCTYPE or an entity declaration (refused, never expanded)")
// --- sealed .quire files ---
QUIRE_ERROR_CODE(KEY_REQUIRED, 41, "a sealed .quire file was opened or changed without a key (or with a partition's key where the owner's is needed)")
// clang-format on
