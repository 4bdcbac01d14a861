// Fuzz target for the .quire query language: whatever parses must get the same answer from every
// way of answering it. Three files hold the same 1,500 rows (12 columns of every type, nulls,
// small chunks and pages): `plain` (no index, input order), `same_order` (sorted, hash and text
// indexes, sorted_by a column that is already in input order, so its file order is the plain
// file's) and `reordered` (other indexes, sorted_by a column with nulls and repeats, so its file
// order differs). For each query it checks, aborting on any mismatch:
//   - count(where) = the rows query(where) returns (given offset and limit) = explain's rows_matched;
//   - aggregate(column, where).rows = count(where), and the three files aggregate alike;
//   - plain and same_order return the same row texts in the same order; reordered returns the same
//     rows as a multiset (when the whole result is asked for), else the same number of rows;
//   - every file fails with the same error code, and a filter count rejects, query rejects too;
//   - on the plain file, a brute-force evaluation of the filter over the rows (when every
//     comparison in it is one this file can decide exactly) selects the same rows.
//
// Input: byte 0 picks the mode (byte0 % 3: 0 an expression for parse_expression, 1 a filter as
// JSON for parse_filter_json, 2 a query as JSON for parse_query_json), what modes 0 and 1 add to
// the filter ((byte0 / 3) % 4: nothing; order by column K; order by K descending, offset 3,
// limit 7; columns [K, "id"], limit 100) and the column K that is ordered by and aggregated
// ((byte0 / 12) % 12). The rest is the text.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/format.h"

