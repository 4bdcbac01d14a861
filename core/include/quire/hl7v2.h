// quire/hl7v2.h — the HL7 v2 reader: ER7 messages, batches, escapes, paths, ACKs, MLLP and JSON.
//
//   quire::result<quire::hl7v2::message> r = quire::hl7v2::parse(bytes);
//   if (!r) { ... r.error() ... }
//   auto name = r->get_text("PID-5[1].1");   // result<optional<string>>: error = bad path,
//                                             // nullopt = not in the message, value = unescaped UTF-8
//
// IMPORTANT: lifetime. A message does not copy its input: it holds a compact index of byte
// offsets into the caller's bytes, and every std::string_view it returns points into them. The
// bytes passed to parse() or parse_batch() must outlive the message and every view taken from it.
// Calls that return std::string (get_text, to_json, unescape...) return owned copies.
//
// Tolerant by default: the reader accepts what real systems send (LF or CRLF terminators, byte
// order marks, short MSH-2, stray lines between messages, unknown escapes kept as written,
// invalid UTF-8 replaced by U+FFFD). parse_options::strict turns each tolerance into a typed
// error. docs/hl7v2.md lists every tolerance and the JSON shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/result.h"

namespace quire::hl7v2 {

// --- limits -------------------------------------------------------------------------------------

/// Default of parse_options::max_message_bytes (256 MiB). Exceeding it is DOCUMENT_TOO_LARGE.
inline constexpr size_t DEFAULT_MAX_MESSAGE_BYTES = size_t{256} << 20;
/// Default of parse_options::max_segments. Exceeding it is DOCUMENT_TOO_LARGE.
inline constexpr size_t DEFAULT_MAX_SEGMENTS = 1'000'000;
/// Default of parse_options::max_segment_bytes (64 MiB): bounds one segment, hence one field
/// (an embedded PDF in OBX-5 is the usual large one). Exceeding it is LINE_TOO_LONG.
inline constexpr size_t DEFAULT_MAX_SEGMENT_BYTES = size_t{64} << 20;
/// Default of mllp_decoder's max_frame_bytes (64 MiB). Exceeding it is FRAME_TOO_LARGE.
inline constexpr size_t DEFAULT_MAX_FRAME_BYTES = size_t{64} << 20;

/// How parse() and parse_batch() read. Limits above UINT32_MAX - 1 are treated as UINT32_MAX - 1
/// (the index stores 32-bit offsets).
struct parse_options {
  bool strict = false;                                   ///< every tolerance becomes a typed error
  size_t max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES;  ///< whole input (parse) or each message (parse_batch)
  size_t max_segments = DEFAULT_MAX_SEGMENTS;            ///< segments in one message
  size_t max_segment_bytes = DEFAULT_MAX_SEGMENT_BYTES;  ///< bytes in one segment, terminator excluded
};

// --- delimiters and character sets -------------------------------------------------------------

/// The separators of a message, from MSH-1 and MSH-2. A role that MSH-2 leaves out (a tolerant
/// read of a short MSH-2) is NONE and never splits anything.
struct delimiters {
  static constexpr char NONE = '\0';
  char field = '|';
  char component = '^';
  char repetition = '~';
  char escape = '\\';
  char subcomponent = '&';
  char truncation = NONE;  ///< the 5th character of MSH-2 (v2.7+), '#' when present

