// Version 6's SCALED_MIXED decimal pages (docs/format.md 1.6): plain decimals of differing
// fraction digits stored as integers at the page's most digits and each value's own. Texts print
// back byte for byte; sums, averages, bounds and filters answer as the same texts stored as text
// pages do; a page that lies is CORRUPT_BLOCK; the version is 6 only when the first chunk has such
// a page; stores take version-6 segments.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "quire/format.h"
#include "quire/store.h"
#include "store_stages.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

/// A balance as JavaScript prints cents / 100: `1234.5`, `1234.56`, `99998`, `-0.07`.
std::string js_balance(int64_t cents) {
  const bool negative = cents < 0;
  const uint64_t u = negative ? 0 - static_cast<uint64_t>(cents) : static_cast<uint64_t>(cents);
  std::string out = (negative ? "-" : "") + std::to_string(u / 100);
  const unsigned frac = static_cast<unsigned>(u % 100);
  if (frac) out += "." + std::to_string(frac / 10) + (frac % 10 ? std::to_string(frac % 10) : "");
  return out;
}

std::vector<std::string> balances(size_t n, uint64_t seed) {
  std::vector<std::string> out;
  uint64_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const auto cents = static_cast<int64_t>((x >> 33) % 2000000) - 300000;
    out.push_back(js_balance(cents));
  }
  return out;
}

/// Rows (id, d): id from `first_id`, d the texts (null where empty).
std::vector<uint8_t> write_decimals(const std::vector<std::string> &texts, int64_t first_id, write_options o,
                                    const std::vector<std::string> &prefix = {}) {
  schema sch;
  sch.columns = {{"id", column_type::integer}, {"d", column_type::decimal}};
  vector_sink sink;
  auto w = writer::create(sch, o, sink);
  REQUIRE(w);
  int64_t id = first_id - static_cast<int64_t>(prefix.size());
  for (const auto *list : {&prefix, &texts}) {
    for (const auto &t : *list) {
      std::vector<cell> row = {cell::of(id++), t.empty() ? cell::null() : cell::text(t)};
      REQUIRE(w.value()->append_row(row));
    }
  }
  REQUIRE(w.value()->finish());
  return std::move(sink.bytes);
}

std::string encodings_of(file &f, const std::string &column) {
  auto st = f.storage();
  REQUIRE(st);
  std::string out;
  for (const auto &c : st->columns)
    if (c.name == column)
      for (const auto &e : c.encodings) out += e.first + ",";
  return out;
}

std::string rows_of(file &f, const std::string &where = "") {
  query q;
  if (!where.empty()) q.where = parse_expression(where).value();
  q.columns = {"d"};
  auto r = f.query(q);
  if (!r) return std::string(error_name(r.code()));
  return r->json;
}

/// An aggregate's answers as one line ("ERROR_CODE" when it fails).
std::string sum_line(file &f, const std::string &where = "") {
  query q;
  if (!where.empty()) q.where = parse_expression(where).value();
  auto a = f.aggregate("d", q);
  if (!a) return std::string(error_name(a.code()));
  return std::to_string(a->count) + " " + a->exact_sum + " " + a->exact_avg + " " + a->min.s + " " + a->max.s;
}

}  // namespace

TEST_CASE("format mixed scale: decimals of differing places are stored scaled and print back exactly",
          "[format][decimal][mixed]") {
  // Negative, zero, `0.5`, `100`, `12.50` beside `12.5`, 18 digits at the page's places; nulls.
  const std::vector<std::string> texts = {"12.5",
                                          "12.50",
                                          "-3.07",
                                          "0",
                                          "0.5",
                                          "100",
                                          "",
                                          "-0.001",
                                          "99998",
                                          "0.000",
                                          "1234.56",
                                          "-7",
                                          "123456789012.345678",
                                          "-1.5",
                                          "-123456789012.34567",
                                          "",
                                          "7.1"};
  auto bytes = write_decimals(texts, 0, {});
  CHECK(bytes[6] == 6);
  CHECK(bytes[bytes.size() - 2] == 6);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(encodings_of(*f, "d").find("SCALED_MIXED+") != std::string::npos);
  std::string expected;
  for (const auto &t : texts) expected += "{\"d\":" + (t.empty() ? std::string("null") : t) + "}\n";
  CHECK(rows_of(*f) == expected);
  // One row at a time (a find's decoder, decode_page_value): the same texts.
  for (size_t i = 0; i < texts.size(); ++i) {
    query q;
    q.where = parse_expression("id = " + std::to_string(i)).value();
    q.columns = {"d"};
    q.limit = 1;
    auto r = f->query(q);
    REQUIRE(r);
    CHECK(r->json == "{\"d\":" + (texts[i].empty() ? std::string("null") : texts[i]) + "}\n");
  }
  auto cols = f->columns(query{});
  REQUIRE(cols);
  const auto &d = (*cols)[1];
  for (size_t i = 0; i < texts.size(); ++i)
    CHECK(d.text.substr(d.text_offsets[i], d.text_offsets[i + 1] - d.text_offsets[i]) == texts[i]);
}

