// Conformance over the shared corpus (hl7v2/converter and hl7v2/hapi): every message parses,
// the edge cases read as they should, and an ACK built for every message parses and matches.
// Without the corpus (a fresh clone) they fail, naming where it is expected.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "quire/hl7v2.h"
#include "test_support.h"

using namespace quire::hl7v2;
namespace fs = std::filesystem;

namespace {

fs::path hl7_corpus() { return quire_test::corpus_dir() / "hl7v2"; }

std::string lf_to_cr(std::string text) {
  std::replace(text.begin(), text.end(), '\n', '\r');
  return text;
}

// Checks an ACK of `m`: it parses, MSA-2 is the original control id, sender and receiver swapped.
void check_ack(const message &m, const std::string &name) {
  INFO(name);
  for (ack_code code : {ack_code::AA, ack_code::AE}) {
    ack_options o;
    o.timestamp = "20240101000000";
    o.text = "checked | by ^ quire";
    o.location = {"PID", 1, 3, 0, 0, 0};
    auto ack = build_ack(m, code, o);
    REQUIRE(ack.ok());
    auto a = parse(*ack);
    REQUIRE(a.ok());
    CHECK(a->get("MSA-1").value() == std::optional<std::string_view>(ack_code_name(code)));
    CHECK(a->get("MSA-2").value() == std::optional<std::string_view>(m.control_id()));
    CHECK(a->get_text("MSA-3").value() == std::optional<std::string>("checked | by ^ quire"));
    CHECK(a->sending_application() == m.receiving_application());
    CHECK(a->sending_facility() == m.receiving_facility());
    CHECK(a->receiving_application() == m.sending_application());
    CHECK(a->receiving_facility() == m.sending_facility());
    CHECK(a->type() == "ACK");
    CHECK(a->trigger() == m.trigger());
    CHECK(a->version() == m.version());
    CHECK(a->delimiters().to_string() == m.delimiters().to_string());
    CHECK(a->segment_count() == (code == ack_code::AA ? 2u : 3u));
  }
}

}  // namespace

TEST_CASE("hl7v2 conformance: every converter message parses, as stored (LF) and as wire format (CR)",
          "[hl7v2][conformance]") {
  const fs::path dir = hl7_corpus();
  size_t passed = 0, failed = 0, with_bom = 0;
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(dir / "converter"))
    if (e.path().extension() == ".hl7") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto &file : files) {
    INFO(file.filename().string());
    const std::string stored = quire_test::read_text(file);
    with_bom += stored.rfind("\xEF\xBB\xBF", 0) == 0 ? 1 : 0;
    const std::string wire = lf_to_cr(stored);
    auto a = parse(stored);
    auto b = parse(wire);
    if (!a.ok() || !b.ok()) {
      ++failed;
      CHECK(a.ok());
      CHECK(b.ok());
      continue;
    }
    ++passed;
    CHECK(a->skipped_lines() == 0);
    CHECK(a->segment_count() >= 2);
    CHECK(!a->type().empty());
    CHECK(a->to_json() == b->to_json());
    CHECK(a->segment_count() == b->segment_count());
    check_ack(*b, file.filename().string());
  }
  WARN("hl7v2 converter: " << passed << " passed, " << failed << " failed, of " << files.size() << " (" << with_bom
                           << " with a byte order mark)");
  CHECK(files.size() >= 100);
  CHECK(failed == 0);
}

TEST_CASE("hl7v2 conformance: hapi messages parse", "[hl7v2][conformance]") {
  const fs::path dir = hl7_corpus();
  struct expected {
    const char *name;
    size_t messages;
  };
  // example_oml_o21.hl7 is a file of 13 messages (an OML/OUL/ORL/ORU conversation), not one message.
  for (const expected e : {expected{"parser/adt_a03.txt", 1}, expected{"parser/cv.04_001_chem.hl7", 1},
                           expected{"parser/example_oml_o21.hl7", 13}, expected{"parser/omd_o03.txt", 1},
                           expected{"parser/omd_o03_rep.txt", 1}, expected{"util/segmentfinder_a24.hl7", 1}}) {
    INFO(e.name);
    const std::string text = quire_test::read_text(dir / "hapi" / e.name);
    auto b = parse_batch(text);
    REQUIRE(b.ok());
    CHECK(b->messages.size() == e.messages);
    CHECK(b->skipped_bytes == 0);
    for (const message &m : b->messages) {
      CHECK(m.skipped_lines() == 0);
      CHECK(m.to_json().size() > 10);
      check_ack(m, e.name);
    }
    if (e.messages == 1) CHECK(parse(text).ok());
  }
}

