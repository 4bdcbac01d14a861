// The listener's engine (quire/listen.h): MLLP bytes in, rows committed to a store in memory,
// ACKs out only after the commit; duplicates, restarts, bad frames, bounds and a failed commit.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "quire/listen.h"

using namespace quire;
using quire::listen::listener;

namespace {

std::string adt(std::string_view control_id, std::string_view sender = "SND", std::string_view patient = "P123") {
  std::string m = "MSH|^~\\&|";
  m += sender;
  m += "|FAC|RCV|RFAC|20261203064115||ADT^A01^ADT_A01|";
  m += control_id;
  m += "|P|2.5\rEVN|A01|20261203064115\r";
  if (!patient.empty()) {
    m += "PID|1||";
    m += patient;
    m += "^^^HOSP^MR~OTHER^^^X||DOE^JANE\r";
  }
  return m;
}

std::span<const uint8_t> as_bytes(const std::string &s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

format::store_options plain() {
  format::store_options o;
  o.random = [](std::span<uint8_t> out) -> result<void> {
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7 + 3);
    return {};
  };
  return o;
}

listen::options opts() {
  listen::options o;
  o.store = plain();
  return o;
}

// MSA-1 and MSA-2 of an MLLP-framed ACK.
std::pair<std::string, std::string> msa_of(const std::string &framed) {
  REQUIRE(framed.size() > 3);
  REQUIRE(framed.front() == '\x0B');
  REQUIRE(framed.substr(framed.size() - 2) == "\x1C\r");
  const std::string body = framed.substr(1, framed.size() - 3);
  auto m = hl7v2::parse(body);
  REQUIRE(m.ok());
  auto code = m->get("MSA-1");
  auto id = m->get("MSA-2");
  REQUIRE(code.ok());
  REQUIRE(id.ok());
  return {std::string(code.value().value_or("")), std::string(id.value().value_or(""))};
}

std::string field_of(const std::string &framed, std::string_view path) {
  const std::string body = framed.substr(1, framed.size() - 3);  // the message views it
  auto m = hl7v2::parse(body);
  REQUIRE(m.ok());
  auto v = m->get(path);
  REQUIRE(v.ok());
  return std::string(v.value().value_or(""));
}

uint64_t rows_in(const format::memory_target &t, const std::string &key = {}) {
  format::open_options oo;
  oo.key = key;
  auto f = format::file::open(quire::borrow_bytes(t.bytes), oo);
  REQUIRE(f.ok());
  return f->row_count();
}

std::string rows_json(const format::memory_target &t) {
  auto f = format::file::open(quire::borrow_bytes(t.bytes));
  REQUIRE(f.ok());
  format::query q;
  q.columns = {"control_id",         "type",         "sending_application", "sending_facility", "receiving_application",
               "receiving_facility", "message_time", "receive_time",        "patient_id",       "ack_code"};
  auto rows = f->query(q);
  REQUIRE(rows.ok());
  return rows->json;
}

}  // namespace

