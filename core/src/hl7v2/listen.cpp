// The listener's engine (quire/listen.h): frames from connections, one group of rows a commit,
// ACKs only after append_store returned.
#include "quire/listen.h"

#include <utility>

namespace quire::listen {

namespace {

using format::column_type;

constexpr size_t COL_CONTROL_ID = 0, COL_SENDING_APP = 2, COL_SENDING_FACILITY = 3;

// The duplicate check's key. CR cannot stand inside a field (it ends segments), so it separates.
std::string duplicate_key(std::string_view app, std::string_view facility, std::string_view control_id) {
  std::string k;
  k.reserve(app.size() + facility.size() + control_id.size() + 2);
  k.append(app).push_back('\r');
  k.append(facility).push_back('\r');
  k.append(control_id);
  return k;
}

// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
void civil_from_days(int64_t z, int64_t &y, unsigned &m, unsigned &d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
}

void append_digits(std::string &out, int64_t v, int width) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < 20);
  for (int i = n; i < width; ++i) out.push_back('0');
  while (n > 0) out.push_back(buf[--n]);
}

// An ACK for a frame that is not a message: built from the frame's first line when that line
// alone reads as an MSH (so MSA-2 still names the control id), else from an empty header.
std::string reject_ack(std::string_view frame, const std::string &dtm, std::string_view reason,
                       std::string_view code_0357, std::string &control_id) {
  std::string header;
  if (frame.substr(0, 3) == "MSH") {
    const size_t end = frame.find_first_of("\r\n");
    header = std::string(frame.substr(0, end == std::string_view::npos ? frame.size() : end));
    header.push_back('\r');
    auto m = hl7v2::parse(header);
    if (!m) header.clear();
  }
  if (header.empty()) header = "MSH|^~\\&|||||" + dtm + "||ACK||P|2.5\r";
  auto original = hl7v2::parse(header);
  if (!original) return {};
  control_id = std::string(original->control_id());
  hl7v2::ack_options ao;
  ao.timestamp = dtm;
  ao.text = std::string(reason);
  ao.error_code = std::string(code_0357);
  ao.location.segment = "MSH";
  auto a = hl7v2::build_ack(*original, hl7v2::ack_code::AR, ao);
  return a ? hl7v2::mllp_encode(*a) : std::string();
}

}  // namespace

format::schema row_schema() {
  format::schema s;
  for (const char *name : {"control_id", "type", "sending_application", "sending_facility", "receiving_application",
                           "receiving_facility", "message_time"})
    s.columns.push_back({name, column_type::string});
  s.columns.push_back({"receive_time", column_type::timestamp});
  s.columns.push_back({"patient_id", column_type::string});
  s.columns.push_back({"ack_code", column_type::string});
  s.columns.push_back({"message", column_type::string});
  return s;
}

std::string dtm_of(int64_t receive_time_us) {
  int64_t seconds = receive_time_us / 1000000;
  if (receive_time_us < 0 && receive_time_us % 1000000 != 0) --seconds;
  int64_t days = seconds / 86400, rest = seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  std::string out;
  append_digits(out, y < 0 ? 0 : y, 4);
  append_digits(out, m, 2);
  append_digits(out, d, 2);
  append_digits(out, rest / 3600, 2);
  append_digits(out, rest % 3600 / 60, 2);
  append_digits(out, rest % 60, 2);
  return out;
}

listener::~listener() = default;