TEST_CASE("hl7v2 conformance: edge cases of the hapi files", "[hl7v2][conformance]") {
  const fs::path dir = hl7_corpus();
  SECTION("non-standard delimiters with CRLF") {
    const std::string text = quire_test::read_text(dir / "hapi/util/segmentfinder_a24.hl7");
    REQUIRE(text.find("\r\n") != std::string::npos);
    auto m = parse(text);
    REQUIRE(m.ok());
    CHECK(m->delimiters().to_string() == "^~|\\&");
    CHECK(m->segment_count() == 4);
    CHECK(m->get("PID[2]-1").value() == std::optional<std::string_view>("2"));
    CHECK(m->get_text("PID-3.6.1").value() == std::optional<std::string>("FACILITY ID"));
    CHECK(m->control_id() == "2003582144");
  }
  SECTION("a Z segment and MSH-18 8859/1") {
    const std::string text = quire_test::read_text(dir / "hapi/parser/cv.04_001_chem.hl7");
    auto m = parse(text);
    REQUIRE(m.ok());
    CHECK(m->charset() == charset::ISO_8859_1);
    CHECK(m->get("MSH-18").value() == std::optional<std::string_view>("8859/1"));
    CHECK(m->count("ZNT") >= 1);
    CHECK(m->type() == "ERP");
    CHECK(m->trigger() == "Z99");
    CHECK(m->structure() == "ERP_R09");
  }
  SECTION("CR terminators") {
    const std::string text = quire_test::read_text(dir / "hapi/parser/example_oml_o21.hl7");
    REQUIRE(text.find('\n') == std::string::npos);
    auto b = parse_batch(text);
    REQUIRE(b.ok());
    size_t segments = 0;
    for (const message &m : b->messages) segments += m.segment_count();
    CHECK(segments == 153);                                       // 179 CR-terminated lines, 26 of them blank
    CHECK(parse(text).code() == quire::error_code::INVALID_HL7);  // several messages: parse() says so
  }
  SECTION("the 85 KB escaped field decodes to exactly the uuencoded payload") {
    // uuencoded_escaped.txt is one field value (not a message) whose line breaks are written
    // \X0D\\X0A\; uuencoded.txt is the same payload stored with LF line ends, so the decoded
    // value equals it with each LF as CRLF, byte for byte.
    const std::string escaped = quire_test::read_text(dir / "hapi/parser/uuencoded_escaped.txt");
    std::string raw = quire_test::read_text(dir / "hapi/parser/uuencoded.txt");
    REQUIRE(escaped.size() == 85004);
    REQUIRE(raw.size() == 68774);
    std::string expected;
    for (char c : raw) {
      if (c == '\n') expected += '\r';
      expected += c;
    }
    auto un = unescape(escaped, delimiters{}, true);
    REQUIRE(un.ok());
    CHECK(un->size() == expected.size());
    CHECK(*un == expected);
    CHECK(escape(*un, delimiters{}).size() >= escaped.size());
    CHECK(unescape(escape(*un, delimiters{}), delimiters{}, true).value() == expected);
    // The same value as OBX-5 of a message, read through a path.
    const std::string msg = "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rOBX|1|ED|||" + escaped + "\r";
    auto m = parse(msg, parse_options{true});
    REQUIRE(m.ok());
    CHECK(m->get_text("OBX-5").value() == std::optional<std::string>(expected));
  }
  SECTION("the file of 18 messages with a comment header splits into 18") {
    const std::string text = quire_test::read_text(dir / "hapi/util/messages.txt");
    auto b = parse_batch(text);
    REQUIRE(b.ok());
    REQUIRE(b->messages.size() == 18);
    CHECK(b->envelope.empty());
    CHECK(b->skipped_bytes > 0);
    CHECK(b->messages[0].type() == "ORU");
    CHECK(b->messages[0].control_id() == "1994050216163360");
    CHECK(b->messages[1].delimiters().subcomponent == '}');
    CHECK(b->messages[2].type() == "ACK");
    CHECK(b->messages[3].delimiters().escape == '}');
    CHECK(b->messages[17].type() == "QRY");
    CHECK(b->messages[17].control_id() == "994983RIQ40112233548");
    for (size_t i = 0; i < b->messages.size(); ++i) {
      const message &m = b->messages[i];
      INFO("message " << i + 1);
      CHECK(m.segment(0).id() == "MSH");
      CHECK(m.skipped_lines() == 0);
      CHECK(m.bytes().back() != '\n');
      check_ack(m, "messages.txt #" + std::to_string(i + 1));
    }
    // Each message alone parses to the same thing.
    for (const message &m : b->messages) CHECK(parse(m.bytes()).value().to_json() == m.to_json());
    size_t control_ids = 0;
    for (const message &m : b->messages) control_ids += m.control_id().empty() ? 0 : 1;
    CHECK(control_ids == 18);
  }
}
