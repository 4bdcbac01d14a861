// The query engine against a brute-force scan of the same rows: every operator, random and/or/not
// trees (seeded), with and without indexes, in file order and ordered; explain's counters prove
// chunk skipping by statistics, by Bloom filters and by indexes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"

using namespace quire;
using namespace quire::format;

namespace {

struct row {
  int64_t id;
  std::optional<int64_t> a;
  std::optional<double> r;
  std::optional<std::string> s;
  std::optional<std::string> t;
  std::optional<bool> b;
  std::optional<int64_t> ts;  // microseconds
};

struct prng {
  uint64_t x;
  uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
  int64_t in(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }
};

const char *WORDS[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"};
const char *SYLLABLES[] = {"ok", "af", "or", "an", "ka", "mi", "zu", "re", "lo", "ti"};

std::vector<row> make_rows(size_t n, uint64_t seed) {
  prng g{seed};
  std::vector<row> rows;
  for (size_t i = 0; i < n; ++i) {
    row x;
    x.id = static_cast<int64_t>(i);
    if (!g.chance(10)) x.a = g.in(-50, 200);
    if (!g.chance(10)) x.r = static_cast<double>(g.in(-1000, 1000)) / 8.0;
    if (!g.chance(10)) x.s = WORDS[g.next() % 8];
    if (!g.chance(5)) {
      std::string t;
      int len = static_cast<int>(g.in(1, 6));
      for (int k = 0; k < len; ++k) t += SYLLABLES[g.next() % 10];
      x.t = t;
    }
    if (!g.chance(20)) x.b = g.chance(50);
    if (!g.chance(10)) x.ts = 1600000000000000LL + g.in(0, 1000) * 3600000000LL;
    rows.push_back(std::move(x));
  }
  return rows;
}

schema test_schema() {
  return {{{"id", column_type::integer},
           {"a", column_type::integer},
           {"r", column_type::float64},
           {"s", column_type::string},
           {"t", column_type::string},
           {"b", column_type::boolean},
           {"ts", column_type::timestamp}}};
}

std::vector<uint8_t> write(const std::vector<row> &rows, write_options o) {
  vector_sink sink;
  auto w = writer::create(test_schema(), o, sink);
  REQUIRE(w);
  std::vector<cell> cells;
  for (const auto &x : rows) {
    cells = {cell::of(x.id),
             x.a ? cell::of(*x.a) : cell::null(),
             x.r ? cell::of(*x.r) : cell::null(),
             x.s ? cell::text(*x.s) : cell::null(),
             x.t ? cell::text(*x.t) : cell::null(),
             x.b ? cell::of(*x.b) : cell::null(),
             x.ts ? cell::of(*x.ts) : cell::null()};
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  return std::move(sink.bytes);
}

// --- random filters and their brute-force meaning ----------------------------------------------

filter leaf(prng &g) {
  filter f;
  static const filter::op CMP[] = {filter::op::eq, filter::op::ne, filter::op::lt,
                                   filter::op::le, filter::op::gt, filter::op::ge};
  int column = static_cast<int>(g.next() % 7);
  int kind = static_cast<int>(g.next() % 10);
  auto cmp = CMP[g.next() % 6];
  switch (column) {
    case 0:
      f.column = "id";
      if (kind < 4) {
        f.o = filter::op::eq;
        f.values = {value::of(g.in(-5, 3100))};
      } else if (kind < 6) {
        f.o = filter::op::in;
        for (int k = 0; k < 4; ++k) f.values.push_back(value::of(g.in(0, 3100)));
      } else if (kind < 8) {
        f.o = filter::op::between;
        int64_t lo = g.in(0, 3000);
        f.values = {value::of(lo), value::of(lo + g.in(0, 300))};
      } else {
        f.o = cmp;
        f.values = {value::of(g.in(0, 3000))};
      }
      break;
    case 1:
      f.column = "a";
      if (kind == 0) f.o = filter::op::is_null;
      else if (kind == 1) f.o = filter::op::is_not_null;
      else if (kind == 2) {
        f.o = filter::op::in;
        f.values = {value::of(g.in(-50, 200)), value::of(g.in(-50, 200)), value::null()};
      } else if (kind == 3) {
        f.o = filter::op::between;
        f.values = {value::of(g.in(-60, 100)), value::of(g.in(50, 210))};
      } else if (kind == 4) {
        f.o = cmp;
        f.values = {value::of(static_cast<double>(g.in(-100, 400)) / 2.0)};
      } else {
        f.o = cmp;
        f.values = {value::of(g.in(-60, 210))};
      }
      break;
    case 2:
      f.column = "r";
      if (kind == 0) f.o = filter::op::is_null;
      else if (kind < 3) {
        f.o = filter::op::between;
        f.values = {value::of(static_cast<double>(g.in(-1000, 0)) / 8), value::of(g.in(0, 130))};
      } else {
        f.o = cmp;
        f.values = {value::of(static_cast<double>(g.in(-1100, 1100)) / 8.0)};
      }
      break;
    case 3:
      f.column = "s";
      if (kind == 0) f.o = filter::op::is_null;
      else if (kind < 4) {
        f.o = filter::op::in;
        f.values = {value::text(WORDS[g.next() % 8]), value::text("omega")};
      } else if (kind < 6) {
        f.o = filter::op::starts_with;
        f.values = {value::text(std::string(WORDS[g.next() % 8]).substr(0, static_cast<size_t>(g.in(0, 3))))};
      } else {
        f.o = cmp;
        f.values = {value::text(g.chance(80) ? WORDS[g.next() % 8] : "d")};
      }
      break;
    case 4: {
      f.column = "t";
      std::string p;
      int len = static_cast<int>(g.in(0, 3));
      for (int k = 0; k < len; ++k) p += SYLLABLES[g.next() % 10];
      if (kind < 2) p = p.substr(0, 1);
      if (kind < 6) {
        f.o = filter::op::contains;
        f.values = {value::text(p)};
      } else if (kind < 8) {
        f.o = filter::op::starts_with;
        f.values = {value::text(p)};
      } else {
        f.o = cmp;
        f.values = {value::text(p)};
      }
      break;
    }
    case 5:
      f.column = "b";
      if (kind == 0) f.o = filter::op::is_null;
      else {
        f.o = kind < 6 ? filter::op::eq : filter::op::ne;
        f.values = {value::of(g.chance(50))};
      }
      break;
    default:
      f.column = "ts";
      if (kind == 0) f.o = filter::op::is_not_null;
      else {
        f.o = cmp;
        std::string iso = "2020-09-" + std::to_string(13 + g.in(0, 40) % 17) + "T12:26:40Z";
        f.values = {value::text(iso)};
      }
      break;
  }
  return f;
}

filter tree(prng &g, int depth) {
  if (depth == 0 || g.chance(40)) return leaf(g);
  filter f;
  int k = static_cast<int>(g.next() % 3);
  f.o = k == 0 ? filter::op::and_ : k == 1 ? filter::op::or_ : filter::op::not_;
  int n = f.o == filter::op::not_ ? 1 : static_cast<int>(g.in(2, 3));
  for (int i = 0; i < n; ++i) f.children.push_back(tree(g, depth - 1));
  return f;
}

int64_t ts_of(const std::string &iso) {
  // Only the forms leaf() makes: 2020-09-DDT12:26:40Z.
  int day = std::stoi(iso.substr(8, 2));
  return (18518LL + (day - 13)) * 86400000000LL + 44800000000LL;
}

template <typename T>
bool compare(filter::op o, const T &v, const T &x) {
  switch (o) {
    case filter::op::eq: return v == x;
    case filter::op::ne: return v != x;
    case filter::op::lt: return v < x;
    case filter::op::le: return v <= x;
    case filter::op::gt: return v > x;
    case filter::op::ge: return v >= x;
    default: return false;
  }
}

bool matches(const filter &f, const row &x) {
  switch (f.o) {
    case filter::op::and_:
      return std::all_of(f.children.begin(), f.children.end(), [&](const filter &c) { return matches(c, x); });
    case filter::op::or_:
      return std::any_of(f.children.begin(), f.children.end(), [&](const filter &c) { return matches(c, x); });
    case filter::op::not_: return !matches(f.children[0], x);
    default: break;
  }
  // The column's value as a double (numbers), a string, or absent.
  std::optional<double> num;
  std::optional<std::string> text;
  bool present = true;
  if (f.column == "id") num = static_cast<double>(x.id);
  else if (f.column == "a") {
    present = x.a.has_value();
    if (present) num = static_cast<double>(*x.a);
  } else if (f.column == "r") {
    present = x.r.has_value();
    if (present) num = *x.r;
  } else if (f.column == "s") {
    present = x.s.has_value();
    if (present) text = *x.s;
  } else if (f.column == "t") {
    present = x.t.has_value();
    if (present) text = *x.t;
  } else if (f.column == "b") {
    present = x.b.has_value();
    if (present) num = *x.b ? 1 : 0;
  } else if (f.column == "ts") {
    present = x.ts.has_value();
    if (present) num = static_cast<double>(*x.ts);
  }
  if (f.o == filter::op::is_null) return !present;
  if (f.o == filter::op::is_not_null) return present;
  if (!present) return false;
  auto as_num = [&](const value &v) {
    if (v.k == value::kind::integer) return static_cast<double>(v.i);
    if (v.k == value::kind::boolean) return v.b ? 1.0 : 0.0;
    if (v.k == value::kind::text) return static_cast<double>(ts_of(v.s));
    return v.d;
  };
  switch (f.o) {
    case filter::op::contains: return text->find(f.values[0].s) != std::string::npos;
    case filter::op::starts_with: return text->compare(0, f.values[0].s.size(), f.values[0].s) == 0;
    case filter::op::in:
      for (const auto &v : f.values) {
        if (v.k == value::kind::null_value) continue;
        if (text ? *text == v.s : *num == as_num(v)) return true;
      }
      return false;
    case filter::op::between:
      if (text) return *text >= f.values[0].s && *text <= f.values[1].s;
      return *num >= as_num(f.values[0]) && *num <= as_num(f.values[1]);
    default:
      if (text) return compare(f.o, *text, f.values[0].s);
      return compare(f.o, *num, as_num(f.values[0]));
  }
}

std::vector<int64_t> ids_of(const std::string &ndjson) {
  std::vector<int64_t> ids;
  size_t at = 0;
  while ((at = ndjson.find("{\"id\":", at)) != std::string::npos) {
    at += 6;
    ids.push_back(std::stoll(ndjson.substr(at, 12)));
  }
  return ids;
}

void check_against_scan(const std::vector<row> &rows, write_options o, uint64_t seed, int trials) {
  auto bytes = write(rows, o);
  auto opened = file::open(borrow_bytes(bytes));
  REQUIRE(opened);
  file &f = *opened;
  prng g{seed};
  for (int trial = 0; trial < trials; ++trial) {
    filter flt = tree(g, 3);
    std::vector<int64_t> expected;
    for (const auto &x : rows)
      if (matches(flt, x)) expected.push_back(x.id);
    query q;
    q.where = flt;
    q.columns = {"id"};
    auto e = f.explain(q, false);
    INFO("trial " << trial << ": " << (e ? to_json(*e) : e.error().describe()));
    auto got = f.query(q);
    REQUIRE(got);
    CHECK(ids_of(got->json) == expected);
    query all;
    all.where = flt;
    auto n = f.count(all);
    REQUIRE(n);
    CHECK(*n == expected.size());
    // Offset and limit.
    q.offset = 3;
    q.limit = 5;
    auto page = f.query(q);
    REQUIRE(page);
    std::vector<int64_t> want(expected.begin() + std::min<size_t>(3, expected.size()),
                              expected.begin() + std::min<size_t>(8, expected.size()));
    CHECK(ids_of(page->json) == want);
    // Sum of a column over the matching rows.
    auto agg = f.aggregate("a", all);
    REQUIRE(agg);
    int64_t sum = 0;
    uint64_t count = 0;
    for (const auto &x : rows)
      if (matches(flt, x) && x.a) {
        sum += *x.a;
        ++count;
      }
    CHECK(agg->rows == expected.size());
    CHECK(agg->count == count);
    CHECK(agg->exact_sum == (count ? std::to_string(sum) : std::string()));
    // count and aggregate take the whole query: offset and limit select the rows they see.
    auto page_count = f.count(q);
    REQUIRE(page_count);
    CHECK(*page_count == want.size());
    query page_ids = q;
    auto page_agg = f.aggregate("id", page_ids);
    REQUIRE(page_agg);
    int64_t page_sum = 0;
    for (int64_t id : want) page_sum += id;
    CHECK(page_agg->rows == want.size());
    CHECK(page_agg->exact_sum == (want.empty() ? std::string() : std::to_string(page_sum)));
    // Ordered by r, descending: the exact reverse of (value, row) with nulls last.
    query oq;
    oq.where = flt;
    oq.columns = {"id"};
    oq.order_by = "r";
    oq.descending = true;
    oq.limit = 6;
    // Ties break by position in the file (the rows vector is in file order).
    std::vector<std::pair<std::pair<int, double>, size_t>> keyed;
    for (size_t pos = 0; pos < rows.size(); ++pos) {
      const auto &x = rows[pos];
      if (matches(flt, x)) keyed.push_back({{x.r ? 0 : 1, x.r.value_or(0)}, pos});
    }
    std::sort(keyed.begin(), keyed.end());
    std::reverse(keyed.begin(), keyed.end());
    std::vector<int64_t> top;
    for (size_t i = 0; i < keyed.size() && i < 6; ++i) top.push_back(rows[keyed[i].second].id);
    auto ordered = f.query(oq);
    REQUIRE(ordered);
    CHECK(ids_of(ordered->json) == top);
  }
}

}  // namespace

TEST_CASE("format query: random filters agree with a scan, without indexes", "[format][query]") {
  auto rows = make_rows(3000, 11);
  write_options o;
  o.chunk_rows = 500;
  o.page_bytes = 1024;
  check_against_scan(rows, o, 101, 150);
}

TEST_CASE("format query: random filters agree with a scan, with every index", "[format][query]") {
  auto rows = make_rows(3000, 12);
  write_options o;
  o.chunk_rows = 700;
  o.page_bytes = 512;
  o.indexes = {{"id", index_kind::hash},  {"a", index_kind::sorted},  {"s", index_kind::hash},  {"t", index_kind::text},
               {"r", index_kind::sorted}, {"ts", index_kind::sorted}, {"s", index_kind::sorted}};
  check_against_scan(rows, o, 202, 150);
}

TEST_CASE("format query: random filters agree with a scan, sorted by a", "[format][query]") {
  auto rows = make_rows(3000, 13);
  write_options o;
  o.chunk_rows = 256;
  o.sorted_by = "a";
  o.indexes = {{"id", index_kind::sorted}, {"t", index_kind::text}};
  // The writer reorders rows: compare against rows in the same order.
  std::stable_sort(rows.begin(), rows.end(), [](const row &x, const row &y) {
    if (x.a.has_value() != y.a.has_value()) return x.a.has_value();
    return x.a && *x.a < *y.a;
  });
  auto bytes = write(rows, o);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  query idq;
  idq.columns = {"id"};
  auto cols = f->columns(idq);
  REQUIRE(cols);
  for (size_t i = 0; i < rows.size(); ++i) REQUIRE((*cols)[0].ints[i] == rows[i].id);
  // Same rows, same order: re-number ids to the file order for the comparison helpers.
  check_against_scan(rows, o, 303, 100);
}

TEST_CASE("format query: explain counts what a lookup reads", "[format][query][explain]") {
  auto customers = generate_customers(20000, 5);
  std::vector<cell> cells;
  vector_sink sink;
  write_options o;
  o.chunk_rows = 4096;
  o.indexes = {{"id", index_kind::hash}, {"email", index_kind::sorted}, {"name", index_kind::text}};
  auto w = writer::create(customer_schema(), o, sink);
  for (const auto &c : customers) {
    customer_cells(c, cells);
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f);
  CHECK(f->chunk_count() == 5);

  query q;
  q.where = parse_expression("id = 12345").value();
  auto e = f->explain(q, true);
  REQUIRE(e);
  INFO(to_json(*e));
  REQUIRE(e->index);
  CHECK(e->index->column == "id");
  CHECK(e->index->kind == "hash");
  CHECK(e->index->use == "lookup");
  CHECK(e->index->candidates == 1);
  CHECK(e->chunks.skipped_by_index == 4);
  CHECK(e->rows_matched == 1);
  CHECK(e->rows_returned == 1);
  // One chunk; one data page per column (8) plus the dictionaries of the three dictionary-encoded
  // text columns (name, country, city), each read for the row's value alone, none decoded whole;
  // the id page the filter checks is the one the row reads (a hit); the hash index's root and one
  // leaf.
  CHECK(e->read.data_pages == 0);
  CHECK(e->read.value_pages == 11);
  CHECK(e->read.cache_hits == 1);
  CHECK(e->read.index_pages == 2);
  CHECK(e->read.chunks == 1);
  CHECK(e->read.blocks == 8);
  auto row = f->find("id", value::of(int64_t{12345}));
  REQUIRE(row);
  REQUIRE(row->has_value());
  CHECK(row->value().rfind("{\"id\":12345,\"name\":", 0) == 0);
  CHECK_FALSE(f->find("id", value::of(int64_t{999999})).value().has_value());
  CHECK(f->find("id", value::text("x")).code() == error_code::WRONG_KEY);
  CHECK(f->find("nope", value::of(int64_t{1})).code() == error_code::NO_SUCH_COLUMN);

  // Statistics: ids are increasing, so a range reads one chunk.
  query range;
  range.where = parse_expression("id between 100 and 120").value();
  range.columns = {"id"};
  auto er = f->explain(range, true);
  REQUIRE(er);
  CHECK(er->chunks.skipped_by_statistics == 4);

  // Bloom filters: = on a hash-indexed column under `or` cannot use the index, but skips chunks.
  query bloom;
  bloom.where = parse_expression("id = 3 or id = 19000").value();
  auto eb = f->explain(bloom, false);
  REQUIRE(eb);
  INFO(to_json(*eb));
  CHECK(eb->chunks.scanned == 2);
  CHECK(f->count(bloom).value() == 2);
  // A lookup of an absent key between the chunk statistics' bounds is skipped by the Bloom filter.
  auto gap = generate_customers(10, 1);
  (void)gap;

  // Sorted index on text, trigram index for contains.
  query by_email;
  by_email.where = parse_expression("email = '" + customers[777].email + "'").value();
  by_email.columns = {"id"};
  auto ee = f->explain(by_email, true);
  REQUIRE(ee);
  REQUIRE(ee->index);
  CHECK(ee->index->kind == "sorted");
  query text;
  text.where = parse_expression("name contains 'Okafor'").value();
  auto et = f->explain(text, false);
  REQUIRE(et);
  REQUIRE(et->index);
  CHECK(et->index->kind == "text");
  CHECK(et->index->use == "trigrams");
  uint64_t okafor = 0;
  for (const auto &c : customers) okafor += c.name.find("Okafor") != std::string::npos;
  CHECK(f->count(text).value() == okafor);

  // Counting without a filter reads nothing; a count with one reads only the filter's column.
  auto before = f->counters();
  CHECK(f->count().value() == 20000);
  CHECK(f->counters().bytes == before.bytes);
  query cq;
  cq.where = parse_expression("country = 'NA' and age > 80").value();
  cq.columns = {"id"};
  auto ec = f->explain(cq, true);
  REQUIRE(ec);
  INFO(to_json(*ec));
  CHECK(ec->read.columns == 3);  // country, age, and id to print
}

TEST_CASE("format write: no sorted or hash index on the sort column; the order answers its lookups",
          "[format][query][explain]") {
  auto customers = generate_customers(20000, 5);
  std::vector<cell> cells;
  auto write = [&](const std::vector<index_def> &indexes) {
    vector_sink sink;
    write_options o;
    o.chunk_rows = 4096;
    o.sorted_by = "id";
    o.indexes = indexes;
    auto w = writer::create(customer_schema(), o, sink);
    REQUIRE(w);
    for (const auto &c : customers) {
      customer_cells(c, cells);
      REQUIRE(w.value()->append_row(cells));
    }
    REQUIRE(w.value()->finish());
    return sink.bytes;
  };
  write_options sorted;
  sorted.sorted_by = "id";
  CHECK(answered_by_order(sorted, {"id", index_kind::hash}));
  CHECK(answered_by_order(sorted, {"id", index_kind::sorted}));
  CHECK_FALSE(answered_by_order(sorted, {"id", index_kind::text}));
  CHECK_FALSE(answered_by_order(sorted, {"email", index_kind::hash}));
  CHECK_FALSE(answered_by_order(write_options{}, {"id", index_kind::hash}));

  const auto plain = write({});
  const auto asked = write({{"id", index_kind::hash}, {"id", index_kind::sorted}, {"email", index_kind::hash}});
  auto p = file::open(borrow_bytes(plain));
  auto a = file::open(borrow_bytes(asked));
  REQUIRE(p);
  REQUIRE(a);
  // Only the email index is written.
  REQUIRE(a->info().indexes.size() == 1);
  CHECK(a->info().indexes[0].column == "email");
  // A lookup and a range on the sort column: the same rows, the chunks skipped by statistics, one
  // chunk read, no index page.
  for (const char *where : {"id = 12345", "id >= 100 and id < 140", "id in (7, 19000)"}) {
    INFO(where);
    query q;
    q.where = parse_expression(where).value();
    auto ep = p->explain(q, true);
    auto ea = a->explain(q, true);
    REQUIRE(ep);
    REQUIRE(ea);
    CHECK_FALSE(ea->index);
    CHECK(ea->read.index_pages == 0);
    CHECK(ea->rows_matched == ep->rows_matched);
    CHECK(ea->rows_matched > 0);
    CHECK(ea->chunks.scanned <= 2);
    CHECK(p->query(q).value().json == a->query(q).value().json);
  }
}

TEST_CASE("format query: newest N and order by the sorted column", "[format][query]") {
  auto customers = generate_customers(5000, 9);
  std::vector<cell> cells;
  vector_sink sink;
  write_options o;
  o.chunk_rows = 1000;
  o.sorted_by = "created_at";
  auto w = writer::create(customer_schema(), o, sink);
  for (auto it = customers.rbegin(); it != customers.rend(); ++it) {
    customer_cells(*it, cells);
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f);
  query q;
  q.order_by = "created_at";
  q.descending = true;
  q.limit = 3;
  q.columns = {"id"};
  auto e = f->explain(q, true);
  REQUIRE(e);
  REQUIRE(e->order);
  CHECK(e->order->by_sorted_column);
  CHECK(e->read.chunks == 1);  // only the last chunk is read
  auto r = f->query(q);
  REQUIRE(r);
  CHECK(r->json == "{\"id\":5000}\n{\"id\":4999}\n{\"id\":4998}\n");
  // The same through a column that is not sorted.
  q.order_by = "id";
  CHECK(f->query(q).value().json == "{\"id\":5000}\n{\"id\":4999}\n{\"id\":4998}\n");
  auto agg = f->aggregate("age");
  REQUIRE(agg);
  int64_t sum = 0;
  for (const auto &c : customers) sum += c.age;
  CHECK(agg->exact_sum == std::to_string(sum));
  CHECK(agg->count == 5000);
  CHECK(to_json(*agg).find("\"min\":18,\"max\":95,") != std::string::npos);
}

TEST_CASE("format query: values that cannot be compared are INVALID_QUERY", "[format][query]") {
  auto rows = make_rows(10, 1);
  auto bytes = write(rows, {});
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(f->count(rows_where(parse_expression("a = 'x'").value())).code() == error_code::INVALID_QUERY);
  CHECK(f->count(rows_where(parse_expression("a contains 'x'").value())).code() == error_code::INVALID_QUERY);
  CHECK(f->count(rows_where(parse_expression("ts > 'yesterday'").value())).code() == error_code::INVALID_QUERY);
  CHECK(f->count(rows_where(parse_expression("nope = 1").value())).code() == error_code::NO_SUCH_COLUMN);
  CHECK(f->count(rows_where(parse_expression("b = 1").value())).code() == error_code::INVALID_QUERY);
  CHECK(f->count(rows_where(parse_expression("a < null").value())).code() == error_code::INVALID_QUERY);
}

TEST_CASE("format: an order by a column that is not there is NO_SUCH_COLUMN for every call", "[format][query]") {
  // Found by format_query_fuzz: explain accepted what query refused.
  auto rows = make_rows(10, 1);
  auto bytes = write(rows, {});
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  query q;
  q.order_by = "<";
  CHECK(f->query(q).code() == error_code::NO_SUCH_COLUMN);
  CHECK(f->count(q).code() == error_code::NO_SUCH_COLUMN);
  CHECK(f->aggregate("a", q).code() == error_code::NO_SUCH_COLUMN);
  CHECK(f->columns(q).code() == error_code::NO_SUCH_COLUMN);
  CHECK(f->explain(q, false).code() == error_code::NO_SUCH_COLUMN);
  CHECK(f->explain(q, true).code() == error_code::NO_SUCH_COLUMN);
}

TEST_CASE("format: a limited order by skips chunks by statistics and returns what a full sort returns", "[format]") {
  // Values rise with the row (as timestamps do), with nulls and ties, over many small chunks.
  schema s{{{"id", column_type::integer}, {"at", column_type::integer}, {"x", column_type::float64}}};
  write_options o;
  o.chunk_rows = 100;
  vector_sink sink;
  auto w = writer::create(s, o, sink);
  REQUIRE(w);
  prng p{99};
  for (int64_t i = 0; i < 2000; ++i) {
    cell at = p.chance(3) ? cell::null() : cell::of(i / 3);
    cell x = p.chance(3) ? cell::null() : cell::of(static_cast<double>(p.in(0, 50)) / 4);
    REQUIRE(w.value()->append_row(std::vector<cell>{cell::of(i), at, x}));
  }
  REQUIRE(w.value()->finish());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f);
  for (const char *column : {"at", "x"}) {
    for (bool descending : {true, false}) {
      for (uint64_t limit : {1, 7, 50, 333}) {
        query all;
        all.order_by = column;
        all.descending = descending;
        all.columns = {"id"};
        auto full = f->query(all);
        REQUIRE(full);
        query some = all;
        some.offset = 3;
        some.limit = limit;
        auto part = f->query(some);
        REQUIRE(part);
        // The first 3 + limit lines of the full order, less the first 3.
        size_t from = 0;
        for (int k = 0; k < 3; ++k) from = full->json.find('\n', from) + 1;
        size_t to = from;
        for (uint64_t k = 0; k < limit; ++k) to = full->json.find('\n', to) + 1;
        INFO(column << (descending ? " desc" : " asc") << " limit " << limit);
        CHECK(part->json == full->json.substr(from, to - from));
      }
    }
  }
  // The newest 10 by "at" read only the last chunks' pages.
  query newest;
  newest.order_by = "at";
  newest.descending = true;
  newest.limit = 10;
  newest.columns = {"id"};
  auto plan = f->explain(newest, true);
  REQUIRE(plan);
  CHECK(plan->read.chunks < 20);
}

// --- a find decodes only the row it returns (issue 19, item 1) --------------------------------------

namespace {

/// A file with a column for every type and value encoding the page codec has, nulls of every
/// validity kind, small pages (many a chunk) and a hash index on id.
std::vector<uint8_t> every_encoding_file(size_t n, uint32_t chunk_rows) {
  schema sch;
  sch.columns = {
      {"id", column_type::integer},         {"for_int", column_type::integer},    {"plain_int", column_type::integer},
      {"rle_int", column_type::integer},    {"const_int", column_type::integer},  {"gcd_int", column_type::integer},
      {"delta_gcd", column_type::integer},  {"real_plain", column_type::float64}, {"real_cents", column_type::float64},
      {"dec_scaled", column_type::decimal}, {"dec_text", column_type::decimal},   {"s_dict", column_type::string},
      {"s_plain", column_type::string},     {"doc", column_type::json},           {"flag", column_type::boolean},
      {"day", column_type::date},           {"at", column_type::timestamp},       {"half_null", column_type::integer}};
  write_options o;
  o.chunk_rows = chunk_rows;
  o.page_bytes = 512;
  o.indexes = {{"id", index_kind::hash}};
  vector_sink sink;
  auto w = writer::create(sch, o, sink);
  REQUIRE(w);
  prng g{99};
  std::vector<cell> cells;
  std::vector<std::string> texts(6);
  int64_t rle = 0, stamp = 1700000000000;
  for (size_t i = 0; i < n; ++i) {
    cells.clear();
    const auto id = static_cast<int64_t>(i);
    cells.push_back(cell::of(id));
    cells.push_back(g.chance(10) ? cell::null() : cell::of(g.in(-50, 200)));
    cells.push_back(cell::of(static_cast<int64_t>(g.next())));
    if (i % 50 == 0) rle = g.in(-3, 3);
    // Runs of nulls (VALID_RUNS) between runs of values.
    cells.push_back((i / 50) % 4 == 3 ? cell::null() : cell::of(rle));
    cells.push_back(cell::of(int64_t{7}));
    cells.push_back(cell::of(g.in(-1000, 1000) * 1000));
    stamp += g.in(1, 9) * 1000;
    cells.push_back(cell::of(stamp));
    cells.push_back(cell::of(static_cast<double>(g.next() >> 11) / 3.0 - 1e15));
    cells.push_back(g.chance(5) ? cell::null() : cell::of(static_cast<double>(g.in(-99999, 99999)) / 100.0));
    texts[0] = std::to_string(g.in(0, 99999)) + "." + std::to_string(g.in(10, 99));
    cells.push_back(cell::text(texts[0]));
    texts[1] = std::to_string(g.in(-500, 500)) + (g.chance(50) ? ".5" : ".125");
    cells.push_back(g.chance(10) ? cell::null() : cell::text(texts[1]));
    cells.push_back(g.chance(10) ? cell::null() : cell::text(WORDS[g.next() % 8]));
    texts[2] = "user-" + std::to_string(g.next() % 1000003) + "-" + std::string(static_cast<size_t>(g.in(0, 9)), 'x');
    cells.push_back(cell::text(texts[2]));
    texts[3] = "{\"k\":" + std::to_string(i) + ",\"w\":\"" + WORDS[i % 8] + "\"}";
    cells.push_back(cell::text(texts[3]));
    cells.push_back(g.chance(20) ? cell::null() : cell::of(g.chance(50)));
    texts[4] = "2024-0" + std::to_string(1 + i % 9) + "-1" + std::to_string(i % 10);
    cells.push_back(cell::text(texts[4]));
    cells.push_back(g.chance(10) ? cell::null() : cell::of(int64_t{1600000000000000} + g.in(0, 100000) * 1000003));
    // Null in the first half of every chunk: pages of nothing but nulls (VALID_NONE).
    cells.push_back(i % chunk_rows < chunk_rows / 2 ? cell::null() : cell::of(g.in(0, 9)));
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  return sink.bytes;
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find('\n', start)) != std::string::npos; start = at + 1)
    out.push_back(text.substr(start, at - start));
  return out;
}

}  // namespace

