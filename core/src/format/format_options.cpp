// The format's inputs written as text: write options as JSON (the npm package's object form) and
// lookup keys as JSON (npm) or as plain text typed by the column (`quire query --find COL=V`).
#include <charconv>
#include <cmath>

#include "format_internal.h"
#include "quire/json.h"

namespace quire::format {

using namespace detail;

namespace {

/// What an option's text is.
enum class option_text : uint8_t { count, column, index };

struct write_option_entry {
  std::string_view key;   ///< as the npm package's object spells it
  std::string_view flag;  ///< as the CLI spells it
  option_text text;
};

constexpr write_option_entry WRITE_OPTIONS[] = {
    {"sortedBy", "--sort", option_text::column},         {"index", "--index", option_text::index},
    {"chunkRows", "--chunk-rows", option_text::count},   {"pageBytes", "--page-bytes", option_text::count},
    {"compressionLevel", "--level", option_text::count}, {"sortMemoryBytes", "--sort-memory-bytes", option_text::count},
    {"inferRows", "--infer-rows", option_text::count},
};

const write_option_entry *find_write_option(std::string_view name) {
  for (const auto &e : WRITE_OPTIONS)
    if (name == e.key || name == e.flag) return &e;
  return nullptr;
}

quire::error bad_option(std::string what) { return quire::error(error_code::INVALID_ARGUMENT, std::move(what)); }

quire::error not_a_count(std::string_view name) {
  return bad_option(std::string(name) + " takes a whole number up to 4294967295");
}

}  // namespace

result<void> check_write_options(const write_options &o) {
  if (o.chunk_rows < 1 || o.chunk_rows > MAX_CHUNK_ROWS)
    return bad_option("chunk_rows must be 1.." + std::to_string(MAX_CHUNK_ROWS));
  if (o.page_bytes < 512 || o.page_bytes > (16u << 20)) return bad_option("page_bytes must be 512..16 MiB");
  if (o.compression_level < 1 || o.compression_level > 19) return bad_option("compression_level must be 1..19");
  return {};
}

namespace {

/// Reads and sets one option, without the range check (the JSON form leaves that to writer::create,
/// as it always has, so the npm package's errors keep their words and their moment).
result<void> set_write_option(const write_option_entry &e, std::string_view name, std::string_view text,
                              write_options &opts, input_options &in) {
  switch (e.text) {
    case option_text::column: opts.sorted_by = std::string(text); return {};
    case option_text::index: {
      const size_t colon = text.rfind(':');
      auto k = colon == std::string_view::npos ? std::nullopt : parse_index_kind(text.substr(colon + 1));
      if (!k) return bad_option(std::string(name) + " takes COLUMN:sorted, COLUMN:hash or COLUMN:text");
      opts.indexes.push_back({std::string(text.substr(0, colon)), *k});
      return {};
    }
    case option_text::count: break;
  }
  // A JSON number's own text (`1e3`, `100.0`) reads as digits do: what counts is the value.
  if (classify_number(text) == number_class::not_a_number) return not_a_count(name);
  const double d = parse_double(text);
  if (d < 0 || std::floor(d) != d || d > 4294967295.0) return not_a_count(name);
  if (e.key == "chunkRows") opts.chunk_rows = static_cast<uint32_t>(d);
  else if (e.key == "pageBytes") opts.page_bytes = static_cast<uint32_t>(d);
  else if (e.key == "compressionLevel") opts.compression_level = static_cast<int>(d);
  else if (e.key == "sortMemoryBytes") opts.sort_memory_bytes = static_cast<size_t>(d);
  else in.infer_rows = std::max<size_t>(1, static_cast<size_t>(d));
  return {};
}

}  // namespace

result<void> apply_write_option(std::string_view name, std::string_view text, write_options &opts, input_options &in) {
  const write_option_entry *e = find_write_option(name);
  if (!e) return bad_option("unknown write option '" + std::string(name) + "'");
  if (auto set = set_write_option(*e, name, text, opts, in); !set) return set;
  return check_write_options(opts);
}

result<void> parse_write_options_json(std::string_view text, write_options &opts, input_options &in) {
  if (text.empty()) return {};
  auto doc = json::parse(text);
  if (!doc) return std::move(doc).error();
  auto obj = doc->root().get_object();
  auto bad = [](std::string what, uint64_t offset = quire::error::NO_OFFSET) {
    return quire::error(error_code::INVALID_ARGUMENT, std::move(what), offset);
  };
  if (!obj) return bad("write options must be an object", 0);
  for (auto m : obj.value()) {
    if (m.val.is_null()) continue;
    const uint64_t at = m.val.offset();
    const write_option_entry *e = m.key == "index" ? nullptr : find_write_option(m.key);
    if (e && (e->key != m.key)) e = nullptr;  // the object takes the npm keys only
    if (e) {
      result<void> set;
      if (e->text == option_text::count) {
        auto number = m.val.get_number_text();
        set = number ? set_write_option(*e, m.key, *number, opts, in) : result<void>(not_a_count(m.key));
      } else {
        auto s = m.val.get_string();
        set = s ? set_write_option(*e, m.key, *s, opts, in) : result<void>(bad("sortedBy takes a column name"));
      }
      if (!set) {
        quire::error err = std::move(set).error();
        err.offset = at;
        return err;
      }
    } else if (m.key == "indexes") {
      auto arr = m.val.get_array();
      if (!arr) return bad("indexes takes an array of {column, kind}", at);
      for (auto el : arr.value()) {
        auto o = el.get_object();
        auto col = o ? o->find("column") : std::nullopt;
        auto kind = o ? o->find("kind") : std::nullopt;
        if (!col || !kind || !col->get_string() || !kind->get_string())
          return bad("indexes takes an array of {column, kind}", el.offset());
        auto k = parse_index_kind(kind->get_string().value());
        if (!k) return bad("an index kind is sorted, hash or text", kind->offset());
        opts.indexes.push_back({std::string(col->get_string().value()), *k});
      }
    } else if (m.key == "schema") {
      auto arr = m.val.get_array();
      if (!arr) return bad("schema takes an array of {name, type}", at);
      format::schema s;
      for (auto el : arr.value()) {
        auto o = el.get_object();
        auto name = o ? o->find("name") : std::nullopt;
        auto type = o ? o->find("type") : std::nullopt;
        if (!name || !type || !name->get_string() || !type->get_string())
          return bad("schema takes an array of {name, type}", el.offset());
        auto t = parse_type_name(type->get_string().value());
        if (!t) return bad("unknown column type '" + std::string(type->get_string().value()) + "'", type->offset());
        s.columns.push_back({std::string(name->get_string().value()), *t});
      }
      in.schema = std::move(s);
    } else {
      return bad("unknown write option '" + std::string(m.key) + "'", at);
    }
  }
  return {};
}

result<value> parse_key_json(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc) return std::move(doc).error();
  auto v = doc->root();
  switch (v.type()) {
    case json::kind::string: return value::text(std::string(v.get_string().value()));
    case json::kind::boolean: return value::of(v.get_bool().value());
    case json::kind::number: {
      auto i = v.get_int64();
      return i ? value::of(*i) : value::of(v.get_double().value());
    }
    default: return quire::error(error_code::WRONG_KEY, "a key must be a string, a number or a boolean", 0);
  }
}

result<value> parse_key_text(const format::schema &s, std::string_view column, std::string_view text) {
  auto c = s.find(column);
  if (!c) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + std::string(column) + "'");
  // Text the column's type does not read stays text: find() then says WRONG_KEY, in the words it
  // uses for a key passed as a string through the npm package.
  switch (s.columns[*c].type) {
    case column_type::integer: {
      int64_t v;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && p == text.data() + text.size()) return value::of(v);
      break;
    }
    case column_type::float64:
    case column_type::decimal:
      if (classify_number(text) != number_class::not_a_number) return value::of(parse_double(text));
      break;
    case column_type::boolean:
      if (text == "true" || text == "false") return value::of(text == "true");
      break;
    default: break;
  }
  return value::text(std::string(text));
}

}  // namespace quire::format
