// hl7v2_json.cpp — a message as JSON text, in the stable shape documented in docs/hl7v2.md.
//
// The writer is hand-written rather than built on the JSON layer so that its output is
// byte-for-byte the same on every target and every version of the dependencies.

#include "hl7v2_internal.h"

namespace quire::hl7v2 {

namespace detail {

void append_json_string(std::string &out, std::string_view text) {
  static constexpr char HEX[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the bytes that need no escaping
  for (size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u >= 0x20 && u != '"' && u != '\\') continue;
    out.append(text.substr(run, i - run));
    run = i + 1;
    switch (u) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += HEX[u >> 4];
        out += HEX[u & 15];
    }
  }
  out.append(text.substr(run));
  out += '"';
}

}  // namespace detail

namespace {

// A part is empty when it holds nothing but separators of the levels below it ("^^" is an empty
// field); empty parts at the end of their parent are dropped.
bool is_empty_part(std::string_view raw, char a, char b, char c) noexcept {
  for (const char ch : raw)
    if ((ch != a || a == delimiters::NONE) && (ch != b || b == delimiters::NONE) && (ch != c || c == delimiters::NONE))
      return false;
  return true;
}

class json_writer {
 public:
  json_writer(const message &m, std::string &out) : m_(m), d_(m.delimiters()), out_(out) {}

  void leaf(std::string_view raw) {
    if (is_explicit_null(raw)) {
      out_ += "null";
      return;
    }
    // Most values have no escapes and are valid UTF-8: write them straight from the input.
    if ((d_.escape == delimiters::NONE || raw.find(d_.escape) == std::string_view::npos) &&
        m_.charset() == charset::UTF8 && detail::is_valid_utf8(raw)) {
      detail::append_json_string(out_, raw);
      return;
    }
    std::string text;
    (void)detail::unescape_into(raw, d_, false, &text);  // tolerant: cannot fail
    auto utf8 = decode_text(text, m_.charset(), false);  // tolerant: cannot fail
    detail::append_json_string(out_, utf8.ok() ? utf8.value() : std::string());
  }

  // Writes `raw` split by separators[level]: a string when it has one non-empty piece (or none),
  // else an array whose items are written one level down.
  void part(std::string_view raw, int level) {
    static constexpr int LEAF = 3;
    if (level == LEAF) return leaf(raw);
    const char seps[3] = {d_.repetition, d_.component, d_.subcomponent};
    const char sep = seps[level];
    // One reused list per level (a level's recursion only touches the levels below it), so that
    // writing a field allocates nothing once the lists have grown.
    std::vector<std::string_view> &pieces = pieces_[level];
    pieces.clear();
    if (sep == delimiters::NONE) {
      pieces.push_back(raw);
    } else {
      size_t start = 0;
      for (;;) {
        const size_t next = raw.find(sep, start);
        pieces.push_back(raw.substr(start, (next == std::string_view::npos ? raw.size() : next) - start));
        if (next == std::string_view::npos) break;
        start = next + 1;
      }
    }
    const char below1 = level + 1 < 3 ? seps[level + 1] : delimiters::NONE;
    const char below2 = level + 2 < 3 ? seps[level + 2] : delimiters::NONE;
    while (!pieces.empty() && is_empty_part(pieces.back(), below1, below2, delimiters::NONE)) pieces.pop_back();
    if (pieces.empty()) {
      out_ += "\"\"";
    } else if (const auto simple = pieces.size() == 1 ? simple_value(pieces[0], level + 1) : std::nullopt) {
      part(*simple, LEAF);
    } else {
      out_ += '[';
      for (size_t k = 0; k < pieces.size(); ++k) {
        if (k) out_ += ',';
        part(pieces[k], level + 1);
      }
      out_ += ']';
    }
  }