TEST_CASE("format find: every encoding's value read alone equals the decoded page's", "[format][query][find]") {
  const size_t n = 3000;
  const uint32_t chunk_rows = 1000;
  auto bytes = every_encoding_file(n, chunk_rows);
  // The file holds what the test means to cover: every encoding and validity kind.
  {
    auto f = file::open(borrow_bytes(bytes));
    REQUIRE(f);
    auto st = f->storage();
    REQUIRE(st);
    std::string seen;
    for (const auto &c : st->columns) {
      seen += c.name + ":";
      for (const auto &e : c.encodings) seen += e.first + ",";
      seen += " ";
    }
    INFO(seen);
    for (const char *want : {"id:DELTA", "for_int:FOR", "plain_int:PLAIN", "rle_int:RLE", "const_int:CONSTANT",
                             "gcd_int:FOR_GCD", "delta_gcd:DELTA_GCD", "real_plain:PLAIN_F64", "real_cents:DECIMAL_F64",
                             "dec_scaled:SCALED", "s_dict:DICT", "s_plain:PLAIN_TEXT", "doc:PLAIN_TEXT"}) {
      const std::string w = want;
      const auto colon = w.find(':');
      const auto at = seen.find(w.substr(0, colon + 1));
      REQUIRE(at != std::string::npos);
      CHECK(seen.substr(at, seen.find(' ', at) - at).find(w.substr(colon + 1)) != std::string::npos);
    }
  }
  // The rows as the general path gives them: a scan decoding whole pages.
  auto reference = file::open(borrow_bytes(bytes));
  REQUIRE(reference);
  auto all = reference->query(query{});
  REQUIRE(all);
  auto rows = lines_of(all->json);
  REQUIRE(rows.size() == n);
  auto all_cells = reference->query(query{}, row_text::cells);
  REQUIRE(all_cells);
  auto cell_rows = lines_of(all_cells->json);
  query some;
  some.columns = {"s_dict", "id", "half_null", "dec_scaled"};
  auto projected = reference->query(some);
  REQUIRE(projected);
  auto projected_rows = lines_of(projected->json);

  // Every row (so the first and last of every page and chunk), through one file (its caches warm)
  // and through files without a cache; the rows found by a non-indexed column too.
  auto warm = file::open(borrow_bytes(bytes));
  REQUIRE(warm);
  open_options no_cache;
  no_cache.cache_pages = 0;
  for (size_t i = 0; i < n; ++i) {
    INFO("row " << i);
    const value key = value::of(static_cast<int64_t>(i));
    auto r = warm->find("id", key);
    REQUIRE(r);
    REQUIRE(r->has_value());
    CHECK(**r == rows[i]);
    if (i % 7 == 0 || i % chunk_rows == 0 || i % chunk_rows == chunk_rows - 1) {
      auto cold = file::open(borrow_bytes(bytes), no_cache);
      REQUIRE(cold);
      auto c = cold->find("id", key, {}, row_text::cells);
      REQUIRE(c);
      REQUIRE(c->has_value());
      CHECK(**c == cell_rows[i]);
      auto p = cold->find("id", key, some.columns);
      REQUIRE(p);
      REQUIRE(p->has_value());
      CHECK(**p == projected_rows[i]);
    }
  }
  for (size_t i = 0; i < n; i += 97) {
    INFO("row " << i);
    auto cold = file::open(borrow_bytes(bytes));
    REQUIRE(cold);
    query q;
    q.where = parse_expression("id = " + std::to_string(i)).value();
    auto by_query = cold->query(q);
    REQUIRE(by_query);
    CHECK(by_query->json == rows[i] + "\n");
    // A key found by a scan of a text column: the key's page is decoded whole (every row is a
    // candidate), the row's other values read alone.
    const std::string s_plain = rows[i].substr(rows[i].find("\"s_plain\":\"") + 11);
    auto by_text = cold->find("s_plain", value::text(s_plain.substr(0, s_plain.find('"'))));
    REQUIRE(by_text);
    REQUIRE(by_text->has_value());
    CHECK(**by_text == rows[i]);
  }
}

