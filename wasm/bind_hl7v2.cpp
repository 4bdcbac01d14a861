// Embind bindings of the HL7 v2 reader. Input bytes arrive as one copy in the wasm heap (pointer
// and length, padded by the wrapper) which the message handle then owns; results leave as one
// record, one JSON text, or one Uint8Array (MLLP frames: all payloads in one buffer plus lengths).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bind_support.h"
#include "quire/hl7v2.h"

namespace {

using quire::wasm::error_record;
namespace hl7 = quire::hl7v2;

/// parse_options as the wrapper passes them (0 for a limit means its default).
struct hl7_options_record {
  bool strict = false;
  double max_message_bytes = 0, max_segments = 0, max_segment_bytes = 0;
};

hl7::parse_options make_options(const hl7_options_record &r) {
  hl7::parse_options o;
  o.strict = r.strict;
  // Limits above what size_t holds in wasm32 clamp to its maximum (the reader clamps them again).
  auto to_size = [](double v, size_t fallback) {
    if (!(v > 0)) return fallback;
    return v >= static_cast<double>(SIZE_MAX) ? SIZE_MAX : static_cast<size_t>(v);
  };
  o.max_message_bytes = to_size(r.max_message_bytes, o.max_message_bytes);
  o.max_segments = to_size(r.max_segments, o.max_segments);
  o.max_segment_bytes = to_size(r.max_segment_bytes, o.max_segment_bytes);
  return o;
}

/// The input bytes the wrapper placed in the heap, owned from here on and shared by the messages
/// of one batch (each message's views point into them).
using shared_bytes = std::shared_ptr<char>;

shared_bytes adopt(uintptr_t pointer) {
  return shared_bytes(reinterpret_cast<char *>(pointer), [](char *p) { std::free(p); });
}

/// The header values of a message, read in one call (the wrapper caches them).
struct hl7_header_record {
  std::string type, trigger, structure, control_id, processing_id, version, timestamp;
  std::string sending_application, sending_facility, receiving_application, receiving_facility;
  std::string delimiters, charset;
  double segment_count = 0, skipped_lines = 0, byte_length = 0, offset = 0;
  bool strict = false;
};

/// A value looked up by path: found is false when the message has no such part.
struct hl7_value_record {
  error_record error;
  bool found = false;
  std::string value;
};

/// ack_options as the wrapper passes them; code is "AA", "AE", ...
struct hl7_ack_record {
  std::string code, control_id, timestamp, text;
  std::string error_segment;
  double error_sequence = 1, error_field = 0, error_repetition = 0, error_component = 0, error_subcomponent = 0;
  std::string error_code, error_text, severity;
};

struct hl7_text_record {
  error_record error;
  std::string text;
};

/// A parsed message and the bytes it points into. Copyable: copies share the bytes.
class hl7_message {
 public:
  hl7_message() = default;
  hl7_message(shared_bytes bytes, hl7::message m) : bytes_(std::move(bytes)), message_(std::move(m)), parsed_(true) {}

  /// Parses one message from bytes placed in the heap by the wrapper; takes ownership of them.
  static hl7_message parse(uintptr_t pointer, size_t length, const hl7_options_record &options) {
    shared_bytes bytes = adopt(pointer);
    auto r = hl7::parse(std::string_view(bytes.get(), length), make_options(options));
    if (!r) {
      hl7_message failed;
      failed.error_ = quire::wasm::to_record(r.error());
      return failed;
    }
    return hl7_message(std::move(bytes), std::move(r).value());
  }

  error_record error() const { return error_; }

