// The fast tape builder (core/src/json/json_tape.cpp) against the reference, the simdjson walk
// (json_walk.h): for every JSON document of the corpus and for hand-written edge cases, the fast
// builder alone either declines or builds exactly the reference's tape (every node field, the
// strings, the counts), and parse()/check() — fast with the walk behind it — give exactly the
// reference's tape or error (code, offset, message, line, column). The walk on the baseline
// kernel is held to the walk on the kernel in use (haswell natively on an AVX2 CPU) the same way.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "../core/src/json/json_internal.h"
#include "quire/json.h"
#include "test_support.h"

using namespace quire;
using json::tape_path;

namespace {

std::string describe_node(const json::detail::node &n) {
  std::string s = "{offset ";
  s += std::to_string(n.offset);
  s += ", start ";
  s += std::to_string(n.start);
  s += ", length ";
  s += std::to_string(n.length);
  s += ", next ";
  s += std::to_string(n.next);
  s += ", type ";
  s += std::to_string(n.type);
  s += ", flag ";
  s += std::to_string(n.flag);
  s += "}";
  return s;
}

// The first difference between two tapes, or "" when they are the same.
std::string tape_difference(const json::detail::tape_data &a, const json::detail::tape_data &b) {
  if (a.value_count != b.value_count) return "value_count";
  if (a.max_depth != b.max_depth) return "max_depth";
  if (a.strings != b.strings) return "strings";
  if (a.tape.size() != b.tape.size()) return "tape size";
  for (size_t i = 0; i < a.tape.size(); ++i) {
    const auto &x = a.tape[i];
    const auto &y = b.tape[i];
    if (x.offset != y.offset || x.start != y.start || x.length != y.length || x.next != y.next || x.type != y.type ||
        x.flag != y.flag) {
      std::string s = "node ";
      s += std::to_string(i);
      s += ": ";
      s += describe_node(x);
      s += " vs ";
      s += describe_node(y);
      return s;
    }
  }
  return "";
}

std::string error_text(const quire::error &e) {
  std::string s(error_name(e.code));
  s += " @";
  s += std::to_string(e.offset);
  s += " ";
  s += std::to_string(e.line);
  s += ":";
  s += std::to_string(e.column);
  s += " ";
  s += e.message;
  return s;
}

std::string stats_text(const json::stats &s) {
  std::string t;
  for (uint64_t v : {s.nulls, s.booleans, s.numbers, s.strings, s.arrays, s.objects, s.keys, s.max_depth, s.bytes}) {
    t += std::to_string(v);
    t += ",";
  }
  return t;
}

struct outcome {
  bool reference_ok = false;
  bool fast_ok = false;
};

// Runs every builder on `input`; each CHECK names the input. Returns what the reference and the
// fast builder alone made of it.
outcome compare(std::string_view input, const json::limits &lim = {}) {
  INFO("input: " << std::string(input.substr(0, 200)) << " (" << input.size() << " bytes)");
  json::detail::tape_data reference, fast, automatic;
  auto r = json::parse_tape(reference, input, lim, tape_path::reference_only);
  auto f = json::parse_tape(fast, input, lim, tape_path::fast_only);
  auto a = json::parse_tape(automatic, input, lim, tape_path::automatic);
  outcome o{r.ok(), f.ok()};
  if (f) {
    CHECK(r.ok());  // the fast builder never accepts what the reference rejects
    if (r) CHECK(tape_difference(reference, fast) == "");
  }
  // Borrowed input (a byte source's padded bytes) is followed by whatever the source holds: bytes
  // that would end a string, a container or a literal must change nothing.
  for (const char fill : {'"', ']', '}', ' ', 'e', '\\'}) {
    std::string padded(input);
    padded.append(64, fill);
    json::detail::tape_data borrowed;
    borrowed.input = std::string_view(padded.data(), input.size());
    borrowed.strings.reserve(input.size() + json::FAST_STRING_SLACK);
    borrowed.tape.reserve(json::tape_entries_bound(input));
    const bool ok = json::fast_build(borrowed.input, lim, borrowed);
    CHECK(ok == f.ok());
    if (ok && f) CHECK(tape_difference(fast, borrowed) == "");
  }
  CHECK(a.ok() == r.ok());
  if (a && r) CHECK(tape_difference(reference, automatic) == "");
  if (!a && !r) CHECK(error_text(a.error()) == error_text(r.error()));
  // The baseline kernel's walk against the one parse() uses (natively on an AVX2 CPU: haswell
  // against the baseline; in wasm both are the fallback kernel): the same tape, or the same error.
  json::detail::tape_data baseline;
  auto b = json::parse_tape(baseline, input, lim, tape_path::baseline_only);
  CHECK(b.ok() == r.ok());
  if (b && r) CHECK(tape_difference(reference, baseline) == "");
  if (!b && !r) CHECK(error_text(b.error()) == error_text(r.error()));

  auto cr = json::check_with(input, lim, tape_path::reference_only);
  auto cf = json::check_with(input, lim, tape_path::fast_only);
  auto ca = json::check_with(input, lim, tape_path::automatic);
  CHECK(cf.ok() == f.ok());  // the counting pass accepts exactly what the building one does
  if (cf) {
    CHECK(cr.ok());
    if (cr) CHECK(stats_text(cf.value()) == stats_text(cr.value()));
  }
  CHECK(ca.ok() == cr.ok());
  if (ca && cr) CHECK(stats_text(ca.value()) == stats_text(cr.value()));
  if (!ca && !cr) CHECK(error_text(ca.error()) == error_text(cr.error()));
  auto cb = json::check_with(input, lim, tape_path::baseline_only);
  CHECK(cb.ok() == cr.ok());
  if (cb && cr) CHECK(stats_text(cb.value()) == stats_text(cr.value()));
  if (!cb && !cr) CHECK(error_text(cb.error()) == error_text(cr.error()));
  return o;
}

bool is_json_file(const std::filesystem::path &p) {
  const auto ext = p.extension().string();
  return ext == ".json" || ext == ".ndjson";
}

}  // namespace

