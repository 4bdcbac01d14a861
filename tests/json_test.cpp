// The JSON layer's API: walking, exact numbers, keys, pointers, errors with locations.
#include <catch2/catch.hpp>
#include <string>

#include "quire/json.h"
#include "test_support.h"

using namespace quire;

TEST_CASE("json: objects and arrays iterate in input order with their offsets") {
  auto doc = json::parse(R"({"a": [1, 2, 3], "b": {"c": "d"}, "a": true})");
  REQUIRE(doc);
  auto root = doc->root().get_object();
  REQUIRE(root);
  std::string keys;
  for (auto m : root.value()) keys += std::string(m.key) + ",";
  CHECK(keys == "a,b,a,");
  CHECK(root->size() == 3);
  auto a = root->find("a");
  REQUIRE(a);
  CHECK(a->offset() == 6);
  auto arr = a->get_array();
  REQUIRE(arr);
  CHECK(arr->size() == 3);
  int64_t sum = 0;
  for (auto v : arr.value()) sum += v.get_int64().value();
  CHECK(sum == 6);
  CHECK(root->find("b")->get_object()->find("c")->get_string().value() == "d");
  CHECK_FALSE(root->find("zzz").has_value());
  CHECK(doc->value_count() == 8);
  CHECK(doc->max_depth() == 2);
}

TEST_CASE("json: numbers keep their exact text") {
  auto doc = json::parse(R"([0.700, -1.50e+10, 123456789012345678901234567890, 0, -0, 1E400])");
  REQUIRE(doc);
  std::vector<std::string> texts;
  for (auto v : doc->root().get_array().value()) texts.emplace_back(v.get_number_text().value());
  CHECK(texts == std::vector<std::string>{"0.700", "-1.50e+10", "123456789012345678901234567890", "0", "-0", "1E400"});
  auto arr = doc->root().get_array().value();
  CHECK(arr.at(0)->get_double().value() == Approx(0.7));
  CHECK(arr.at(0)->get_int64().code() == error_code::WRONG_TYPE);
  CHECK(arr.at(2)->get_int64().code() == error_code::OUT_OF_RANGE);
  CHECK(arr.at(3)->get_int64().value() == 0);
  CHECK(std::isinf(arr.at(5)->get_double().value()));
  CHECK(json::to_json(doc->root()) == "[0.700,-1.50e+10,123456789012345678901234567890,0,-0,1E400]");
}

TEST_CASE("json: strings are unescaped, keys too") {
  auto doc = json::parse(R"({"k\u00e9y": "a\"b\\c\n\u00e9\ud83d\ude00"})");
  REQUIRE(doc);
  auto m = *doc->root().get_object()->begin();
  CHECK(m.key == "k\xc3\xa9y");
  CHECK(m.val.get_string().value() == "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(m.val.get_bool().code() == error_code::WRONG_TYPE);
  CHECK(json::to_json(doc->root()) == "{\"k\xc3\xa9y\":\"a\\\"b\\\\c\\n\xc3\xa9\xf0\x9f\x98\x80\"}");
}

namespace {
// append_quoted's bytes, written the plain way: one byte at a time, minimal escapes.
std::string quoted_byte_by_byte(const std::string &s) {
  static const char *hex = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c == '\b') out += "\\b";
    else if (c == '\f') out += "\\f";
    else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}
}  // namespace

TEST_CASE("json: append_quoted escapes every character that must be, wherever it is in the text") {
  // append_quoted tests eight bytes at a time and copies runs with nothing to escape in one piece:
  // each character that must be escaped, and some close to them that must not, alone and in
  // pairs, at every place of texts across several words, appended after earlier text.
  for (size_t length : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{20}}) {
    for (const std::string &c : quire_test::json_escape_specials()) {
      for (size_t at = 0; at < length; ++at) {
        for (size_t second : {length, (at + 5) % length}) {
          std::string text(length, 'a');
          text.replace(at, 1, c);
          if (second < length && second != at) text[second] = '"';
          INFO("character " << static_cast<int>(static_cast<unsigned char>(c[0])) << " at " << at << " of " << length);
          std::string out = "prefix";
          json::append_quoted(out, text);
          CHECK(out == "prefix" + quoted_byte_by_byte(text));
        }
      }
    }
  }
  std::string empty;
  json::append_quoted(empty, "");
  CHECK(empty == "\"\"");
}

TEST_CASE("json: scalar documents") {
  CHECK(json::parse("42")->root().get_int64().value() == 42);
  CHECK(json::parse(" \"x\" ")->root().get_string().value() == "x");
  CHECK(json::parse("true")->root().get_bool().value());
  CHECK(json::parse("null")->root().is_null());
  CHECK(json::parse("42 43").code() == error_code::TRAILING_CONTENT);
  CHECK(json::parse("true false").code() == error_code::TRAILING_CONTENT);
}