  /// MSH-1 followed by MSH-2, as a message would write them ("|^~\\&").
  std::string to_string() const;
};

/// The character set of a message's text (MSH-18, first repetition), decoded to UTF-8 on read.
enum class charset : uint8_t {
  UTF8,        ///< MSH-18 empty, "ASCII", "UNICODE UTF-8" or "UTF-8", or an unknown value (read as UTF-8)
  ISO_8859_1,  ///< MSH-18 "8859/1": each byte is the Unicode code point of the same value
};

/// The charset named by an MSH-18 value; UTF8 for empty, ASCII, UTF-8 and names quire does not
/// convert (documented in docs/hl7v2.md).
charset charset_from_name(std::string_view msh18) noexcept;

/// `text` in `cs` as UTF-8. UTF-8 input is validated: an invalid byte becomes U+FFFD, or, when
/// strict, the call returns INVALID_UTF8 with the offset of the byte in `text`.
result<std::string> decode_text(std::string_view text, charset cs, bool strict = false);

// --- escapes ------------------------------------------------------------------------------------

/// `text` with its escape sequences decoded: \F\ \S\ \T\ \R\ \E\ \P\ to the delimiter they
/// name, \Xhh..\ to bytes, \.br\ to "\n". Kept as written: highlighting (\H\ \N\), charset
/// switches (\Cxxyy\ \Mxxyyzz\), custom (\Zxx\) and the other formatting commands (\.sp\ ...).
/// An unknown or unterminated sequence is kept as written, or, when strict, returns
/// INVALID_ESCAPE with the offset in `text` where it starts. The result is in the message's
/// charset (bytes from \X..\ included); decode_text() turns it into UTF-8.
result<std::string> unescape(std::string_view text, const delimiters &delims, bool strict = false);

/// `text` escaped so that it can stand as one value: each delimiter becomes its escape, CR, LF
/// and other control bytes become \Xhh\. When the delimiters have no escape character, delimiter
/// and control bytes are replaced by a space (nothing else can carry them).
std::string escape(std::string_view text, const delimiters &delims);

// --- paths --------------------------------------------------------------------------------------

/// A location in a message: `SEG[n]-field[r].component.subcomponent` (all 1-based). Written like
/// `PID-5`, `PID-5[2].1`, `OBX[3]-5`, `MSH-9.2`, `PID-3[1].4.2`; '.' may stand for '-' and '-'
/// for '.' (`PID.5.1`, `PID-5-1`). Zero in a field means the whole segment.
struct path {
  char segment[3] = {0, 0, 0};
  size_t segment_repetition = 1;  ///< which occurrence of the segment (OBX[3])
  size_t field = 0;               ///< 0: the whole segment
  size_t repetition = 0;          ///< 0: not given (whole field, or the first when a component is given)
  size_t component = 0;           ///< 0: not given
  size_t subcomponent = 0;        ///< 0: not given
};

/// Reads a path. INVALID_ARGUMENT (offset = position in `text`) when it does not follow the grammar
/// or an index is 0 or above 999999999.
result<path> parse_path(std::string_view text);

/// The n-th (1-based) piece of `text` split by `separator`, or nullopt when there are fewer
/// pieces. With separator NONE, `text` is its only piece. The view points into `text`.
std::optional<std::string_view> nth_piece(std::string_view text, char separator, size_t n) noexcept;

// --- typed values -------------------------------------------------------------------------------

/// An HL7 DTM/TS value (`YYYY[MM[DD[HH[MM[SS[.S[S[S[S]]]]]]]]][+/-ZZZZ]`, first component only) as
/// ISO 8601 text with its precision kept: "20240131" -> "2024-01-31", "202401311205-0500" ->
/// "2024-01-31T12:05-05:00", "20240131120530.25" -> "2024-01-31T12:05:30.25". INVALID_ARGUMENT when
/// the text is not a date/time or a part is out of range (month 13, February 30th...).
result<std::string> to_iso8601(std::string_view dtm);

/// An HL7 NM value: its exact text (surrounding spaces trimmed) and its value as a double.
struct number {
  std::string_view text;  ///< points into the argument of parse_number
  double value = 0;
};

/// Reads an NM (`[+|-]digits[.digits]`, also `.5` and `5.`). INVALID_ARGUMENT when it is not one.
result<number> parse_number(std::string_view nm);

/// True for the explicit null `""` that asks a receiver to delete a value.
inline bool is_explicit_null(std::string_view value) noexcept { return value == "\"\""; }

// --- messages -----------------------------------------------------------------------------------

class message;
namespace detail {
struct message_builder;
}

/// One segment of a message: a light handle (a message pointer and an index), valid while the
/// message is.
class segment {
 public:
  /// The three-character segment id ("PID"), a view into the message's bytes.
  std::string_view id() const noexcept;
  /// The segment's bytes without its terminator.
  std::string_view raw() const noexcept;
  /// The number of fields. For MSH, MSH-1 (the field separator) counts as field 1.
  size_t field_count() const noexcept;
  /// Field n (1-based, raw, escapes not decoded), or nullopt past the last field. MSH-1 is the
  /// field separator and MSH-2 the encoding characters, as the standard numbers them.
  std::optional<std::string_view> field(size_t n) const noexcept;
  /// Byte offset of the segment in the input given to parse()/parse_batch().
  uint64_t offset() const noexcept;
  /// The segment's position in its message (0-based).
  size_t index() const noexcept { return index_; }

