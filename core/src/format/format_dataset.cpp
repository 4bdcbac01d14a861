// Partitioned datasets (quire/dataset.h): Hive-style names, the manifest's text both ways, the
// merge of writers' fragments, pruning files by their statistics, and queries over the files kept.
#include "quire/dataset.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "format_predicate.h"
#include "quire/json.h"

namespace quire::dataset {

using format::column_type;
using format::detail::domain;
using format::detail::pk;
using format::detail::pred;
using format::detail::stats;
using format::detail::tri;

namespace {

// Hive's FileUtils.escapePathName set, plus every control byte.
bool needs_escape(unsigned char c) {
  if (c < 0x20 || c == 0x7f) return true;
  switch (c) {
    case '"':
    case '#':
    case '%':
    case '\'':
    case '*':
    case '/':
    case ':':
    case '=':
    case '?':
    case '\\':
    case '{':
    case '[':
    case ']':
    case '^': return true;
    default: return false;
  }
}

void escape_into(std::string &out, std::string_view text) {
  static constexpr char HEX[] = "0123456789ABCDEF";
  for (unsigned char c : text) {
    if (!needs_escape(c)) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    out.push_back('%');
    out.push_back(HEX[c >> 4]);
    out.push_back(HEX[c & 15]);
  }
}

error corrupt(std::string what) {
  std::string m = "dataset manifest: ";
  m += what;
  return error(error_code::CORRUPT_FILE, std::move(m));
}

// A manifest path: relative, `/`-separated, no empty, `.` or `..` segment, no NUL or backslash.
bool safe_path(std::string_view p) {
  if (p.empty() || p.size() > 4096 || p.front() == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string_view::npos) slash = p.size();
    std::string_view seg = p.substr(start, slash - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    if (seg.find('\0') != std::string_view::npos || seg.find('\\') != std::string_view::npos) return false;
    start = slash + 1;
  }
  return true;
}

// A summary's values in the column's domain, as statistics hold them.
stats stats_of(const column_summary &c, column_type type, uint64_t rows) {
  stats s;
  s.rows = rows;
  s.nulls = c.nulls;
  const domain d = format::detail::domain_of(type);
  auto take = [&](const format::value &v, bool min) {
    bool ok = false;
    if (d == domain::ints && v.k == format::value::kind::integer) {
      (min ? s.imin : s.imax) = v.i;
      ok = true;
    } else if (d == domain::reals && (v.k == format::value::kind::real || v.k == format::value::kind::integer)) {
      (min ? s.rmin : s.rmax) = v.k == format::value::kind::real ? v.d : static_cast<double>(v.i);
      ok = true;
    } else if (d == domain::text && v.k == format::value::kind::text) {
      (min ? s.tmin : s.tmax) = v.s;
      ok = true;
    }
    (min ? s.has_min : s.has_max) = ok;
  };
  take(c.min, true);
  take(c.max, false);
  return s;
}

// Whether none, some or all rows of a file can match `p`. `only_partition`: terms on other
// columns count as "some" (what the partition's value alone decides).
tri on_file(const pred &p, const std::vector<stats> &st, int partition_column, bool only_partition) {
  switch (p.kind) {
    case pk::always: return tri::all;
    case pk::never: return tri::none;
    case pk::and_: {
      tri out = tri::all;
      for (const auto &k : p.kids) {
        tri t = on_file(k, st, partition_column, only_partition);
        if (t == tri::none) return tri::none;
        if (t == tri::some) out = tri::some;
      }
      return out;
    }
    case pk::or_: {
      tri out = tri::none;
      for (const auto &k : p.kids) {
        tri t = on_file(k, st, partition_column, only_partition);
        if (t == tri::all) return tri::all;
        if (t == tri::some) out = tri::some;
      }
      return out;
    }
    case pk::not_: return format::detail::tri_not(on_file(p.kids[0], st, partition_column, only_partition));
    default: break;
  }
  if (only_partition && static_cast<int>(p.column) != partition_column) return tri::some;
  if (p.column >= st.size()) return tri::some;
  return format::detail::leaf_on_stats(p, st[p.column]);
}

void put_value(std::string &o, const format::value &v) {
  switch (v.k) {
    case format::value::kind::integer: o += std::to_string(v.i); break;
    case format::value::kind::real: append_double(o, v.d); break;
    case format::value::kind::boolean: o += v.b ? "true" : "false"; break;
    case format::value::kind::text: json::append_quoted(o, v.s); break;
    default: o += "null"; break;
  }
}

// A summary value read back in the column's domain; false when the JSON has another type.
bool get_value(const json::value &j, column_type type, format::value &out) {
  if (j.is_null()) {
    out = format::value::null();
    return true;
  }
  switch (format::detail::domain_of(type)) {
    case domain::ints: {
      auto i = j.get_int64();
      if (!i) return false;
      out = format::value::of(*i);
      return true;
    }
    case domain::reals: {
      auto d = j.get_double();
      if (!d) return false;
      out = format::value::of(*d);
      return true;
    }
    case domain::text: {
      auto s = j.get_string();
      if (!s) return false;
      out = format::value::text(std::string(*s));
      return true;
    }
  }
  return false;
}

result<uint64_t> get_count(const json::object &o, std::string_view key, std::string_view where) {
  auto v = o.find(key);
  auto i = v ? v->get_int64() : result<int64_t>(error(error_code::NO_SUCH_KEY, ""));
  if (!i || *i < 0) return corrupt(std::string(where) + " needs \"" + std::string(key) + "\": a whole number");
  return static_cast<uint64_t>(*i);
}

result<std::string_view> get_text(const json::object &o, std::string_view key, std::string_view where) {
  auto v = o.find(key);
  auto s = v ? v->get_string() : result<std::string_view>(error(error_code::NO_SUCH_KEY, ""));
  if (!s) return corrupt(std::string(where) + " needs \"" + std::string(key) + "\": a string");
  return *s;
}

result<file_entry> read_file_entry(const json::value &v, const format::schema &sch, size_t n) {
  const std::string where = "files[" + std::to_string(n) + "]";
  auto o = v.get_object();
  if (!o) return corrupt(where + " is not an object");
  file_entry e;
  auto path = get_text(*o, "path", where);
  if (!path) return path.error();
  if (!safe_path(*path)) return corrupt(where + ".path is not a relative path inside the dataset's folder");
  e.path = std::string(*path);
  if (auto p = o->find("partition"); p && !p->is_null()) {
    auto s = p->get_string();
    if (!s) return corrupt(where + ".partition is not a string or null");
    e.partition = std::string(*s);
  }
  auto rows = get_count(*o, "rows", where);
  if (!rows) return rows.error();
  auto bytes = get_count(*o, "bytes", where);
  if (!bytes) return bytes.error();
  e.rows = *rows;
  e.bytes = *bytes;
  auto cols = o->find("columns");
  auto arr = cols ? cols->get_array() : result<json::array>(error(error_code::NO_SUCH_KEY, ""));
  if (!arr || arr->size() != sch.columns.size())
    return corrupt(where + ".columns needs one summary for each of the schema's " + std::to_string(sch.columns.size()) +
                   " columns");
  size_t c = 0;
  for (json::value cv : *arr) {
    auto co = cv.get_object();
    if (!co) return corrupt(where + ".columns[" + std::to_string(c) + "] is not an object");
    column_summary s;
    auto nulls = get_count(*co, "nulls", where + ".columns[" + std::to_string(c) + "]");
    if (!nulls) return nulls.error();
    s.nulls = *nulls;
    auto mn = co->find("min"), mx = co->find("max");
    if ((mn && !get_value(*mn, sch.columns[c].type, s.min)) || (mx && !get_value(*mx, sch.columns[c].type, s.max)))
      return corrupt(where + ".columns[" + std::to_string(c) + "] has a min or max its column's type cannot hold");
    e.columns.push_back(std::move(s));
    ++c;
  }
  return e;
}

}  // namespace

result<std::string> partition_segment(std::string_view column, const std::optional<std::string_view> &value) {
  if (column.empty()) return error(error_code::INVALID_ARGUMENT, "a partition column needs a name");
  std::string out;
  escape_into(out, column);
  out.push_back('=');
  if (!value) {
    out += NULL_PARTITION;
  } else if (*value == NULL_PARTITION) {
    out += "%5F";  // the text of the null folder's name, kept apart from null
    escape_into(out, value->substr(1));
  } else {
    escape_into(out, *value);
  }
  if (out.size() > MAX_SEGMENT_BYTES) {
    return error(error_code::INVALID_ARGUMENT, "a partition value of " + std::to_string(value ? value->size() : 0) +
                                                   " bytes makes a folder name longer than " +
                                                   std::to_string(MAX_SEGMENT_BYTES) + " bytes");
  }
  return out;
}

result<void> check_part_name(std::string_view name) {
  bool ok = !name.empty() && name.size() <= MAX_PART_NAME_BYTES && name.front() != '.';
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                c == '-');
  }
  if (!ok) {
    return error(error_code::INVALID_ARGUMENT, "a part name is 1 to " + std::to_string(MAX_PART_NAME_BYTES) +
                                                   " letters, digits, '.', '_' or '-', not starting with '.'");
  }
  return {};
}

