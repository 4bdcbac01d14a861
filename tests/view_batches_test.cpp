// quire::view::table_writer::create_batches: a view's rows as typed columns in Arrow's layout
// (what the npm package makes Arrow IPC and Parquet of), DECIMAL(38,18) exactly or a typed error
// (decimal128_misfit, the same for the CLI's CSV into Parquet), batches cut by rows and by bytes,
// and the same batches on several tasks as on one.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <functional>
#include <string>

#include "quire/view.h"
#include "test_support.h"

using namespace quire;

namespace {

// 128-bit integers (GCC and Clang on both targets); __extension__ keeps -Wpedantic quiet.
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

const char *VIEW = R"j({"resourceType":"ViewDefinition","resource":"Observation","select":[{"column":[
  {"name":"id","path":"id","type":"id"},
  {"name":"final","path":"status = 'final'","type":"boolean"},
  {"name":"n","path":"component.count()","type":"integer"},
  {"name":"value","path":"value.ofType(Quantity).value","type":"decimal"},
  {"name":"codes","path":"code.coding.code","collection":true}]}]})j";

std::string observation(int i, std::string_view value) {
  std::string s = "{\"resourceType\":\"Observation\",\"id\":\"o" + std::to_string(i) + "\",\"status\":\"";
  s += i % 3 == 0 ? "final" : "amended";
  s += "\",\"code\":{\"coding\":[{\"code\":\"c" + std::to_string(i % 4) + "\"}]}";
  if (!value.empty()) s += ",\"valueQuantity\":{\"value\":" + std::string(value) + "}";
  return s + "}\n";
}

view::compiled_view compile(const char *text) {
  auto v = view::compile(text);
  REQUIRE(v);
  return std::move(v).value();
}

struct kept_batches final : view::batch_sink {
  std::vector<view::column_batch> batches;
  result<void> write(view::column_batch &b) override {
    batches.push_back(b);
    return {};
  }
};

result<uint64_t> write_batches(const view::compiled_view &v, std::string_view input, kept_batches &out,
                               const view::batch_options &options = {}, const view::run_options &run = {}) {
  auto w = view::table_writer::create_batches(v, out, options, run);
  REQUIRE(w);
  if (auto ok = w.value()->feed_ndjson(input); !ok) return ok.error();
  return w.value()->finish();
}

std::array<uint8_t, 16> unscaled_of(std::string_view text) {
  std::array<uint8_t, 16> v{};
  INFO(text);
  REQUIRE(view::decimal128_misfit(text, v).empty());
  return v;
}

// The 16 bytes of a small signed value x 10^18, as Arrow's Decimal128 stores it.
std::array<uint8_t, 16> unscaled_int(int128 v) {
  std::array<uint8_t, 16> b{};
  for (size_t i = 0; i < 16; ++i) b[i] = static_cast<uint8_t>(static_cast<uint128>(v) >> (8 * i));
  return b;
}

constexpr int64_t E18 = 1'000'000'000'000'000'000;

int64_t int_at(const view::column_buffer &b, size_t r) {
  int64_t v = 0;
  std::memcpy(&v, b.values.data() + 8 * r, 8);  // little-endian on both targets
  return v;
}

std::array<uint8_t, 16> decimal_at(const view::column_buffer &b, size_t r) {
  std::array<uint8_t, 16> v{};
  std::memcpy(v.data(), b.values.data() + 16 * r, 16);
  return v;
}

std::string text_at(const view::column_buffer &b, size_t r) {
  return std::string(b.values.begin() + b.offsets[r], b.values.begin() + b.offsets[r + 1]);
}

}  // namespace