TEST_CASE("listen stores a row a message and acknowledges only after the commit", "[listen]") {
  format::memory_target t;
  auto l = listener::open(t, opts());
  REQUIRE(l.ok());
  CHECK(rows_in(t) == 0);
  const std::string a = hl7v2::mllp_encode(adt("C1")), b = hl7v2::mllp_encode(adt("C2", "LAB", ""));
  // One connection's frame split across reads, another's whole.
  l.value()->feed(1, as_bytes(a.substr(0, 10)), 1'000'000);
  CHECK(l.value()->group_size() == 0);
  CHECK(l.value()->queued_bytes(1) == 9);
  l.value()->feed(2, as_bytes(b), 2'000'000);
  l.value()->feed(1, as_bytes(a.substr(10)), 3'000'000);
  CHECK(l.value()->group_rows() == 2);
  CHECK(rows_in(t) == 0);  // nothing stored, nothing acknowledged yet
  auto acks = l.value()->commit();
  REQUIRE(acks.ok());
  REQUIRE(acks->size() == 2);
  CHECK((*acks)[0].connection == 2);
  CHECK(msa_of((*acks)[0].bytes) == std::make_pair(std::string("AA"), std::string("C2")));
  CHECK((*acks)[1].connection == 1);
  CHECK(msa_of((*acks)[1].bytes) == std::make_pair(std::string("AA"), std::string("C1")));
  CHECK(field_of((*acks)[1].bytes, "MSH-7") == "19700101000003");  // the receive time, not a clock
  CHECK(field_of((*acks)[1].bytes, "MSH-3") == "RCV");
  CHECK(rows_in(t) == 2);
  CHECK(rows_json(t) ==
        "{\"control_id\":\"C2\",\"type\":\"ADT^A01^ADT_A01\",\"sending_application\":\"LAB\",\"sending_facility\":"
        "\"FAC\",\"receiving_application\":\"RCV\",\"receiving_facility\":\"RFAC\",\"message_time\":"
        "\"20261203064115\",\"receive_time\":\"1970-01-01T00:00:02Z\",\"patient_id\":null,\"ack_code\":\"AA\"}\n"
        "{\"control_id\":\"C1\",\"type\":\"ADT^A01^ADT_A01\",\"sending_application\":\"SND\",\"sending_facility\":"
        "\"FAC\",\"receiving_application\":\"RCV\",\"receiving_facility\":\"RFAC\",\"message_time\":"
        "\"20261203064115\",\"receive_time\":\"1970-01-01T00:00:03Z\",\"patient_id\":\"P123\",\"ack_code\":\"AA\"}\n");
  auto f = format::file::open(quire::borrow_bytes(t.bytes));
  REQUIRE(f.ok());
  auto msg = f->find("control_id", format::value::text("C1"), {"message"});
  REQUIRE(msg.ok());
  REQUIRE(msg.value().has_value());
  CHECK(msg.value()->find("PID|1||P123") != std::string::npos);
  CHECK(l.value()->counters().stored == 2);
  CHECK(l.value()->counters().commits == 1);
}

TEST_CASE("listen acknowledges a duplicate again and stores it once, across a restart", "[listen]") {
  format::memory_target t;
  {
    auto l = listener::open(t, opts());
    REQUIRE(l.ok());
    const std::string both = hl7v2::mllp_encode(adt("D1")) + hl7v2::mllp_encode(adt("D1"));
    l.value()->feed(7, as_bytes(both), 10);
    auto acks = l.value()->commit();
    REQUIRE(acks.ok());
    REQUIRE(acks->size() == 2);
    CHECK(msa_of((*acks)[0].bytes).first == "AA");
    CHECK(msa_of((*acks)[1].bytes).first == "AA");
    CHECK(l.value()->counters().duplicates == 1);
    // Same control id from another sender is another message.
    l.value()->feed(7, as_bytes(hl7v2::mllp_encode(adt("D1", "OTHER"))), 11);
    REQUIRE(l.value()->commit().ok());
    CHECK(rows_in(t) == 2);
  }
  auto again = listener::open(t, opts());  // a restart on the same file
  REQUIRE(again.ok());
  CHECK(again.value()->counters().rows_at_open == 2);
  again.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("D1")) + hl7v2::mllp_encode(adt("D2"))), 20);
  CHECK(again.value()->group_rows() == 1);
  auto acks = again.value()->commit();
  REQUIRE(acks.ok());
  REQUIRE(acks->size() == 2);
  CHECK(msa_of((*acks)[0].bytes) == std::make_pair(std::string("AA"), std::string("D1")));
  CHECK(msa_of((*acks)[1].bytes) == std::make_pair(std::string("AA"), std::string("D2")));
  CHECK(rows_in(t) == 3);
  auto f = format::file::open(quire::borrow_bytes(t.bytes));
  REQUIRE(f.ok());
  CHECK(f->info().commit == 4);  // created, two commits, and the restart's one
}

