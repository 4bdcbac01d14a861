// The NDJSON reader's JSON texts: the counts in both documented namings, and what a feed gave.
#include <catch2/catch.hpp>

#include <string>

#include "quire/ndjson.h"

using namespace quire;

namespace {
ndjson::stats sample_stats() {
  ndjson::stats s;
  s.bytes = 120;
  s.lines = 4;
  s.blank_lines = 1;
  s.resources = 2;
  s.bad_lines = 1;
  s.invalid_resources = 1;
  s.issues = 3;
  s.longest_line = 60;
  s.by_type = {{"Observation", 1}, {"Patient", 1}};
  return s;
}
}  // namespace

TEST_CASE("ndjson stats_json: the npm package's camelCase and the CLI's snake_case", "[ndjson][json]") {
  const auto s = sample_stats();
  CHECK(ndjson::stats_json(s, ndjson::key_case::camel) ==
        "{\"bytes\":120,\"lines\":4,\"blankLines\":1,\"resources\":2,\"badLines\":1,\"invalidResources\":1,"
        "\"issues\":3,\"longestLine\":60,\"byType\":{\"Observation\":1,\"Patient\":1}}");
  CHECK(ndjson::stats_json(s, ndjson::key_case::snake, "a \"b\".ndjson") ==
        "{\"file\":\"a \\\"b\\\".ndjson\",\"bytes\":120,\"lines\":4,\"blank_lines\":1,\"resources\":2,"
        "\"bad_lines\":1,\"invalid_resources\":1,\"issues\":3,\"longest_line\":60,"
        "\"by_type\":{\"Observation\":1,\"Patient\":1}}");
  CHECK(ndjson::stats_json({}, ndjson::key_case::camel) ==
        "{\"bytes\":0,\"lines\":0,\"blankLines\":0,\"resources\":0,\"badLines\":0,\"invalidResources\":0,"
        "\"issues\":0,\"longestLine\":0,\"byType\":{}}");
}

TEST_CASE("ndjson feed_json: resources, bad lines and the feed's error", "[ndjson][json]") {
  ndjson::options o;
  o.continue_on_error = true;
  ndjson::reader r(o);
  ndjson::feed_json out;
  auto visit = [&](const ndjson::line_result &l) {
    out.add(l);
    return true;
  };
  out.begin();
  auto fed = r.feed("{\"resourceType\":\"Patient\",\"id\":\"p1\"}\nnot json\n{\"resourceType\":", visit);
  const std::string text = out.end(fed);
  CHECK(text.rfind("{\"items\":[{\"line\":1,\"offset\":0,\"resource\":{\"resourceType\":\"Patient\",\"id\":\"p1\"}},",
                   0) == 0);
  CHECK(text.find("{\"line\":2,\"error\":{\"code\":\"INVALID_JSON\",") != std::string::npos);
  const std::string_view end = "],\"error\":null}";
  REQUIRE(text.size() > end.size());
  CHECK(text.substr(text.size() - end.size()) == end);

  out.begin();
  ndjson::reader stopping;
  auto failed = stopping.feed("oops\n", visit);
  REQUIRE_FALSE(failed.ok());
  const std::string stopped = out.end(failed);
  CHECK(stopped.find("\"error\":{\"code\":\"INVALID_JSON\"") != std::string::npos);
  CHECK(stopped.find(",\"offset\":0,\"line\":1,") != std::string::npos);
}