namespace {

using namespace quire::format;

[[noreturn]] void fail(const char *what, std::string_view input) {
  std::fprintf(stderr, "format_query_fuzz: %s\ninput: %.*s\n", what, static_cast<int>(input.size()), input.data());
  std::abort();
}

// --- the one place that calls file::count and file::aggregate --------------------------------
// Over every row the filter matches (count(q) itself, with offset and limit, is checked apart).

quire::result<uint64_t> count_of(file &f, const query &q) { return f.count(rows_where(q.where)); }
quire::result<aggregate_result> aggregate_of(file &f, std::string_view column, const query &q) {
  return f.aggregate(column, rows_where(q.where));
}

// --- the rows ----------------------------------------------------------------------------------

struct row {
  int64_t id = 0;
  std::optional<int64_t> n, big;
  std::optional<double> r;
  std::optional<std::string> d;  // decimal text
  std::optional<std::string> s, t;
  std::optional<bool> b;
  std::optional<std::string> day;  // YYYY-MM-DD
  int64_t ts = 0;                  // never null, nondecreasing with id
  std::optional<int64_t> seen;
  std::optional<std::string> j;
};

const char *const COLUMNS[] = {"id", "n", "big", "r", "d", "s", "t", "b", "day", "ts", "seen", "j"};
constexpr size_t COLUMN_COUNT = sizeof(COLUMNS) / sizeof(COLUMNS[0]);

schema table_schema() {
  return {{{"id", column_type::integer},
           {"n", column_type::integer},
           {"big", column_type::integer},
           {"r", column_type::float64},
           {"d", column_type::decimal},
           {"s", column_type::string},
           {"t", column_type::string},
           {"b", column_type::boolean},
           {"day", column_type::date},
           {"ts", column_type::timestamp},
           {"seen", column_type::timestamp},
           {"j", column_type::json}}};
}

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

// Decimal texts whose doubles all differ, so that the least and the greatest have one spelling
// whatever the row order.
const char *const DECIMALS[] = {
    "0.700", "12.5", "-3.14159265358979323846", "100", "0.1", "99999999999999999999.5", "-0.001",
    "42",    "7.25", "1234567890.123456789"};
const char *const WORDS[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"};
const char *const SYLLABLES[] = {"ok", "af", "or", "an", "ka", "mi", "zu", "re", "lo", "ti", "\xc3\xa9", "'"};

std::vector<row> make_rows() {
  prng g{0x9e3779b97f4a7c15ull};
  std::vector<row> rows;
  for (int64_t i = 0; i < 1500; ++i) {
    row x;
    x.id = i;
    if (!g.chance(10)) x.n = g.in(-50, 200);
    if (!g.chance(15)) {
      static const int64_t EDGES[] = {INT64_MIN, INT64_MAX, (int64_t{1} << 53) + 1, -(int64_t{1} << 53) - 1, 0, -1};
      x.big = g.chance(50) ? EDGES[g.next() % 6] : static_cast<int64_t>(g.next() >> 1) - (int64_t{1} << 62);
    }
    if (!g.chance(10)) {
      static const double ODD[] = {1e300, -1e-300, 0.1, 4503599627370497.0};
      x.r = g.chance(5) ? ODD[g.next() % 4] : static_cast<double>(g.in(-1000, 1000)) / 8.0;
    }
    if (!g.chance(10)) x.d = DECIMALS[g.next() % 10];
    if (!g.chance(10)) x.s = WORDS[g.next() % 8];
    if (!g.chance(5)) {
      std::string t;
      for (int64_t k = g.in(0, 6); k > 0; --k) t += SYLLABLES[g.next() % 12];
      x.t = t;
    }
    if (!g.chance(20)) x.b = g.chance(50);
    if (!g.chance(10)) {
      static const int DAYS[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      int y = static_cast<int>(g.in(1969, 2030)), m = static_cast<int>(g.in(1, 12));
      int dd = static_cast<int>(g.in(1, DAYS[m - 1]));
      char buf[16];
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, m, dd);
      x.day = buf;
    }
    x.ts = 1600000000000000LL + (i / 3) * 3600000000LL;  // repeats: ties keep input order
    if (!g.chance(15)) x.seen = 1500000000000000LL + g.in(0, 100000) * 1000003LL;
    if (!g.chance(30))
      x.j = g.chance(50) ? "{\"k\":" + std::to_string(g.in(0, 9)) + "}"
                         : "[1,\"" + std::string(WORDS[g.next() % 8]) + "\"]";
    rows.push_back(std::move(x));
  }
  return rows;
}

std::vector<uint8_t> write_table(const std::vector<row> &rows, write_options o) {
  o.chunk_rows = 128;  // 12 chunks
  o.page_bytes = 512;  // several pages a chunk
  vector_sink sink;
  auto w = writer::create(table_schema(), o, sink);
  if (!w) fail(("writer::create: " + w.error().describe()).c_str(), "");
  std::vector<cell> cells;
  auto text = [](const std::optional<std::string> &v) { return v ? cell::text(*v) : cell::null(); };
  auto integer = [](const std::optional<int64_t> &v) { return v ? cell::of(*v) : cell::null(); };
  for (const auto &x : rows) {
    cells = {cell::of(x.id), integer(x.n),   integer(x.big),  x.r ? cell::of(*x.r) : cell::null(),
             text(x.d),      text(x.s),      text(x.t),       x.b ? cell::of(*x.b) : cell::null(),
             text(x.day),    cell::of(x.ts), integer(x.seen), text(x.j)};
    if (auto a = w.value()->append_row(cells); !a) fail(("append_row: " + a.error().describe()).c_str(), "");
  }
  if (auto n = w.value()->finish(); !n) fail(("finish: " + n.error().describe()).c_str(), "");
  return std::move(sink.bytes);
}

struct tables {
  std::vector<row> rows = make_rows();
  std::vector<uint8_t> plain_bytes, same_order_bytes, reordered_bytes;
  std::optional<file> plain, same_order, reordered;

  tables() {
    plain_bytes = write_table(rows, {});
    write_options a;
    a.sorted_by = "ts";
    a.indexes = {{"id", index_kind::sorted}, {"n", index_kind::sorted},   {"s", index_kind::hash},
                 {"t", index_kind::text},    {"day", index_kind::sorted}, {"big", index_kind::hash},
                 {"r", index_kind::sorted},  {"j", index_kind::text},     {"seen", index_kind::sorted}};
    same_order_bytes = write_table(rows, a);
    write_options b;
    b.sorted_by = "n";
    b.indexes = {{"id", index_kind::hash},  {"n", index_kind::hash},     {"s", index_kind::sorted},
                 {"t", index_kind::text},   {"d", index_kind::sorted},   {"ts", index_kind::sorted},
                 {"day", index_kind::hash}, {"big", index_kind::sorted}, {"s", index_kind::text},
                 {"r", index_kind::hash}};
    reordered_bytes = write_table(rows, b);
    plain.emplace(open(plain_bytes));
    same_order.emplace(open(same_order_bytes));
    reordered.emplace(open(reordered_bytes));
    if (same_order->sorted_by() != "ts" || reordered->sorted_by() != "n") fail("sorted_by not kept", "");
  }
  static file open(const std::vector<uint8_t> &bytes) {
    // A cache that holds every page: ordered results render rows in key order, which with the
    // default 64 pages re-decodes pages for nearly every row (about 6x slower, and fuzzing
    // throughput is what matters here; format_file_fuzz runs with a 4-page cache).
    open_options o;
    o.cache_pages = 4096;
    auto f = file::open(quire::borrow_bytes(bytes), o);
    if (!f) fail(("open: " + f.error().describe()).c_str(), "");
    return std::move(f).value();
  }
};

// --- brute force -------------------------------------------------------------------------------

/// Sign of (cell - value), or nullopt when this file cannot decide the comparison exactly.
std::optional<int> compare(const row &x, size_t column, const value &v) {
  auto sign = [](auto a, auto b) { return a < b ? -1 : (b < a ? 1 : 0); };
  auto integer = [&](int64_t c) -> std::optional<int> {
    if (v.k == value::kind::integer) return sign(c, v.i);
    // long double holds every int64 and every double exactly (x86 and wasm alike).
    if (v.k == value::kind::real && !std::isnan(v.d))
      return sign(static_cast<long double>(c), static_cast<long double>(v.d));
    return std::nullopt;
  };
  auto real = [&](double c) -> std::optional<int> {
    if (v.k == value::kind::integer && v.i <= (int64_t{1} << 53) && v.i >= -(int64_t{1} << 53))
      return sign(c, static_cast<double>(v.i));
    if (v.k == value::kind::real && !std::isnan(v.d)) return sign(c, v.d);
    return std::nullopt;
  };
  switch (column) {
    case 0: return integer(x.id);
    case 1: return integer(*x.n);
    case 2: return integer(*x.big);
    case 3: return real(*x.r);
    case 4: return real(std::strtod(x.d->c_str(), nullptr));
    case 5:
    case 6:
      if (v.k != value::kind::text) return std::nullopt;
      return sign((column == 5 ? *x.s : *x.t).compare(v.s), 0);  // char_traits<char> compares bytes unsigned
    case 7:
      if (v.k != value::kind::boolean) return std::nullopt;
      return sign(*x.b, v.b);
    case 8: {
      // A valid YYYY-MM-DD compares as its text; anything else (times, odd dates) is undecided.
      static const int DAYS[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      const std::string &s = v.s;
      if (v.k != value::kind::text || s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
      for (size_t k : {0, 1, 2, 3, 5, 6, 8, 9})
        if (s[k] < '0' || s[k] > '9') return std::nullopt;
      int y = std::atoi(s.substr(0, 4).c_str()), m = std::atoi(s.substr(5, 2).c_str()),
          dd = std::atoi(s.substr(8, 2).c_str());
      bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
      if (m < 1 || m > 12 || dd < 1 || dd > DAYS[m - 1] || (m == 2 && dd == 29 && !leap)) return std::nullopt;
      return sign(x.day->compare(s), 0);
    }
    default: return std::nullopt;  // timestamps and json: not decided here
  }
}

bool is_null(const row &x, size_t column) {
  switch (column) {
    case 0: return false;
    case 1: return !x.n;
    case 2: return !x.big;
    case 3: return !x.r;
    case 4: return !x.d;
    case 5: return !x.s;
    case 6: return !x.t;
    case 7: return !x.b;
    case 8: return !x.day;
    case 9: return false;
    case 10: return !x.seen;
    default: return !x.j;
  }
}

/// The filter's meaning on one row (docs/format.md §4: comparisons are false on null, `not` is
/// two-valued); sets `undecided` when some part of it is not decided exactly here.
bool eval(const filter &f, const row &x, bool &undecided) {
  using op = filter::op;
  if (f.o == op::and_ || f.o == op::or_) {
    bool all = true, any = false;
    for (const auto &c : f.children) {
      bool v = eval(c, x, undecided);
      all = all && v;
      any = any || v;
    }
    return f.o == op::and_ ? all : any;
  }
  if (f.o == op::not_) {
    if (f.children.size() != 1) return undecided = true;
    return !eval(f.children[0], x, undecided);
  }
  size_t column = COLUMN_COUNT;
  for (size_t k = 0; k < COLUMN_COUNT; ++k)
    if (f.column == COLUMNS[k]) column = k;
  if (column == COLUMN_COUNT) return undecided = true;
  const bool null = is_null(x, column);
  if (f.o == op::is_null) return null;
  if (f.o == op::is_not_null) return !null;
  if (f.values.empty()) return undecided = true;
  for (const auto &v : f.values)
    if (v.k == value::kind::null_value && !((f.o == op::eq || f.o == op::ne) && f.values.size() == 1))
      return undecided = true;
  if (f.values[0].k == value::kind::null_value) return f.o == op::eq ? null : !null;  // `= null`, `!= null`
  if (null) return false;
  auto cmp = [&](const value &v) {
    auto c = compare(x, column, v);
    if (!c) undecided = true;
    return c.value_or(0);
  };
  switch (f.o) {
    case op::eq: return cmp(f.values[0]) == 0;
    case op::ne: return cmp(f.values[0]) != 0;
    case op::lt: return cmp(f.values[0]) < 0;
    case op::le: return cmp(f.values[0]) <= 0;
    case op::gt: return cmp(f.values[0]) > 0;
    case op::ge: return cmp(f.values[0]) >= 0;
    case op::in: {
      bool hit = false;
      for (const auto &v : f.values) hit = (cmp(v) == 0) || hit;
      return hit;
    }
    case op::between:
      if (f.values.size() != 2) return undecided = true;
      return cmp(f.values[0]) >= 0 && cmp(f.values[1]) <= 0;
    case op::contains:
    case op::starts_with: {
      if ((column != 5 && column != 6) || f.values[0].k != value::kind::text) return undecided = true;
      const std::string &text = column == 5 ? *x.s : *x.t;
      const std::string &p = f.values[0].s;
      return f.o == op::contains ? text.find(p) != std::string::npos : text.compare(0, p.size(), p) == 0;
    }
    default: return undecided = true;
  }
}

// --- comparing answers -------------------------------------------------------------------------

std::vector<std::string_view> lines(const std::string &ndjson) {
  std::vector<std::string_view> out;
  std::string_view rest(ndjson);
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    if (end == std::string_view::npos) end = rest.size();
    out.push_back(rest.substr(0, end));
    rest.remove_prefix(std::min(rest.size(), end + 1));
  }
  return out;
}

/// Integer and decimal sums are exact (the same whatever the order of the additions); float sums
/// are compensated, so files in another order agree to rounding.
bool same_aggregate(const aggregate_result &a, const aggregate_result &b) {
  auto close = [](double x, double y) {
    return x == y || (std::isnan(x) && std::isnan(y)) ||
           std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
  };
  auto same = [&](const value &x, const value &y) {
    return x.k == y.k && x.i == y.i && x.b == y.b && x.s == y.s && (x.d == y.d || (std::isnan(x.d) && std::isnan(y.d)));
  };
  if (a.rows != b.rows || a.count != b.count || !same(a.min, b.min) || !same(a.max, b.max)) return false;
  return a.exact_sum == b.exact_sum && a.exact_avg == b.exact_avg && close(a.sum, b.sum) && close(a.avg, b.avg);
}

struct answer {
  quire::result<row_set> rows;
  quire::result<uint64_t> count;
  quire::result<aggregate_result> aggregate;
  quire::result<explain_report> explain;
  quire::result<uint64_t> page_count;  // count(q): with offset and limit
};

/// With `analyze` explain runs the query again: only worth it where its counts are checked.
answer ask(file &f, const query &q, std::string_view column, bool analyze) {
  return {f.query(q), count_of(f, q), aggregate_of(f, column, q), f.explain(q, analyze), f.count(q)};
}

void check(tables &t, const query &q, std::string_view column, std::string_view input) {
  const bool whole = q.offset == 0 && q.limit == UINT64_MAX;
  answer plain = ask(*t.plain, q, column, whole);
  answer same_order = ask(*t.same_order, q, column, whole);
  answer reordered = ask(*t.reordered, q, column, whole);
  const answer *all[] = {&plain, &same_order, &reordered};
  for (const answer *a : all) {
    if (a->rows.code() != plain.rows.code()) fail("query: the files fail differently", input);
    if (a->count.code() != plain.count.code()) fail("count: the files fail differently", input);
    if (a->aggregate.code() != plain.aggregate.code()) fail("aggregate: the files fail differently", input);
    if (a->explain.code() != plain.explain.code()) fail("explain: the files fail differently", input);
  }
  // A filter that count rejects, query rejects too (query also checks columns and order).
  if (!plain.count && plain.rows) fail("count fails where query succeeds", input);
  if (!plain.count && plain.aggregate && q.where) fail("count fails where aggregate succeeds", input);
  if (!plain.rows && plain.explain) fail("query fails where explain succeeds", input);
  if (!plain.rows || !plain.count) return;

  const uint64_t matched = *plain.count;
  const uint64_t expected = matched > q.offset ? std::min(q.limit, matched - q.offset) : 0;
  for (const answer *a : all) {
    if (*a->count != matched) fail("count differs between the files", input);
    if (a->rows->count != expected) fail("query returns another number of rows than count(where) gives", input);
    if (lines(a->rows->json).size() != a->rows->count) fail("row_set.count differs from its lines", input);
    if (a->aggregate && a->aggregate->rows != matched) fail("aggregate(where).rows differs from count(where)", input);
    if (a->aggregate && !same_aggregate(*a->aggregate, *plain.aggregate))
      fail("aggregate differs between the files", input);
    if (!a->page_count || *a->page_count != expected) fail("count(query) differs from the rows query returns", input);
    if (a->explain && whole && (a->explain->rows_matched != matched || a->explain->rows_returned != expected))
      fail("explain's rows_matched/rows_returned differ from count", input);
  }
  if (same_order.rows->json != plain.rows->json) fail("the indexed file in the same order returns other rows", input);
  if (whole) {
    auto a = lines(plain.rows->json), b = lines(reordered.rows->json);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) fail("the reordered indexed file returns other rows", input);
  }

  // Brute force on the plain file, when every comparison of the filter is decided here.
  if (!q.where) return;
  std::string ids;
  bool undecided = false;
  uint64_t hits = 0;
  for (const auto &x : t.rows) {
    if (eval(*q.where, x, undecided)) {
      ++hits;
      ids += "{\"id\":" + std::to_string(x.id) + "}\n";
    }
    if (undecided) return;
  }
  if (hits != matched) fail("count(where) differs from a brute-force evaluation", input);
  query just_ids;
  just_ids.where = q.where;
  just_ids.columns = {"id"};
  auto got = t.plain->query(just_ids);
  if (!got || got->json != ids) fail("query(where) selects other rows than a brute-force evaluation", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tables t;
  if (size < 1) return 0;
  const int mode = data[0] % 3;
  const int extra = (data[0] / 3) % 4;
  const char *column = COLUMNS[(data[0] / 12) % COLUMN_COUNT];
  std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);
  query q;
  if (mode == 2) {
    auto parsed = parse_query_json(text);
    if (!parsed) return 0;
    q = std::move(parsed).value();
  } else {
    auto parsed = mode == 0 ? parse_expression(text) : parse_filter_json(text);
    if (!parsed) return 0;
    q.where = std::move(parsed).value();
    if (extra == 1 || extra == 2) q.order_by = column;
    if (extra == 2) q.descending = true, q.offset = 3, q.limit = 7;
    if (extra == 3) q.columns = {column, "id"}, q.limit = 100;
  }
  check(t, q, column, text);
  return 0;
}