TEST_CASE("format find: a lookup reads one page of each column and decodes none whole", "[format][query][find]") {
  auto bytes = every_encoding_file(3000, 1000);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  const uint64_t columns = f->schema().columns.size();
  auto st = f->storage();
  REQUIRE(st);
  uint64_t dictionary_columns = 0;
  for (const auto &c : st->columns)
    for (const auto &e : c.encodings)
      if (e.first.rfind("DICT", 0) == 0) {
        ++dictionary_columns;
        break;
      }
  REQUIRE(dictionary_columns >= 1);
  for (int64_t id : {0, 999, 1000, 1776, 2999}) {
    query q;
    q.where = parse_expression("id = " + std::to_string(id)).value();
    q.limit = 1;
    auto e = f->explain(q, true);
    REQUIRE(e);
    INFO(to_json(*e));
    CHECK(e->rows_returned == 1);
    CHECK(e->read.chunks == 1);
    CHECK(e->read.blocks == columns);
    // Nothing decoded whole: one page of each column, and at most the chunk's dictionaries, read
    // for the row's value alone; the filter's page of id is the one the row reads (a hit).
    CHECK(e->read.data_pages == 0);
    CHECK(e->read.value_pages >= columns);
    CHECK(e->read.value_pages <= columns + dictionary_columns);
    CHECK(e->read.cache_hits == 1);
  }
  // The same through find, on the file's own counters.
  const auto before = f->counters();
  auto row = f->find("id", value::of(int64_t{1234}));
  REQUIRE(row);
  REQUIRE(row->has_value());
  const auto after = f->counters();
  CHECK(after.data_pages == before.data_pages);
  CHECK(after.value_pages - before.value_pages >= columns);
  CHECK(after.value_pages - before.value_pages <= columns + dictionary_columns);
  // Two rows are the general path: their pages decoded whole (and cached).
  query two;
  two.where = parse_expression("id in (5, 6)").value();
  auto e = f->explain(two, true);
  REQUIRE(e);
  CHECK(e->rows_returned == 2);
  CHECK(e->read.data_pages >= columns);
}

