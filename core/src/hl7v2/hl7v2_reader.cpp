// hl7v2_reader.cpp — ER7 tokenising: delimiters from MSH, one pass over the bytes building the
// segment and field-separator index, batch/file splitting, and the message accessors.

#include <algorithm>
#include <cstring>

#include "hl7v2_internal.h"

namespace quire::hl7v2 {

namespace {

// The index stores 32-bit offsets; a message may not be longer than this whatever the options say.
constexpr size_t MAX_INDEXABLE_BYTES = size_t{UINT32_MAX} - 1;

inline bool has_byte(uint64_t word, char c) noexcept {
  const uint64_t x = word ^ (0x0101010101010101ull * static_cast<unsigned char>(c));
  return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

size_t clamp_limit(size_t limit) noexcept { return std::min(limit, MAX_INDEXABLE_BYTES); }

bool starts_with_id(std::string_view line, std::string_view id) noexcept {
  return line.size() >= 3 && line.substr(0, 3) == id;
}

bool is_blank(std::string_view line) noexcept {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

bool is_envelope_id(std::string_view line) noexcept {
  return starts_with_id(line, "FHS") || starts_with_id(line, "BHS") || starts_with_id(line, "BTS") ||
         starts_with_id(line, "FTS");
}

// A line that can be a segment of a message whose field separator is `field_sep`.
bool looks_like_segment(std::string_view line, char field_sep) noexcept {
  if (line.size() < 3) return false;
  if (!detail::is_id_char(line[0]) || !detail::is_id_char(line[1]) || !detail::is_id_char(line[2])) return false;
  return line.size() == 3 || line[3] == field_sep;
}

// A header line (MSH, FHS, BHS) names its own field separator in its fourth byte.
bool is_header_line(std::string_view line, std::string_view id) noexcept {
  return line.size() >= 4 && line.substr(0, 3) == id && !detail::is_line_end(line[3]);
}

size_t skip_bom(std::string_view bytes) noexcept {
  return bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xEF &&
                 static_cast<unsigned char>(bytes[1]) == 0xBB && static_cast<unsigned char>(bytes[2]) == 0xBF
             ? 3
             : 0;
}

size_t skip_whitespace(std::string_view bytes, size_t i) noexcept {
  while (i < bytes.size() && (bytes[i] == '\r' || bytes[i] == '\n' || bytes[i] == ' ' || bytes[i] == '\t')) ++i;
  return i;
}

bool is_strict_delimiter(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7F && !detail::is_id_char(c);
}

// Reads MSH-1 and MSH-2 from a chunk that starts with "MSH".
result<delimiters> read_delimiters(std::string_view chunk, uint64_t base, bool strict) {
  if (chunk.size() < 4 || detail::is_line_end(chunk[3]))
    return quire::error(error_code::INVALID_HL7, "MSH ends before its field separator (MSH-1)", base + 3);
  delimiters d;
  d.field = chunk[3];
  size_t i = 4;
  while (i < chunk.size() && chunk[i] != d.field && !detail::is_line_end(chunk[i])) ++i;
  const std::string_view enc = chunk.substr(4, i - 4);
  if (enc.empty()) return quire::error(error_code::INVALID_HL7, "MSH-2 (encoding characters) is empty", base + 4);
  if (strict && enc.size() != 4 && enc.size() != 5)
    return quire::error(error_code::INVALID_HL7,
                        "MSH-2 must hold 4 encoding characters (5 with the truncation character)", base + 4);
  // A short MSH-2 (seen in old feeds, e.g. "^~}") leaves the missing roles without a character.
  char *roles[] = {&d.component, &d.repetition, &d.escape, &d.subcomponent, &d.truncation};
  for (char *role : roles) *role = delimiters::NONE;
  for (size_t k = 0; k < enc.size() && k < 5; ++k) *roles[k] = enc[k];

  // NUL stands for "no character" in delimiters, so it cannot be one.
  if (const size_t nul = chunk.substr(3, enc.size() + 1).find('\0'); nul != std::string_view::npos)
    return quire::error(error_code::INVALID_HL7, "a NUL byte cannot be a delimiter", base + 3 + nul);
  const char all[] = {d.field, d.component, d.repetition, d.escape, d.subcomponent, d.truncation};
  for (size_t a = 0; a < 6; ++a) {
    if (all[a] == delimiters::NONE) continue;
    if (strict && !is_strict_delimiter(all[a]))
      return quire::error(error_code::INVALID_HL7, "a delimiter must be a printable ASCII punctuation character",
                          base + 3 + a);
    for (size_t b = 0; b < a; ++b)
      if (all[a] == all[b])
        return quire::error(error_code::INVALID_HL7,
                            std::string("the character '") + all[a] + "' is used for two delimiter roles",
                            base + 3 + a);
  }
  return d;
}

}  // namespace

std::string delimiters::to_string() const {
  std::string s;
  for (char c : {field, component, repetition, escape, subcomponent, truncation})
    if (c != NONE) s += c;
  return s;
}

// --- the tokeniser --------------------------------------------------------------------------------

namespace detail {

result<message> message_builder::parse_one(std::string_view chunk, uint64_t base, const parse_options &options) {
  const size_t max_bytes = clamp_limit(options.max_message_bytes);
  if (chunk.size() > max_bytes)
    return quire::error(error_code::DOCUMENT_TOO_LARGE,
                        "message of " + std::to_string(chunk.size()) + " bytes exceeds max_message_bytes (" +
                            std::to_string(max_bytes) + ")",
                        base);
  auto delims = read_delimiters(chunk, base, options.strict);
  if (!delims) return std::move(delims).error();

  message m;
  m.delimiters_ = *delims;
  m.strict_ = options.strict;
  m.base_offset_ = base;
  const char fs = m.delimiters_.field;
  const char *data = chunk.data();
  const size_t n = chunk.size();
  const size_t max_segment = options.max_segment_bytes;
  size_t last_end = 0;
  size_t i = 0;
  // One pass: each byte is looked at once; a line's field separators are recorded as we go and
  // taken back if the line turns out not to be a segment.
  while (i < n) {
    if (is_line_end(data[i])) {
      ++i;
      continue;
    }
    const size_t begin = i;
    const size_t first_sep = m.separators_.size();
    // The id is never split, even when a tolerant read lets the field separator be a letter
    // found in it (MSHH|...).
    while (i < n && i < begin + 3 && !is_line_end(data[i])) ++i;
    while (i < n) {
      // Long values (base64 payloads) are skipped eight bytes at a time when none of the eight is
      // a field separator or a line end (the classic "has zero byte" test on each XOR).
      while (n - i >= 8) {
        uint64_t word;
        std::memcpy(&word, data + i, 8);
        if (has_byte(word, fs) || has_byte(word, '\r') || has_byte(word, '\n')) break;
        i += 8;
      }
      if (i >= n) break;
      const char c = data[i];
      if (c == fs) {
        m.separators_.push_back(static_cast<uint32_t>(i));
      } else if (c == '\r' || c == '\n') {
        break;
      }
      ++i;
    }
    const size_t end = i;
    const std::string_view line(data + begin, end - begin);
    if (line.size() > max_segment)
      return quire::error(error_code::LINE_TOO_LONG,
                          "segment of " + std::to_string(line.size()) + " bytes exceeds max_segment_bytes (" +
                              std::to_string(max_segment) + ")",
                          base + begin);
    if (!looks_like_segment(line, fs)) {
      m.separators_.resize(first_sep);
      if (is_blank(line)) continue;
      if (options.strict)
        return quire::error(error_code::INVALID_HL7, "line is not a segment (no 3-character id and field separator)",
                            base + begin);
      ++m.skipped_lines_;
      continue;
    }
    if (!m.segments_.empty()) {
      if (starts_with_id(line, "MSH"))
        return quire::error(error_code::INVALID_HL7, "a second MSH: the input holds several messages (use parse_batch)",
                            base + begin);
      if (is_envelope_id(line))
        return quire::error(error_code::INVALID_HL7, "a batch or file envelope segment (use parse_batch)",
                            base + begin);
    }
    if (m.segments_.size() >= options.max_segments)
      return quire::error(error_code::DOCUMENT_TOO_LARGE,
                          "message has more than max_segments (" + std::to_string(options.max_segments) + ") segments",
                          base + begin);
    m.segments_.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end), static_cast<uint32_t>(first_sep),
                           static_cast<uint32_t>(m.separators_.size() - first_sep)});
    last_end = end;
  }
  m.bytes_ = chunk.substr(0, last_end);
  if (auto cs = m.get(path{{'M', 'S', 'H'}, 1, 18, 1, 1, 0})) m.charset_ = charset_from_name(*cs);