std::string part_path(std::string_view segment, std::string_view part_name) {
  std::string p(segment);
  if (!p.empty()) p.push_back('/');
  p += "part-";
  p += part_name;
  p += ".quire";
  return p;
}

uint64_t manifest::rows() const noexcept {
  uint64_t n = 0;
  for (const auto &f : files) n += f.rows;
  return n;
}

result<file_entry> describe_file(format::file &f, std::string path, std::optional<std::string> partition) {
  file_entry e;
  e.path = std::move(path);
  e.partition = std::move(partition);
  e.rows = f.row_count();
  e.bytes = f.size();
  for (const auto &col : f.schema().columns) {
    auto chunks = f.chunk_statistics(col.name);
    if (!chunks) return chunks.error();
    column_summary s;
    bool min_known = true, max_known = true, any = false;
    for (const auto &c : *chunks) {
      s.nulls += c.nulls;
      if (c.nulls == c.rows) continue;  // no values: nothing to bound
      // Booleans come back as booleans; the summary keeps them as the 0 and 1 statistics hold.
      auto domain_value = [](const format::value &v) {
        return v.k == format::value::kind::boolean ? format::value::of(int64_t{v.b}) : v;
      };
      const format::value mn = domain_value(c.min), mx = domain_value(c.max);
      min_known = min_known && mn.k != format::value::kind::null_value;
      max_known = max_known && mx.k != format::value::kind::null_value;
      auto less = [](const format::value &a, const format::value &b) {
        if (a.k == format::value::kind::integer) return a.i < b.i;
        if (a.k == format::value::kind::real) return a.d < b.d;
        return a.s < b.s;
      };
      if (min_known && (!any || less(mn, s.min))) s.min = mn;
      if (max_known && (!any || less(s.max, mx))) s.max = mx;
      any = true;
    }
    if (!any || !min_known) s.min = format::value::null();
    if (!any || !max_known) s.max = format::value::null();
    e.columns.push_back(std::move(s));
  }
  return e;
}