TEST_CASE("format find: a hostile page is CORRUPT_BLOCK, never a wrong value", "[format][query][find][bad]") {
  // Four rows: k (hash-indexed) and s, a dictionary column ("aa", "bb"), whose one data page is
  // too short to compress: validity ALL, TEXT_DICT, the ids 0 1 0 1 as RLE (4 runs of 1).
  schema sch;
  sch.columns = {{"k", column_type::integer}, {"s", column_type::string}};
  write_options o;
  o.indexes = {{"k", index_kind::hash}};
  vector_sink sink;
  auto w = writer::create(sch, o, sink);
  REQUIRE(w);
  for (int64_t i = 0; i < 4; ++i) {
    std::vector<cell> cells = {cell::of(i), cell::text(i % 2 ? "bb" : "aa")};
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  const std::vector<uint8_t> page = {0, 3, 3, 4, 0, 1, 2, 1, 0, 1, 2, 1};
  auto at = std::search(sink.bytes.begin(), sink.bytes.end(), page.begin(), page.end());
  REQUIRE(at != sink.bytes.end());
  const auto offset = static_cast<size_t>(at - sink.bytes.begin());
  open_options unchecked;  // the planted bytes carry no valid checksum: the decoders must stand alone
  unchecked.verify_checksums = false;
  {
    auto f = file::open(borrow_bytes(sink.bytes), unchecked);
    REQUIRE(f);
    auto r = f->find("k", value::of(int64_t{1}));
    REQUIRE(r);
    REQUIRE(r->has_value());
    CHECK(**r == "{\"k\":1,\"s\":\"bb\"}");
  }
  auto find_code = [&](const std::vector<uint8_t> &bytes, int64_t k) {
    auto f = file::open(borrow_bytes(bytes), unchecked);
    REQUIRE(f);
    auto r = f->find("k", value::of(k));
    return r ? error_code::OK : r.code();
  };
  SECTION("a dictionary id past the dictionary") {
    auto bad = sink.bytes;
    bad[offset + 6] = 10;  // row 1's id: zigzag 10 = 5, of a dictionary of 2
    CHECK(find_code(bad, 1) == error_code::CORRUPT_BLOCK);
  }
  SECTION("a row past the page's values") {
    auto bad = sink.bytes;
    bad[offset + 3] = 3;  // 3 runs for 4 rows: row 3 has no value
    CHECK(find_code(bad, 3) == error_code::CORRUPT_BLOCK);
    bad[offset + 3] = 5;  // more runs than rows
    CHECK(find_code(bad, 0) == error_code::CORRUPT_BLOCK);
  }
  SECTION("a validity of more rows than the page") {
    auto bad = sink.bytes;
    bad[offset] = 3;  // RUNS: count 3 (the byte after), runs 3, 4, 0 ... past the page's 4 rows
    CHECK(find_code(bad, 2) == error_code::CORRUPT_BLOCK);
  }
  SECTION("an unknown value encoding") {
    auto bad = sink.bytes;
    bad[offset + 1] = 9;
    CHECK(find_code(bad, 2) == error_code::CORRUPT_BLOCK);
  }
}

TEST_CASE("format columns: whole pages appended in bulk equal the row-by-row path", "[format][query][columns]") {
  const size_t n = 3000;
  auto bytes = every_encoding_file(n, 1000);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  // A limit makes the selection not plain: the rows go one at a time through a cursor per column.
  auto compare = [&](query q) {
    auto bulk = f->columns(q);
    REQUIRE(bulk);
    q.limit = n + 1;
    auto by_row = f->columns(q);
    REQUIRE(by_row);
    REQUIRE(bulk->size() == by_row->size());
    for (size_t c = 0; c < bulk->size(); ++c) {
      const auto &a = (*bulk)[c], &b = (*by_row)[c];
      INFO(a.name);
      CHECK(a.valid == b.valid);
      CHECK(a.ints == b.ints);
      CHECK(a.reals == b.reals);
      CHECK(a.text == b.text);
      CHECK(a.text_offsets == b.text_offsets);
    }
    return bulk->front().valid.size();
  };
  // Every row (every page whole), and filters that select every row of some pages and some rows
  // of others, or none of a chunk.
  CHECK(compare(query{}) == n);
  for (const char *where :
       {"for_int > 100", "id >= 500 and id < 2100", "half_null is null", "s_dict = 'gamma'", "id > 99999"}) {
    INFO(where);
    query q;
    q.where = parse_expression(where).value();
    compare(q);
  }
}

TEST_CASE("format aggregate: a scaled decimal column sums as its integers, exactly as its text",
          "[format][query][columns]") {
  const size_t n = 3000;
  auto bytes = every_encoding_file(n, 1000);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  // dec_scaled holds "D.DD" texts: the oracle sums them as cents and keeps the first least and greatest.
  for (const char *where : {"", "for_int > 100", "id >= 500 and id < 2100", "id > 99999"}) {
    INFO(where);
    query q;
    if (*where) q.where = parse_expression(where).value();
    query cq = q;
    cq.columns = {"dec_scaled"};
    auto cols = f->columns(cq);
    REQUIRE(cols);
    const auto &c = cols->front();
    int64_t cents = 0, lo = 0, hi = 0;
    std::string lo_text, hi_text;
    uint64_t count = 0;
    for (size_t r = 0; r < c.valid.size(); ++r) {
      if (!c.valid[r]) continue;
      const std::string t = c.text.substr(c.text_offsets[r], c.text_offsets[r + 1] - c.text_offsets[r]);
      const size_t dot = t.find('.');
      REQUIRE(dot == t.size() - 3);
      const int64_t v = std::stoll(t.substr(0, dot)) * 100 + std::stoll(t.substr(dot + 1));
      cents += v;
      if (!count || v < lo) lo = v, lo_text = t;
      if (!count || v > hi) hi = v, hi_text = t;
      ++count;
    }
    auto a = f->aggregate("dec_scaled", q);
    REQUIRE(a);
    CHECK(a->count == count);
    if (!count) {
      CHECK(a->exact_sum.empty());
      continue;
    }
    const std::string frac = std::to_string(100 + cents % 100).substr(1);
    CHECK(a->exact_sum == std::to_string(cents / 100) + "." + frac);
    CHECK(a->min.s == lo_text);
    CHECK(a->max.s == hi_text);
  }
}

TEST_CASE("format aggregate: decimal text of every form sums and bounds exactly", "[format][query][columns]") {
  // Plain text of a few digits (added as integers), exponents and more than 18 digits (added as
  // digits), equal values written two ways (the first kept as the bound), small pages so the
  // bounds cross pages.
  const std::vector<std::string> texts = {"1.5",  "-7.50",  "1e3",  "123456789012345678901.25",
                                          "-7.5", "0.125",  "-0.0", "2.5E-2",
                                          "1000", "-7.500", "12.5", "99"};
  schema sch;
  sch.columns = {{"d", column_type::decimal}};
  write_options o;
  o.page_bytes = 512;
  o.chunk_rows = 5;
  vector_sink sink;
  auto w = writer::create(sch, o, sink);
  REQUIRE(w);
  for (const auto &t : texts) REQUIRE(w.value()->append_row(std::vector<cell>{cell::text(t)}));
  REQUIRE(w.value()->append_row(std::vector<cell>{cell::null()}));
  REQUIRE(w.value()->finish());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f);
  auto a = f->aggregate("d");
  REQUIRE(a);
  CHECK(a->rows == texts.size() + 1);
  CHECK(a->count == texts.size());
  CHECK(a->exact_sum == "123456789012345680991.900");
  CHECK(a->min.s == "-7.50");
  CHECK(a->max.s == "123456789012345678901.25");
  query q;
  q.where = parse_expression("d < 100").value();
  auto small = f->aggregate("d", q);
  REQUIRE(small);
  CHECK(small->exact_sum == "90.650");
  CHECK(small->min.s == "-7.50");
  CHECK(small->max.s == "99");
}