  if (options.strict) {
    // Strict reads check every value's escapes and encoding now, so that a message that parsed
    // strictly never fails later in get_text or to_json.
    for (size_t s = 0; s < m.segments_.size(); ++s) {
      const segment seg = m.segment(s);
      const bool is_msh = seg.id() == "MSH";
      for (size_t f = is_msh ? 3 : 1; f <= seg.field_count(); ++f) {
        const std::string_view v = *seg.field(f);
        if (m.delimiters_.escape == delimiters::NONE || v.find(m.delimiters_.escape) == std::string_view::npos)
          continue;
        auto checked = unescape_into(v, m.delimiters_, true, nullptr);
        if (!checked) {
          quire::error e = std::move(checked).error();
          e.offset += base + static_cast<uint64_t>(v.data() - chunk.data());
          e.path = std::string(seg.id()) + "-" + std::to_string(f);
          return e;
        }
      }
    }
    if (m.charset_ == charset::UTF8) {
      auto valid = decode_text(m.bytes_, charset::UTF8, true);
      if (!valid) {
        quire::error e = std::move(valid).error();
        e.offset += base;
        return e;
      }
    }
  }
  return m;
}

}  // namespace detail

result<message> parse(std::string_view bytes, const parse_options &options) {
  if (bytes.size() > clamp_limit(options.max_message_bytes))
    return quire::error(error_code::DOCUMENT_TOO_LARGE,
                        "input of " + std::to_string(bytes.size()) + " bytes exceeds max_message_bytes (" +
                            std::to_string(clamp_limit(options.max_message_bytes)) + ")",
                        0);
  const size_t start = skip_whitespace(bytes, skip_bom(bytes));
  if (start == bytes.size()) return quire::error(error_code::EMPTY_INPUT, "no HL7 v2 message in the input", 0);
  const std::string_view rest = bytes.substr(start);
  if (!starts_with_id(rest, "MSH")) {
    if (is_envelope_id(rest))
      return quire::error(error_code::INVALID_HL7, "the input starts with a batch or file header (use parse_batch)",
                          start);
    return quire::error(error_code::INVALID_HL7, "the input does not start with an MSH segment", start);
  }
  return detail::message_builder::parse_one(rest, start, options);
}

