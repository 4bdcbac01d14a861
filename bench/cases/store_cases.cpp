// Benchmark cases of version-2 .quire files (quire/store.h, issue 20 item 7), in memory so they run
// alike natively, in Node and in a browser: a statement-like table (id, account, posted, amount,
// memo) partitioned by account, one key each, sealed under an owner key.
//
// statements-100k-500: 100,000 rows in 500 partitions (the quick suite); statements-1m-5000:
// 1,000,000 rows in 5,000 partitions (--large). Cases: write (create_store from the version-1
// table); partition-open (open with one partition's key and read its 200 rows); owner-open
// (open with the owner's key and read one partition by filter); append-row with 100 and 1,000
// partitions (one row, one commit, the file growing call by call); rotate (owner key, alternating);
// compact of 3,750 one-row appends (37,500 with --large); find and sum on the same rows sealed
// and plain. The random source is seeded: the same bytes on every target.
#include <map>
#include <memory>
#include <string>

#include "quire/bench.h"
#include "quire/store.h"

namespace quire::bench {
namespace {

using namespace quire::format;

random_source seeded(uint64_t seed) {
  auto state = std::make_shared<uint64_t>(seed);
  return [state](std::span<uint8_t> out) -> result<void> {
    for (auto &b : out) {
      uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      b = static_cast<uint8_t>(z ^ (z >> 31));
    }
    return {};
  };
}

// Partition keys derived from the value (bench only: a real folder holds random keys).
struct derived_keys final : partition_keys {
  result<std::optional<crypto::key>> find(std::string_view value, bool) override {
    std::vector<uint8_t> raw(crypto::KEY_BYTES, 0x5A);
    for (size_t i = 0; i < value.size(); ++i) raw[i % raw.size()] ^= static_cast<uint8_t>(value[i] + i);
    return std::optional<crypto::key>(crypto::key_from_bytes(raw).value());
  }
  result<void> keep(std::string_view, bool, const crypto::key &) override { return {}; }
};
derived_keys &keys() {
  static derived_keys k;
  return k;
}
std::string key_of(const std::string &value) {
  auto k = keys().find(value, false).value().value();
  return std::string(reinterpret_cast<const char *>(k.bytes().data()), crypto::KEY_BYTES);
}
const std::string OWNER(crypto::KEY_BYTES, 'O');
const std::string OWNER2(crypto::KEY_BYTES, 'N');

std::string account(uint64_t i, uint64_t partitions) { return "acct-" + std::to_string(i % partitions); }

// The rows as a version-1 table (the store's input), deterministic.
std::string statements(uint64_t rows, uint64_t partitions, uint64_t first = 0) {
  format::schema s;
  s.columns = {{"id", column_type::integer},
               {"account", column_type::string},
               {"posted", column_type::date},
               {"amount", column_type::decimal},
               {"memo", column_type::string}};
  vector_sink sink;
  write_options wo;
  auto w = writer::create(s, wo, sink).value();
  std::vector<cell> row(5);
  std::string acct, amount, memo;
  for (uint64_t i = first; i < first + rows; ++i) {
    acct = account(i, partitions);
    amount = std::to_string((i * 7919) % 100000) + "." + std::to_string(10 + i % 90);
    memo = (i % 3 == 0   ? "card payment "
            : i % 3 == 1 ? "transfer to savings "
                         : "direct debit ") +
           std::to_string(i % 977);
    row[0] = cell::of(static_cast<int64_t>(i));
    row[1] = cell::text(acct);
    row[2] = cell::of(static_cast<int64_t>(19000 + i % 365));
    row[3] = cell::text(amount);
    row[4] = cell::text(memo);
    (void)w->append_row(row);
  }
  (void)w->finish();
  return std::string(reinterpret_cast<const char *>(sink.bytes.data()), sink.bytes.size());
}

store_options sealed_options(uint64_t seed) {
  store_options o;
  o.partition_by = "account";
  o.owner_key = OWNER;
  o.keys = &keys();
  o.random = seeded(seed);
  o.write.indexes = {{"id", index_kind::hash}};
  return o;
}

result<memory_target> make_store(std::string_view table_bytes, const store_options &o) {
  auto table = file::open(borrow_bytes({reinterpret_cast<const uint8_t *>(table_bytes.data()), table_bytes.size()}));
  if (!table) return std::move(table).error();
  memory_target t;
  auto r = create_store(*table, o, t);
  if (!r) return std::move(r).error();
  return t;
}

// Stores built once per shape and kept: cases that read share them.
const memory_target &kept(const std::string &key, const std::function<memory_target()> &build) {
  static std::map<std::string, memory_target> all;
  auto it = all.find(key);
  if (it == all.end()) it = all.emplace(key, build()).first;
  return it->second;
}

template <uint64_t ROWS, uint64_t PARTS>
std::string table_input() {
  return statements(ROWS, PARTS);
}

template <uint64_t ROWS, uint64_t PARTS, bool SEALED>
const memory_target &store_of(std::string_view input) {
  return kept(std::to_string(ROWS) + "/" + std::to_string(PARTS) + (SEALED ? "s" : "p"), [&] {
    auto o = sealed_options(1);
    if (!SEALED) {
      o.owner_key.clear();
      o.keys = nullptr;
    }
    return make_store(input, o).value();
  });
}

result<uint64_t> digest_rows(file &f, const query &q) {
  auto rows = f.query(q);
  if (!rows) return std::move(rows).error();
  uint64_t d = rows->count;
  for (unsigned char c : rows->json) d = mix(d, c);
  return d;
}

template <uint64_t ROWS, uint64_t PARTS>
result<uint64_t> write_op(std::string_view input) {
  auto t = make_store(input, sealed_options(1));
  if (!t) return std::move(t).error();
  uint64_t d = t->bytes.size();
  for (size_t i = 0; i < t->bytes.size(); i += 4096) d = mix(d, t->bytes[i]);
  return d;
}

template <uint64_t ROWS, uint64_t PARTS>
result<uint64_t> partition_open_op(std::string_view input) {
  const auto &t = store_of<ROWS, PARTS, true>(input);
  open_options oo;
  oo.key = key_of(account(PARTS / 2, PARTS));
  auto f = file::open(borrow_bytes(t.bytes), oo);
  if (!f) return std::move(f).error();
  return digest_rows(*f, {});
}

template <uint64_t ROWS, uint64_t PARTS>
result<uint64_t> owner_open_op(std::string_view input) {
  const auto &t = store_of<ROWS, PARTS, true>(input);
  open_options oo;
  oo.key = OWNER;
  auto f = file::open(borrow_bytes(t.bytes), oo);
  if (!f) return std::move(f).error();
  query q;
  q.where = parse_expression("account = '" + account(PARTS / 2, PARTS) + "'").value();
  return digest_rows(*f, q);
}

template <uint64_t ROWS, uint64_t PARTS, bool SEALED>
result<uint64_t> find_op(std::string_view input) {
  const auto &t = store_of<ROWS, PARTS, SEALED>(input);
  open_options oo;
  if (SEALED) oo.key = OWNER;
  auto f = file::open(borrow_bytes(t.bytes), oo);
  if (!f) return std::move(f).error();
  auto row = f->find("id", value::of(static_cast<int64_t>(ROWS / 3)));
  if (!row) return std::move(row).error();
  uint64_t d = 0;
  for (unsigned char c : row->value_or("")) d = mix(d, c);
  return d;
}

template <uint64_t ROWS, uint64_t PARTS, bool SEALED>
result<uint64_t> sum_op(std::string_view input) {
  const auto &t = store_of<ROWS, PARTS, SEALED>(input);
  open_options oo;
  if (SEALED) oo.key = OWNER;
  auto f = file::open(borrow_bytes(t.bytes), oo);
  if (!f) return std::move(f).error();
  auto a = f->aggregate("amount");
  if (!a) return std::move(a).error();
  uint64_t d = 0;
  for (unsigned char c : to_json(*a)) d = mix(d, c);
  return d;
}

// One row appended to a store of PARTS partitions, 20 rows each; the store grows call by call.
template <uint64_t PARTS>
result<uint64_t> append_op(std::string_view) {
  static memory_target t = make_store(statements(PARTS * 20, PARTS), sealed_options(2)).value();
  static const std::string row_bytes = statements(1, PARTS, 7);
  static auto row = file::open(borrow_bytes({reinterpret_cast<const uint8_t *>(row_bytes.data()), row_bytes.size()}));
  static auto o = sealed_options(3);
  auto r = append_store(t, *row, o);
  if (!r) return std::move(r).error();
  return r->rows;  // the bytes a commit takes grow slowly with the file (its offsets' varints)
}

template <uint64_t ROWS, uint64_t PARTS>
result<uint64_t> rotate_op(std::string_view input) {
  static memory_target t = make_store(input, sealed_options(4)).value();
  static bool flip = false;
  auto o = sealed_options(5);
  o.owner_key = flip ? OWNER2 : OWNER;
  auto r = rotate_owner_key(t, o, flip ? OWNER : OWNER2, {});
  if (!r) return std::move(r).error();
  flip = !flip;
  return r->rows;
}

// A store of one partition grown by APPENDS one-row commits (built once), compacted.
template <uint64_t APPENDS>
std::string appended_input() {
  auto o = sealed_options(6);
  o.partition_by.clear();
  o.keys = nullptr;
  memory_target t = make_store(statements(1, 1), o).value();
  const std::string one = statements(1, 1, 1);
  auto row = file::open(borrow_bytes({reinterpret_cast<const uint8_t *>(one.data()), one.size()})).value();
  for (uint64_t i = 1; i < APPENDS; ++i) (void)append_store(t, row, o);
  return std::string(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
}

result<uint64_t> compact_op(std::string_view input) {
  memory_target source(std::vector<uint8_t>(input.begin(), input.end()));
  memory_target fresh;
  auto o = sealed_options(7);
  o.partition_by.clear();
  o.keys = nullptr;
  auto r = compact_store(source, fresh, o);
  if (!r) return std::move(r).error();
  return mix(fresh.bytes.size(), r->rows);
}

struct registrar {
  registrar() {
    registration{{"store.write", "statements-100k-500", table_input<100000, 500>, write_op<100000, 500>, 100000}};
    registration{
        {"store.partition-open", "statements-100k-500", table_input<100000, 500>, partition_open_op<100000, 500>, 200}};
    registration{
        {"store.owner-open", "statements-100k-500", table_input<100000, 500>, owner_open_op<100000, 500>, 200}};
    registration{{"store.find", "statements-100k-500-sealed", table_input<100000, 500>, find_op<100000, 500, true>, 1}};
    registration{{"store.find", "statements-100k-500-plain", table_input<100000, 500>, find_op<100000, 500, false>, 1}};
    registration{
        {"store.sum", "statements-100k-500-sealed", table_input<100000, 500>, sum_op<100000, 500, true>, 100000}};
    registration{
        {"store.sum", "statements-100k-500-plain", table_input<100000, 500>, sum_op<100000, 500, false>, 100000}};
    registration{{"store.append-row", "partitions-100", [] { return std::string("1"); }, append_op<100>, 1}};
    registration{{"store.append-row", "partitions-1000", [] { return std::string("1"); }, append_op<1000>, 1}};
    registration{{"store.rotate", "statements-100k-500", table_input<100000, 500>, rotate_op<100000, 500>, 500}};
    registration{{"store.compact", "appends-3750", appended_input<3750>, compact_op, 3750}};
    case_def big_write{"store.write", "statements-1m-5000", table_input<1000000, 5000>, write_op<1000000, 5000>,
                       1000000};
    big_write.large = true;
    registration{std::move(big_write)};
    case_def big_open{"store.partition-open", "statements-1m-5000", table_input<1000000, 5000>,
                      partition_open_op<1000000, 5000>, 200};
    big_open.large = true;
    registration{std::move(big_open)};
    case_def big_owner{"store.owner-open", "statements-1m-5000", table_input<1000000, 5000>,
                       owner_open_op<1000000, 5000>, 200};
    big_owner.large = true;
    registration{std::move(big_owner)};
    case_def big_compact{"store.compact", "appends-37500", appended_input<37500>, compact_op, 37500};
    big_compact.large = true;
    registration{std::move(big_compact)};
  }
} registered;

}  // namespace
}  // namespace quire::bench
