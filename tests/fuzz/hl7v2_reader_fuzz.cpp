// libFuzzer target: the HL7 v2 reader (parse, parse_batch, paths, text, JSON, ACK) on any bytes.
// The first byte picks the options so that strict mode and small limits are fuzzed too. Beyond
// not crashing: to_json is valid JSON and deterministic, a message's bytes re-parse to the same
// message, raw and text lookups agree on what exists, escape/unescape round-trips.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "quire/hl7v2.h"
#include "quire/json.h"

namespace {

void exercise(const quire::hl7v2::message &m, const quire::hl7v2::parse_options &options) {
  // to_json never fails: it is JSON, the same every time, and the message's own bytes parsed
  // again give the same message.
  const std::string json = m.to_json();
  if (!quire::json::parse(json).ok() || m.to_json() != json) __builtin_trap();
  if (auto again = quire::hl7v2::parse(m.bytes(), options);
      !again.ok() || again->segment_count() != m.segment_count() || again->to_json() != json)
    __builtin_trap();
  for (const char *p : {"MSH-9.2", "PID-5[2].1", "PID-3[1].4.2", "OBX[2]-5", "MSH-2", "MSH-1", "ZZZ-1.1.1", "EVN"}) {
    auto raw = m.get(p);
    auto text = m.get_text(p);
    if (raw.ok() && *raw) (void)quire::hl7v2::to_iso8601(**raw), (void)quire::hl7v2::parse_number(**raw);
    // A part that exists raw exists as text (or its text is a typed error), and the other way.
    if (raw.ok() != text.ok() && text.code() != quire::error_code::INVALID_ESCAPE &&
        text.code() != quire::error_code::INVALID_UTF8)
      __builtin_trap();
    if (raw.ok() && text.ok() && raw->has_value() != text->has_value()) __builtin_trap();
  }
  if (auto trigger = m.get("MSH-9.2"); trigger.ok() && *trigger && **trigger != m.trigger()) __builtin_trap();
  for (size_t i = 0; i < m.segment_count() && i < 64; ++i) {
    const auto seg = m.segment(i);
    if (seg.field(seg.field_count() + 1)) __builtin_trap();  // nothing past the last field
    for (size_t f = 1; f <= seg.field_count() && f <= 32; ++f) {
      if (!seg.field(f)) __builtin_trap();
      (void)m.text_of(*seg.field(f));
    }
  }
  quire::hl7v2::ack_options o;
  o.text = "fuzz|^~\\&";
  o.location.segment = "PID";
  auto ack = quire::hl7v2::build_ack(m, quire::hl7v2::ack_code::AE, o);
  if (ack.ok()) {
    auto back = quire::hl7v2::parse(*ack);
    // An ACK of a message that parsed must parse.
    if (!back.ok()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  quire::hl7v2::parse_options options;
  options.strict = (data[0] & 1) != 0;
  if (data[0] & 2) {
    options.max_segments = 8;
    options.max_segment_bytes = 256;
    options.max_message_bytes = 4096;
  }
  const std::string_view bytes(reinterpret_cast<const char *>(data + 1), size - 1);
  if (auto m = quire::hl7v2::parse(bytes, options); m.ok()) exercise(*m, options);
  if (auto b = quire::hl7v2::parse_batch(bytes, options); b.ok())
    for (const auto &m : b->messages) exercise(m, options);
  const quire::hl7v2::delimiters d;
  if (auto u = quire::hl7v2::unescape(bytes, d, false); u.ok()) {
    // Escaping then unescaping gives the bytes back.
    auto back = quire::hl7v2::unescape(quire::hl7v2::escape(*u, d), d, true);
    if (!back.ok() || *back != *u) __builtin_trap();
  }
  (void)quire::hl7v2::unescape(bytes, d, true);
  (void)quire::hl7v2::decode_text(bytes, quire::hl7v2::charset::UTF8, true);
  (void)quire::hl7v2::parse_path(bytes);
  return 0;
}