TEST_CASE("json tape: the fast builder and the reference agree on every JSON file of the corpus") {
  auto corpus = quire_test::corpus_dir();
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::recursive_directory_iterator(corpus)) {
    if (e.is_regular_file() && is_json_file(e.path())) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 900);
  size_t documents = 0, valid = 0, declined_valid = 0, lines = 0;
  for (const auto &path : files) {
    INFO(path.string());
    const std::string bytes = quire_test::read_text(path);
    const outcome o = compare(bytes);
    ++documents;
    if (o.reference_ok) {
      ++valid;
      // Valid documents (almost) never take the slow path: the corpus's never do, except
      // JSONTestSuite's y_ files the fast builder leaves to the reference on purpose.
      if (!o.fast_ok) {
        ++declined_valid;
        UNSCOPED_INFO("declined a valid document: " << path.filename().string());
      }
    }
    if (path.extension() == ".ndjson") {
      size_t begin = 0;
      while (begin < bytes.size()) {
        size_t end = bytes.find('\n', begin);
        if (end == std::string::npos) end = bytes.size();
        const outcome line = compare(std::string_view(bytes).substr(begin, end - begin));
        ++lines;
        CHECK(line.reference_ok);
        CHECK(line.fast_ok);
        begin = end + 1;
      }
    }
  }
  std::printf("json tape: %zu files (%zu valid, %zu valid ones declined by the fast builder), %zu NDJSON lines\n",
              documents, valid, declined_valid, lines);
  CHECK(declined_valid == 0);
  CHECK(lines > 3000);
}

