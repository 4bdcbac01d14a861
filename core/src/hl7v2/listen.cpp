// The listener's engine (quire/listen.h): frames from connections, one group of rows a commit,
// ACKs only after append_store returned.
#include "quire/listen.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

#include "quire/json.h"
#include "quire/view.h"

namespace quire::listen {

namespace {

using format::column_type;

constexpr size_t COL_CONTROL_ID = 0, COL_SENDING_APP = 2, COL_SENDING_FACILITY = 3, COL_RECEIVE_TIME = 7,
                 COL_MESSAGE = 10;
// Rows read back from a store at a time (duplicate keys, a view's catching up).
constexpr uint64_t READ_BATCH_ROWS = 4096;

// The duplicate check's key. CR cannot stand inside a field (it ends segments), so it separates.
std::string duplicate_key(std::string_view app, std::string_view facility, std::string_view control_id) {
  std::string k;
  k.reserve(app.size() + facility.size() + control_id.size() + 2);
  k.append(app).push_back('\r');
  k.append(facility).push_back('\r');
  k.append(control_id);
  return k;
}

std::array<uint8_t, crypto::FINGERPRINT_BYTES> fingerprint_of(std::string_view key) {
  return crypto::fingerprint({reinterpret_cast<const uint8_t *>(key.data()), key.size()});
}

std::string_view text_at(const format::column_array &a, uint64_t r) {
  if (!a.valid[r]) return {};
  return std::string_view(a.text).substr(a.text_offsets[r], a.text_offsets[r + 1] - a.text_offsets[r]);
}

bool same_columns(const format::schema &a, const format::schema &b) {
  if (a.columns.size() != b.columns.size()) return false;
  for (size_t i = 0; i < a.columns.size(); ++i)
    if (a.columns[i].name != b.columns[i].name || a.columns[i].type != b.columns[i].type) return false;
  return true;
}

quire::error invalid_view(std::string path, std::string message) {
  quire::error e(error_code::INVALID_VIEW, std::move(message));
  e.path = std::move(path);
  return e;
}

// A view column's value in `m`, as a cell of its type (text kept in `store`); null when the
// message has no value there or the value does not read as the type.
format::cell view_cell(const view_column &c, const hl7v2::message &m, std::string &store) {
  auto text = m.get_text(c.path);
  if (!text || !*text || (*text)->empty() || hl7v2::is_explicit_null(**text)) return format::cell::null();
  store = std::move(**text);
  format::cell out = format::cell::null();
  switch (c.type) {
    case column_type::string: out = format::cell::text(store); break;
    case column_type::integer: {
      auto n = hl7v2::parse_number(store);
      int64_t v;
      if (n) {
        std::string_view t = n->text;
        if (!t.empty() && t[0] == '+') t.remove_prefix(1);
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec == std::errc() && p == t.data() + t.size()) out = format::cell::of(v);
      }
      break;
    }
    case column_type::decimal: {
      auto n = hl7v2::parse_number(store);
      if (n) {
        store = n->text;
        if (!store.empty() && store[0] == '+') store.erase(0, 1);
        out = format::cell::text(store);
      }
      break;
    }
    case column_type::date:
    case column_type::timestamp: {
      auto iso = hl7v2::to_iso8601(store);
      if (iso) {
        store = std::move(*iso);
        if (c.type == column_type::date && store.size() > 10) {
          store.resize(10);
        } else if (const size_t t = store.find('T');
                   t != std::string::npos && store.find_first_of("Z+-", t) == std::string::npos) {
          store.push_back('Z');  // a DTM without an offset: read as UTC (docs/listen.md, "Views")
        }
        out = format::cell::text(store);
      }
      break;
    }
    case column_type::boolean:
      if (store == "Y" || store == "N") out = format::cell::of(store == "Y");
      break;
    default: break;
  }
  if (out.k != format::cell::kind::null_value && !format::accepts(c.type, out)) return format::cell::null();
  return out;
}

// A view's row of one message into `cells` (texts in `stores`, one a column).
void view_row(const message_view &v, const hl7v2::message &m, std::string_view control_id, int64_t receive_time_us,
              std::vector<format::cell> &cells, std::vector<std::string> &stores) {
  cells.resize(v.columns.size() + 2);
  stores.resize(v.columns.size());
  cells[0] = format::cell::text(control_id);
  cells[1] = format::cell::of(receive_time_us);
  for (size_t i = 0; i < v.columns.size(); ++i) cells[i + 2] = view_cell(v.columns[i], m, stores[i]);
}

// The rows a writer gathered, appended to `target` as one commit (created first when empty).
result<void> append_table(format::vector_sink &sink, format::append_target &target, const format::store_options &o) {
  auto table = format::file::open(quire::borrow_bytes(sink.bytes));
  if (!table) return std::move(table).error();
  if (target.size() == 0) {
    auto made = format::create_store(*table, o, target);
    if (!made) return std::move(made).error();
    return {};
  }
  auto appended = format::append_store(target, *table, o);
  if (!appended) return std::move(appended).error();
  return {};
}

// An empty table of `schema` appended to `target` as its first commit.
result<void> create_empty(const format::schema &schema, format::append_target &target, const format::store_options &o) {
  format::vector_sink sink;
  auto w = format::writer::create(schema, o.write, sink);
  if (!w) return std::move(w).error();
  if (auto f = w.value()->finish(); !f) return std::move(f).error();
  return append_table(sink, target, o);
}

format::open_options open_options_of(const format::store_options &o) {
  format::open_options oo;
  oo.key = o.owner_key;
  oo.passphrase = o.owner_passphrase;
  return oo;
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

format::schema message_view::schema() const {
  format::schema s;
  s.columns.push_back({"control_id", column_type::string});
  s.columns.push_back({"receive_time", column_type::timestamp});
  for (const view_column &c : columns) s.columns.push_back({c.name, c.type});
  return s;
}

result<message_view> parse_view(std::string_view json_text) {
  auto doc = json::parse(json_text);
  if (!doc) return std::move(doc).error();
  auto root = doc->root().get_object();
  if (!root) return invalid_view("", "a view is a JSON object");
  message_view v;
  bool has_columns = false;
  for (auto [key, val] : *root) {
    if (key == "name") {
      auto n = val.get_string();
      if (!n || !view::valid_column_name(*n))
        return invalid_view("name", "name must be a letter then letters, digits or _");
      v.name = std::string(*n);
    } else if (key == "description") {
      if (!val.get_string()) return invalid_view("description", "description must be a string");
    } else if (key == "column") {
      auto arr = val.get_array();
      if (!arr) return invalid_view("column", "column must be an array");
      has_columns = true;
      size_t i = 0;
      for (json::value c : *arr) {
        const std::string cp = "column[" + std::to_string(i++) + "]";
        auto co = c.get_object();
        if (!co) return invalid_view(cp, cp + " must be an object");
        view_column col;
        bool has_name = false, has_path = false;
        for (auto [ck, cv] : *co) {
          const std::string kp = cp + "." + std::string(ck);
          auto text = cv.get_string();
          if (ck == "description") {
            if (!text) return invalid_view(kp, kp + " must be a string");
            continue;
          }
          if (ck != "name" && ck != "path" && ck != "type") return invalid_view(kp, "unknown element " + kp);
          if (!text) return invalid_view(kp, kp + " must be a string");
          if (ck == "name") {
            if (!view::valid_column_name(*text))
              return invalid_view(kp, kp + " must be a letter then letters, digits or _");
            col.name = std::string(*text);
            has_name = true;
          } else if (ck == "path") {
            auto p = hl7v2::parse_path(*text);
            if (!p) return invalid_view(kp, kp + " is not an HL7 v2 path: " + p.error().message);
            col.path = *p;
            col.path_text = std::string(*text);
            has_path = true;
          } else {
            static constexpr std::pair<std::string_view, column_type> TYPES[] = {
                {"string", column_type::string},       {"integer", column_type::integer},
                {"decimal", column_type::decimal},     {"date", column_type::date},
                {"timestamp", column_type::timestamp}, {"boolean", column_type::boolean}};
            bool known = false;
            for (auto [name, type] : TYPES)
              if (*text == name) {
                col.type = type;
                known = true;
              }
            if (!known)
              return invalid_view(kp, kp + " must be one of string, integer, decimal, date, timestamp, boolean");
          }
        }
        if (!has_name || !has_path) return invalid_view(cp, cp + " needs a name and a path");
        if (col.name == "control_id" || col.name == "receive_time")
          return invalid_view(cp + ".name", cp + ".name '" + col.name + "' is the view's link to the store's row");
        for (const view_column &other : v.columns)
          if (other.name == col.name) return invalid_view(cp + ".name", cp + ".name '" + col.name + "' is used twice");
        v.columns.push_back(std::move(col));
      }
    } else {
      return invalid_view(std::string(key), "unknown element " + std::string(key));
    }
  }
  if (v.name.empty()) return invalid_view("name", "a view needs a name");
  if (!has_columns || v.columns.empty()) return invalid_view("column", "a view needs at least one column");
  return v;
}

std::string default_view_path(std::string_view store_path, const message_view &view) {
  if (store_path.ends_with(".quire")) store_path.remove_suffix(6);
  std::string out(store_path);
  out.append(".").append(view.name).append(".quire");
  return out;
}

// --- addresses -------------------------------------------------------------------------------------

namespace {

// "a.b.c.d" into out[0..4); false unless four decimal parts 0..255 without leading zeros.
bool parse_ipv4(std::string_view t, uint8_t *out) {
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (t.empty() || t[0] != '.') return false;
      t.remove_prefix(1);
    }
    size_t n = 0;
    unsigned v = 0;
    while (n < t.size() && n < 4 && t[n] >= '0' && t[n] <= '9') v = v * 10 + static_cast<unsigned>(t[n++] - '0');
    if (n == 0 || n > 3 || v > 255 || (n > 1 && t[0] == '0')) return false;
    out[part] = static_cast<uint8_t>(v);
    t.remove_prefix(n);
  }
  return t.empty();
}

// An IPv6 address (RFC 4291 text: groups, one "::", a dotted IPv4 tail) into 16 bytes.
bool parse_ipv6(std::string_view t, std::array<uint8_t, 16> &out) {
  std::array<uint16_t, 8> head{}, tail{};
  size_t nh = 0, nt = 0;
  bool gap = false;
  if (t.starts_with("::")) {
    gap = true;
    t.remove_prefix(2);
  }
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  while (!t.empty()) {
    std::array<uint16_t, 8> &groups = gap ? tail : head;
    size_t &n = gap ? nt : nh;
    if (t.find('.') != std::string_view::npos && t.find(':') == std::string_view::npos) {
      uint8_t v4[4];
      if (nh + nt + 2 > 8 || !parse_ipv4(t, v4)) return false;
      groups[n++] = static_cast<uint16_t>(v4[0] << 8 | v4[1]);
      groups[n++] = static_cast<uint16_t>(v4[2] << 8 | v4[3]);
      t = {};
      break;
    }
    size_t len = 0;
    unsigned v = 0;
    while (len < t.size() && len < 5 && hex(t[len]) >= 0) v = v * 16 + static_cast<unsigned>(hex(t[len++]));
    if (len == 0 || len > 4 || nh + nt >= 8) return false;
    groups[n++] = static_cast<uint16_t>(v);
    t.remove_prefix(len);
    if (t.empty()) break;
    if (t[0] != ':') return false;
    t.remove_prefix(1);
    if (!t.empty() && t[0] == ':') {
      if (gap) return false;
      gap = true;
      t.remove_prefix(1);
    } else if (t.empty()) {
      return false;  // a trailing single ':'
    }
  }
  if (gap ? nh + nt > 7 : nh != 8) return false;
  std::array<uint16_t, 8> all{};
  for (size_t i = 0; i < nh; ++i) all[i] = head[i];
  for (size_t i = 0; i < nt; ++i) all[8 - nt + i] = tail[i];
  for (size_t i = 0; i < 8; ++i) {
    out[2 * i] = static_cast<uint8_t>(all[i] >> 8);
    out[2 * i + 1] = static_cast<uint8_t>(all[i]);
  }
  return true;
}

// An address (IPv4 as IPv4-mapped) into 16 bytes; `v4` tells which it was.
bool parse_address(std::string_view t, std::array<uint8_t, 16> &out, bool &v4) {
  if (const size_t zone = t.find('%'); zone != std::string_view::npos) t = t.substr(0, zone);
  out = {};
  v4 = t.find(':') == std::string_view::npos;
  if (!v4) return parse_ipv6(t, out);
  out[10] = out[11] = 0xFF;
  return parse_ipv4(t, out.data() + 12);
}

bool in_range(const address_range &r, const std::array<uint8_t, 16> &a) {
  for (unsigned bit = 0; bit < r.prefix_bits; bit += 8) {
    const unsigned bits = std::min(8u, r.prefix_bits - bit);
    const uint8_t mask = static_cast<uint8_t>(0xFF00u >> bits);
    if ((a[bit / 8] & mask) != (r.network[bit / 8] & mask)) return false;
  }
  return true;
}

}  // namespace