TEST_CASE("format mixed scale: a page with a value that does not qualify stays text", "[format][decimal][mixed]") {
  // Each list has one value SCALED_MIXED cannot print back, or one past 18 digits at the page's
  // places (18 integer digits beside a value with a fraction).
  for (const auto &odd : {"1e3", "-0.0", "1234567890123456789", "123456789012345678"}) {
    INFO(odd);
    const std::vector<std::string> texts = {"12.5", "3.07", odd, "100"};
    auto bytes = write_decimals(texts, 0, {});
    CHECK(bytes[6] == 4);
    auto f = file::open(borrow_bytes(bytes));
    REQUIRE(f);
    CHECK(encodings_of(*f, "d") == "PLAIN_TEXT,");
    std::string expected;
    for (const auto &t : texts) expected += "{\"d\":" + std::string(t) + "}\n";
    CHECK(rows_of(*f) == expected);
  }
}

TEST_CASE("format mixed scale: sums, bounds and filters equal those of the same texts stored as text",
          "[format][decimal][mixed]") {
  // `mixed`: the balances alone (its first chunk has mixed pages: version 6). `text`: the same
  // balances after a first chunk of one scale (version 4, so their pages stay text), which the
  // filters leave out. Nulls in some pages, small pages so bounds cross pages and chunks.
  auto texts = balances(6000, 17);
  for (size_t i = 0; i < texts.size(); i += 37) texts[i].clear();
  texts[100] = "12.50";  // equal to a 12.5 written after it: the first is kept as a bound
  texts[4000] = "12.5";
  write_options o;
  o.chunk_rows = 2000;
  o.page_bytes = 512;
  const int64_t first = 1000;
  auto mixed_bytes = write_decimals(texts, first, o);
  auto text_bytes = write_decimals(texts, first, o, std::vector<std::string>(1000, "1.00"));
  CHECK(mixed_bytes[6] == 6);
  CHECK(text_bytes[6] == 4);
  auto mixed = file::open(borrow_bytes(mixed_bytes));
  auto text = file::open(borrow_bytes(text_bytes));
  REQUIRE(mixed);
  REQUIRE(text);
  CHECK(encodings_of(*mixed, "d").find("SCALED_MIXED") != std::string::npos);
  CHECK(encodings_of(*text, "d").find("SCALED_MIXED") == std::string::npos);
  const std::string all = "id >= " + std::to_string(first);
  CHECK(rows_of(*mixed) == rows_of(*text, all));
  CHECK(sum_line(*mixed) == sum_line(*text, all));
  for (const std::string where : {"d > 100", "d < 0", "d = 12.5", "id >= 1017 and id < 2500", "id < 1300", "id >= 6990",
                                  "d >= 15000 and d < 15100", "id > 99999"}) {
    INFO(where);
    CHECK(rows_of(*mixed, where) == rows_of(*text, all + " and " + where));
    CHECK(sum_line(*mixed, where) == sum_line(*text, all + " and " + where));
  }
  // Ordered by the decimal (keys from the texts), and the typed columns.
  for (bool descending : {false, true}) {
    query a, b;
    a.order_by = b.order_by = "d";
    a.descending = b.descending = descending;
    a.limit = b.limit = 300;
    b.where = parse_expression(all).value();
    auto ra = mixed->query(a), rb = text->query(b);
    REQUIRE(ra);
    REQUIRE(rb);
    CHECK(ra->json == rb->json);
  }
  {
    query a, b;
    a.columns = b.columns = {"d"};
    b.where = parse_expression(all).value();
    auto ca = mixed->columns(a), cb = text->columns(b);
    REQUIRE(ca);
    REQUIRE(cb);
    CHECK(ca->front().text == cb->front().text);
    CHECK(ca->front().text_offsets == cb->front().text_offsets);
    CHECK(ca->front().reals == cb->front().reals);
    CHECK(ca->front().valid == cb->front().valid);
  }
  // The oracle: the balances summed as cents, and the first least and greatest.
  int64_t cents = 0, lo = 0, hi = 0;
  std::string lo_text, hi_text;
  uint64_t count = 0;
  for (const auto &t : texts) {
    if (t.empty()) continue;
    const size_t dot = t.find('.');
    const bool negative = t[0] == '-';
    int64_t v = std::stoll(t.substr(0, dot)) * 100;
    if (dot != std::string::npos) {
      const std::string frac = (t.substr(dot + 1) + "0").substr(0, 2);
      v += (negative ? -1 : 1) * std::stoll(frac);
    }
    cents += v;
    if (!count || v < lo) lo = v, lo_text = t;
    if (!count || v > hi) hi = v, hi_text = t;
    ++count;
  }
  auto a = mixed->aggregate("d");
  REQUIRE(a);
  CHECK(a->count == count);
  const uint64_t u = cents < 0 ? 0 - static_cast<uint64_t>(cents) : static_cast<uint64_t>(cents);
  CHECK(a->exact_sum ==
        (cents < 0 ? "-" : "") + std::to_string(u / 100) + "." + std::to_string(100 + u % 100).substr(1));
  CHECK(a->min.s == lo_text);
  CHECK(a->max.s == hi_text);
}