TEST_CASE("listen answers noise AR, an empty control id AE, and stores neither", "[listen]") {
  format::memory_target t;
  auto l = listener::open(t, opts());
  REQUIRE(l.ok());
  std::string noise = "\x0B";
  for (int i = 0; i < 200; ++i)
    noise.push_back(static_cast<char>((i * 37 + 11) % 256 == 0x1C ? 1 : (i * 37 + 11) % 256));
  noise += "\x1C\r";
  const std::string no_id = adt("");
  l.value()->feed(1, as_bytes("stray bytes outside any frame"), 1);
  CHECK(l.value()->group_size() == 0);
  l.value()->feed(1, as_bytes(noise + hl7v2::mllp_encode(no_id) + hl7v2::mllp_encode("PID|1||X\r")), 1);
  auto acks = l.value()->commit();
  REQUIRE(acks.ok());
  REQUIRE(acks->size() == 3);
  CHECK(msa_of((*acks)[0].bytes).first == "AR");
  CHECK(field_of((*acks)[0].bytes, "ERR-3.1") == "100");
  CHECK(!field_of((*acks)[0].bytes, "MSA-3").empty());
  CHECK(msa_of((*acks)[1].bytes).first == "AE");
  CHECK(field_of((*acks)[1].bytes, "ERR-2") == "MSH^1^10");
  CHECK(field_of((*acks)[1].bytes, "ERR-3.1") == "101");
  CHECK(msa_of((*acks)[2].bytes).first == "AR");
  CHECK(rows_in(t) == 0);
  auto f = format::file::open(quire::borrow_bytes(t.bytes));
  REQUIRE(f.ok());
  CHECK(f->info().commit == 1);  // no commit for a group with nothing to store
  CHECK(l.value()->counters().rejected == 2);
  CHECK(l.value()->counters().errors == 1);
}

TEST_CASE("listen drops a frame over the bound, answers AR and goes on", "[listen]") {
  format::memory_target t;
  auto o = opts();
  o.max_frame_bytes = 300;
  auto l = listener::open(t, o);
  REQUIRE(l.ok());
  std::string big = adt("BIG");
  while (big.size() < 1000) big += "NTE|1||" + std::string(100, 'x') + "\r";
  const std::string framed = hl7v2::mllp_encode(big);
  for (size_t i = 0; i < framed.size(); i += 64) {  // never more than the bound is held
    l.value()->feed(3, as_bytes(framed.substr(i, 64)), 5);
    CHECK(l.value()->queued_bytes(3) <= 300);
  }
  l.value()->feed(3, as_bytes(hl7v2::mllp_encode(adt("SMALL"))), 6);
  auto acks = l.value()->commit();
  REQUIRE(acks.ok());
  REQUIRE(acks->size() == 2);
  CHECK(msa_of((*acks)[0].bytes).first == "AR");
  CHECK(field_of((*acks)[0].bytes, "MSA-3") == "frame over 300 bytes");
  CHECK(msa_of((*acks)[1].bytes) == std::make_pair(std::string("AA"), std::string("SMALL")));
  CHECK(rows_in(t) == 1);
  // In one read, the oversize frame between two good ones: its AR comes in its place.
  l.value()->feed(4, as_bytes(hl7v2::mllp_encode(adt("BEFORE")) + framed + hl7v2::mllp_encode(adt("AFTER"))), 7);
  acks = l.value()->commit();
  REQUIRE(acks.ok());
  REQUIRE(acks->size() == 3);
  CHECK(msa_of((*acks)[0].bytes) == std::make_pair(std::string("AA"), std::string("BEFORE")));
  CHECK(msa_of((*acks)[1].bytes).first == "AR");
  CHECK(msa_of((*acks)[2].bytes) == std::make_pair(std::string("AA"), std::string("AFTER")));
}

