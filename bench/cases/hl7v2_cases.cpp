// Benchmark cases of the HL7 v2 reader: parse, unescape every field, to JSON, ACK and MLLP
// decoding, on an ADT^A01, ORU^R01s with many results or one large base64 PDF, and a batch file;
// and the scaling gates of parse on the number of OBX segments and on the payload size.
#include <iterator>
#include <vector>

#include "../shapes/hl7v2_shapes.h"
#include "quire/bench.h"
#include "quire/hl7v2.h"

namespace quire::bench {
namespace {

// One message or a batch file (FHS...): each case works on every message of its input.
result<std::vector<hl7v2::message>> read(std::string_view input) {
  if (input.substr(0, 3) != "FHS" && input.substr(0, 3) != "BHS") {
    auto m = hl7v2::parse(input);
    if (!m) return m.error();
    std::vector<hl7v2::message> one;
    one.push_back(std::move(m).value());
    return one;
  }
  auto b = hl7v2::parse_batch(input);
  if (!b) return b.error();
  return std::move(b->messages);
}

// The index is the result: segment and field counts and every segment's offset.
result<uint64_t> parse_op(std::string_view input) {
  auto messages = read(input);
  if (!messages) return messages.error();
  uint64_t d = mix(0, messages->size());
  for (const auto &m : *messages) {
    d = mix(d, m.segment_count());
    for (size_t s = 0; s < m.segment_count(); ++s) {
      d = mix(d, m.segment(s).field_count());
      d = mix(d, m.segment(s).offset());
    }
  }
  return d;
}

// Every field's text, unescaped and decoded to UTF-8 (MSH-1 and MSH-2 are delimiters, not text).
result<uint64_t> unescape_op(std::string_view input) {
  auto messages = read(input);
  if (!messages) return messages.error();
  uint64_t d = 0;
  for (const auto &m : *messages) {
    for (size_t s = 0; s < m.segment_count(); ++s) {
      const hl7v2::segment seg = m.segment(s);
      for (size_t f = seg.id() == "MSH" ? 3 : 1; f <= seg.field_count(); ++f) {
        auto text = m.text_of(*seg.field(f));
        if (!text) return text.error();
        d = digest(*text, d);
      }
    }
  }
  return d;
}

result<uint64_t> to_json_op(std::string_view input) {
  auto messages = read(input);
  if (!messages) return messages.error();
  uint64_t d = 0;
  for (const auto &m : *messages) d = digest(m.to_json(), d);
  return d;
}

result<uint64_t> ack_op(std::string_view input) {
  auto messages = read(input);
  if (!messages) return messages.error();
  uint64_t d = 0;
  for (const auto &m : *messages) {
    auto ack = hl7v2::build_ack(m, hl7v2::ack_code::AA);
    if (!ack) return ack.error();
    d = digest(*ack, d);
  }
  return d;
}

// The input is an MLLP stream; it arrives in 64 KiB chunks, as from a socket.
result<uint64_t> mllp_decode_op(std::string_view input) {
  static constexpr size_t CHUNK = 64 * 1024;
  hl7v2::mllp_decoder decoder;
  uint64_t d = 0, frames = 0;
  for (size_t at = 0; at < input.size(); at += CHUNK) {
    if (auto r = decoder.feed(input.substr(at, CHUNK)); !r) return r.error();
    while (auto frame = decoder.next_frame()) {
      d = mix(d, frame->size());
      d = digest(frame->substr(0, 64), d);
      ++frames;
    }
  }
  return mix(d, frames);
}

struct shape {
  const char *name;
  uint64_t items;
  bool opaque_payload;
  std::string (*make)();
};

const shape SHAPES[] = {
    {"adt-a01-1kib", 1, false, [] { return shapes::hl7v2_adt_a01(); }},
    {"oru-r01-1000-obx", 1000, false, [] { return shapes::hl7v2_oru_r01(1000); }},
    {"oru-r01-10000-obx", 10000, false, [] { return shapes::hl7v2_oru_r01(10000); }},
    {"oru-r01-pdf-64kib", 1, true, [] { return shapes::hl7v2_oru_pdf(64 * 1024); }},
    {"oru-r01-pdf-8mib", 1, true, [] { return shapes::hl7v2_oru_pdf(8 * 1024 * 1024); }},
    {"batch-1000", 1000, false, [] { return shapes::hl7v2_batch(1000); }},
};

// The MLLP case's input is the shape's messages framed: its own make function per shape.
template <size_t I>
std::string framed() {
  return shapes::hl7v2_mllp_stream(SHAPES[I].make());
}
constexpr std::string (*FRAMED[])() = {framed<0>, framed<1>, framed<2>, framed<3>, framed<4>, framed<5>};
static_assert(std::size(FRAMED) == std::size(SHAPES));

struct register_all {
  register_all() {
    for (size_t i = 0; i < std::size(SHAPES); ++i) {
      const shape &s = SHAPES[i];
      auto add = [&](const char *op, std::string (*make)(), result<uint64_t> (*run)(std::string_view)) {
        case_def c{op, s.name, make, run, s.items};
        c.opaque_payload = s.opaque_payload;
        registration{std::move(c)};
      };
      add("hl7v2.parse", s.make, parse_op);
      add("hl7v2.unescape", s.make, unescape_op);
      add("hl7v2.to_json", s.make, to_json_op);
      add("hl7v2.ack", s.make, ack_op);
      add("hl7v2.mllp_decode", FRAMED[i], mllp_decode_op);
    }
  }
} registered;

// Quadratic twin on the OBX count: each OBX looked up by its number with find(id, nth), which
// scans the segments from the start (n lookups cost n²/2 steps).
result<uint64_t> parse_find_each_obx(std::string_view input) {
  auto m = hl7v2::parse(input);
  if (!m) return m.error();
  uint64_t d = 0;
  const size_t n = m->count("OBX");
  for (size_t i = 1; i <= n; ++i) d = mix(d, m->find("OBX", i)->offset());
  return d;
}

// Quadratic twin on the payload size: after each 64 KiB block of the parsed OBX-5, the whole
// prefix read so far is digested again (as a naive accumulate-and-recheck loop would).
result<uint64_t> parse_rehash_payload(std::string_view input) {
  auto m = hl7v2::parse(input);
  if (!m) return m.error();
  auto value = m->get("OBX-5.5");
  if (!value) return value.error();
  const std::string_view payload = value->value_or(std::string_view());
  uint64_t d = 0;
  for (size_t end = 64 * 1024; end < payload.size() + 64 * 1024; end += 64 * 1024)
    d = mix(d, digest(payload.substr(0, end)));
  return d;
}

gate_registration obx_gate{{"hl7v2.parse/obx",
                            [](uint64_t scale) { return shapes::hl7v2_oru_r01(static_cast<size_t>(2500 * scale)); },
                            parse_op, parse_find_each_obx}};
gate_registration payload_gate{
    {"hl7v2.parse/payload",
     [](uint64_t scale) { return shapes::hl7v2_oru_pdf(static_cast<size_t>(2 * 1024 * 1024 * scale)); }, parse_op,
     parse_rehash_payload}};

}  // namespace
}  // namespace quire::bench