// --- files and batches ----------------------------------------------------------------------------

result<batch> parse_batch(std::string_view bytes, const parse_options &options) {
  batch out;
  const size_t n = bytes.size();
  size_t i = skip_bom(bytes);
  size_t message_begin = SIZE_MAX;  // start of the message being collected
  size_t message_end = 0;           // end of its last segment line
  char message_fs = '|';
  uint64_t trailing_text = 0;  // non-segment bytes after the message's last segment
  bool in_comment = false;
  bool saw_text = false;

  auto close_message = [&]() -> result<void> {
    if (message_begin == SIZE_MAX) return {};
    auto m = detail::message_builder::parse_one(bytes.substr(message_begin, message_end - message_begin), message_begin,
                                                options);
    if (!m) return std::move(m).error();
    out.messages.push_back(std::move(m).value());
    out.skipped_bytes += trailing_text;
    trailing_text = 0;
    message_begin = SIZE_MAX;
    return {};
  };

  while (i < n) {
    const size_t begin = i;
    while (i < n && !detail::is_line_end(bytes[i])) ++i;
    const std::string_view line = bytes.substr(begin, i - begin);
    if (i < n) ++i;  // a CRLF leaves an empty line behind, skipped as blank
    if (in_comment) {
      out.skipped_bytes += line.size();
      if (line.find("*/") != std::string_view::npos) in_comment = false;
      continue;
    }
    if (is_blank(line)) continue;
    saw_text = true;
    if (is_header_line(line, "MSH")) {
      if (auto r = close_message(); !r) return std::move(r).error();
      message_begin = begin;
      message_end = begin + line.size();
      message_fs = line[3];
      continue;
    }
    if (is_envelope_id(line) && (line.size() == 3 || !detail::is_id_char(line[3]))) {
      if (auto r = close_message(); !r) return std::move(r).error();
      out.envelope.push_back(line);
      continue;
    }
    if (message_begin != SIZE_MAX && looks_like_segment(line, message_fs)) {
      // Text lines between this one and the previous segment become part of the message, where a
      // tolerant parse skips them and counts them in message::skipped_lines().
      message_end = begin + line.size();
      trailing_text = 0;
      continue;
    }
    if (options.strict) return quire::error(error_code::INVALID_HL7, "text outside a message (not a segment)", begin);
    if (message_begin != SIZE_MAX) {
      trailing_text += line.size();
    } else {
      out.skipped_bytes += line.size();
      const size_t open = line.find("/*");
      if (open != std::string_view::npos && line.find("*/", open + 2) == std::string_view::npos) in_comment = true;
    }
  }
  if (auto r = close_message(); !r) return std::move(r).error();
  if (out.messages.empty() && out.envelope.empty()) {
    if (!saw_text) return quire::error(error_code::EMPTY_INPUT, "no HL7 v2 message in the input", 0);
    return quire::error(error_code::INVALID_HL7, "no MSH segment in the input", 0);
  }
  return out;
}