TEST_CASE("listen holds frames past the group's bound on their connection", "[listen]") {
  format::memory_target t;
  auto o = opts();
  o.max_group_rows = 2;
  auto l = listener::open(t, o);
  REQUIRE(l.ok());
  std::string five;
  for (int i = 0; i < 5; ++i) five += hl7v2::mllp_encode(adt("G" + std::to_string(i)));
  l.value()->feed(1, as_bytes(five), 1);
  CHECK(l.value()->group_full());
  CHECK(l.value()->group_size() == 2);
  CHECK(l.value()->frames_waiting());
  CHECK(l.value()->queued_bytes(1) == 3 * adt("G0").size());
  std::vector<std::string> ids;
  for (int round = 0; round < 3; ++round) {
    auto acks = l.value()->commit();
    REQUIRE(acks.ok());
    for (auto &a : *acks) ids.push_back(msa_of(a.bytes).second);
  }
  CHECK(ids == std::vector<std::string>{"G0", "G1", "G2", "G3", "G4"});
  CHECK(!l.value()->frames_waiting());
  CHECK(l.value()->queued_bytes(1) == 0);
  CHECK(rows_in(t) == 5);
  CHECK(l.value()->counters().commits == 3);
}

TEST_CASE("listen sends no AA for a commit that failed and the file opens at its last commit", "[listen]") {
  format::memory_target t;
  auto l = listener::open(t, opts());
  REQUIRE(l.ok());
  const size_t created = t.bytes.size();
  l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("F1"))), 1);
  REQUIRE(l.value()->commit().ok());
  const size_t whole = t.bytes.size();
  // Cut at the first byte, inside, and at the last byte of what a commit of one row writes.
  for (uint64_t cut : {uint64_t{0}, uint64_t{1}, uint64_t{100}, uint64_t{whole - created - 1}}) {
    t.fail_after = cut;
    l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("F2"))), 2);
    auto acks = l.value()->commit();
    CHECK(!acks.ok());
    t.fail_after = UINT64_MAX;
    CHECK(t.bytes.size() >= whole);
    CHECK(rows_in(t) == 1);  // the crash-shaped file still opens, at commit 2
  }
  CHECK(l.value()->counters().failed_commits == 4);
  // The sender resends F2: stored once, and a restart sees both.
  l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("F2"))), 3);
  auto acks = l.value()->commit();
  REQUIRE(acks.ok());
  REQUIRE(acks->size() == 1);
  CHECK(msa_of((*acks)[0].bytes) == std::make_pair(std::string("AA"), std::string("F2")));
  CHECK(rows_in(t) == 2);
  auto again = listener::open(t, opts());
  REQUIRE(again.ok());
  CHECK(again.value()->counters().rows_at_open == 2);
}

TEST_CASE("listen writes a sealed store when given the owner's key", "[listen]") {
  format::memory_target t;
  auto o = opts();
  o.store.owner_key = std::string(32, '\x42');
  auto l = listener::open(t, o);
  REQUIRE(l.ok());
  l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("S1"))), 1);
  REQUIRE(l.value()->commit().ok());
  auto without = format::file::open(quire::borrow_bytes(t.bytes));
  CHECK(without.code() == error_code::KEY_REQUIRED);
  CHECK(rows_in(t, o.store.owner_key) == 1);
  auto other = listener::open(t, opts());  // a restart without the key cannot read the store
  CHECK(other.code() == error_code::KEY_REQUIRED);
  auto again = listener::open(t, o);
  REQUIRE(again.ok());
  CHECK(again.value()->counters().rows_at_open == 1);
}

