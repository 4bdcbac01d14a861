// ndjson::reader: chunks of any size, blank lines, per-line errors with line numbers,
// continue_on_error, the longest-line bound, counts by resourceType, and the corpus's Bulk Data
// export streamed with zero issues.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "quire/ndjson.h"
#include "test_support.h"

using namespace quire;

namespace {

struct seen {
  std::vector<uint64_t> resource_lines;
  std::vector<std::pair<uint64_t, error_code>> errors;
  std::vector<fhir::issue> issues;
};

result<ndjson::stats> stream(std::string_view text, size_t chunk, seen &s, const ndjson::options &opts = {}) {
  ndjson::reader r(opts);
  auto visit = [&](const ndjson::line_result &l) {
    if (l.error) s.errors.emplace_back(l.line, l.error->code);
    if (l.resource) s.resource_lines.push_back(l.line);
    // Invariants' issues aside (dom-6: Synthea and these fixtures write no narrative; txt-1/txt-2
    // not checked): fhir_invariants_test.cpp is theirs. Errors among them are kept.
    for (const auto &i : l.issues) {
      if (i.key.empty() || i.severity == fhir::severity::error) s.issues.push_back(i);
    }
    return true;
  };
  for (size_t at = 0; at < text.size(); at += chunk) {
    auto f = r.feed(text.substr(at, chunk), visit);
    if (!f) return std::move(f).error();
  }
  auto f = r.finish(visit);
  if (!f) return std::move(f).error();
  return r.counts();
}

}  // namespace

TEST_CASE("ndjson: blank lines, CRLF and whitespace-only lines are skipped, in chunks of any size", "[ndjson]") {
  std::string text = quire_test::read_text(quire_test::data_dir() / "ndjson" / "mixed.ndjson");
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, text.size()}) {
    INFO("chunk " << chunk);
    seen s;
    ndjson::options opts;
    opts.continue_on_error = true;
    auto r = stream(text, chunk, s, opts);
    REQUIRE(r);
    CHECK(s.resource_lines == std::vector<uint64_t>{1, 4, 6, 9});
    REQUIRE(s.errors.size() == 2);
    CHECK(s.errors[0] == std::pair<uint64_t, error_code>{7, error_code::INVALID_JSON});
    CHECK(s.errors[1] == std::pair<uint64_t, error_code>{8, error_code::INVALID_RESOURCE});
    REQUIRE(s.issues.size() == 1);
    CHECK(s.issues[0].line == 6);
    CHECK(s.issues[0].expression == "Patient.gender");
    CHECK(s.issues[0].column == 45);
    CHECK(r->lines == 9);
    CHECK(r->blank_lines == 3);
    CHECK(r->resources == 4);
    CHECK(r->bad_lines == 2);
    CHECK(r->invalid_resources == 1);
    CHECK(r->by_type.at("Patient") == 3);
    CHECK(r->by_type.at("Observation") == 1);
  }
}

TEST_CASE("ndjson: a bad line stops the stream unless continue_on_error", "[ndjson]") {
  std::string text = quire_test::read_text(quire_test::data_dir() / "ndjson" / "mixed.ndjson");
  seen s;
  auto r = stream(text, 5, s);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::INVALID_JSON);
  CHECK(r.error().line == 7);
  CHECK(r.error().column == 50);
  CHECK(r.error().offset == text.find("tru}"));
  CHECK(s.resource_lines == std::vector<uint64_t>{1, 4, 6});
}

TEST_CASE("ndjson: a line longer than max_line_bytes is LINE_TOO_LONG and memory stays bounded", "[ndjson]") {
  std::string big = R"({"resourceType":"Binary","contentType":"x/y","data":")" + std::string(100000, 'A') + "\"}";
  std::string text = "{\"resourceType\":\"Patient\"}\n" + big + "\n{\"resourceType\":\"Patient\"}\n";
  ndjson::options opts;
  opts.max_line_bytes = 4096;
  opts.continue_on_error = true;
  for (size_t chunk : {size_t{100}, size_t{5000}, text.size()}) {
    seen s;
    auto r = stream(text, chunk, s, opts);
    REQUIRE(r);
    CHECK(s.resource_lines == std::vector<uint64_t>{1, 3});
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0] == std::pair<uint64_t, error_code>{2, error_code::LINE_TOO_LONG});
  }
  seen s;
  opts.continue_on_error = false;
  auto r = stream(text, 1000, s, opts);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::LINE_TOO_LONG);
  CHECK(r.error().line == 2);
  CHECK(r.error().offset == 27);
}

TEST_CASE("ndjson: a callback that returns false stops the stream", "[ndjson]") {
  ndjson::reader r;
  int calls = 0;
  auto f = r.feed("{\"resourceType\":\"Patient\"}\n{\"resourceType\":\"Patient\"}\n",
                  [&](const ndjson::line_result &) { return ++calls < 1; });
  CHECK(f);
  CHECK(calls == 1);
  CHECK(r.stopped());
}

TEST_CASE("ndjson: read_all over a byte source", "[ndjson]") {
  std::string text = "{\"resourceType\":\"Patient\"}\n\n{\"resourceType\":\"Practitioner\"}";
  auto source = borrow_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  auto r = ndjson::read_all(*source, [](const ndjson::line_result &) { return true; });
  REQUIRE(r);
  CHECK(r->resources == 2);
  CHECK(r->by_type.size() == 2);
}

TEST_CASE("ndjson: the corpus's Bulk Data export streams with zero issues", "[ndjson][conformance]") {
  auto corpus = quire_test::corpus_dir();
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(corpus / "bulk-ndjson-synthea")) {
    auto name = e.path().filename().string();
    if (e.path().extension() == ".ndjson" && name != "log.ndjson")
      files.push_back(e.path());  // log.ndjson holds export events, not resources
  }
  std::sort(files.begin(), files.end());
  uint64_t total = 0;
  for (const auto &file : files) {
    INFO(file.filename().string());
    std::string text = quire_test::read_text(file);
    seen s;
    auto r = stream(text, 65536, s);
    REQUIRE(r);
    for (const auto &i : s.issues) UNSCOPED_INFO(i.expression << ": " << i.details);
    CHECK(s.issues.empty());
    CHECK(r->bad_lines == 0);
    CHECK(r->by_type.size() == 1);
    CHECK(r->by_type.begin()->first + ".000.ndjson" == file.filename().string());
    total += r->resources;
  }
  std::printf("ndjson conformance: %zu files, %llu resources\n", files.size(), static_cast<unsigned long long>(total));
  CHECK(total == 3889);
}