TEST_CASE("decimal128_misfit: DECIMAL(38,18) holds a text exactly, or says why not", "[view][batches]") {
  CHECK(unscaled_of("1.5") == unscaled_int(static_cast<int128>(15) * (E18 / 10)));
  CHECK(unscaled_of("0") == unscaled_int(0));
  CHECK(unscaled_of("-0") == unscaled_int(0));
  CHECK(unscaled_of("12") == unscaled_int(static_cast<int128>(12) * E18));
  CHECK(unscaled_of("0001.50") == unscaled_int(static_cast<int128>(15) * (E18 / 10)));
  CHECK(unscaled_of("-0.000000000000000001") == unscaled_int(-1));
  // The largest it holds: 20 integer and 18 fraction digits, 10^38 - 1 unscaled.
  int128 max = 0;
  for (int i = 0; i < 38; ++i) max = max * 10 + 9;
  CHECK(unscaled_of("99999999999999999999.999999999999999999") == unscaled_int(max));
  CHECK(unscaled_of("-99999999999999999999.999999999999999999") == unscaled_int(-max));

  std::array<uint8_t, 16> v{};
  for (std::string_view misfit : {"100000000000000000000", "1.1234567890123456789", "0.1000000000000000000", "1e3",
                                  "1E-2", "-123456789012345678901.5"}) {
    INFO(misfit);
    CHECK(view::decimal128_misfit(misfit, v) ==
          "does not fit DECIMAL(38,18) exactly: at most 20 integer and 18 fraction digits, no exponent");
  }
  CHECK(view::decimal128_misfit("1.", v) == "not a number");
}

TEST_CASE("create_batches: each type in Arrow's layout, nulls in the validity bitmap", "[view][batches]") {
  auto v = compile(VIEW);
  const std::string input = observation(0, "1.50") + observation(1, "") + observation(2, "-3") +
                            "{\"resourceType\":\"Patient\",\"id\":\"p\"}\n" + observation(3, "0.000000000000000001");
  kept_batches out;
  auto rows = write_batches(v, input, out);
  REQUIRE(rows);
  CHECK(*rows == 4);
  REQUIRE(out.batches.size() == 1);
  const view::column_batch &b = out.batches[0];
  CHECK(b.rows == 4);
  REQUIRE(b.columns.size() == 5);

  const auto &id = b.columns[0];
  CHECK(id.type == format::column_type::string);
  CHECK(id.nulls == 0);
  REQUIRE(id.offsets.size() == 5);
  CHECK(text_at(id, 0) == "o0");
  CHECK(text_at(id, 3) == "o3");
  CHECK(id.validity == std::vector<uint8_t>{0x0F});

  const auto &final_ = b.columns[1];
  CHECK(final_.type == format::column_type::boolean);
  CHECK(final_.values == std::vector<uint8_t>{0x09});  // o0 and o3 are final

  const auto &n = b.columns[2];
  CHECK(n.type == format::column_type::integer);
  REQUIRE(n.values.size() == 4 * 8);
  CHECK(int_at(n, 0) == 0);

  const auto &value = b.columns[3];
  CHECK(value.type == format::column_type::decimal);
  CHECK(value.nulls == 1);
  CHECK(value.validity == std::vector<uint8_t>{0x0D});  // o1 has no value
  REQUIRE(value.values.size() == 4 * 16);
  CHECK(decimal_at(value, 0) == unscaled_int(static_cast<int128>(15) * (E18 / 10)));
  CHECK(decimal_at(value, 1) == unscaled_int(0));
  CHECK(decimal_at(value, 2) == unscaled_int(static_cast<int128>(-3) * E18));
  CHECK(decimal_at(value, 3) == unscaled_int(1));

  const auto &codes = b.columns[4];
  CHECK(codes.type == format::column_type::json);
  CHECK(text_at(codes, 2) == "[\"c2\"]");
}