 private:
  friend class message;
  segment(const message *m, size_t i) : message_(m), index_(i) {}
  const message *message_;
  size_t index_;
};

/// A parsed ER7 message: views into the caller's bytes plus an index of segment and field
/// boundaries (about 16 bytes per segment and 4 per field). Copyable and movable; copies share the
/// caller's bytes. See the lifetime note at the top of this header.
class message {
 public:
  /// The message's bytes (from its MSH to the end of its last segment).
  std::string_view bytes() const noexcept { return bytes_; }
  const quire::hl7v2::delimiters &delimiters() const noexcept { return delimiters_; }
  /// The charset named by MSH-18 (text read through get_text and to_json is decoded from it).
  quire::hl7v2::charset charset() const noexcept { return charset_; }
  /// Whether the message was parsed with parse_options::strict (get_text then fails on bad escapes).
  bool strict() const noexcept { return strict_; }
  /// Lines a tolerant read skipped because they were not segments (comments, wrapped text).
  size_t skipped_lines() const noexcept { return skipped_lines_; }

  size_t segment_count() const noexcept { return segments_.size(); }
  /// Segment i (0-based); i must be below segment_count() (programmer error otherwise).
  quire::hl7v2::segment segment(size_t i) const noexcept { return {this, i}; }
  /// The nth (1-based) segment with this id, or nullopt.
  std::optional<quire::hl7v2::segment> find(std::string_view id, size_t nth = 1) const noexcept;
  /// How many segments have this id.
  size_t count(std::string_view id) const noexcept;

  /// The raw value at a path (escapes not decoded), a view into the input. nullopt when the
  /// message has no such part; INVALID_ARGUMENT for a malformed path. `PID-5` is the whole field
  /// (all repetitions); `PID-5[2]` one repetition; `PID-5.1` a component of the first repetition.
  /// MSH-1 and MSH-2 are never split.
  result<std::optional<std::string_view>> get(std::string_view path) const;
  std::optional<std::string_view> get(const quire::hl7v2::path &p) const noexcept;

  /// The value at a path, unescaped and decoded to UTF-8 (owned). Errors: INVALID_ARGUMENT for a
  /// malformed path; in strict mode also INVALID_ESCAPE and INVALID_UTF8, with the offset in the
  /// input and the path.
  result<std::optional<std::string>> get_text(std::string_view path) const;
  result<std::optional<std::string>> get_text(const quire::hl7v2::path &p) const;

  /// `raw` (a view into this message) unescaped and decoded to UTF-8, as get_text does.
  result<std::string> text_of(std::string_view raw) const;

  // Header values, raw views ("" when absent).
  std::string_view type() const noexcept;                   ///< MSH-9.1 ("ADT")
  std::string_view trigger() const noexcept;                ///< MSH-9.2 ("A01")
  std::string_view structure() const noexcept;              ///< MSH-9.3 ("ADT_A01")
  std::string_view control_id() const noexcept;             ///< MSH-10
  std::string_view processing_id() const noexcept;          ///< MSH-11.1 ("P", "T", "D")
  std::string_view version() const noexcept;                ///< MSH-12.1 ("2.5.1")
  std::string_view timestamp() const noexcept;              ///< MSH-7.1
  std::string_view sending_application() const noexcept;    ///< MSH-3, whole field
  std::string_view sending_facility() const noexcept;       ///< MSH-4, whole field
  std::string_view receiving_application() const noexcept;  ///< MSH-5, whole field
  std::string_view receiving_facility() const noexcept;     ///< MSH-6, whole field

  /// The message as JSON text in the stable shape documented in docs/hl7v2.md:
  /// {"delimiters":"|^~\\&","segments":[{"id":"MSH","fields":[...]}]}. Values are unescaped and
  /// decoded to UTF-8 tolerantly (this call does not fail); the output is the same on every target.
  std::string to_json() const;