TEST_CASE("listen refuses bounds of zero, a partitioned table and a store of other columns", "[listen]") {
  format::memory_target t;
  auto o = opts();
  o.max_group_rows = 0;
  CHECK(listener::open(t, o).code() == error_code::INVALID_ARGUMENT);
  o = opts();
  o.store.partition_by = "type";
  CHECK(listener::open(t, o).code() == error_code::INVALID_ARGUMENT);
  format::vector_sink sink;
  REQUIRE(format::write_ndjson("{\"a\":1}\n", {}, sink).ok());
  auto table = format::file::open(quire::borrow_bytes(sink.bytes));
  REQUIRE(table.ok());
  REQUIRE(format::create_store(*table, plain(), t).ok());
  CHECK(listener::open(t, opts()).code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("listen writes receive times as HL7 DTM", "[listen]") {
  CHECK(listen::dtm_of(0) == "19700101000000");
  CHECK(listen::dtm_of(1'796'280'075'123'456) == "20261203064115");
  CHECK(listen::dtm_of(951'782'400'000'000) == "20000229000000");
}

TEST_CASE("listen remembers the last duplicate_window keys, also across a restart", "[listen]") {
  format::memory_target t;
  auto o = opts();
  o.duplicate_window = 2;
  {
    auto l = listener::open(t, o);
    REQUIRE(l.ok());
    for (const char *id : {"W1", "W2", "W3"}) {
      l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt(id))), 1);
      REQUIRE(l.value()->commit().ok());
    }
    // W1 has left the window: its resend is stored again; W3 is still a duplicate.
    l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("W3")) + hl7v2::mllp_encode(adt("W1"))), 2);
    CHECK(l.value()->group_rows() == 1);
    REQUIRE(l.value()->commit().ok());
    CHECK(l.value()->counters().duplicates == 1);
    CHECK(rows_in(t) == 4);
  }
  // The restart reads back the last two rows' keys only (W3, W1): W2 is stored again, W1 is not.
  auto again = listener::open(t, o);
  REQUIRE(again.ok());
  again.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("W1")) + hl7v2::mllp_encode(adt("W2"))), 3);
  CHECK(again.value()->group_rows() == 1);
  REQUIRE(again.value()->commit().ok());
  CHECK(again.value()->counters().duplicates == 1);
  CHECK(rows_in(t) == 5);
  o.duplicate_window = 0;
  CHECK(listener::open(t, o).code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("listen's duplicate window holds many keys and forgets the oldest", "[listen]") {
  format::memory_target t;
  auto o = opts();
  o.duplicate_window = 1000;
  o.max_group_rows = 5000;
  auto l = listener::open(t, o);
  REQUIRE(l.ok());
  std::string frames;
  for (int i = 0; i < 3000; ++i) frames += hl7v2::mllp_encode(adt("K" + std::to_string(i)));
  l.value()->feed(1, as_bytes(frames), 1);
  REQUIRE(l.value()->commit().ok());
  // Of the 3,000 keys the last 1,000 are remembered (each a fingerprint; the table shifts back
  // entries on each eviction, so lookups after many evictions must still find every one).
  std::string resend;
  for (int i = 0; i < 3000; i += 7) resend += hl7v2::mllp_encode(adt("K" + std::to_string(i)));
  l.value()->feed(1, as_bytes(resend), 2);
  size_t expect_new = 0;
  for (int i = 0; i < 3000; i += 7) expect_new += i < 2000 ? 1 : 0;
  CHECK(l.value()->group_rows() == expect_new);
}

namespace {

listen::message_view adt_view() {
  auto v = listen::parse_view(R"({"name": "adt", "column": [
      {"name": "mrn", "path": "PID-3[1].1"},
      {"name": "family", "path": "PID-5.1"},
      {"name": "born", "path": "PID-7", "type": "date"},
      {"name": "sent", "path": "MSH-7", "type": "timestamp"},
      {"name": "set_id", "path": "PID-1", "type": "integer"},
      {"name": "weight", "path": "OBX-5", "type": "decimal"}]})");
  REQUIRE(v.ok());
  return std::move(v).value();
}

std::string view_json(const format::memory_target &t) {
  auto f = format::file::open(quire::borrow_bytes(t.bytes));
  REQUIRE(f.ok());
  auto rows = f->query({});
  REQUIRE(rows.ok());
  return rows->json;
}

std::string with_obx(std::string m, std::string_view value) {
  m += "PID|x||";  // a second PID is not read: paths take a segment's first occurrence
  m += "\rOBX|1|NM|WT^Weight||";
  m += value;
  m += "|kg\r";
  return m;
}

}  // namespace