std::string to_json(const manifest &m) {
  std::string o = "{\"quireDataset\":";
  o += std::to_string(MANIFEST_VERSION);
  o += ",\"partitionBy\":";
  if (m.partition_by.empty()) {
    o += "[]";
  } else {
    o += '[';
    json::append_quoted(o, m.partition_by);
    o += ']';
  }
  o += ",\"rows\":";
  o += std::to_string(m.rows());
  o += ",\"schema\":[";
  for (size_t i = 0; i < m.schema.columns.size(); ++i) {
    if (i) o += ',';
    o += "{\"name\":";
    json::append_quoted(o, m.schema.columns[i].name);
    o += ",\"type\":";
    json::append_quoted(o, format::type_name(m.schema.columns[i].type));
    o += '}';
  }
  o += "],\"ranges\":[";
  for (size_t i = 0; i < m.ranges.size(); ++i) {
    const input_range &r = m.ranges[i];
    if (i) o += ',';
    o += "{\"input\":";
    json::append_quoted(o, r.input);
    o += ",\"bytes\":" + std::to_string(r.input_bytes) + ",\"start\":" + std::to_string(r.start) +
         ",\"end\":" + std::to_string(r.end) + ",\"part\":";
    json::append_quoted(o, r.part);
    o += '}';
  }
  o += "],\"files\":[";
  for (size_t i = 0; i < m.files.size(); ++i) {
    const file_entry &f = m.files[i];
    o += i ? ",\n" : "\n";
    o += "{\"path\":";
    json::append_quoted(o, f.path);
    o += ",\"partition\":";
    if (f.partition) json::append_quoted(o, *f.partition);
    else o += "null";
    o += ",\"rows\":" + std::to_string(f.rows) + ",\"bytes\":" + std::to_string(f.bytes) + ",\"columns\":[";
    for (size_t c = 0; c < f.columns.size(); ++c) {
      if (c) o += ',';
      o += "{\"nulls\":" + std::to_string(f.columns[c].nulls) + ",\"min\":";
      put_value(o, f.columns[c].min);
      o += ",\"max\":";
      put_value(o, f.columns[c].max);
      o += '}';
    }
    o += "]}";
  }
  o += "\n]}\n";
  return o;
}