TEST_CASE("create_batches: batches cut by rows and by bytes, the rows in order", "[view][batches]") {
  auto v = compile(VIEW);
  std::string input;
  for (int i = 0; i < 10; ++i) input += observation(i, std::to_string(i) + ".25");
  kept_batches by_rows;
  REQUIRE(write_batches(v, input, by_rows, {.batch_rows = 4}));
  REQUIRE(by_rows.batches.size() == 3);
  CHECK(by_rows.batches[0].rows == 4);
  CHECK(by_rows.batches[1].rows == 4);
  CHECK(by_rows.batches[2].rows == 2);
  CHECK(text_at(by_rows.batches[2].columns[0], 1) == "o9");
  // A fresh validity byte starts each batch.
  CHECK(by_rows.batches[2].columns[3].validity == std::vector<uint8_t>{0x03});

  // A row counts 5 validity bytes, 8 + 16 + 2 x 4 fixed bytes and 8 of text: 3 rows reach 130 bytes.
  kept_batches by_bytes;
  REQUIRE(write_batches(v, input, by_bytes, {.batch_bytes = 130}));
  REQUIRE(by_bytes.batches.size() == 4);
  CHECK(by_bytes.batches[0].rows == 3);
  CHECK(by_bytes.batches[3].rows == 1);
}

TEST_CASE("create_batches: a decimal DECIMAL(38,18) cannot hold is SCHEMA_MISMATCH, as for the CLI's CSV into Parquet",
          "[view][batches]") {
  auto v = compile(VIEW);
  const std::string input = observation(0, "1.5") + observation(1, "1.1234567890123456789");
  kept_batches out;
  auto rows = write_batches(v, input, out);
  REQUIRE_FALSE(rows);
  CHECK(rows.error().code == error_code::SCHEMA_MISMATCH);
  CHECK(rows.error().path == "value");
  CHECK(rows.error().line == 2);
  const std::string message = rows.error().message;
  CHECK(message ==
        "column value (decimal, declared decimal) cannot hold a decimal 1.1234567890123456789 (does not fit "
        "DECIMAL(38,18) exactly: at most 20 integer and 18 fraction digits, no exponent) in resource 2 "
        "(Observation/o1), line 2");

  // CSV holds any decimal; with require_decimal128() (the CLI's Parquet and Arrow) it refuses it alike.
  format::vector_sink csv;
  auto w = view::table_writer::create(v, view::output_kind::csv, {}, csv);
  REQUIRE(w);
  REQUIRE(w.value()->feed_ndjson(input));
  REQUIRE(w.value()->finish());
  format::vector_sink checked;
  auto cw = view::table_writer::create(v, view::output_kind::csv, {}, checked);
  REQUIRE(cw);
  cw.value()->require_decimal128();
  auto ok = cw.value()->feed_ndjson(input);
  REQUIRE_FALSE(ok);
  CHECK(ok.error().code == error_code::SCHEMA_MISMATCH);
  CHECK(ok.error().message == message);

  // An exponent is refused too (DuckDB's cast would take 1e3; the rule keeps every file alike).
  kept_batches e;
  auto with_exponent = write_batches(v, observation(0, "1e3"), e);
  REQUIRE_FALSE(with_exponent);
  CHECK(with_exponent.error().code == error_code::SCHEMA_MISMATCH);
}

TEST_CASE("create_batches: the same batches on several tasks as on one", "[view][batches]") {
  auto v = compile(VIEW);
  std::string input;
  for (int i = 0; i < 3000; ++i) input += observation(i, i % 5 ? std::to_string(i) + ".125" : std::string());
  kept_batches one;
  REQUIRE(write_batches(v, input, one, {.batch_rows = 1000}));
  kept_batches many;
  view::run_options run{.tasks = &default_task_runner(), .threads = 3, .min_parallel_bytes = 0};
  REQUIRE(write_batches(v, input, many, {.batch_rows = 1000}, run));
  REQUIRE(one.batches.size() == 3);
  REQUIRE(many.batches.size() == one.batches.size());
  for (size_t i = 0; i < one.batches.size(); ++i) {
    for (size_t c = 0; c < 5; ++c) {
      CHECK(many.batches[i].columns[c].validity == one.batches[i].columns[c].validity);
      CHECK(many.batches[i].columns[c].values == one.batches[i].columns[c].values);
      CHECK(many.batches[i].columns[c].offsets == one.batches[i].columns[c].offsets);
    }
  }
}