  hl7_header_record header() const {
    hl7_header_record h;
    if (!parsed_) return h;
    const hl7::message &m = message_;
    h.type = text(m.type());
    h.trigger = text(m.trigger());
    h.structure = text(m.structure());
    h.control_id = text(m.control_id());
    h.processing_id = text(m.processing_id());
    h.version = text(m.version());
    h.timestamp = text(m.timestamp());
    h.sending_application = text(m.sending_application());
    h.sending_facility = text(m.sending_facility());
    h.receiving_application = text(m.receiving_application());
    h.receiving_facility = text(m.receiving_facility());
    h.delimiters = m.delimiters().to_string();
    h.charset = m.charset() == hl7::charset::ISO_8859_1 ? "ISO-8859-1" : "UTF-8";
    h.segment_count = static_cast<double>(m.segment_count());
    h.skipped_lines = static_cast<double>(m.skipped_lines());
    h.byte_length = static_cast<double>(m.bytes().size());
    h.offset = m.segment_count() ? static_cast<double>(m.segment(0).offset()) : 0;
    h.strict = m.strict();
    return h;
  }

  /// The unescaped value at a path, decoded to UTF-8.
  hl7_value_record get(const std::string &path) const {
    hl7_value_record out;
    auto r = message_.get_text(path);
    if (!r) {
      out.error = quire::wasm::to_record(r.error());
      return out;
    }
    if (*r) {
      out.found = true;
      out.value = std::move(**r);
    }
    return out;
  }

  /// The raw value at a path: escapes kept, decoded from the message's charset to UTF-8 (invalid
  /// bytes become U+FFFD) so that it can be a JavaScript string.
  hl7_value_record get_raw(const std::string &path) const {
    hl7_value_record out;
    auto r = message_.get(path);
    if (!r) {
      out.error = quire::wasm::to_record(r.error());
      return out;
    }
    if (*r) {
      out.found = true;
      out.value = text(**r);
    }
    return out;
  }

  /// `[{"id":"MSH","fields":12,"offset":0},...]`: each segment's id, field count and byte offset.
  std::string segments_json() const { return hl7::segments_json(message_); }

  std::string to_json() const { return parsed_ ? message_.to_json() : std::string("null"); }

  hl7_text_record ack(const hl7_ack_record &r) const {
    hl7_text_record out;
    auto code = hl7::parse_ack_code(r.code);
    if (!code) {
      out.error = quire::wasm::to_record(code.error());
      return out;
    }
    hl7::ack_options o;
    o.control_id = r.control_id;
    o.timestamp = r.timestamp;
    o.text = r.text;
    o.location.segment = r.error_segment;
    o.location.sequence = count(r.error_sequence);
    o.location.field = count(r.error_field);
    o.location.repetition = count(r.error_repetition);
    o.location.component = count(r.error_component);
    o.location.subcomponent = count(r.error_subcomponent);
    if (!r.error_code.empty()) o.error_code = r.error_code;
    o.error_text = r.error_text;
    if (!r.severity.empty()) o.severity = r.severity;
    auto a = hl7::build_ack(message_, *code, o);
    if (!a) out.error = quire::wasm::to_record(a.error());
    else out.text = text(*a);
    return out;
  }

  /// The message's bytes as they were given (from its MSH to the end of its last segment).
  emscripten::val bytes() const {
    const std::string_view b = message_.bytes();
    return emscripten::val::global("Uint8Array")
        .new_(emscripten::typed_memory_view(b.size(), reinterpret_cast<const uint8_t *>(b.data())));
  }

 private:
  static size_t count(double v) { return v > 0 && v < 1e9 ? static_cast<size_t>(v) : 0; }
  // JavaScript strings are UTF-16: bytes in the message's charset become UTF-8 (tolerantly).
  std::string text(std::string_view raw) const {
    auto r = hl7::decode_text(raw, message_.charset(), false);
    return r ? std::move(r).value() : std::string();
  }