result<manifest> parse_manifest(std::string_view text) {
  if (text.size() > MAX_MANIFEST_BYTES) {
    return error(error_code::DOCUMENT_TOO_LARGE,
                 "a dataset manifest is at most " + std::to_string(MAX_MANIFEST_BYTES) + " bytes");
  }
  auto doc = json::parse(text);
  if (!doc) return doc.error();
  auto root = doc->root().get_object();
  if (!root) return corrupt("not a JSON object");
  auto version = get_count(*root, "quireDataset", "the manifest");
  if (!version) return version.error();
  if (*version == 0 || *version > MANIFEST_VERSION) {
    return error(error_code::UNSUPPORTED_VERSION, "dataset manifest version " + std::to_string(*version) +
                                                      "; this reader reads version " +
                                                      std::to_string(MANIFEST_VERSION));
  }
  manifest m;
  auto by = root->find("partitionBy");
  auto by_arr = by ? by->get_array() : result<json::array>(error(error_code::NO_SUCH_KEY, ""));
  if (!by_arr || by_arr->size() > 1) return corrupt("\"partitionBy\" needs an array of at most one column name");
  for (json::value c : *by_arr) {
    auto s = c.get_string();
    if (!s || s->empty()) return corrupt("\"partitionBy\" holds a name that is not a non-empty string");
    m.partition_by = std::string(*s);
  }
  auto sch = root->find("schema");
  auto sch_arr = sch ? sch->get_array() : result<json::array>(error(error_code::NO_SUCH_KEY, ""));
  if (!sch_arr || sch_arr->size() == 0) return corrupt("\"schema\" needs a non-empty array of columns");
  for (json::value c : *sch_arr) {
    auto co = c.get_object();
    if (!co) return corrupt("a schema column is not an object");
    auto name = get_text(*co, "name", "a schema column");
    if (!name) return name.error();
    auto type_text = get_text(*co, "type", "a schema column");
    if (!type_text) return type_text.error();
    auto type = format::parse_type_name(*type_text);
    if (!type) return corrupt("schema column " + std::string(*name) + " has unknown type " + std::string(*type_text));
    if (m.schema.find(*name)) return corrupt("schema names column " + std::string(*name) + " twice");
    m.schema.columns.push_back({std::string(*name), *type});
  }
  if (!m.partition_by.empty() && !m.schema.find(m.partition_by))
    return corrupt("partition column " + m.partition_by + " is not in the schema");
  if (auto ranges = root->find("ranges"); ranges && !ranges->is_null()) {
    auto arr = ranges->get_array();
    if (!arr) return corrupt("\"ranges\" needs an array");
    size_t n = 0;
    for (json::value rv : *arr) {
      const std::string where = "ranges[" + std::to_string(n++) + "]";
      auto ro = rv.get_object();
      if (!ro) return corrupt(where + " is not an object");
      input_range r;
      auto input = get_text(*ro, "input", where);
      if (!input) return input.error();
      auto part = get_text(*ro, "part", where);
      if (!part) return part.error();
      auto bytes = get_count(*ro, "bytes", where);
      if (!bytes) return bytes.error();
      auto start = get_count(*ro, "start", where);
      if (!start) return start.error();
      auto end = get_count(*ro, "end", where);
      if (!end) return end.error();
      if (*start > *end || *end > *bytes) return corrupt(where + " is not a range inside its input");
      r.input = std::string(*input);
      r.part = std::string(*part);
      r.input_bytes = *bytes;
      r.start = *start;
      r.end = *end;
      m.ranges.push_back(std::move(r));
    }
  }
  auto files = root->find("files");
  auto files_arr = files ? files->get_array() : result<json::array>(error(error_code::NO_SUCH_KEY, ""));
  if (!files_arr) return corrupt("\"files\" needs an array");
  size_t n = 0;
  for (json::value f : *files_arr) {
    auto e = read_file_entry(f, m.schema, n++);
    if (!e) return e.error();
    m.files.push_back(std::move(e).value());
  }
  return m;
}