TEST_CASE("listen with a view writes a row a stored message to the view's table", "[listen]") {
  format::memory_target t, vt;
  auto o = opts();
  o.view = adt_view();
  auto l = listener::open(t, o, &vt);
  REQUIRE(l.ok());
  std::string born = adt("V1");
  born.replace(born.find("DOE^JANE"), 8, "DOE^JANE||19800131|F");
  l.value()->feed(1, as_bytes(hl7v2::mllp_encode(born)), 1'000'000);
  l.value()->feed(1, as_bytes(hl7v2::mllp_encode(with_obx(adt("V2", "SND", ""), "+72.50"))), 2'000'000);
  l.value()->feed(1, as_bytes(hl7v2::mllp_encode(with_obx(adt("V3"), "heavy"))), 3'000'000);
  l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("V1"))), 4'000'000);   // a duplicate: no row
  l.value()->feed(1, as_bytes(std::string("\x0Bnoise\x1C\r")), 5'000'000);  // AR: no row
  auto acks = l.value()->commit();
  REQUIRE(acks.ok());
  REQUIRE(acks->size() == 5);
  CHECK(rows_in(t) == 3);
  CHECK(view_json(vt) ==
        "{\"control_id\":\"V1\",\"receive_time\":\"1970-01-01T00:00:01Z\",\"mrn\":\"P123\",\"family\":\"DOE\","
        "\"born\":\"1980-01-31\",\"sent\":\"2026-12-03T06:41:15Z\",\"set_id\":1,\"weight\":null}\n"
        "{\"control_id\":\"V2\",\"receive_time\":\"1970-01-01T00:00:02Z\",\"mrn\":null,\"family\":null,"
        "\"born\":null,\"sent\":\"2026-12-03T06:41:15Z\",\"set_id\":null,\"weight\":72.50}\n"
        "{\"control_id\":\"V3\",\"receive_time\":\"1970-01-01T00:00:03Z\",\"mrn\":\"P123\",\"family\":\"DOE\","
        "\"born\":null,\"sent\":\"2026-12-03T06:41:15Z\",\"set_id\":1,\"weight\":null}\n");
  CHECK(listener::open(t, o).code() == error_code::INVALID_ARGUMENT);  // a view needs its target
}

TEST_CASE("listen's view catches up from the store at open and refuses one that does not follow", "[listen]") {
  format::memory_target t, vt;
  auto o = opts();
  {
    // Two messages stored before there was a view.
    auto l = listener::open(t, opts());
    REQUIRE(l.ok());
    l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("B1")) + hl7v2::mllp_encode(adt("B2"))), 1);
    REQUIRE(l.value()->commit().ok());
  }
  o.view = adt_view();
  format::memory_target before_third;
  {
    auto l = listener::open(t, o, &vt);
    REQUIRE(l.ok());
    CHECK(l.value()->counters().view_rows_caught_up == 2);
    before_third = vt;
    l.value()->feed(1, as_bytes(hl7v2::mllp_encode(adt("B3"))), 2);
    REQUIRE(l.value()->commit().ok());
  }
  const std::string whole = view_json(vt);
  // A crash between the store's append and the view's: the view is one commit behind.
  format::memory_target lagging = before_third;
  auto l = listener::open(t, o, &lagging);
  REQUIRE(l.ok());
  CHECK(l.value()->counters().view_rows_caught_up == 1);
  CHECK(view_json(lagging) == whole);
  CHECK(whole.find("\"control_id\":\"B3\"") != std::string::npos);
  // A view whose last row the store does not hold, and one of other columns.
  format::memory_target other_store;
  CHECK(listener::open(other_store, o, &vt).code() == error_code::INVALID_ARGUMENT);
  auto o2 = o;
  o2.view = listen::parse_view(R"({"name": "x", "column": [{"name": "mrn", "path": "PID-3"}]})").value();
  CHECK(listener::open(t, o2, &vt).code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("listen's view definition is checked, each error with its path", "[listen]") {
  struct bad {
    const char *json;
    const char *path;
  };
  for (const bad &b : std::initializer_list<bad>{
           {R"([])", ""},
           {R"({"column": [{"name": "a", "path": "PID-3"}]})", "name"},
           {R"({"name": "v"})", "column"},
           {R"({"name": "v", "column": []})", "column"},
           {R"({"name": "v", "column": [{"name": "a", "path": "PID-3"}], "where": []})", "where"},
           {R"({"name": "v", "column": [{"name": "a"}]})", "column[0]"},
           {R"({"name": "v", "column": [{"name": "1a", "path": "PID-3"}]})", "column[0].name"},
           {R"({"name": "v", "column": [{"name": "a", "path": "PID-0x"}]})", "column[0].path"},
           {R"({"name": "v", "column": [{"name": "a", "path": "PID-3", "type": "float"}]})", "column[0].type"},
           {R"({"name": "v", "column": [{"name": "a", "path": "PID-3", "forEach": "x"}]})", "column[0].forEach"},
           {R"({"name": "v", "column": [{"name": "a", "path": "PID-3"}, {"name": "a", "path": "PID-5"}]})",
            "column[1].name"},
           {R"({"name": "v", "column": [{"name": "control_id", "path": "MSH-10"}]})", "column[0].name"},
       }) {
    auto v = listen::parse_view(b.json);
    INFO(b.json);
    CHECK(v.code() == error_code::INVALID_VIEW);
    CHECK(v.error().path == b.path);
  }
  CHECK(listen::parse_view("{").code() == error_code::INVALID_JSON);
  auto good = listen::parse_view(R"({"name": "v", "description": "d", "column": [{"name": "a", "path": "PID-5[2].1",
                                   "type": "boolean", "description": "x"}]})");
  REQUIRE(good.ok());
  CHECK(good->columns[0].path_text == "PID-5[2].1");
  CHECK(good->schema().columns.size() == 3);
}