 private:
  // `raw` without its trailing empty pieces when, at `level`, it would be written as a plain
  // string (no separator below it splits it into more than one non-empty piece); else nullopt.
  std::optional<std::string_view> simple_value(std::string_view raw, int level) const {
    const char seps[3] = {d_.repetition, d_.component, d_.subcomponent};
    for (int l = level; l < 3; ++l) {
      const char sep = seps[l];
      if (sep == delimiters::NONE) continue;
      const size_t at = raw.find(sep);
      if (at == std::string_view::npos) continue;
      // Only trailing empty pieces may follow the first one.
      const char b1 = l + 1 < 3 ? seps[l + 1] : delimiters::NONE;
      const char b2 = l + 2 < 3 ? seps[l + 2] : delimiters::NONE;
      if (!is_empty_part(raw.substr(at), sep, b1, b2)) return std::nullopt;
      raw = raw.substr(0, at);
    }
    return raw;
  }

  const message &m_;
  const delimiters &d_;
  std::string &out_;
  std::vector<std::string_view> pieces_[3];
};

}  // namespace

std::string message::to_json() const {
  std::string out;
  out.reserve(bytes_.size() + bytes_.size() / 4 + 64);
  out += "{\"delimiters\":";
  const auto msh2 = get(path{{'M', 'S', 'H'}, 1, 2, 0, 0, 0}).value_or(std::string_view());
  // Built by appending: g++ 12 at -O3 warns falsely (-Wrestrict, GCC PR 105329) on string + string here.
  std::string delims(1, delimiters_.field);
  delims.append(msh2);
  detail::append_json_string(out, decode_text(delims, charset_, false).value());
  out += ",\"segments\":[";
  json_writer writer(*this, out);
  for (size_t s = 0; s < segments_.size(); ++s) {
    const auto seg = segment(s);
    if (s) out += ',';
    out += "{\"id\":";
    detail::append_json_string(out, decode_text(seg.id(), charset_, false).value());
    out += ",\"fields\":[";
    const bool is_msh = seg.id() == "MSH";
    size_t count = seg.field_count();
    const size_t keep = is_msh ? 2 : 0;
    while (count > keep &&
           is_empty_part(*seg.field(count), delimiters_.repetition, delimiters_.component, delimiters_.subcomponent))
      --count;
    for (size_t f = 1; f <= count; ++f) {
      if (f > 1) out += ',';
      const std::string_view raw = *seg.field(f);
      if (is_msh && f <= 2) {
        detail::append_json_string(out, decode_text(raw, charset_, false).value());
      } else {
        writer.part(raw, 0);
      }
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

namespace {

// Text for a JSON string: bytes in `from` become UTF-8 (tolerantly; "" if even that fails).
void append_decoded(std::string &out, std::string_view raw, charset from) {
  auto t = decode_text(raw, from, false);
  detail::append_json_string(out, t ? t.value() : std::string());
}

}  // namespace

std::string segments_json(const message &m) {
  std::string out = "[";
  for (size_t i = 0; i < m.segment_count(); ++i) {
    const segment s = m.segment(i);
    if (i) out += ',';
    out += "{\"id\":";
    append_decoded(out, s.id(), m.charset());
    out += ",\"fields\":" + std::to_string(s.field_count()) + ",\"offset\":" + std::to_string(s.offset()) + "}";
  }
  return out + "]";
}

std::string envelope_json(const batch &b) {
  std::string out = "[";
  for (size_t i = 0; i < b.envelope.size(); ++i) {
    if (i) out += ',';
    append_decoded(out, b.envelope[i], charset::UTF8);
  }
  return out + "]";
}

std::string stats_json(const mllp_decoder &d) {
  return "{\"bytesFed\":" + std::to_string(d.bytes_fed()) + ",\"skippedBytes\":" + std::to_string(d.skipped_bytes()) +
         ",\"droppedFrames\":" + std::to_string(d.dropped_frames()) +
         ",\"framesWithoutCr\":" + std::to_string(d.frames_without_cr()) +
         ",\"bufferedBytes\":" + std::to_string(d.buffered_bytes()) +
         ",\"inFrame\":" + (d.in_frame() ? "true" : "false") + "}";
}

}  // namespace quire::hl7v2