result<manifest> merge(std::vector<manifest> fragments) {
  manifest out;
  if (fragments.empty()) return error(error_code::INVALID_ARGUMENT, "no fragments to merge");
  out.schema = fragments.front().schema;
  out.partition_by = fragments.front().partition_by;
  for (auto &f : fragments) {
    bool same = f.partition_by == out.partition_by && f.schema.columns.size() == out.schema.columns.size();
    for (size_t i = 0; same && i < f.schema.columns.size(); ++i) {
      same = f.schema.columns[i].name == out.schema.columns[i].name &&
             f.schema.columns[i].type == out.schema.columns[i].type;
    }
    if (!same) {
      return error(error_code::INVALID_ARGUMENT,
                   "the fragments disagree on their schema or partition column (written by different views?)");
    }
    for (auto &e : f.files) out.files.push_back(std::move(e));
    for (auto &r : f.ranges) out.ranges.push_back(std::move(r));
  }
  // The ranges of each input must tile it: [0, a), [a, b), ... [z, size), each byte once.
  std::sort(out.ranges.begin(), out.ranges.end(), [](const input_range &a, const input_range &b) {
    return std::tie(a.input, a.input_bytes, a.start, a.end) < std::tie(b.input, b.input_bytes, b.start, b.end);
  });
  for (size_t i = 0; i < out.ranges.size(); ++i) {
    const input_range &r = out.ranges[i];
    const bool first = i == 0 || out.ranges[i - 1].input != r.input || out.ranges[i - 1].input_bytes != r.input_bytes;
    const uint64_t covered = first ? 0 : out.ranges[i - 1].end;
    const std::string name = r.input + " (" + std::to_string(r.input_bytes) + " bytes)";
    if (r.start > covered) {
      return error(error_code::INVALID_ARGUMENT, "bytes " + std::to_string(covered) + ".." + std::to_string(r.start) +
                                                     " of " + name + " are in no writer's range: a task is missing");
    }
    if (r.start < covered) {
      return error(error_code::INVALID_ARGUMENT, "the ranges of parts " + out.ranges[i - 1].part + " and " + r.part +
                                                     " overlap at bytes " + std::to_string(r.start) + ".." +
                                                     std::to_string(std::min(covered, r.end)) + " of " + name +
                                                     ": their lines would be counted twice");
    }
    const bool last = i + 1 == out.ranges.size() || out.ranges[i + 1].input != r.input ||
                      out.ranges[i + 1].input_bytes != r.input_bytes;
    if (last && r.end < r.input_bytes) {
      return error(error_code::INVALID_ARGUMENT, "bytes " + std::to_string(r.end) + ".." +
                                                     std::to_string(r.input_bytes) + " of " + name +
                                                     " are in no writer's range: a task is missing");
    }
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const file_entry &a, const file_entry &b) { return a.path < b.path; });
  for (size_t i = 1; i < out.files.size(); ++i) {
    if (out.files[i].path == out.files[i - 1].path) {
      return error(error_code::INVALID_ARGUMENT,
                   "two fragments list " + out.files[i].path + " (two writers chose one part name)");
    }
  }
  return out;
}

result<plan> prune(const manifest &m, const std::optional<format::filter> &where) {
  plan p;
  std::optional<pred> compiled;
  if (where) {
    auto c = format::detail::compile(*where, m.schema);
    if (!c) return c.error();
    compiled = std::move(c).value();
  }
  const int partition_column =
      m.partition_by.empty() ? -1 : static_cast<int>(m.schema.find(m.partition_by).value_or(SIZE_MAX));
  std::vector<stats> st;
  for (size_t i = 0; i < m.files.size(); ++i) {
    const file_entry &f = m.files[i];
    if (f.rows == 0) {
      ++p.skipped_by_statistics;
      continue;
    }
    if (compiled) {
      st.clear();
      for (size_t c = 0; c < f.columns.size() && c < m.schema.columns.size(); ++c)
        st.push_back(stats_of(f.columns[c], m.schema.columns[c].type, f.rows));
      if (on_file(*compiled, st, partition_column, false) == tri::none) {
        if (partition_column >= 0 && on_file(*compiled, st, partition_column, true) == tri::none)
          ++p.skipped_by_partition;
        else ++p.skipped_by_statistics;
        continue;
      }
    }
    p.files.push_back(i);
  }
  return p;
}