TEST_CASE("listen's address ranges: IPv4 and IPv6 CIDR, IPv4-mapped peers", "[listen]") {
  auto ranges = [](std::initializer_list<const char *> texts) {
    std::vector<listen::address_range> out;
    for (const char *t : texts) {
      auto r = listen::parse_address_range(t);
      INFO(t);
      REQUIRE(r.ok());
      out.push_back(*r);
    }
    return out;
  };
  const auto lan = ranges({"10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1", "2001:db8:0:0:1::/80"});
  for (const char *yes : {"10.1.2.3", "10.255.255.255", "::ffff:10.9.9.9", "::FFFF:10.0.0.1", "192.168.1.7", "::1",
                          "fd12:3456::1", "fdff::1%eth0", "2001:db8::1:0:0:5", "::ffff:192.168.1.7"}) {
    INFO(yes);
    CHECK(listen::address_allowed(lan, yes));
  }
  for (const char *no :
       {"11.0.0.1", "192.168.1.8", "::2", "fe80::1", "2001:db8::2:0:0:5", "::10.1.2.3", "", "10.1.2", "10.1.2.3.4",
        "010.1.2.3", "1::2::3", "12345::", "::ffff:10.1.2.300", "1:2:3:4:5:6:7:8:9", "localhost"}) {
    INFO(no);
    CHECK_FALSE(listen::address_allowed(lan, no));
  }
  CHECK(listen::address_allowed(ranges({"0.0.0.0/0"}), "203.0.113.9"));
  CHECK_FALSE(listen::address_allowed(ranges({"0.0.0.0/0"}), "2001:db8::1"));  // an IPv4 range holds IPv4 peers only
  CHECK(listen::address_allowed(ranges({"::/0"}), "2001:db8::1"));
  CHECK(listen::address_allowed(ranges({"10.1.2.3/8"}), "10.200.0.1"));  // host bits past the prefix: cleared
  CHECK(listen::address_allowed(ranges({"1:2:3:4:5:6:7:8"}), "1:2:3:4:5:6:7:8"));
  CHECK(listen::address_allowed(ranges({"1:2:3:4:5:6:1.2.3.4"}), "1:2:3:4:5:6:102:304"));
  for (const char *bad : {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "nope", "10.0.0.0/8/8", "1:::2"}) {
    INFO(bad);
    CHECK(listen::parse_address_range(bad).code() == error_code::INVALID_ARGUMENT);
  }
  CHECK(listen::address_allowed({}, "127.0.0.1") == false);
}