TEST_CASE("json: JSON Pointer") {
  auto doc = json::parse(R"({"a/b": {"m~n": [10, 20, {"x": null}]}})");
  REQUIRE(doc);
  auto v = doc->root().at_pointer("/a~1b/m~0n/1");
  REQUIRE(v);
  REQUIRE(v->has_value());
  CHECK((*v)->get_int64().value() == 20);
  CHECK(doc->root().at_pointer("/a~1b/m~0n/2/x").value()->is_null());
  CHECK_FALSE(doc->root().at_pointer("/nope").value().has_value());
  CHECK_FALSE(doc->root().at_pointer("/a~1b/m~0n/01").value().has_value());
  CHECK(doc->root().at_pointer("nope").code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("json: errors carry code, offset, line and column") {
  auto r = json::parse("{\n  \"a\": [1, 2,]\n}");
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::INVALID_JSON);
  CHECK(r.error().line == 2);
  CHECK(r.error().offset != error::NO_OFFSET);
  auto n = json::parse("[1, 01]");
  CHECK(n.code() == error_code::INVALID_NUMBER);
  CHECK(n.error().offset == 4);
  CHECK(n.error().column == 5);
  auto s = json::check(std::string_view("[\"a\xff\"]"));
  CHECK(s.code() == error_code::INVALID_UTF8);
  CHECK(s.error().offset == 3);
  CHECK(json::check(std::string_view("")).code() == error_code::EMPTY_INPUT);
  CHECK(json::check(std::string_view("   ")).code() == error_code::EMPTY_INPUT);
  CHECK(error(error_code::INVALID_NUMBER, "bad", 4).describe() == "INVALID_NUMBER at offset 4: bad");
}

TEST_CASE("json: check counts values by kind and the deepest nesting") {
  auto s = json::check(std::string_view(R"({"a":[1,"x",null,true,{"b":[[]]}]})"));
  REQUIRE(s);
  CHECK(s->objects == 2);
  CHECK(s->arrays == 3);
  CHECK(s->numbers == 1);
  CHECK(s->strings == 1);
  CHECK(s->nulls == 1);
  CHECK(s->booleans == 1);
  CHECK(s->keys == 2);
  CHECK(s->max_depth == 5);
  CHECK(s->values() == 9);
}

TEST_CASE("json: values stay valid when the document is moved") {
  auto r = json::parse(R"({"a": "b"})");
  REQUIRE(r);
  json::value v = r->root().get_object()->find("a").value();
  json::document moved = std::move(r).value();
  CHECK(v.get_string().value() == "b");
  CHECK(moved.root().get_object()->size() == 1);
}

TEST_CASE("json: a byte source with padding is parsed in place") {
  std::string text = R"({"n": 1.50})";
  text.append(64, '\0');
  auto src = borrow_bytes({reinterpret_cast<const uint8_t *>(text.data()), text.size() - 64}, 64);
  auto doc = json::parse(*src);
  REQUIRE(doc);
  CHECK(doc->input().data() == text.data());
  CHECK(doc->root().get_object()->find("n")->get_number_text().value() == "1.50");
  auto owned = own_bytes(std::vector<uint8_t>{'[', '1', ']'});
  CHECK(json::check(*owned)->numbers == 1);
}

TEST_CASE("json: parse_into reuses a document from one input to the next", "[json]") {
  json::document doc;
  // A long document first, then a shorter one in the same buffers: nothing of the first shows
  // through (value counts, depth, strings, offsets are the second's own).
  std::string longer = R"({"resourceType":"Patient","name":[{"family":"Okafor","given":["Ada","Bea"]}],"x":[[[1]]]})";
  REQUIRE(json::parse_into(doc, longer));
  CHECK(doc.max_depth() == 4);
  CHECK(doc.root().get_object()->find("name")->get_array()->size() == 1);
  REQUIRE(json::parse_into(doc, R"({"id":"p2","v":0.700})"));
  CHECK(doc.input() == R"({"id":"p2","v":0.700})");
  CHECK(doc.value_count() == 3);
  CHECK(doc.max_depth() == 1);
  auto root = doc.root().get_object();
  REQUIRE(root);
  CHECK(root->size() == 2);
  CHECK(root->find("id")->get_string().value() == "p2");
  CHECK(root->find("v")->get_number_text().value() == "0.700");
  CHECK(root->find("v")->offset() == 15);
  CHECK_FALSE(root->find("name").has_value());
  // A longer one again: the buffers grow.
  std::string big = "[";
  for (int i = 0; i < 1000; ++i) big += std::to_string(i) + ",";
  big += "1000]";
  REQUIRE(json::parse_into(doc, big));
  CHECK(doc.root().get_array()->size() == 1001);
  CHECK(doc.value_count() == 1002);
  // A failure is parse()'s error, and leaves an empty document (no stale values).
  auto bad = json::parse_into(doc, R"({"a": [1, 2,]})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == error_code::INVALID_JSON);
  CHECK(bad.error().code == json::parse(R"({"a": [1, 2,]})").error().code);
  CHECK(bad.error().offset == json::parse(R"({"a": [1, 2,]})").error().offset);
  CHECK(doc.value_count() == 0);
  CHECK(doc.input().empty());
  // And the document is usable again afterwards.
  REQUIRE(json::parse_into(doc, "[true]"));
  CHECK(doc.root().get_array()->size() == 1);
  json::limits small;
  small.max_document_bytes = 4;
  auto too_large = json::parse_into(doc, "[1,2,3]", small);
  REQUIRE_FALSE(too_large);
  CHECK(too_large.error().code == error_code::DOCUMENT_TOO_LARGE);
}
