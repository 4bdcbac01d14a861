// The JSON shape of a message (docs/hl7v2.md): inline cases for each rule, and golden files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "quire/hl7v2.h"
#include "test_support.h"

using namespace quire::hl7v2;

namespace {
std::string json_of(const std::string &text) {
  auto r = parse(text);
  REQUIRE(r.ok());
  return r->to_json();
}
std::string segments_of(const std::string &body) {
  const std::string msh = "MSH|^~\\&\r";
  const std::string json = json_of(msh + body);
  const std::string prefix = R"({"delimiters":"|^~\\&","segments":[{"id":"MSH","fields":["|","^~\\&"]},)";
  REQUIRE(json.substr(0, prefix.size()) == prefix);
  return json.substr(prefix.size(), json.size() - prefix.size() - 2);
}
}  // namespace

TEST_CASE("hl7v2 JSON: strings, repetitions, components, subcomponents", "[hl7v2][json]") {
  CHECK(segments_of("PID|a") == R"({"id":"PID","fields":["a"]})");
  CHECK(segments_of("PID|a~b") == R"({"id":"PID","fields":[["a","b"]]})");
  CHECK(segments_of("PID|a^b") == R"({"id":"PID","fields":[[["a","b"]]]})");
  CHECK(segments_of("PID|a&b") == R"({"id":"PID","fields":[[[["a","b"]]]]})");
  CHECK(segments_of("PID|a^b~c") == R"({"id":"PID","fields":[[["a","b"],"c"]]})");
  CHECK(segments_of("PID|a^b&c~") == R"({"id":"PID","fields":[[["a",["b","c"]]]]})");
}

TEST_CASE("hl7v2 JSON: empty trailing parts are dropped, inner ones kept", "[hl7v2][json]") {
  CHECK(segments_of("PID|a^|b~|c&^~") == R"({"id":"PID","fields":["a","b","c"]})");
  CHECK(segments_of("PID||x|||") == R"({"id":"PID","fields":["","x"]})");
  CHECK(segments_of("PID|^b") == R"({"id":"PID","fields":[[["","b"]]]})");
  CHECK(segments_of("PID|~b") == R"({"id":"PID","fields":[["","b"]]})");
  CHECK(segments_of("PID|^^~^") == R"({"id":"PID","fields":[]})");
  CHECK(segments_of("PID") == R"({"id":"PID","fields":[]})");
}

TEST_CASE("hl7v2 JSON: explicit null, escapes, control characters, non-ASCII", "[hl7v2][json]") {
  CHECK(segments_of("PID|\"\"|a\\S\\b") == R"({"id":"PID","fields":[null,"a^b"]})");
  CHECK(segments_of("NTE|x\\X01\\\\X1F\\\\.br\\\"q\"\\E\\") == R"({"id":"NTE","fields":["x\u0001\u001f\n\"q\"\\"]})");
  CHECK(segments_of("NTE|caf\xC3\xA9 \xFF") == "{\"id\":\"NTE\",\"fields\":[\"caf\xC3\xA9 \xEF\xBF\xBD\"]}");
}

TEST_CASE("hl7v2 JSON golden files", "[hl7v2][json][golden]") {
  const auto dir = quire_test::data_dir() / "hl7v2";
  size_t compared = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".hl7") continue;
    auto golden = entry.path();
    golden.replace_extension(".json");
    if (!std::filesystem::exists(golden)) continue;
    const std::string text = quire_test::read_text(entry.path());
    std::string expected = quire_test::read_text(golden);
    while (!expected.empty() && (expected.back() == '\n' || expected.back() == '\r')) expected.pop_back();
    auto r = parse(text);
    INFO(entry.path().string());
    REQUIRE(r.ok());
    CHECK(r->to_json() == expected);
    ++compared;
  }
  CHECK(compared >= 2);
}

TEST_CASE("hl7v2 JSON texts of segments, envelope and MLLP counters", "[hl7v2][json]") {
  const std::string text =
      "FHS|^~\\&|APP\rBHS|^~\\&\rMSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\rPID|1||7\"x\rBTS|1\rFTS|1\r";
  auto b = parse_batch(text);
  REQUIRE(b.ok());
  REQUIRE(b->messages.size() == 1);
  CHECK(segments_json(b->messages[0]) ==
        "[{\"id\":\"MSH\",\"fields\":12,\"offset\":22},{\"id\":\"PID\",\"fields\":3,\"offset\":65}]");
  CHECK(envelope_json(*b) == "[\"FHS|^~\\\\&|APP\",\"BHS|^~\\\\&\",\"BTS|1\",\"FTS|1\"]");

  mllp_decoder d(16);
  // Two bytes of noise, one whole frame (VT abc FS CR), then a frame begun (VT de).
  REQUIRE(d.feed(std::string_view("xx\vabc\x1c\r\vde")).ok());
  CHECK(stats_json(d) ==
        "{\"bytesFed\":11,\"skippedBytes\":2,\"droppedFrames\":0,\"framesWithoutCr\":0,\"bufferedBytes\":2,"
        "\"inFrame\":true}");
}