 private:
  friend class quire::hl7v2::segment;
  friend struct detail::message_builder;
  struct segment_entry {
    uint32_t begin;      // offset of the id in bytes_
    uint32_t end;        // offset one past the last byte, terminator excluded
    uint32_t first_sep;  // index into separators_ of the segment's first field separator
    uint32_t sep_count;  // number of field separators in the segment
  };
  std::string_view bytes_;
  uint64_t base_offset_ = 0;  // offset of bytes_ in the caller's whole input
  quire::hl7v2::delimiters delimiters_;
  quire::hl7v2::charset charset_ = quire::hl7v2::charset::UTF8;
  bool strict_ = false;
  size_t skipped_lines_ = 0;
  std::vector<segment_entry> segments_;
  std::vector<uint32_t> separators_;  // offsets of field separators, segment by segment
};

/// Reads one message. The input may start with a UTF-8 byte order mark and blank lines; segments
/// end with CR, LF or CRLF. Errors: EMPTY_INPUT (no bytes but whitespace), DOCUMENT_TOO_LARGE
/// (max_message_bytes, max_segments), LINE_TOO_LONG (max_segment_bytes), INVALID_HL7 (no MSH first,
/// MSH shorter than its encoding characters, one character in two delimiter roles, a second MSH:
/// use parse_batch), and in strict mode INVALID_HL7 for lines that are not segments,
/// INVALID_ESCAPE and INVALID_UTF8. Offsets are into `bytes`, which must outlive the message.
result<message> parse(std::string_view bytes, const parse_options &options = {});

/// A file or batch: the messages in it, and its envelope segments.
struct batch {
  std::vector<message> messages;
  /// FHS, BHS, BTS and FTS segments, raw (views into the input), in input order.
  std::vector<std::string_view> envelope;
  /// Bytes outside any message that a tolerant read skipped: a leading /* ... */ comment, lines
  /// like `// ...` or other text between messages, blank lines not counted.
  uint64_t skipped_bytes = 0;
};

/// Reads a file or batch holding any number of messages (each starting at a line beginning with
/// MSH), with or without FHS/BHS/BTS/FTS envelopes. Each message keeps its own delimiters. Text
/// outside messages is skipped (tolerant) or INVALID_HL7 (strict). Errors are those of parse()
/// for the message in error, and EMPTY_INPUT when there is no message at all. The input must
/// outlive the batch.
result<batch> parse_batch(std::string_view bytes, const parse_options &options = {});

// --- acknowledgements ---------------------------------------------------------------------------

/// MSA-1: original mode (AA accept, AE error, AR reject) and enhanced mode commit acks (CA, CE, CR).
enum class ack_code : uint8_t { AA, AE, AR, CA, CE, CR };

/// "AA", "AE", ...
std::string_view ack_code_name(ack_code code) noexcept;
/// The code named by `text` ("AA", "AE", "AR", "CA", "CE" or "CR", exactly): the one reader of an
/// ACK code, for the CLI's `--code` and the npm package's `ack({code})`. INVALID_ARGUMENT otherwise.
result<ack_code> parse_ack_code(std::string_view text);

/// Where an error is (ERR-2, an ERL: segment^sequence^field^repetition^component^subcomponent).
/// Zero numbers are left empty.
struct error_location {
  std::string segment;  ///< "PID"; empty: no ERR-2
  size_t sequence = 1;  ///< which occurrence of the segment
  size_t field = 0;
  size_t repetition = 0;
  size_t component = 0;
  size_t subcomponent = 0;
};

struct ack_options {
  std::string control_id;  ///< MSH-10 of the ACK; empty: "ACK" followed by the original MSH-10
  std::string timestamp;   ///< MSH-7 of the ACK; empty: the original MSH-7 (core reads no clock)
  std::string text;        ///< MSA-3, a text message (escaped by the builder)
  // ERR segment, written for AE, AR, CE and CR only.
  error_location location;         ///< ERR-2
  std::string error_code = "207";  ///< ERR-3.1, HL7 table 0357 ("207" application internal error)
  std::string error_text;          ///< ERR-3.2; empty: the table 0357 text of a known code
  std::string severity = "E";      ///< ERR-4: E error, W warning, I information, F fatal
};

/// An ACK for `original`: MSH with the original's delimiters, MSH-3/4 and MSH-5/6 swapped, MSH-9
/// `ACK^<trigger>^ACK`, MSH-11, MSH-12 and MSH-18 copied; MSA (code, MSA-2 = original MSH-10,
/// MSA-3 text); ERR for error codes. Segments end with CR, including the last. The result parses
/// with parse(). INVALID_ARGUMENT when severity is not one of E, W, I, F.
result<std::string> build_ack(const message &original, ack_code code, const ack_options &options = {});

// --- MLLP ---------------------------------------------------------------------------------------

inline constexpr uint8_t MLLP_START = 0x0B;  ///< VT, starts a frame
inline constexpr uint8_t MLLP_END = 0x1C;    ///< FS, ends a frame (followed by CR)
inline constexpr uint8_t MLLP_CR = 0x0D;

/// `message` framed for MLLP: VT, the bytes, FS, CR.
std::string mllp_encode(std::string_view message);

/// A streaming MLLP decoder. Feed it chunks of any size; take complete frames with next_frame().
/// It holds at most one partial frame (never more than max_frame_bytes) plus the complete frames
/// not yet taken: take them after each feed to keep memory bounded.
class mllp_decoder {
 public:
  explicit mllp_decoder(size_t max_frame_bytes = DEFAULT_MAX_FRAME_BYTES) noexcept
      : max_frame_bytes_(max_frame_bytes) {}