TEST_CASE("format mixed scale: a filtered sum keeps the scale of the texts it selects", "[format][decimal][mixed]") {
  // One page of places 0..3; selecting only the values of fewer places gives their scale, not the
  // page's, as the same texts stored as text do (after a first chunk of one scale, left out).
  const std::vector<std::string> texts = {"1.5", "2", "3.125", "4.25", "-5", "6.5"};
  write_options o;
  o.chunk_rows = 6;
  auto mixed_bytes = write_decimals(texts, 0, o);
  auto text_bytes = write_decimals(texts, 0, o, std::vector<std::string>(6, "1.00"));
  auto mixed = file::open(borrow_bytes(mixed_bytes));
  auto text = file::open(borrow_bytes(text_bytes));
  REQUIRE(mixed);
  REQUIRE(text);
  CHECK(sum_line(*mixed).substr(0, 8) == "6 12.375");
  CHECK(sum_line(*mixed) == sum_line(*text, "id >= 0"));
  for (const std::string where : {"id in (0, 1, 4, 5)", "id in (1, 4)", "id in (1, 2)", "id = 3"}) {
    INFO(where);
    CHECK(sum_line(*mixed, where) == sum_line(*text, "id >= 0 and " + where));
  }
  CHECK(sum_line(*mixed, "id in (0, 1, 4, 5)").substr(0, 5) == "4 5.0");
  CHECK(sum_line(*mixed, "id in (1, 4)").substr(0, 5) == "2 -3 ");
  CHECK(sum_line(*mixed, "id in (1, 2)").substr(0, 8) == "2 5.125 ");
}

TEST_CASE("format mixed scale: a page that lies is CORRUPT_BLOCK", "[format][decimal][mixed][bad]") {
  // Three rows, `1.5`, `2.25` and `3` (distinct: no dictionary), one page too short to compress:
  // validity ALL, SCALED_MIXED, K 2, the integers 150 225 300 as RLE (zigzag 300 = AC 02, 450 =
  // C2 03, 600 = D8 04), the places 1 2 0 as RLE.
  schema sch;
  sch.columns = {{"id", column_type::integer}, {"d", column_type::decimal}};
  write_options o;
  o.indexes = {{"id", index_kind::hash}};
  vector_sink sink;
  auto w = writer::create(sch, o, sink);
  REQUIRE(w);
  REQUIRE(w.value()->append_row(std::vector<cell>{cell::of(int64_t{0}), cell::text("1.5")}));
  REQUIRE(w.value()->append_row(std::vector<cell>{cell::of(int64_t{1}), cell::text("2.25")}));
  REQUIRE(w.value()->append_row(std::vector<cell>{cell::of(int64_t{2}), cell::text("3")}));
  REQUIRE(w.value()->finish());
  const std::vector<uint8_t> page = {0, 6, 2, 3, 3, 0xAC, 2, 1, 0xC2, 3, 1, 0xD8, 4, 1, 3, 3, 2, 1, 4, 1, 0, 1};
  auto at = std::search(sink.bytes.begin(), sink.bytes.end(), page.begin(), page.end());
  REQUIRE(at != sink.bytes.end());
  const auto offset = static_cast<size_t>(at - sink.bytes.begin());
  open_options unchecked;  // the planted bytes carry no valid checksum: the decoder must stand alone
  unchecked.verify_checksums = false;
  auto answers = [&](const std::vector<uint8_t> &bytes, int64_t id) {
    auto f = file::open(borrow_bytes(bytes), unchecked);
    REQUIRE(f);
    std::string out = rows_of(*f) + "|";
    auto one = f->find("id", value::of(id));
    out += one ? (one->has_value() ? **one : std::string("none")) : std::string(error_name(one.code()));
    return out + "|" + sum_line(*f);
  };
  CHECK(answers(sink.bytes, 1) == "{\"d\":1.5}\n{\"d\":2.25}\n{\"d\":3}\n|{\"id\":1,\"d\":2.25}|3 6.75 2.250000 1.5 3");
  const std::string corrupt = "CORRUPT_BLOCK|CORRUPT_BLOCK|CORRUPT_BLOCK";
  SECTION("a value's places past the page's") {
    auto bad = sink.bytes;
    bad[offset + 18] = 6;  // row 1's places: zigzag 6 = 3, of a page of 2
    CHECK(answers(bad, 1) == corrupt);
  }
  SECTION("an integer that is not a multiple of its power of ten") {
    auto bad = sink.bytes;
    bad[offset + 5] = 0xAE;  // row 0: zigzag 302 = 151 at places 2, its own 1: not a multiple of 10
    CHECK(answers(bad, 0) == corrupt);
  }
  SECTION("page places no value has") {
    auto bad = sink.bytes;
    bad[offset + 2] = 3;  // K 3: row 1's 225 of places 2 would be 22.5 x 10^-2, not a whole
    CHECK(answers(bad, 1) == corrupt);
  }
  SECTION("page places past 18") {
    auto bad = sink.bytes;
    bad[offset + 2] = 19;
    CHECK(answers(bad, 1) == corrupt);
  }
}