  shared_bytes bytes_;
  hl7::message message_;
  bool parsed_ = false;
  error_record error_;
};

/// A file or batch of messages; the messages are taken out as their own handles.
class hl7_batch {
 public:
  hl7_batch(uintptr_t pointer, size_t length, const hl7_options_record &options) : bytes_(adopt(pointer)) {
    auto r = hl7::parse_batch(std::string_view(bytes_.get(), length), make_options(options));
    if (r) batch_ = std::move(r).value();
    else error_ = quire::wasm::to_record(r.error());
  }
  error_record error() const { return error_; }
  size_t size() const { return batch_.messages.size(); }
  hl7_message message(size_t i) const {
    return i < batch_.messages.size() ? hl7_message(bytes_, batch_.messages[i]) : hl7_message();
  }
  double skipped_bytes() const { return static_cast<double>(batch_.skipped_bytes); }
  /// The envelope segments (FHS, BHS, BTS, FTS) as a JSON array of strings, raw.
  std::string envelope_json() const { return hl7::envelope_json(batch_); }

 private:
  shared_bytes bytes_;
  hl7::batch batch_;
  error_record error_;
};

/// What one feed of the MLLP decoder gave: the error (FRAME_TOO_LARGE) if any, and how many frames
/// are ready in frames() / frameLengths().
struct hl7_feed_record {
  error_record error;
  double frames = 0;
};

/// An MLLP decoder. feed() takes a chunk from the heap (the wrapper frees it); the complete frames
/// leave in one Uint8Array (payloads back to back) plus one Uint32Array of their lengths.
class hl7_mllp_decoder {
 public:
  explicit hl7_mllp_decoder(double max_frame_bytes)
      : decoder_(
            max_frame_bytes > 0
                ? (max_frame_bytes >= static_cast<double>(SIZE_MAX) ? SIZE_MAX : static_cast<size_t>(max_frame_bytes))
                : hl7::DEFAULT_MAX_FRAME_BYTES) {}

  hl7_feed_record feed(uintptr_t pointer, size_t length) {
    hl7_feed_record out;
    auto r = decoder_.feed(quire::wasm::heap_bytes(pointer, length));
    if (!r) out.error = quire::wasm::to_record(r.error());
    out.frames = static_cast<double>(decoder_.ready_frames());
    return out;
  }

  /// Takes every ready frame: `{payloads: Uint8Array, lengths: Uint32Array}` (copies).
  emscripten::val take() {
    std::string payloads;
    std::vector<uint32_t> lengths;
    while (auto f = decoder_.next_frame()) {
      lengths.push_back(static_cast<uint32_t>(f->size()));
      payloads += *f;
    }
    emscripten::val out = emscripten::val::object();
    out.set("payloads", emscripten::val::global("Uint8Array")
                            .new_(emscripten::typed_memory_view(payloads.size(),
                                                                reinterpret_cast<const uint8_t *>(payloads.data()))));
    out.set("lengths",
            emscripten::val::global("Uint32Array").new_(emscripten::typed_memory_view(lengths.size(), lengths.data())));
    return out;
  }

  /// Counters as JSON: bytesFed, skippedBytes, droppedFrames, framesWithoutCr, bufferedBytes, inFrame.
  std::string stats_json() const { return hl7::stats_json(decoder_); }

  void reset() { decoder_.reset(); }

 private:
  hl7::mllp_decoder decoder_;
};

/// `bytes` framed for MLLP (VT, bytes, FS, CR), as a new Uint8Array.
emscripten::val mllp_encode(uintptr_t pointer, size_t length) {
  const std::string framed = hl7::mllp_encode(std::string_view(reinterpret_cast<const char *>(pointer), length));
  return emscripten::val::global("Uint8Array")
      .new_(emscripten::typed_memory_view(framed.size(), reinterpret_cast<const uint8_t *>(framed.data())));
}

hl7_message parse_message(uintptr_t pointer, size_t length, const hl7_options_record &options) {
  return hl7_message::parse(pointer, length, options);
}

}  // namespace

