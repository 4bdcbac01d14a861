// MLLP framing: encoding, streaming decoding in chunks of any size, garbage, oversize frames.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "quire/hl7v2.h"

using namespace quire::hl7v2;
using quire::error_code;

namespace {
std::vector<std::string> drain(mllp_decoder &d) {
  std::vector<std::string> out;
  while (auto f = d.next_frame()) out.push_back(std::move(*f));
  return out;
}
}  // namespace

TEST_CASE("hl7v2 mllp_encode frames a message", "[hl7v2][mllp]") {
  CHECK(mllp_encode("MSH|x\r") == std::string("\x0BMSH|x\r\x1C\r"));
  CHECK(mllp_encode("") == std::string("\x0B\x1C\r"));
}

TEST_CASE("hl7v2 mllp_decoder yields frames fed in chunks of every size", "[hl7v2][mllp]") {
  const std::string a = "MSH|^~\\&|A\rPID|1\r", b = "MSH|^~\\&|B\r", c;
  const std::string stream = mllp_encode(a) + mllp_encode(b) + mllp_encode(c);
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    mllp_decoder d;
    std::vector<std::string> got;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      REQUIRE(d.feed(std::string_view(stream).substr(i, chunk)).ok());
      for (auto &f : drain(d)) got.push_back(f);
    }
    REQUIRE(got.size() == 3);
    CHECK(got[0] == a);
    CHECK(got[1] == b);
    CHECK(got[2] == c);
    CHECK(d.skipped_bytes() == 0);
    CHECK(!d.in_frame());
    CHECK(d.bytes_fed() == stream.size());
  }
}

TEST_CASE("hl7v2 mllp_decoder skips garbage between frames and counts it", "[hl7v2][mllp]") {
  mllp_decoder d;
  const std::string stream = "junk" + mllp_encode("one") + "\r\n\r\n" + mllp_encode("two") + "tail";
  REQUIRE(d.feed(stream).ok());
  const auto got = drain(d);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == "one");
  CHECK(got[1] == "two");
  CHECK(d.skipped_bytes() == 4 + 4 + 4);
}

TEST_CASE("hl7v2 mllp_decoder resynchronises at a new VT inside a frame", "[hl7v2][mllp]") {
  mllp_decoder d;
  REQUIRE(d.feed(std::string("\x0B"
                             "cut short") +
                 mllp_encode("whole"))
              .ok());
  const auto got = drain(d);
  REQUIRE(got.size() == 1);
  CHECK(got[0] == "whole");
  CHECK(d.skipped_bytes() == 10);
}

TEST_CASE("hl7v2 mllp_decoder accepts FS without CR", "[hl7v2][mllp]") {
  mllp_decoder d;
  REQUIRE(d.feed(std::string("\x0B"
                             "a\x1C\x0B"
                             "b\x1C\r"))
              .ok());
  const auto got = drain(d);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == "a");
  CHECK(got[1] == "b");
  CHECK(d.frames_without_cr() == 1);
}

TEST_CASE("hl7v2 mllp_decoder drops oversized frames and recovers", "[hl7v2][mllp]") {
  const std::string big(100, 'x');
  const std::string stream = mllp_encode("ok1") + mllp_encode(big) + mllp_encode("ok2");
  SECTION("one chunk") {
    mllp_decoder d(16);
    auto r = d.feed(stream);
    REQUIRE(!r.ok());
    CHECK(r.code() == error_code::FRAME_TOO_LARGE);
    CHECK(r.error().offset == 6);
    const auto got = drain(d);
    REQUIRE(got.size() == 2);
    CHECK(got[0] == "ok1");
    CHECK(got[1] == "ok2");
    CHECK(d.dropped_frames() == 1);
    CHECK(d.skipped_bytes() == big.size() + 3);
    CHECK(d.buffered_bytes() == 0);
  }
  SECTION("byte by byte, memory stays bounded") {
    mllp_decoder d(16);
    size_t errors = 0;
    std::vector<std::string> got;
    for (char c : stream) {
      if (!d.feed(std::string_view(&c, 1)).ok()) ++errors;
      CHECK(d.buffered_bytes() <= 16);
      for (auto &f : drain(d)) got.push_back(f);
    }
    CHECK(errors == 1);
    REQUIRE(got.size() == 2);
    CHECK(got[1] == "ok2");
    CHECK(d.skipped_bytes() == big.size() + 3);
  }
  SECTION("a frame of exactly the limit passes") {
    mllp_decoder d(3);
    REQUIRE(d.feed(mllp_encode("abc")).ok());
    CHECK(d.next_frame() == std::optional<std::string>("abc"));
    CHECK(d.feed(mllp_encode("abcd")).code() == error_code::FRAME_TOO_LARGE);
    d.reset();
    CHECK(d.bytes_fed() == 0);
    CHECK(d.ready_frames() == 0);
  }
}

TEST_CASE("hl7v2 mllp round trip with parse and build_ack", "[hl7v2][mllp]") {
  const std::string msg = "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|42|P|2.5\rPID|1\r";
  mllp_decoder d;
  REQUIRE(d.feed(mllp_encode(msg)).ok());
  auto frame = d.next_frame();
  REQUIRE(frame);
  auto m = parse(*frame);
  REQUIRE(m.ok());
  auto ack = build_ack(*m, ack_code::AA);
  REQUIRE(ack.ok());
  REQUIRE(d.feed(mllp_encode(*ack)).ok());
  const auto ack_frame = d.next_frame();
  REQUIRE(ack_frame);
  auto back = parse(*ack_frame);
  REQUIRE(back.ok());
  CHECK(back->get("MSA-2").value() == std::optional<std::string_view>("42"));
}