reader::reader(manifest m, open_source open) : m_(std::move(m)), open_(std::move(open)) {}

result<format::file> reader::open_file(size_t index) {
  const file_entry &e = m_.files[index];
  auto src = open_(e.path);
  if (!src) return src.error();
  // The size first: a cut or grown file is the manifest's disagreement, whatever its bytes say.
  if ((*src)->size() != e.bytes) {
    return corrupt(e.path + " holds " + std::to_string((*src)->size()) + " bytes; the manifest says " +
                   std::to_string(e.bytes));
  }
  auto f = format::file::open(std::move(src).value());
  if (!f) {
    error err = f.error();
    err.message = e.path + ": " + err.message;
    return err;
  }
  if (f->row_count() != e.rows) {
    return corrupt(e.path + " holds " + std::to_string(f->row_count()) + " rows; the manifest says " +
                   std::to_string(e.rows));
  }
  return f;
}

result<format::row_set> reader::query(const format::query &q, format::row_text form) {
  if (!q.order_by.empty()) {
    return error(error_code::INVALID_QUERY,
                 "orderBy across a dataset's files is not supported: query one file, or sort the rows");
  }
  auto p = prune(m_, q.where);
  if (!p) return p.error();
  format::row_set out;
  uint64_t skip = q.offset, left = q.limit;
  bool header = false;
  for (size_t i : p->files) {
    if (left == 0) break;
    auto f = open_file(i);
    if (!f) return f.error();
    format::query fq = q;
    fq.offset = 0;
    fq.limit = UINT64_MAX;
    if (skip) {
      auto n = f->count(fq);
      if (!n) return n.error();
      if (*n <= skip) {
        skip -= *n;
        continue;
      }
    }
    fq.offset = skip;
    fq.limit = left;
    skip = 0;
    auto rows = f->query(fq, form);
    if (!rows) return rows.error();
    std::string_view text = rows->json;
    if (form == format::row_text::csv) {
      // Each file's CSV starts with the header; the dataset's has it once.
      if (header) {
        size_t nl = text.find('\n');
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
      }
      header = true;
    } else if (form == format::row_text::json_array) {
      // One array over the files: the brackets of each file's array are dropped.
      if (text.size() >= 2) text = text.substr(1, text.size() - 2);
      if (!text.empty() && out.count) out.json.push_back(',');
    }
    out.json.append(text);
    out.count += rows->count;
    left -= rows->count;
  }
  if (form == format::row_text::json_array) out.json = "[" + out.json + "]";
  return out;
}

result<uint64_t> reader::count(const format::query &q) {
  auto p = prune(m_, q.where);
  if (!p) return p.error();
  format::query fq = q;
  fq.offset = 0;
  fq.limit = UINT64_MAX;
  uint64_t total = 0;
  for (size_t i : p->files) {
    auto f = open_file(i);
    if (!f) return f.error();
    auto n = f->count(fq);
    if (!n) return n.error();
    total += *n;
  }
  const uint64_t after_offset = total > q.offset ? total - q.offset : 0;
  return std::min(after_offset, q.limit);
}

result<std::string> reader::explain(const format::query &q) {
  auto p = prune(m_, q.where);
  if (!p) return p.error();
  std::string o = "{\"files\":" + std::to_string(m_.files.size()) +
                  ",\"skippedByPartition\":" + std::to_string(p->skipped_by_partition) +
                  ",\"skippedByStatistics\":" + std::to_string(p->skipped_by_statistics) + ",\"scanned\":[";
  for (size_t k = 0; k < p->files.size(); ++k) {
    if (k) o += ',';
    json::append_quoted(o, m_.files[p->files[k]].path);
  }
  o += "]}";
  return o;
}

}  // namespace quire::dataset
