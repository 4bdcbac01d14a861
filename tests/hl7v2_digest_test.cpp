// Identical results on every target, proven over the shared corpus: for every message of
// corpus/hl7v2, the FNV-1a 64 digest of its to_json() text and of its AA and AE ACKs must equal
// the checked-in table tests/data/hl7v2/corpus_digests.tsv. The same table is checked natively, in
// wasm (this test compiled with em++) and through the npm package (js/test/hl7.test.mjs).
// QUIRE_WRITE_GOLDEN=1 rewrites the table (run it natively). Without the corpus: warn and pass.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "quire/bench.h"
#include "quire/hl7v2.h"
#include "test_support.h"

using namespace quire::hl7v2;
namespace fs = std::filesystem;

namespace {

// The hapi files that hold messages (uuencoded*.txt are a field value and its payload).
const char *const HAPI_MESSAGE_FILES[] = {
    "parser/adt_a03.txt",     "parser/cv.04_001_chem.hl7", "parser/example_oml_o21.hl7", "parser/omd_o03.txt",
    "parser/omd_o03_rep.txt", "util/messages.txt",         "util/segmentfinder_a24.hl7"};

// The standard FNV-1a 64 offset basis, passed explicitly: quire::bench::digest's default seed
// differs from it, and the JS test computes plain FNV-1a 64.
constexpr uint64_t FNV_OFFSET_BASIS = 14695981039346656037ull;

std::string fnv1a64(std::string_view bytes) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, quire::bench::digest(bytes, FNV_OFFSET_BASIS));
  return buf;
}

// The ACK as the text a JavaScript caller receives: decoded from the message's charset to UTF-8.
std::string ack_digest(const message &m, ack_code code, const ack_options &o) {
  auto ack = build_ack(m, code, o);
  if (!ack) return "error:" + std::string(quire::error_name(ack.error().code));
  return fnv1a64(decode_text(*ack, m.charset(), false).value());
}

}  // namespace

TEST_CASE("hl7v2 digests: every corpus message's JSON and ACKs equal the checked-in table",
          "[hl7v2][conformance][digest]") {
  const fs::path dir = quire_test::corpus_dir() / "hl7v2";
  std::vector<std::string> files;
  for (const auto &e : fs::directory_iterator(dir / "converter"))
    if (e.path().extension() == ".hl7") files.push_back("converter/" + e.path().filename().string());
  std::sort(files.begin(), files.end());
  for (const char *f : HAPI_MESSAGE_FILES) files.push_back(std::string("hapi/") + f);

  ack_options ae;
  ae.timestamp = "20240101000000";
  ae.text = "checked | by ^ quire";
  ae.location = {"PID", 1, 3, 0, 0, 0};

  // name \t segments \t json digest \t AA ack digest \t AE ack digest; "#n" names the n-th message of a file of
  // several.
  std::string table = "# name\tsegments\tjson_fnv1a64\tack_aa_fnv1a64\tack_ae_fnv1a64\n";
  size_t messages = 0;
  for (const auto &name : files) {
    INFO(name);
    const std::string text = quire_test::read_text(dir / name);
    auto b = parse_batch(text);
    REQUIRE(b.ok());
    for (size_t i = 0; i < b->messages.size(); ++i) {
      const message &m = b->messages[i];
      const std::string row_name = b->messages.size() == 1 ? name : name + "#" + std::to_string(i + 1);
      table += row_name + "\t" + std::to_string(m.segment_count()) + "\t" + fnv1a64(m.to_json()) + "\t" +
               ack_digest(m, ack_code::AA, {}) + "\t" + ack_digest(m, ack_code::AE, ae) + "\n";
      ++messages;
    }
  }

  const fs::path golden = quire_test::data_dir() / "hl7v2" / "corpus_digests.tsv";
  if (std::getenv("QUIRE_WRITE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << table;
    WARN("wrote " << golden.string());
  }
  const std::string expected = quire_test::read_text(golden);
  // Row by row, so that a difference names the message.
  std::map<std::string, std::string> want, got;
  auto rows = [](const std::string &t, std::map<std::string, std::string> &out) {
    std::istringstream in(t);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '#') out[line.substr(0, line.find('\t'))] = line;
  };
  rows(expected, want);
  rows(table, got);
  size_t same = 0;
  for (const auto &[name, line] : got) {
    auto it = want.find(name);
    if (it != want.end() && it->second == line) ++same;
    else FAIL_CHECK(name << ": " << line << " — table says " << (it == want.end() ? "nothing" : it->second));
  }
  CHECK(want.size() == got.size());
  WARN("hl7v2 digests: " << same << " of " << messages << " messages as in the table, " << files.size() << " files");
  CHECK(messages >= 140);
}