result<address_range> parse_address_range(std::string_view text) {
  const size_t slash = text.find('/');
  address_range r;
  bool v4 = false;
  if (!parse_address(text.substr(0, slash), r.network, v4))
    return quire::error(error_code::INVALID_ARGUMENT, "'" + std::string(text) + "' is not an IPv4 or IPv6 address");
  const unsigned max_bits = v4 ? 32 : 128;
  unsigned bits = max_bits;
  if (slash != std::string_view::npos) {
    const std::string_view b = text.substr(slash + 1);
    auto [p, ec] = std::from_chars(b.data(), b.data() + b.size(), bits);
    if (b.empty() || b.size() > 3 || ec != std::errc() || p != b.data() + b.size() || bits > max_bits)
      return quire::error(error_code::INVALID_ARGUMENT,
                          "'" + std::string(text) + "': the prefix is 0.." + std::to_string(max_bits) + " bits");
  }
  r.prefix_bits = v4 ? 96 + bits : bits;
  for (unsigned bit = r.prefix_bits; bit < 128; ++bit)
    r.network[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
  return r;
}

bool address_allowed(std::span<const address_range> ranges, std::string_view address) {
  std::array<uint8_t, 16> a;
  bool v4;
  if (!parse_address(address, a, v4)) return false;
  for (const address_range &r : ranges)
    if (in_range(r, a)) return true;
  return false;
}

// --- the duplicate set -------------------------------------------------------------------------

size_t listener::duplicate_set::slot_of(const print &p) const noexcept {
  uint64_t h;
  std::memcpy(&h, p.data(), sizeof h);
  return static_cast<size_t>(h) & (table_.size() - 1);
}

bool listener::duplicate_set::contains(const print &p) const noexcept {
  if (table_.empty()) return false;
  static constexpr print EMPTY{};
  for (size_t i = slot_of(p);; i = (i + 1) & (table_.size() - 1)) {
    if (table_[i] == p) return true;
    if (table_[i] == EMPTY) return false;
  }
}

void listener::duplicate_set::grow() {
  std::vector<print> old = std::move(table_);
  table_.assign(old.empty() ? 1024 : old.size() * 2, print{});
  static constexpr print EMPTY{};
  for (const print &p : old) {
    if (p == EMPTY) continue;
    size_t i = slot_of(p);
    while (table_[i] != EMPTY) i = (i + 1) & (table_.size() - 1);
    table_[i] = p;
  }
}

void listener::duplicate_set::erase(const print &p) noexcept {
  static constexpr print EMPTY{};
  const size_t mask = table_.size() - 1;
  size_t i = slot_of(p);
  while (table_[i] != p) {
    if (table_[i] == EMPTY) return;
    i = (i + 1) & mask;
  }
  // Backward shift: pull later entries of the probe run into the hole, so no tombstone is needed.
  for (size_t j = (i + 1) & mask; table_[j] != EMPTY; j = (j + 1) & mask) {
    const size_t home = slot_of(table_[j]);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      table_[i] = table_[j];
      i = j;
    }
  }
  table_[i] = EMPTY;
  --size_;
}