TEST_CASE("json tape: escapes, surrogates and UTF-8") {
  // Every escape, accepted by both.
  CHECK(compare(R"(["\" \\ \/ \b \f \n \r \t"])").fast_ok);
  CHECK(compare(R"(["\u0041\u00e9\u00E9\u20ac\uFFFF\u0800\u07ff\u0080\u007f"])").fast_ok);
  CHECK(compare(R"(["\ud83c\udf00", "a\uD83D\uDE00b", "\uDBFF\uDFFF"])").fast_ok);
  CHECK(compare(R"({"k\u00e9y\n": "v", "\"": 1})").fast_ok);
  // \u0000 is a valid escape, so it is not declined.
  CHECK(compare(R"(["a\u0000b"])").reference_ok);
  compare(R"(["a\u0000b"])");
  // Lone and misordered surrogates, bad escapes: whatever the reference says, the fast builder
  // declines them.
  for (const char *s : {R"(["\ud800"])", R"(["\ud800x"])", R"(["\udc00"])", R"(["\ud800\u0041"])",
                        R"(["\ud800\ud800"])", R"(["\udfff\ud800"])", R"(["\u12"])", R"(["\u12g4"])", R"(["\x"])",
                        R"(["\'"])", R"(["\)", R"(["\u)", R"(["\ud800\u)", "[\"\\\xC3\xA9\"]"}) {
    CHECK_FALSE(compare(s).fast_ok);
  }
  // UTF-8: valid sequences of every length, at and around 16-byte block edges.
  CHECK(compare("[\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x8C\x80\xF4\x8F\xBF\xBF\xEF\xBF\xBF\"]").fast_ok);
  for (size_t pad = 0; pad < 20; ++pad) {
    CHECK(compare("[\"" + std::string(pad, 'a') + "\xF0\x9F\x8C\x80" + "z\"]").fast_ok);
    CHECK(compare("[\"" + std::string(pad, 'a') + "\xE2\x82\xAC\xC3\xA9\"]").fast_ok);
  }
  // Sequences cut short by a quote, a backslash or the end, at every place in a block; and long
  // runs of non-ASCII text.
  for (size_t pad = 0; pad < 20; ++pad) {
    const std::string a(pad, 'a');
    CHECK_FALSE(compare("[\"" + a + "\xE2\x82\"]").fast_ok);
    CHECK_FALSE(compare("[\"" + a + "\xF0\x9F\x8C\\n\"]").fast_ok);
    CHECK_FALSE(compare("[\"" + a + "\xC3").fast_ok);
    CHECK(compare("[\"" + a + "\xC3\xA9\\n\xE2\x82\xAC\"]").fast_ok);
  }
  std::string runs;
  for (int i = 0; i < 40; ++i) runs += "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x8C\x80";
  CHECK(compare("{\"" + runs + "\":\"" + runs + "x\"}").fast_ok);
  // Invalid UTF-8: overlong, surrogates, above U+10FFFF, truncated, stray continuation, bad lead
  // bytes, inside and outside strings.
  for (const char *s : {"[\"\xC0\xAF\"]", "[\"\xC1\xBF\"]", "[\"\xE0\x80\xAF\"]", "[\"\xED\xA0\x80\"]",
                        "[\"\xF0\x80\x80\xAF\"]", "[\"\xF4\x90\x80\x80\"]", "[\"\xF5\x80\x80\x80\"]", "[\"\xE2\x82\"]",
                        "[\"\xC3\"]", "[\"\x80\"]", "[\"\xFF\"]", "[\xC3\xA9]", "\xEF\xBB\xBF[1]", "[\"\xE2\x82"}) {
    const outcome o = compare(s);
    CHECK_FALSE(o.reference_ok);
    CHECK_FALSE(o.fast_ok);
  }
  // Control characters must be escaped; DEL need not be.
  CHECK_FALSE(compare(std::string("[\"a\x01\"]")).fast_ok);
  CHECK_FALSE(compare(std::string("[\"a\0b\"]", 7)).fast_ok);
  CHECK_FALSE(compare("[\"a\nb\"]").fast_ok);
  CHECK(compare("[\"a\x7F\"]").fast_ok);
}

TEST_CASE("json tape: numbers at every edge of the grammar") {
  for (const char *s :
       {"0",     "-0",        "1",      "-1",        "10",        "1234567890123456789012345678901234567890",
        "0.0",   "0.5",       "-0.5",   "1.25",      "1e5",       "1E5",
        "1e+5",  "1e-5",      "1.5e10", "-1.5E-10",  "0e0",       "0E+0",
        "1e400", "9.99e-400", "[0]",    "[-0,1,-1]", "[1.0e1,2]", "{\"a\":1e1}",
        " 1 ",   "\n12\t"}) {
    CHECK(compare(s).fast_ok);
  }
  for (const char *s : {"-",        "01",  "-01",       "00",    "1.",   ".5",    "1.e5", "1e",  "1e+",  "1e-",
                        "+1",       "1x",  "[1x]",      "1.5.3", "0x10", "1e5e5", "-a",   "[-]", "[1.]", "[01]",
                        "Infinity", "NaN", "-Infinity", "[1 2]", "1 2",  "[1,]",  "[,1]", "1,",  "2.",   "[2e]"}) {
    const outcome o = compare(s);
    CHECK_FALSE(o.reference_ok);
    CHECK_FALSE(o.fast_ok);
  }
}

TEST_CASE("json tape: structure, literals, whitespace and trailing content") {
  for (const char *s :
       {"{}", "[]", "[[]]", "[{}]", "{\"a\":{}}", "{\"a\":[]}", "[[],[[]],{}]", "true", "false", "null", "\"x\" ",
        "[1] ", "\"\"", "\"x\"", "[true,false,null]", "{\"\":\"\"}", " \t\r\n[ \t\r\n1 \t\r\n, \t\r\n2 ] \t\r\n",
        " { \"a\" : 1 , \"b\" : [ ] , \"c\" : { } } ", "{\"a\":1,\"a\":2}"}) {
    CHECK(compare(s).fast_ok);
  }
  // simdjson 3.0.1 judges a root literal by a few bytes after it (is_root_null reads json[5];
  // get_root_bool copies at most 6 bytes, so `true` and 3 spaces is "not a boolean"): the fast
  // builder declines root literals with anything after them, and whatever the reference says stands.
  for (const char *s : {"null ", "null  ", "null\n\n\n", "true ", "true  ", "true   ", "true    ", "false ", "false  ",
                        "false   ", " null", "\ttrue", "\n false"}) {
    compare(s);
  }
  // Pretty-printed, with indentation runs longer than a block.
  CHECK(compare("{\n" + std::string(40, ' ') + "\"a\": [\n" + std::string(33, '\t') + "1]\n}\n" + std::string(70, ' '))
            .fast_ok);
  for (const char *s :
       {"",        " ",          "\n\t ",       "[",         "]",        "{",          "}",    "[}",
        "{]",      "{\"a\"}",    "{\"a\":}",    "{\"a\" 1}", "{1:1}",    "{\"a\":1,}", "{,}",  "[1]]",
        "[1]x",    "{} {}",      "truex",       "tru",       "nul",      "fals",       "True", "[true false]",
        "[nulll]", "\"abc",      "[\"abc",      "[\"abc]",   "{\"a\":1", "[1,",        "[1",   "'a'",
        "[null,]", "{\"a\":1}}", "\"a\" \"b\"", "1 x",       "[] ,",     "null null"}) {
    const outcome o = compare(s);
    CHECK_FALSE(o.reference_ok);
    CHECK_FALSE(o.fast_ok);
  }
}

TEST_CASE("json tape: depth exactly at the limit and one past it") {
  auto nested = [](size_t depth, bool objects) {
    std::string s;
    for (size_t i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
    s += "1";
    for (size_t i = 0; i < depth; ++i) s += objects ? "}" : "]";
    return s;
  };
  json::limits lim;
  lim.max_depth = 8;
  CHECK(compare(nested(8, false), lim).fast_ok);
  CHECK(compare(nested(8, true), lim).fast_ok);
  CHECK_FALSE(compare(nested(9, false), lim).reference_ok);
  CHECK_FALSE(compare(nested(9, true), lim).fast_ok);
  lim.max_depth = 0;
  CHECK(compare("1", lim).fast_ok);
  CHECK_FALSE(compare("[]", lim).reference_ok);
  const json::limits defaults;
  CHECK(compare(nested(json::limits::DEFAULT_MAX_DEPTH, false), defaults).fast_ok);
  CHECK_FALSE(compare(nested(json::limits::DEFAULT_MAX_DEPTH + 1, false), defaults).reference_ok);
  CHECK_FALSE(compare(nested(json::limits::DEFAULT_MAX_DEPTH + 1, true), defaults).fast_ok);
  // A caller's limit above the walk's hard cap (4096) is cut to it by both.
  json::limits deep;
  deep.max_depth = 100000;
  CHECK(compare(nested(4096, false), deep).fast_ok);
  CHECK_FALSE(compare(nested(4097, false), deep).reference_ok);
}

TEST_CASE("json tape: strings around 16-byte block edges and the end of the input") {
  for (size_t n : {0, 1, 14, 15, 16, 17, 30, 31, 32, 33, 47, 48, 49, 63, 64, 65, 100}) {
    const std::string s(n, 'x');
    CHECK(compare("\"" + s + "\"").fast_ok);
    CHECK(compare("[\"" + s + "\"]").fast_ok);
    CHECK(compare("{\"" + s + "\":\"" + s + "\"}").fast_ok);
    // An escape just before, at and after each edge.
    for (size_t at : {n > 0 ? n - 1 : 0, n}) {
      std::string e = s;
      e.insert(at, "\\n");
      CHECK(compare("[\"" + e + "\",\"" + e + "\"]").fast_ok);
      std::string u = s;
      u.insert(at, "\\u00e9");
      CHECK(compare("[\"" + u + "\"]").fast_ok);
    }
    // Unterminated strings ending at block edges.
    CHECK_FALSE(compare("\"" + s).fast_ok);
    CHECK_FALSE(compare("[\"" + s).fast_ok);
    CHECK_FALSE(compare("[\"" + s + "\\").fast_ok);
    // Inputs that end at a block edge, with the document's last byte there.
    const std::string doc = "[" + std::string(n, ' ') + "1]";
    CHECK(compare(doc).fast_ok);
    CHECK(compare(std::string(n, ' ') + "null").fast_ok);
    CHECK_FALSE(compare(std::string(n, ' ') + "nul").fast_ok);
    CHECK(compare(std::string(n, '\n') + "123" + std::string(n, ' ')).fast_ok);
  }
}

TEST_CASE("json tape: parse_into reuses its buffers and gives the reference's tapes in turn") {
  // Lines of different sizes one after another through one document: a shorter line after a
  // longer one must not see the longer one's strings or tape.
  const std::vector<std::string> lines = {R"({"resourceType":"Patient","id":"a-long-identifier-here","active":true})",
                                          R"({"a":"b"})",
                                          R"([1,2,3,"\u00e9"])",
                                          R"({"bad":)",
                                          R"("x")",
                                          R"({"name":[{"given":["Ann","Marie"],"family":"O\"Brien"}]})"};
  json::document doc;
  for (const auto &line : lines) {
    INFO(line);
    auto into = json::parse_into(doc, line);
    auto fresh = json::parse(line);
    REQUIRE(into.ok() == fresh.ok());
    if (!into) {
      CHECK(error_text(into.error()) == error_text(fresh.error()));
      continue;
    }
    CHECK(json::to_json(doc.root()) == json::to_json(fresh->root()));
    CHECK(doc.value_count() == fresh->value_count());
    CHECK(doc.max_depth() == fresh->max_depth());
  }
}

TEST_CASE("json tape: the tape bound counts every , : [ { at every length and alignment") {
  // The bound sizes the tape before either parser writes it: one short is a write past the
  // reservation. In wasm it is counted 16 bytes at a time, then byte by byte for the rest.
  std::string bytes;
  uint32_t state = 12345;
  for (size_t i = 0; i < 600; ++i) {
    state = state * 1103515245u + 12345u;
    static const char alphabet[] = ",:[{]}\" a\x80\xff\n0";
    bytes += alphabet[(state >> 16) % (sizeof alphabet - 1)];
  }
  for (size_t start = 0; start < 17; ++start) {
    for (size_t length = 0; start + length <= bytes.size(); length += (length < 80 ? 1 : 37)) {
      const std::string_view s = std::string_view(bytes).substr(start, length);
      size_t expected = 1;
      for (const char c : s) expected += (c == ',' || c == ':' || c == '[' || c == '{') ? 1 : 0;
      INFO("start " << start << ", length " << length);
      REQUIRE(json::tape_entries_bound(s) == expected);
    }
  }
}
