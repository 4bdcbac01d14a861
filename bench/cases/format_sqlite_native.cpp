// SQLite as a peer of the .quire format's customers-200k cases, measured natively only (Debian's
// libsqlite3; the file is left out of the wasm module by its _native.cpp name).
//
// The database: one table of the 8 customer columns (id, age INTEGER; balance REAL; created_at
// INTEGER microseconds since 1970; the rest TEXT) in id order, plus an index on id, built from the
// same quire::format::generate_customers(200000) as format_cases.cpp. It is built once in memory
// and serialised; those bytes are the cases' input (input_bytes is the database's size) and are
// written once to a temporary file (mkstemp), removed at exit. Each read call then does what an
// application does cold: sqlite3_open_v2 on the file READONLY (an empty page cache), prepare,
// step, build each row as a JSON object, close. Rows are rendered exactly as quire renders them
// (same key order, numbers, ISO 8601 timestamps), so a row set's checksum equals quire's case's.
//
// Each case checks its first answer against quire's (quire::format on the same customers, no
// index) and fails with INVALID_ARGUMENT naming the difference: a faster wrong answer is no peer.
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../shapes/format_shapes.h"
#include "quire/bench.h"
#include "quire/format.h"
#include "quire/json.h"
#include "quire/number_text.h"

namespace quire::bench {
namespace {

constexpr size_t CUSTOMERS = 200000;
constexpr int64_t FIND_ID = 123456;
constexpr const char *COLUMNS = "id, name, email, country, city, age, balance, created_at";

const std::vector<format::customer> &customers() {
  static const std::vector<format::customer> all = format::generate_customers(CUSTOMERS);
  return all;
}

// --- rows as quire renders them ----------------------------------------------------------------

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

void append_padded(std::string &out, int64_t v, int width) {
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "%0*lld", width, static_cast<long long>(v));
  out.append(buf, static_cast<size_t>(n));
}

// ISO 8601 as quire writes a timestamp: seconds always, then .mmm or .uuuuuu only when non-zero.
void append_timestamp(std::string &out, int64_t micros) {
  const int64_t seconds = floor_div(micros, 1000000);
  const int64_t frac = micros - seconds * 1000000;
  const int64_t days = floor_div(seconds, 86400);
  const int64_t rest = seconds - days * 86400;
  // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
  const int64_t z = days + 719468;
  const int64_t era = floor_div(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  append_padded(out, year, 4);
  out.push_back('-');
  append_padded(out, month, 2);
  out.push_back('-');
  append_padded(out, day, 2);
  out.push_back('T');
  append_padded(out, rest / 3600, 2);
  out.push_back(':');
  append_padded(out, rest / 60 % 60, 2);
  out.push_back(':');
  append_padded(out, rest % 60, 2);
  if (frac) {
    out.push_back('.');
    if (frac % 1000 == 0) append_padded(out, frac / 1000, 3);
    else append_padded(out, frac, 6);
  }
  out.push_back('Z');
}

// Doubles print through quire's own printer (quire/number_text.h), so the rows' text is quire's.
using quire::append_double;

std::string_view column_text(sqlite3_stmt *s, int i) {
  const unsigned char *p = sqlite3_column_text(s, i);
  return p ? std::string_view(reinterpret_cast<const char *>(p), static_cast<size_t>(sqlite3_column_bytes(s, i)))
           : std::string_view();
}

// One row of `SELECT <COLUMNS>` as quire's JSON object of the customer schema.
void append_row(std::string &out, sqlite3_stmt *s) {
  out += "{\"id\":";
  out += std::to_string(sqlite3_column_int64(s, 0));
  static const char *const TEXT_KEYS[] = {",\"name\":", ",\"email\":", ",\"country\":", ",\"city\":"};
  for (int i = 0; i < 4; ++i) {
    out += TEXT_KEYS[i];
    json::append_quoted(out, column_text(s, i + 1));
  }
  out += ",\"age\":";
  out += std::to_string(sqlite3_column_int64(s, 5));
  out += ",\"balance\":";
  append_double(out, sqlite3_column_double(s, 6));
  out += ",\"created_at\":\"";
  append_timestamp(out, sqlite3_column_int64(s, 7));
  out += "\"}";
}

// --- SQLite ------------------------------------------------------------------------------------

quire::error sqlite_error(sqlite3 *db, const char *what) {
  return quire::error(error_code::IO_ERROR,
                      std::string("SQLite: ") + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// A connection closed on scope exit.
struct connection {
  sqlite3 *db = nullptr;
  connection() = default;
  connection(const connection &) = delete;
  connection &operator=(const connection &) = delete;
  ~connection() { sqlite3_close(db); }
};

// A prepared statement finalised on scope exit.
struct statement {
  sqlite3_stmt *s = nullptr;
  statement() = default;
  statement(const statement &) = delete;
  statement &operator=(const statement &) = delete;
  ~statement() { sqlite3_finalize(s); }
};

result<void> exec(sqlite3 *db, const char *sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return sqlite_error(db, sql);
  return {};
}

// Writes the customers into `db` (empty) in one transaction of prepared inserts, then the index.
result<void> fill(sqlite3 *db) {
  if (auto r = exec(db,
                    "CREATE TABLE customers (id INTEGER, name TEXT, email TEXT, country TEXT, city TEXT, age INTEGER, "
                    "balance REAL, created_at INTEGER)");
      !r)
    return r;
  if (auto r = exec(db, "BEGIN"); !r) return r;
  statement insert;
  if (sqlite3_prepare_v2(db, "INSERT INTO customers VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &insert.s, nullptr) !=
      SQLITE_OK)
    return sqlite_error(db, "prepare insert");
  for (const auto &c : customers()) {
    sqlite3_bind_int64(insert.s, 1, c.id);
    sqlite3_bind_text(insert.s, 2, c.name.data(), static_cast<int>(c.name.size()), SQLITE_STATIC);
    sqlite3_bind_text(insert.s, 3, c.email.data(), static_cast<int>(c.email.size()), SQLITE_STATIC);
    sqlite3_bind_text(insert.s, 4, c.country.data(), static_cast<int>(c.country.size()), SQLITE_STATIC);
    sqlite3_bind_text(insert.s, 5, c.city.data(), static_cast<int>(c.city.size()), SQLITE_STATIC);
    sqlite3_bind_int64(insert.s, 6, c.age);
    sqlite3_bind_double(insert.s, 7, c.balance);
    sqlite3_bind_int64(insert.s, 8, c.created_at);
    if (sqlite3_step(insert.s) != SQLITE_DONE) return sqlite_error(db, "insert");
    sqlite3_reset(insert.s);
  }
  if (auto r = exec(db, "CREATE INDEX customers_id ON customers (id)"); !r) return r;
  return exec(db, "COMMIT");
}

// The customers written into a fresh in-memory database, serialised: the database file's bytes.
result<std::string> build_database() {
  connection c;
  if (sqlite3_open_v2(":memory:", &c.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
    return sqlite_error(c.db, "open :memory:");
  if (auto r = fill(c.db); !r) return std::move(r).error();
  sqlite3_int64 size = 0;
  unsigned char *bytes = sqlite3_serialize(c.db, "main", &size, 0);
  if (!bytes) return sqlite_error(c.db, "serialize");
  std::string out(reinterpret_cast<const char *>(bytes), static_cast<size_t>(size));
  sqlite3_free(bytes);
  return out;
}

// The database file the read cases open: written once from the input bytes, removed at exit.
struct temp_database {
  std::string path;
  ~temp_database() {
    if (!path.empty()) std::remove(path.c_str());
  }
};
temp_database &database_file() {
  static temp_database file;
  return file;
}

// The input of every read case: the database's bytes (built once per process), also written to
// the temporary file. An empty string when building failed: the cases then report why.
std::string database_bytes() {
  static const std::string bytes = [] {
    auto built = build_database();
    if (!built) {
      std::fprintf(stderr, "SQLite peer: %s\n", built.error().describe().c_str());
      return std::string();
    }
    const char *dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/quire-bench-sqlite-XXXXXX";
    int fd = mkstemp(path.data());
    if (fd < 0) return std::string();
    const std::string &b = built.value();
    size_t done = 0;
    while (done < b.size()) {
      ssize_t n = write(fd, b.data() + done, b.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
    database_file().path = path;
    if (done != b.size()) return std::string();
    return std::move(built).value();
  }();
  return bytes;
}

// Opens the database file read-only, as a fresh connection: no page of it is cached yet.
result<void> open_readonly(connection &c) {
  const std::string &path = database_file().path;
  if (path.empty()) return quire::error(error_code::IO_ERROR, "SQLite peer: the database file was not written");
  if (sqlite3_open_v2(path.c_str(), &c.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    return sqlite_error(c.db, "open");
  return {};
}

struct rows_answer {
  std::string json;  // NDJSON, as quire's row_set
  uint64_t count = 0;
};

// Runs a `SELECT <COLUMNS> ...` on a fresh read-only connection; `id` binds ?1 when given.
result<rows_answer> select_rows(const std::string &sql, std::optional<int64_t> id = std::nullopt) {
  connection c;
  if (auto o = open_readonly(c); !o) return std::move(o).error();
  statement st;
  if (sqlite3_prepare_v2(c.db, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK) return sqlite_error(c.db, "prepare");
  if (id) sqlite3_bind_int64(st.s, 1, *id);
  rows_answer out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    append_row(out.json, st.s);
    out.json.push_back('\n');
    ++out.count;
  }
  if (rc != SQLITE_DONE) return sqlite_error(c.db, "step");
  return out;
}

std::string select_sql(const char *rest) { return std::string("SELECT ") + COLUMNS + " FROM customers" + rest; }

// --- quire's answers, to check each peer case's first answer against ---------------------------

result<format::file> quire_file() {
  static const std::string bytes = shapes::format_customers_file(customers(), {});
  return format::file::open(borrow_bytes({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()}));
}

result<format::row_set> quire_query(const char *where, uint64_t offset = 0, uint64_t limit = UINT64_MAX,
                                    const char *order_by = "", bool descending = false) {
  auto f = quire_file();
  if (!f) return std::move(f).error();
  format::query q;
  if (*where) {
    auto w = format::parse_expression(where);
    if (!w) return std::move(w).error();
    q.where = std::move(w).value();
  }
  q.offset = offset;
  q.limit = limit;
  q.order_by = order_by;
  q.descending = descending;
  return f->query(q);
}

quire::error differs(const char *op, const std::string &what) {
  return quire::error(error_code::INVALID_ARGUMENT,
                      std::string("SQLite's answer to ") + op + " differs from quire's: " + what);
}

// Compares a row set with quire's: the same rows, in the same order, rendered to the same text.
result<void> check_rows(const char *op, const rows_answer &mine, result<format::row_set> theirs) {
  if (!theirs) return std::move(theirs).error();
  if (mine.count != theirs->count)
    return differs(op, std::to_string(mine.count) + " rows against " + std::to_string(theirs->count));
  if (mine.json != theirs->json) {
    size_t at = 0;
    while (at < mine.json.size() && at < theirs->json.size() && mine.json[at] == theirs->json[at]) ++at;
    return differs(op, "the rows' text differs at byte " + std::to_string(at) + ": \"" +
                           mine.json.substr(at > 40 ? at - 40 : 0, 80) + "\" against \"" +
                           theirs->json.substr(at > 40 ? at - 40 : 0, 80) + "\"");
  }
  return {};
}

// Runs `answer`, checks its first result with `check` (once per process), returns `fold` of it.
template <typename T, typename Answer, typename Check, typename Fold>
result<uint64_t> checked(bool &done, Answer answer, Check check, Fold fold) {
  result<T> a = answer();
  if (!a) return std::move(a).error();
  if (!done) {
    if (auto c = check(a.value()); !c) return std::move(c).error();
    done = true;
  }
  return fold(a.value());
}

uint64_t fold_rows(const rows_answer &r) { return mix(digest_words(r.json), r.count); }

// --- the cases ---------------------------------------------------------------------------------

// A rows case: `sql` on a fresh connection, checked against quire's `expected()` once.
template <typename Expected>
result<uint64_t> rows_case(bool &done, const char *op, const std::string &sql, Expected expected) {
  return checked<rows_answer>(
      done, [&] { return select_rows(sql); }, [&](const rows_answer &a) { return check_rows(op, a, expected()); },
      fold_rows);
}

result<uint64_t> find_op(std::string_view) {
  static bool done = false;
  static const std::string sql = select_sql(" WHERE id = ?1");
  return checked<rows_answer>(
      done, [] { return select_rows(sql, FIND_ID); },
      [](const rows_answer &a) -> result<void> {
        auto f = quire_file();
        if (!f) return std::move(f).error();
        auto row = f->find("id", format::value::of(FIND_ID));
        if (!row) return std::move(row).error();
        std::string expected = row->has_value() ? **row + "\n" : "";
        if (a.json != expected) return differs("find", "\"" + a.json + "\" against \"" + expected + "\"");
        return {};
      },
      // As quire's case: a digest of the row's JSON object (no newline).
      [](const rows_answer &a) { return a.count ? digest(std::string_view(a.json).substr(0, a.json.size() - 1)) : 0; });
}

result<uint64_t> filter_count_op(std::string_view) {
  static bool done = false;
  return checked<uint64_t>(
      done,
      []() -> result<uint64_t> {
        connection c;
        if (auto o = open_readonly(c); !o) return std::move(o).error();
        statement st;
        if (sqlite3_prepare_v2(c.db, "SELECT count(*) FROM customers WHERE country = 'NA' AND age > 80", -1, &st.s,
                               nullptr) != SQLITE_OK)
          return sqlite_error(c.db, "prepare");
        if (sqlite3_step(st.s) != SQLITE_ROW) return sqlite_error(c.db, "step");
        return static_cast<uint64_t>(sqlite3_column_int64(st.s, 0));
      },
      [](uint64_t n) -> result<void> {
        auto f = quire_file();
        if (!f) return std::move(f).error();
        auto where = format::parse_expression("country = 'NA' and age > 80");
        if (!where) return std::move(where).error();
        format::query q;
        q.where = std::move(where).value();
        auto expected = f->count(q);
        if (!expected) return std::move(expected).error();
        if (n != *expected) return differs("filter-count", std::to_string(n) + " against " + std::to_string(*expected));
        return {};
      },
      [](uint64_t n) { return mix(0, n); });
}

result<uint64_t> filter_op(std::string_view) {
  static bool done = false;
  static const std::string sql = select_sql(" WHERE country = 'NA' AND age > 80");
  return rows_case(done, "filter", sql, [] { return quire_query("country = 'NA' and age > 80"); });
}

// instr(), not LIKE: LIKE is case-insensitive for ASCII in SQLite, quire's contains compares bytes.
result<uint64_t> text_search_op(std::string_view) {
  static bool done = false;
  static const std::string sql = select_sql(" WHERE instr(name, 'Okafor') > 0");
  return rows_case(done, "text-search", sql, [] { return quire_query("name contains 'Okafor'"); });
}

result<uint64_t> read_all_op(std::string_view) {
  static bool done = false;
  static const std::string sql = select_sql("");
  return rows_case(done, "read-all", sql, [] { return quire_query(""); });
}

result<uint64_t> deep_page_op(std::string_view) {
  static bool done = false;
  static const std::string sql = select_sql(" ORDER BY id LIMIT 10 OFFSET 150000");
  return rows_case(done, "deep-page", sql, [] { return quire_query("", 150000, 10); });
}

result<uint64_t> newest_op(std::string_view) {
  static bool done = false;
  static const std::string sql = select_sql(" ORDER BY created_at DESC LIMIT 50");
  return rows_case(done, "newest-50", sql, [] { return quire_query("", 0, 50, "created_at", true); });
}

struct sum_answer {
  uint64_t rows = 0, count = 0;
  double sum = 0;
  std::string min_json, max_json;
};

uint64_t fold_sum(const sum_answer &a) {
  uint64_t d = mix(0, a.rows);
  d = mix(d, a.count);
  uint64_t bits = 0;
  std::memcpy(&bits, &a.sum, sizeof bits);
  d = mix(d, bits);
  d = digest(a.min_json, d);
  return digest(a.max_json, d);
}

result<uint64_t> sum_op(std::string_view) {
  static bool done = false;
  return checked<sum_answer>(
      done,
      []() -> result<sum_answer> {
        connection c;
        if (auto o = open_readonly(c); !o) return std::move(o).error();
        statement st;
        if (sqlite3_prepare_v2(
                c.db, "SELECT count(*), count(balance), sum(balance), min(balance), max(balance) FROM customers", -1,
                &st.s, nullptr) != SQLITE_OK)
          return sqlite_error(c.db, "prepare");
        if (sqlite3_step(st.s) != SQLITE_ROW) return sqlite_error(c.db, "step");
        sum_answer a;
        a.rows = static_cast<uint64_t>(sqlite3_column_int64(st.s, 0));
        a.count = static_cast<uint64_t>(sqlite3_column_int64(st.s, 1));
        a.sum = sqlite3_column_double(st.s, 2);
        append_double(a.min_json, sqlite3_column_double(st.s, 3));
        append_double(a.max_json, sqlite3_column_double(st.s, 4));
        return a;
      },
      [](const sum_answer &a) -> result<void> {
        auto f = quire_file();
        if (!f) return std::move(f).error();
        auto q = f->aggregate("balance");
        if (!q) return std::move(q).error();
        if (a.rows != q->rows || a.count != q->count) return differs("sum", "counts differ");
        std::string qmin, qmax;
        append_double(qmin, q->min.d);
        append_double(qmax, q->max.d);
        if (a.min_json != qmin || a.max_json != qmax)
          return differs("sum", "min/max " + a.min_json + "/" + a.max_json + " against " + qmin + "/" + qmax);
        // The order of summation differs (and SQLite may compensate): equal to 1e-9, relatively.
        if (std::fabs(a.sum - q->sum) > 1e-9 * std::fabs(q->sum)) {
          std::string mine, theirs;
          append_double(mine, a.sum);
          append_double(theirs, q->sum);
          return differs("sum", mine + " against " + theirs);
        }
        return {};
      },
      fold_sum);
}

// Reads written database bytes back (a read-only in-memory copy) and checks their row count.
result<void> check_written(const std::string &bytes) {
  connection c;
  if (sqlite3_open_v2(":memory:", &c.db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    return sqlite_error(c.db, "open");
  auto *copy = static_cast<unsigned char *>(sqlite3_malloc64(bytes.size()));
  if (!copy) return sqlite_error(nullptr, "malloc");
  std::memcpy(copy, bytes.data(), bytes.size());
  const auto size = static_cast<sqlite3_int64>(bytes.size());
  const unsigned flags = SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY;
  if (sqlite3_deserialize(c.db, "main", copy, size, size, flags) != SQLITE_OK) return sqlite_error(c.db, "deserialize");
  statement st;
  if (sqlite3_prepare_v2(c.db, "SELECT count(*) FROM customers", -1, &st.s, nullptr) != SQLITE_OK ||
      sqlite3_step(st.s) != SQLITE_ROW)
    return sqlite_error(c.db, "count");
  const auto n = static_cast<uint64_t>(sqlite3_column_int64(st.s, 0));
  auto f = quire_file();
  if (!f) return std::move(f).error();
  if (n != f->row_count())
    return differs("write", std::to_string(n) + " rows read back against " + std::to_string(f->row_count()));
  return {};
}

// Rows from memory into a fresh in-memory database in one transaction, with the id index; the
// result is the database's bytes (sqlite3_serialize), as quire's write ends with the file's bytes.
result<uint64_t> write_op(std::string_view) {
  static bool done = false;
  return checked<std::string>(done, build_database, check_written,
                              [](const std::string &bytes) { return mix(mix(0, CUSTOMERS), bytes.size()); });
}

struct op_def {
  const char *op;
  result<uint64_t> (*run)(std::string_view);
};

const op_def READ_OPS[] = {
    {"find", find_op},           {"filter-count", filter_count_op},
    {"filter", filter_op},       {"text-search", text_search_op},
    {"read-all", read_all_op},   {"sum", sum_op},
    {"deep-page", deep_page_op}, {"newest-50", newest_op},
};

case_def peer_case(const char *op, std::string (*input)(), result<uint64_t> (*run)(std::string_view)) {
  case_def c{std::string("peer.sqlite.") + op, "customers-200k", input, run, CUSTOMERS};
  c.peer = std::string("SQLite ") + sqlite3_libversion();
  c.mirrors = std::string("format.") + op + "/customers-200k";
  return c;
}

struct register_all {
  register_all() {
    for (const auto &op : READ_OPS) registration{peer_case(op.op, database_bytes, op.run)};
    // Like format.write, its input is the customers' NDJSON (the rows it writes are in memory).
    registration{peer_case(
        "write", [] { return format::customers_ndjson(customers()); }, write_op)};
  }
} registered;

}  // namespace
}  // namespace quire::bench