void listener::duplicate_set::insert(const print &p) {
  static constexpr print EMPTY{};
  if (p == EMPTY || contains(p)) return;  // a fingerprint of 16 zero bytes: never, in practice
  if (size_ == window_) {
    erase(ring_[ring_head_]);
  } else if ((size_ + 1) * 2 > table_.size()) {
    grow();
  }
  size_t i = slot_of(p);
  while (table_[i] != EMPTY) i = (i + 1) & (table_.size() - 1);
  table_[i] = p;
  ++size_;
  if (ring_.size() < window_) {
    ring_.push_back(p);
  } else {
    ring_[ring_head_] = p;
    ring_head_ = (ring_head_ + 1) % window_;
  }
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

result<std::unique_ptr<listener>> listener::open(format::append_target &target, const options &o,
                                                 format::append_target *view_target) {
  if (o.max_frame_bytes == 0 || o.max_group_rows == 0 || o.max_group_bytes == 0 || o.duplicate_window == 0)
    return quire::error(
        error_code::INVALID_ARGUMENT,
        "listen: max_frame_bytes, max_group_rows, max_group_bytes and duplicate_window must be above 0");
  if (!o.store.partition_by.empty())
    return quire::error(error_code::INVALID_ARGUMENT, "listen: the listener's table is not partitioned");
  if (o.view && !view_target)
    return quire::error(error_code::INVALID_ARGUMENT, "listen: a view needs a target for its table");
  std::unique_ptr<listener> l(new listener(target, o, o.view ? view_target : nullptr));
  const format::schema schema = row_schema();
  if (target.size() == 0) {
    if (auto made = create_empty(schema, target, o.store); !made) return std::move(made).error();
  }
  auto f = format::file::open(target, open_options_of(o.store));
  if (!f) return std::move(f).error();
  if (!same_columns(f->schema(), schema))
    return quire::error(error_code::INVALID_ARGUMENT,
                        "listen: the store's columns are not the listener's (docs/listen.md, \"Rows\")");
  // The duplicate check remembers the last duplicate_window rows' keys, read back oldest first.
  const uint64_t rows = f->row_count();
  const uint64_t first = rows > o.duplicate_window ? rows - o.duplicate_window : 0;
  for (uint64_t at = first; at < rows; at += READ_BATCH_ROWS) {
    format::query q;
    q.columns = {schema.columns[COL_SENDING_APP].name, schema.columns[COL_SENDING_FACILITY].name,
                 schema.columns[COL_CONTROL_ID].name};
    q.offset = at;
    q.limit = READ_BATCH_ROWS;
    auto cols = f->columns(q);
    if (!cols) return std::move(cols).error();
    const auto &c = cols.value();
    for (uint64_t r = 0; r < c[0].valid.size(); ++r)
      l->stored_keys_.insert(fingerprint_of(duplicate_key(text_at(c[0], r), text_at(c[1], r), text_at(c[2], r))));
  }
  l->counters_.rows_at_open = rows;
  if (l->view_target_) {
    if (auto v = l->open_view(*f); !v) return std::move(v).error();
  }
  return l;
}

result<void> listener::open_view(format::file &store) {
  const message_view &v = *options_.view;
  const format::schema schema = v.schema();
  format::append_target &target = *view_target_;
  uint64_t from = 0;  // the first store row the view lacks
  if (target.size() == 0) {
    if (auto made = create_empty(schema, target, options_.store); !made) return made;
  } else {
    auto f = format::file::open(target, open_options_of(options_.store));
    if (!f) return std::move(f).error();
    if (!same_columns(f->schema(), schema))
      return quire::error(error_code::INVALID_ARGUMENT,
                          "listen: the view's table has other columns than the view '" + v.name + "' gives");
    if (const uint64_t have = f->row_count(); have > 0) {
      // Its last row names a stored message (control id and receive time); the view goes on after it.
      format::query last;
      last.columns = {"control_id", "receive_time"};
      last.offset = have - 1;
      auto lc = f->columns(last);
      if (!lc) return std::move(lc).error();
      const std::string id(text_at(lc.value()[0], 0));
      const int64_t at_us = lc.value()[1].ints[0];
      bool found = false;
      for (uint64_t end = store.row_count(); end > 0 && !found;) {
        const uint64_t begin = end > READ_BATCH_ROWS ? end - READ_BATCH_ROWS : 0;
        format::query q;
        q.columns = {"control_id", "receive_time"};
        q.offset = begin;
        q.limit = end - begin;
        auto c = store.columns(q);
        if (!c) return std::move(c).error();
        for (uint64_t r = end - begin; r-- > 0;) {
          if (c.value()[1].ints[r] == at_us && text_at(c.value()[0], r) == id) {
            from = begin + r + 1;
            found = true;
            break;
          }
        }
        end = begin;
      }
      if (!found)
        return quire::error(error_code::INVALID_ARGUMENT,
                            "listen: the view's table ends with a row (control id '" + id +
                                "') that is not in the store: remove the view's file to have it rebuilt");
    }
  }
  // Catch up: derive the rows of the stored messages the view lacks, a batch a commit.
  std::vector<format::cell> cells;
  std::vector<std::string> stores;
  for (uint64_t at = from; at < store.row_count(); at += READ_BATCH_ROWS) {
    format::query q;
    q.columns = {"control_id", "receive_time", "message"};
    q.offset = at;
    q.limit = READ_BATCH_ROWS;
    auto c = store.columns(q);
    if (!c) return std::move(c).error();
    const auto &cols = c.value();
    format::vector_sink sink;
    auto w = format::writer::create(schema, options_.store.write, sink);
    if (!w) return std::move(w).error();
    for (uint64_t r = 0; r < cols[0].valid.size(); ++r) {
      auto m = hl7v2::parse(text_at(cols[2], r));
      if (!m) return std::move(m).error();
      view_row(v, *m, text_at(cols[0], r), cols[1].ints[r], cells, stores);
      if (auto a = w.value()->append_row(cells); !a) return a;
    }
    if (auto fin = w.value()->finish(); !fin) return std::move(fin).error();
    if (auto a = append_table(sink, target, options_.store); !a) return a;
    counters_.view_rows_caught_up += cols[0].valid.size();
  }
  return {};
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
    if (group_keys_.count(e.key) || stored_keys_.contains(fingerprint_of(e.key))) {
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
  group_keys_.clear();

  result<void> stored;
  bool stored_to_table = false;  // the store's append succeeded (the view's may not have)
  if (rows > 0) {
    stored = [&]() -> result<void> {
      format::vector_sink sink, view_sink;
      auto w = format::writer::create(row_schema(), options_.store.write, sink);
      if (!w) return std::move(w).error();
      std::unique_ptr<format::writer> vw;
      if (view_target_) {
        auto made = format::writer::create(options_.view->schema(), options_.store.write, view_sink);
        if (!made) return std::move(made).error();
        vw = std::move(made).value();
      }
      std::vector<format::cell> cells(11), view_cells;
      std::vector<std::string> view_stores;
      for (const entry &e : group) {
        if (!e.store) continue;
        auto m = hl7v2::parse(e.frame);  // parsed once before; the bytes have moved since
        if (!m) return std::move(m).error();
        const std::string_view type = m->get("MSH-9").value().value_or("");
        auto pid = m->get("PID-3[1].1");
        std::optional<std::string_view> patient;
        if (pid) patient = pid.value();
        if (patient && patient->empty()) patient.reset();
        cells[COL_CONTROL_ID] = format::cell::text(e.control_id);
        cells[1] = format::cell::text(type);
        cells[COL_SENDING_APP] = format::cell::text(m->sending_application());
        cells[COL_SENDING_FACILITY] = format::cell::text(m->sending_facility());
        cells[4] = format::cell::text(m->receiving_application());
        cells[5] = format::cell::text(m->receiving_facility());
        cells[6] = format::cell::text(m->get("MSH-7").value().value_or(""));
        cells[COL_RECEIVE_TIME] = format::cell::of(static_cast<int64_t>(e.receive_time_us));
        cells[8] = patient ? format::cell::text(*patient) : format::cell::null();
        cells[9] = format::cell::text(hl7v2::ack_code_name(e.code));
        cells[COL_MESSAGE] = format::cell::text(e.frame);
        if (auto r = w.value()->append_row(cells); !r) return r;
        if (vw) {
          view_row(*options_.view, *m, e.control_id, e.receive_time_us, view_cells, view_stores);
          if (auto r = vw->append_row(view_cells); !r) return r;
        }
      }
      if (auto f = w.value()->finish(); !f) return std::move(f).error();
      if (auto a = append_table(sink, target_, options_.store); !a) return a;
      stored_to_table = true;
      // The view's rows after the store's: a crash between the two leaves the view behind, and
      // the next open derives what it lacks from the store.
      if (vw) {
        if (auto f = vw->finish(); !f) return std::move(f).error();
        if (auto a = append_table(view_sink, *view_target_, options_.store); !a) return a;
      }
      return {};
    }();
  }
  if (stored_to_table) {
    // Stored, even when the view's append then failed: a resend is a duplicate.
    counters_.stored += rows;
    for (const entry &e : group)  // in the order they came: the window forgets the oldest first
      if (e.store) stored_keys_.insert(fingerprint_of(e.key));
  }
  if (!stored) {
    ++counters_.failed_commits;
  } else if (rows > 0) {
    ++counters_.commits;
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