result<std::unique_ptr<listener>> listener::open(format::append_target &target, const options &o) {
  if (o.max_frame_bytes == 0 || o.max_group_rows == 0 || o.max_group_bytes == 0)
    return quire::error(error_code::INVALID_ARGUMENT,
                        "listen: max_frame_bytes, max_group_rows and max_group_bytes must be above 0");
  if (!o.store.partition_by.empty())
    return quire::error(error_code::INVALID_ARGUMENT, "listen: the listener's table is not partitioned");
  std::unique_ptr<listener> l(new listener(target, o));
  const format::schema schema = row_schema();
  if (target.size() == 0) {
    format::vector_sink sink;
    auto w = format::writer::create(schema, o.store.write, sink);
    if (!w) return std::move(w).error();
    if (auto f = w.value()->finish(); !f) return std::move(f).error();
    auto table = format::file::open(quire::borrow_bytes(sink.bytes));
    if (!table) return std::move(table).error();
    auto made = format::create_store(*table, o.store, target);
    if (!made) return std::move(made).error();
    return l;
  }
  format::open_options oo;
  oo.key = o.store.owner_key;
  oo.passphrase = o.store.owner_passphrase;
  auto f = format::file::open(target, oo);
  if (!f) return std::move(f).error();
  const auto &have = f->schema().columns;
  bool same = have.size() == schema.columns.size();
  for (size_t i = 0; same && i < have.size(); ++i)
    same = have[i].name == schema.columns[i].name && have[i].type == schema.columns[i].type;
  if (!same)
    return quire::error(error_code::INVALID_ARGUMENT,
                        "listen: the store's columns are not the listener's (docs/listen.md, \"Rows\")");
  format::query q;
  q.columns = {schema.columns[COL_SENDING_APP].name, schema.columns[COL_SENDING_FACILITY].name,
               schema.columns[COL_CONTROL_ID].name};
  auto cols = f->columns(q);
  if (!cols) return std::move(cols).error();
  const auto &c = cols.value();
  const uint64_t rows = c[0].valid.size();
  auto text = [&](const format::column_array &a, uint64_t r) -> std::string_view {
    if (!a.valid[r]) return {};
    return std::string_view(a.text).substr(a.text_offsets[r], a.text_offsets[r + 1] - a.text_offsets[r]);
  };
  l->stored_keys_.reserve(rows);
  for (uint64_t r = 0; r < rows; ++r)
    l->stored_keys_.insert(duplicate_key(text(c[0], r), text(c[1], r), text(c[2], r)));
  l->counters_.rows_at_open = rows;
  return l;
}

bool listener::group_full() const noexcept {
  return group_.size() >= options_.max_group_rows || group_bytes_ >= options_.max_group_bytes;
}

size_t listener::queued_bytes(uint64_t connection) const {
  auto it = connections_.find(connection);
  if (it == connections_.end()) return 0;
  return it->second.decoder.buffered_bytes() + it->second.waiting_bytes;
}

size_t listener::total_queued_bytes() const noexcept {
  size_t total = group_bytes_;
  for (const auto &[id, c] : connections_) total += c.decoder.buffered_bytes() + c.waiting_bytes;
  return total;
}

void listener::feed(uint64_t connection, std::span<const uint8_t> bytes, int64_t receive_time_us) {
  auto it = connections_.try_emplace(connection, options_.max_frame_bytes).first;
  connection_state &c = it->second;
  // Fed a start block at a time: each piece starts at most one frame, so a frame dropped for its
  // size is answered in its place among the frames that completed in the same read.
  size_t at = 0;
  while (at < bytes.size()) {
    size_t end = at + 1;
    while (end < bytes.size() && bytes[end] != hl7v2::MLLP_START) ++end;
    const uint64_t dropped_before = c.decoder.dropped_frames();
    (void)c.decoder.feed(bytes.subspan(at, end - at));  // FRAME_TOO_LARGE: counted, answered AR
    while (auto f = c.decoder.next_frame()) {
      c.waiting_bytes += f->size();
      ++waiting_frames_;
      c.waiting.push_back({std::move(*f), receive_time_us, false});
    }
    for (uint64_t i = dropped_before; i < c.decoder.dropped_frames(); ++i) {
      ++waiting_frames_;
      c.waiting.push_back({std::string(), receive_time_us, true});
    }
    at = end;
  }
  admit(connection, c);
}

void listener::admit(uint64_t connection, connection_state &c) {
  while (!c.waiting.empty() && !group_full()) {
    waiting_frame f = std::move(c.waiting.front());
    c.waiting.pop_front();
    c.waiting_bytes -= f.bytes.size();
    --waiting_frames_;
    take(connection, std::move(f));
  }
}

void listener::close(uint64_t connection) {
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;
  waiting_frames_ -= it->second.waiting.size();
  connections_.erase(it);
}