// --- segments ------------------------------------------------------------------------------------

std::string_view segment::raw() const noexcept {
  const auto &e = message_->segments_[index_];
  return message_->bytes_.substr(e.begin, e.end - e.begin);
}

std::string_view segment::id() const noexcept { return raw().substr(0, 3); }

uint64_t segment::offset() const noexcept { return message_->base_offset_ + message_->segments_[index_].begin; }

size_t segment::field_count() const noexcept {
  const auto &e = message_->segments_[index_];
  return e.sep_count + (id() == "MSH" ? 1 : 0);
}

std::optional<std::string_view> segment::field(size_t n) const noexcept {
  const auto &e = message_->segments_[index_];
  if (n == 0) return std::nullopt;
  if (id() == "MSH") {
    // MSH-1 is the field separator itself, so the n-th separated value of MSH is MSH-(n+1).
    if (n == 1) return message_->bytes_.substr(e.begin + 3, 1);
    --n;
  }
  if (n > e.sep_count) return std::nullopt;
  const uint32_t *seps = message_->separators_.data() + e.first_sep;
  const size_t start = size_t{seps[n - 1]} + 1;
  const size_t stop = n < e.sep_count ? size_t{seps[n]} : size_t{e.end};
  return message_->bytes_.substr(start, stop - start);
}

// --- message accessors ---------------------------------------------------------------------------

std::optional<segment> message::find(std::string_view id, size_t nth) const noexcept {
  if (nth == 0) return std::nullopt;
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (segment(i).id() == id && --nth == 0) return segment(i);
  }
  return std::nullopt;
}

size_t message::count(std::string_view id) const noexcept {
  size_t c = 0;
  for (size_t i = 0; i < segments_.size(); ++i) c += segment(i).id() == id ? 1 : 0;
  return c;
}