TEST_CASE("format mixed scale: the version is decided by the first chunk", "[format][decimal][mixed]") {
  write_options o;
  o.chunk_rows = 100;
  // Uniform first chunk, mixed later ones: version 4's exact bytes for the same uniform rows, the
  // later pages text.
  std::vector<std::string> uniform(100, "2.50"), mixed = balances(200, 3);
  auto four = write_decimals(mixed, 100, o, uniform);
  CHECK(four[6] == 4);
  auto f4 = file::open(borrow_bytes(four));
  REQUIRE(f4);
  CHECK(encodings_of(*f4, "d").find("SCALED_MIXED") == std::string::npos);
  CHECK(encodings_of(*f4, "d").find("PLAIN_TEXT") != std::string::npos);
  // Mixed first: version 6, every mixed page of the file scaled (later chunks too).
  std::vector<std::string> again = mixed;
  again.insert(again.end(), uniform.begin(), uniform.end());
  auto six = write_decimals(again, 0, o);
  CHECK(six[6] == 6);
  auto f6 = file::open(borrow_bytes(six));
  REQUIRE(f6);
  const std::string enc = encodings_of(*f6, "d");
  CHECK(enc.find("SCALED_MIXED") != std::string::npos);
  CHECK(enc.find("PLAIN_TEXT") == std::string::npos);
  CHECK(sum_line(*f6) == sum_line(*f4));
  // A version this reader does not know: refused at the header's version.
  auto seven = six;
  seven[6] = 7;
  seven[seven.size() - 2] = 7;
  auto r = file::open(borrow_bytes(seven));
  REQUIRE(!r);
  CHECK(r.code() == error_code::UNSUPPORTED_VERSION);
  CHECK(r.error().offset == 6);
}

TEST_CASE("format mixed scale: two-level directories and mixed pages in one file", "[format][decimal][mixed]") {
  // 40,000 rows in one chunk of 512-byte pages: more than 128 pages a column (two-level, as version
  // 5 has them) and mixed decimal pages.
  write_options o;
  o.chunk_rows = 40000;
  o.page_bytes = 512;
  auto texts = balances(40000, 5);
  auto bytes = write_decimals(texts, 0, o);
  CHECK(bytes[6] == 6);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(f->verify());
  CHECK(sum_line(*f, "id = 31234").substr(0, 3 + texts[31234].size()) == "1 " + texts[31234] + " ");
  auto one = f->find("id", value::of(int64_t{31234}));
  REQUIRE(one);
  REQUIRE(one->has_value());
  CHECK(**one == "{\"id\":31234,\"d\":" + texts[31234] + "}");
}

TEST_CASE("format mixed scale: a store's version-6 segments verify, re-seal and compact",
          "[format][decimal][mixed][store]") {
  write_options wo;
  wo.chunk_rows = 2000;
  wo.page_bytes = 512;
  auto bytes = write_decimals(balances(5000, 9), 0, wo);
  REQUIRE(bytes[6] == 6);
  auto table = file::open(borrow_bytes(bytes));
  REQUIRE(table);
  store_options o;
  o.write = wo;
  o.owner_key = std::string(32, 'O');
  o.random = quire_test::seeded_random(11);
  const std::string all = rows_of(*table), sums = sum_line(*table);
  open_options oo;
  oo.key = o.owner_key;
  for (const auto &stage : quire_test::sealed_store_stages(*table, o)) {
    auto s = file::open(borrow_bytes(stage.bytes), oo);
    REQUIRE(s);
    CHECK(rows_of(*s) == all);
    CHECK(sum_line(*s) == sums);
    CHECK(encodings_of(*s, "d").find("SCALED_MIXED") != std::string::npos);
  }
}