QUIRE_BINDINGS(hl7v2) {
  using namespace emscripten;
  value_object<hl7_options_record>("Hl7OptionsRecord")
      .field("strict", &hl7_options_record::strict)
      .field("maxMessageBytes", &hl7_options_record::max_message_bytes)
      .field("maxSegments", &hl7_options_record::max_segments)
      .field("maxSegmentBytes", &hl7_options_record::max_segment_bytes);
  value_object<hl7_header_record>("Hl7HeaderRecord")
      .field("type", &hl7_header_record::type)
      .field("trigger", &hl7_header_record::trigger)
      .field("structure", &hl7_header_record::structure)
      .field("controlId", &hl7_header_record::control_id)
      .field("processingId", &hl7_header_record::processing_id)
      .field("version", &hl7_header_record::version)
      .field("timestamp", &hl7_header_record::timestamp)
      .field("sendingApplication", &hl7_header_record::sending_application)
      .field("sendingFacility", &hl7_header_record::sending_facility)
      .field("receivingApplication", &hl7_header_record::receiving_application)
      .field("receivingFacility", &hl7_header_record::receiving_facility)
      .field("delimiters", &hl7_header_record::delimiters)
      .field("charset", &hl7_header_record::charset)
      .field("segmentCount", &hl7_header_record::segment_count)
      .field("skippedLines", &hl7_header_record::skipped_lines)
      .field("byteLength", &hl7_header_record::byte_length)
      .field("offset", &hl7_header_record::offset)
      .field("strict", &hl7_header_record::strict);
  value_object<hl7_value_record>("Hl7ValueRecord")
      .field("error", &hl7_value_record::error)
      .field("found", &hl7_value_record::found)
      .field("value", &hl7_value_record::value);
  value_object<hl7_ack_record>("Hl7AckRecord")
      .field("code", &hl7_ack_record::code)
      .field("controlId", &hl7_ack_record::control_id)
      .field("timestamp", &hl7_ack_record::timestamp)
      .field("text", &hl7_ack_record::text)
      .field("errorSegment", &hl7_ack_record::error_segment)
      .field("errorSequence", &hl7_ack_record::error_sequence)
      .field("errorField", &hl7_ack_record::error_field)
      .field("errorRepetition", &hl7_ack_record::error_repetition)
      .field("errorComponent", &hl7_ack_record::error_component)
      .field("errorSubcomponent", &hl7_ack_record::error_subcomponent)
      .field("errorCode", &hl7_ack_record::error_code)
      .field("errorText", &hl7_ack_record::error_text)
      .field("severity", &hl7_ack_record::severity);
  value_object<hl7_text_record>("Hl7TextRecord")
      .field("error", &hl7_text_record::error)
      .field("text", &hl7_text_record::text);
  value_object<hl7_feed_record>("Hl7FeedRecord")
      .field("error", &hl7_feed_record::error)
      .field("frames", &hl7_feed_record::frames);
  class_<hl7_message>("Hl7Message")
      .function("error", &hl7_message::error)
      .function("header", &hl7_message::header)
      .function("get", &hl7_message::get)
      .function("getRaw", &hl7_message::get_raw)
      .function("segmentsJson", &hl7_message::segments_json)
      .function("toJson", &hl7_message::to_json)
      .function("ack", &hl7_message::ack)
      .function("bytes", &hl7_message::bytes);
  function("hl7Parse", &parse_message);
  class_<hl7_batch>("Hl7Batch")
      .constructor<uintptr_t, size_t, const hl7_options_record &>()
      .function("error", &hl7_batch::error)
      .function("size", &hl7_batch::size)
      .function("message", &hl7_batch::message)
      .function("skippedBytes", &hl7_batch::skipped_bytes)
      .function("envelopeJson", &hl7_batch::envelope_json);
  class_<hl7_mllp_decoder>("Hl7MllpDecoder")
      .constructor<double>()
      .function("feed", &hl7_mllp_decoder::feed)
      .function("take", &hl7_mllp_decoder::take)
      .function("statsJson", &hl7_mllp_decoder::stats_json)
      .function("reset", &hl7_mllp_decoder::reset);
  function("hl7MllpEncode", &mllp_encode);
}