std::optional<std::string_view> message::get(const path &p) const noexcept {
  const std::string_view id(p.segment, 3);
  const auto seg = find(id, p.segment_repetition);
  if (!seg) return std::nullopt;
  if (p.field == 0) return seg->raw();
  const auto field = seg->field(p.field);
  if (!field) return std::nullopt;
  if (id == "MSH" && p.field <= 2) {
    // MSH-1 and MSH-2 hold the delimiters themselves: splitting them would split on themselves.
    if (p.repetition > 1 || p.component > 1 || p.subcomponent > 1) return std::nullopt;
    return field;
  }
  if (p.repetition == 0 && p.component == 0) return field;
  const auto rep = nth_piece(*field, delimiters_.repetition, p.repetition == 0 ? 1 : p.repetition);
  if (!rep || p.component == 0) return rep;
  const auto comp = nth_piece(*rep, delimiters_.component, p.component);
  if (!comp || p.subcomponent == 0) return comp;
  return nth_piece(*comp, delimiters_.subcomponent, p.subcomponent);
}

result<std::optional<std::string_view>> message::get(std::string_view text) const {
  auto p = parse_path(text);
  if (!p) return std::move(p).error();
  return get(*p);
}

result<std::string> message::text_of(std::string_view raw) const {
  std::string unescaped;
  const uint64_t at = base_offset_ + static_cast<uint64_t>(raw.data() - bytes_.data());
  if (auto r = detail::unescape_into(raw, delimiters_, strict_, &unescaped); !r) {
    quire::error e = std::move(r).error();
    e.offset += at;
    return e;
  }
  // Valid UTF-8 (the usual case) is handed back as it is: a large value (a base64 PDF) is then
  // copied once, not twice.
  if (charset_ == charset::UTF8 && detail::is_valid_utf8(unescaped)) return unescaped;
  auto decoded = decode_text(unescaped, charset_, strict_);
  if (!decoded) {
    quire::error e = std::move(decoded).error();
    // The offset is exact when no escape changed the length, else the value's start is the best we know.
    e.offset = unescaped.size() == raw.size() ? at + e.offset : at;
    return e;
  }
  return decoded;
}

result<std::optional<std::string>> message::get_text(const path &p) const {
  const auto raw = get(p);
  if (!raw) return std::optional<std::string>();
  if (std::string_view(p.segment, 3) == "MSH" && p.field >= 1 && p.field <= 2) return std::optional<std::string>(*raw);
  auto text = text_of(*raw);
  if (!text) {
    quire::error e = std::move(text).error();
    e.path = std::string(p.segment, 3) + "-" + std::to_string(p.field);
    return e;
  }
  return std::optional<std::string>(std::move(text).value());
}

result<std::optional<std::string>> message::get_text(std::string_view text) const {
  auto p = parse_path(text);
  if (!p) return std::move(p).error();
  auto r = get_text(*p);
  if (!r) {
    quire::error e = std::move(r).error();
    e.path = std::string(text);
    return e;
  }
  return r;
}

namespace {
std::string_view header(const message &m, size_t field, size_t component) {
  path p;
  std::memcpy(p.segment, "MSH", 3);
  p.field = field;
  p.component = component;
  return m.get(p).value_or(std::string_view());
}
}  // namespace

std::string_view message::type() const noexcept { return header(*this, 9, 1); }
std::string_view message::trigger() const noexcept { return header(*this, 9, 2); }
std::string_view message::structure() const noexcept { return header(*this, 9, 3); }
std::string_view message::control_id() const noexcept { return header(*this, 10, 0); }
std::string_view message::processing_id() const noexcept { return header(*this, 11, 1); }
std::string_view message::version() const noexcept { return header(*this, 12, 1); }
std::string_view message::timestamp() const noexcept { return header(*this, 7, 1); }
std::string_view message::sending_application() const noexcept { return header(*this, 3, 0); }
std::string_view message::sending_facility() const noexcept { return header(*this, 4, 0); }
std::string_view message::receiving_application() const noexcept { return header(*this, 5, 0); }
std::string_view message::receiving_facility() const noexcept { return header(*this, 6, 0); }

}  // namespace quire::hl7v2