void listener::take(uint64_t connection, waiting_frame &&f) {
  ++counters_.frames;
  const std::string dtm = dtm_of(f.receive_time_us);
  entry e{connection, hl7v2::ack_code::AR, {}, {}, {}, {}, f.receive_time_us, false};
  if (f.oversize) {
    e.ack_bytes =
        reject_ack({}, dtm, "frame over " + std::to_string(options_.max_frame_bytes) + " bytes", "207", e.control_id);
    ++counters_.rejected;
    group_.push_back(std::move(e));
    return;
  }
  hl7v2::parse_options po;
  po.max_message_bytes = options_.max_frame_bytes;
  auto m = hl7v2::parse(f.bytes, po);
  if (!m) {
    e.ack_bytes = reject_ack(f.bytes, dtm, m.error().describe(), "100", e.control_id);
    ++counters_.rejected;
    group_.push_back(std::move(e));
    return;
  }
  e.control_id = std::string(m->control_id());
  hl7v2::ack_options ao;
  ao.timestamp = dtm;
  if (e.control_id.empty()) {
    e.code = hl7v2::ack_code::AE;
    ao.text = "MSH-10 (message control id) is empty";
    ao.error_code = "101";
    ao.location.segment = "MSH";
    ao.location.field = 10;
    ++counters_.errors;
  } else {
    e.key = duplicate_key(m->sending_application(), m->sending_facility(), e.control_id);
    e.code = hl7v2::ack_code::AA;
    if (stored_keys_.count(e.key) || group_keys_.count(e.key)) {
      ++counters_.duplicates;
    } else {
      group_keys_.insert(e.key);
      e.store = true;
      ++group_rows_;
      group_bytes_ += f.bytes.size();
    }
  }
  auto a = hl7v2::build_ack(*m, e.code, ao);
  e.ack_bytes = a ? hl7v2::mllp_encode(*a) : std::string();
  if (e.store) e.frame = std::move(f.bytes);
  group_.push_back(std::move(e));
}

result<std::vector<ack>> listener::commit() {
  std::vector<entry> group = std::move(group_);
  group_.clear();
  const size_t rows = group_rows_;
  group_rows_ = 0;
  group_bytes_ = 0;
  std::unordered_set<std::string> keys = std::move(group_keys_);
  group_keys_.clear();

  result<void> stored;
  if (rows > 0) {
    stored = [&]() -> result<void> {
      format::vector_sink sink;
      auto w = format::writer::create(row_schema(), options_.store.write, sink);
      if (!w) return std::move(w).error();
      std::vector<format::cell> cells(11);
      for (const entry &e : group) {
        if (!e.store) continue;
        auto m = hl7v2::parse(e.frame);  // parsed once before; the bytes have moved since
        if (!m) return std::move(m).error();
        const std::string_view type = m->get("MSH-9").value().value_or("");
        auto pid = m->get("PID-3[1].1");
        std::optional<std::string_view> patient;
        if (pid) patient = pid.value();
        if (patient && patient->empty()) patient.reset();
        cells[0] = format::cell::text(e.control_id);
        cells[1] = format::cell::text(type);
        cells[2] = format::cell::text(m->sending_application());
        cells[3] = format::cell::text(m->sending_facility());
        cells[4] = format::cell::text(m->receiving_application());
        cells[5] = format::cell::text(m->receiving_facility());
        cells[6] = format::cell::text(m->get("MSH-7").value().value_or(""));
        cells[7] = format::cell::of(static_cast<int64_t>(e.receive_time_us));
        cells[8] = patient ? format::cell::text(*patient) : format::cell::null();
        cells[9] = format::cell::text(hl7v2::ack_code_name(e.code));
        cells[10] = format::cell::text(e.frame);
        if (auto r = w.value()->append_row(cells); !r) return r;
      }
      if (auto f = w.value()->finish(); !f) return std::move(f).error();
      auto table = format::file::open(quire::borrow_bytes(sink.bytes));
      if (!table) return std::move(table).error();
      auto appended = format::append_store(target_, *table, options_.store);
      if (!appended) return std::move(appended).error();
      return {};
    }();
  }
  if (!stored) {
    ++counters_.failed_commits;
  } else {
    if (rows > 0) ++counters_.commits;
    counters_.stored += rows;
    for (auto &k : keys) stored_keys_.insert(std::move(k));
  }
  // Frames that waited for room: the next group.
  for (auto &[id, c] : connections_)
    if (!c.waiting.empty()) admit(id, c);
  if (!stored) return std::move(stored).error();
  std::vector<ack> out;
  out.reserve(group.size());
  for (entry &e : group) out.push_back({e.connection, std::move(e.ack_bytes), e.code, std::move(e.control_id)});
  return out;
}

}  // namespace quire::listen
