// The NDJSON reader's results as JSON text: its counts (the npm package's and the CLI's), and
// what each feed gave (the npm package's NdjsonStream reads it).
#include "quire/json.h"
#include "quire/ndjson.h"

namespace quire::ndjson {

std::string stats_json(const ndjson::stats &s, key_case names, std::optional<std::string_view> file) {
  const bool camel = names == key_case::camel;
  std::string out = "{";
  if (file) {
    out += "\"file\":";
    json::append_quoted(out, *file);
    out += ',';
  }
  auto member = [&](std::string_view camel_name, std::string_view snake_name, uint64_t n) {
    out += '"';
    out += camel ? camel_name : snake_name;
    out += "\":";
    out += std::to_string(n);
    out += ',';
  };
  member("bytes", "bytes", s.bytes);
  member("lines", "lines", s.lines);
  member("blankLines", "blank_lines", s.blank_lines);
  member("resources", "resources", s.resources);
  member("badLines", "bad_lines", s.bad_lines);
  member("invalidResources", "invalid_resources", s.invalid_resources);
  member("issues", "issues", s.issues);
  member("longestLine", "longest_line", s.longest_line);
  out += camel ? "\"byType\":{" : "\"by_type\":{";
  bool first = true;
  for (const auto &[type, count] : s.by_type) {
    if (!first) out += ',';
    first = false;
    json::append_quoted(out, type);
    out += ':' + std::to_string(count);
  }
  return out + "}}";
}

namespace {

void append_error(std::string &out, const quire::error &e) {
  out += "{\"code\":\"";
  out += quire::error_name(e.code);
  out += "\",\"message\":";
  json::append_quoted(out, e.message);
  out += ",\"offset\":" + (e.offset == quire::error::NO_OFFSET ? std::string("-1") : std::to_string(e.offset));
  out += ",\"line\":" + std::to_string(e.line) + ",\"column\":" + std::to_string(e.column) + ",\"path\":";
  json::append_quoted(out, e.path);
  out += ",\"text\":";
  json::append_quoted(out, e.describe());
  out += '}';
}

}  // namespace

void feed_json::begin() {
  out_ = "{\"items\":[";
  first_ = true;
}

void feed_json::item_start(uint64_t line) {
  if (!first_) out_ += ',';
  first_ = false;
  out_ += "{\"line\":" + std::to_string(line) + ',';
}

void feed_json::add(const line_result &l) {
  item_start(l.line);
  if (l.error) {
    out_ += "\"error\":";
    append_error(out_, *l.error);
    out_ += '}';
    return;
  }
  out_ += "\"offset\":" + std::to_string(l.offset) + ",\"resource\":";
  out_ += l.text;  // the line as read: valid JSON, numbers exactly as written
  out_ += '}';
  for (const auto &i : l.issues) {
    item_start(l.line);
    // One issue's object: the list's text without its brackets.
    std::string one = fhir::issues_to_json({i});
    out_ += "\"issue\":";
    out_.append(one, 1, one.size() - 2);
    out_ += '}';
  }
}

std::string feed_json::end(const result<void> &outcome) {
  out_ += "],\"error\":";
  if (outcome) out_ += "null";
  else append_error(out_, outcome.error());
  out_ += '}';
  return std::move(out_);
}

}  // namespace quire::ndjson