  /// Consumes all of `chunk`. Bytes outside frames are skipped and counted. A frame that grows
  /// past max_frame_bytes is dropped and the decoder resynchronises at the next VT; the call then
  /// returns FRAME_TOO_LARGE (offset: stream position of the frame's VT) after consuming the whole
  /// chunk, so frames completed in the same chunk are still queued.
  result<void> feed(std::span<const uint8_t> chunk);
  result<void> feed(std::string_view chunk) {
    return feed(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(chunk.data()), chunk.size()));
  }

  /// The oldest complete frame's payload (without VT, FS, CR), or nullopt when none is ready.
  std::optional<std::string> next_frame();
  size_t ready_frames() const noexcept { return frames_.size(); }

  uint64_t bytes_fed() const noexcept { return position_; }
  /// Bytes discarded: garbage between frames, frames cut short by a new VT, dropped oversize frames.
  uint64_t skipped_bytes() const noexcept { return skipped_; }
  /// Frames dropped for exceeding max_frame_bytes.
  uint64_t dropped_frames() const noexcept { return dropped_; }
  /// Frames that ended with FS not followed by CR (accepted).
  uint64_t frames_without_cr() const noexcept { return without_cr_; }
  /// True while a frame has started and not ended (bytes are buffered).
  bool in_frame() const noexcept { return state_ == state::IN_FRAME || state_ == state::AFTER_END; }
  size_t buffered_bytes() const noexcept { return partial_.size(); }
  /// Forgets the partial frame, the ready frames and the counters.
  void reset() noexcept;

 private:
  enum class state : uint8_t { OUTSIDE, IN_FRAME, AFTER_END, DISCARDING };
  size_t max_frame_bytes_;
  state state_ = state::OUTSIDE;
  std::string partial_;
  std::deque<std::string> frames_;
  uint64_t position_ = 0;
  uint64_t frame_start_ = 0;
  uint64_t skipped_ = 0;
  uint64_t dropped_ = 0;
  uint64_t without_cr_ = 0;
};

// --- JSON texts of the npm package's results (docs/hl7v2.md) ------------------------------------

/// Each segment's id, field count and byte offset: `[{"id":"MSH","fields":12,"offset":0},...]`
/// (ids decoded from the message's charset).
std::string segments_json(const message &m);
/// A batch's envelope segments (FHS, BHS, BTS, FTS), raw, as a JSON array of strings.
std::string envelope_json(const batch &b);
/// An MLLP decoder's counters: `{"bytesFed":N,"skippedBytes":N,"droppedFrames":N,
/// "framesWithoutCr":N,"bufferedBytes":N,"inFrame":false}`.
std::string stats_json(const mllp_decoder &d);

}  // namespace quire::hl7v2
