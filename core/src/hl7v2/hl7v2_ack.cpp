// hl7v2_ack.cpp — building the acknowledgement (ACK) of a message.

#include "hl7v2_internal.h"

namespace quire::hl7v2 {

namespace {

// HL7 table 0357 (message error condition codes), for ERR-3.2 when the caller gives no text.
std::string_view table_0357_text(std::string_view code) noexcept {
  struct entry {
    std::string_view code, text;
  };
  static constexpr entry TABLE[] = {
      {"0", "Message accepted"},
      {"100", "Segment sequence error"},
      {"101", "Required field missing"},
      {"102", "Data type error"},
      {"103", "Table value not found"},
      {"104", "Value too long"},
      {"200", "Unsupported message type"},
      {"201", "Unsupported event code"},
      {"202", "Unsupported processing id"},
      {"203", "Unsupported version id"},
      {"204", "Unknown key identifier"},
      {"205", "Duplicate key identifier"},
      {"206", "Application record locked"},
      {"207", "Application internal error"},
  };
  for (const auto &e : TABLE)
    if (e.code == code) return e.text;
  return {};
}

bool is_error_code(ack_code code) noexcept {
  return code == ack_code::AE || code == ack_code::AR || code == ack_code::CE || code == ack_code::CR;
}

// Versions before 2.5 carry the error in ERR-1 (ELD); 2.5 and later in ERR-2..4.
bool uses_eld(std::string_view version) noexcept {
  return version.size() >= 3 && version[0] == '2' && version[1] == '.' && version[2] >= '1' && version[2] <= '4' &&
         (version.size() == 3 || version[3] == '.');
}

void append_number(std::string &out, size_t n) {
  if (n) out += std::to_string(n);
}

// Joins parts with `sep` and drops empty ones at the end.
std::string join_trimmed(std::initializer_list<std::string> parts, char sep) {
  std::vector<std::string> v(parts);
  while (!v.empty() && v.back().empty()) v.pop_back();
  std::string out;
  for (size_t k = 0; k < v.size(); ++k) {
    if (k && sep != delimiters::NONE) out += sep;
    if (k && sep == delimiters::NONE) break;  // nothing can separate the parts: keep the first
    out += v[k];
  }
  return out;
}

}  // namespace

std::string_view ack_code_name(ack_code code) noexcept {
  switch (code) {
    case ack_code::AA: return "AA";
    case ack_code::AE: return "AE";
    case ack_code::AR: return "AR";
    case ack_code::CA: return "CA";
    case ack_code::CE: return "CE";
    case ack_code::CR: return "CR";
  }
  return "AE";
}

result<ack_code> parse_ack_code(std::string_view text) {
  for (ack_code c : {ack_code::AA, ack_code::AE, ack_code::AR, ack_code::CA, ack_code::CE, ack_code::CR})
    if (ack_code_name(c) == text) return c;
  return quire::error(error_code::INVALID_ARGUMENT, "ack code must be AA, AE, AR, CA, CE or CR");
}

result<std::string> build_ack(const message &original, ack_code code, const ack_options &options) {
  if (options.severity != "E" && options.severity != "W" && options.severity != "I" && options.severity != "F")
    return quire::error(error_code::INVALID_ARGUMENT, "ack severity (ERR-4) must be E, W, I or F");
  const delimiters &d = original.delimiters();
  const auto msh = original.find("MSH");
  auto field = [&](size_t n) {
    return std::string(msh ? msh->field(n).value_or(std::string_view()) : std::string_view());
  };
  auto esc = [&](std::string_view text) { return escape(text, d); };
  const char fs = d.field, cs = d.component;

  std::string out;
  std::vector<std::string> header = {
      field(5),  // MSH-3 sending application: the original's receiver
      field(6),
      field(3),
      field(4),
      options.timestamp.empty() ? field(7) : esc(options.timestamp),
      std::string(),
      join_trimmed({"ACK", std::string(original.trigger()), "ACK"}, cs),
      options.control_id.empty() ? "ACK" + std::string(original.control_id()) : esc(options.control_id),
      field(11),
      field(12),
      {},
      {},
      {},
      {},
      {},
      field(18),
  };
  while (!header.empty() && header.back().empty()) header.pop_back();
  out += "MSH";
  out += fs;
  out += field(2);
  for (const auto &f : header) {
    out += fs;
    out += f;
  }
  out += '\r';

  out += "MSA";
  out += fs;
  out += ack_code_name(code);
  out += fs;
  out += original.control_id();
  if (!options.text.empty()) {
    out += fs;
    out += esc(options.text);
  }
  out += '\r';

  if (is_error_code(code)) {
    const std::string text =
        options.error_text.empty() ? std::string(table_0357_text(options.error_code)) : options.error_text;
    const error_location &loc = options.location;
    std::string seq, fld, rep, comp, sub;
    append_number(seq, loc.segment.empty() ? 0 : loc.sequence);
    append_number(fld, loc.field);
    append_number(rep, loc.repetition);
    append_number(comp, loc.component);
    append_number(sub, loc.subcomponent);
    out += "ERR";
    out += fs;
    if (uses_eld(original.version())) {
      // ELD: segment^sequence^field^code&text&table
      const std::string coded = join_trimmed({esc(options.error_code), esc(text), "HL70357"}, d.subcomponent);
      out += join_trimmed({esc(loc.segment), seq, fld, coded}, cs);
    } else {
      out += fs;
      out += join_trimmed({esc(loc.segment), seq, fld, rep, comp, sub}, cs);
      out += fs;
      out += join_trimmed({esc(options.error_code), esc(text), "HL70357"}, cs);
      out += fs;
      out += options.severity;
    }
    out += '\r';
  }
  return out;
}

}  // namespace quire::hl7v2
