// Issues as JSON: a plain array for tools (CLI --json, the npm package), and an OperationOutcome.
#include <charconv>
#include <string>

#include "fhir_internal.h"

namespace quire::fhir {

namespace {

void append_number(std::string &out, uint64_t n) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

}  // namespace

std::string issues_to_json(const std::vector<issue> &issues) {
  // One buffer, reserved for about what it will hold (the members' names and numbers are some
  // 110 bytes an issue), numbers written in place: no temporaries per issue.
  std::string out;
  size_t guess = 2;
  for (const auto &i : issues) guess += 112 + i.details.size() + i.expression.size();
  out.reserve(guess);
  out += '[';
  bool first = true;
  for (const auto &i : issues) {
    if (!first) out += ',';
    first = false;
    out += "{\"severity\":\"";
    out += severity_name(i.severity);
    out += "\",\"code\":\"";
    out += i.code;
    if (!i.key.empty()) {
      out += "\",\"key\":\"";
      out += i.key;
    }
    out += "\",\"details\":";
    json::append_quoted(out, i.details);
    out += ",\"expression\":";
    json::append_quoted(out, i.expression);
    out += ",\"line\":";
    append_number(out, i.line);
    out += ",\"column\":";
    append_number(out, i.column);
    out += ",\"offset\":";
    append_number(out, i.offset);
    if (i.error != error_code::OK) {
      out += ",\"error\":\"";
      out += error_name(i.error);
      out += '"';
    }
    out += '}';
  }
  out += ']';
  return out;
}

std::string to_operation_outcome(const outcome &o) {
  std::string out = "{\"resourceType\":\"OperationOutcome\",\"issue\":[";
  bool first = true;
  for (const auto &i : o.issues) {
    if (!first) out += ',';
    first = false;
    out += "{";
    if (i.line) {
      out +=
          "\"extension\":[{\"url\":\"http://hl7.org/fhir/StructureDefinition/"
          "operationoutcome-issue-line\",\"valueInteger\":" +
          std::to_string(i.line) +
          "},{\"url\":\"http://hl7.org/fhir/StructureDefinition/operationoutcome-issue-col\",\"valueInteger\":" +
          std::to_string(i.column) + "}],";
    }
    out += "\"severity\":\"";
    out += severity_name(i.severity);
    out += "\",\"code\":\"";
    out += i.code;
    out += "\",\"details\":{\"text\":";
    json::append_quoted(out, i.details);
    out += "}";
    if (!i.expression.empty()) {
      out += ",\"expression\":[";
      json::append_quoted(out, i.expression);
      out += "]";
    }
    out += "}";
  }
  if (o.issues.empty()) {
    out += "{\"severity\":\"information\",\"code\":\"informational\",\"details\":{\"text\":\"no issues\"}}";
  }
  out += "]}";
  return out;
}

}  // namespace quire::fhir
