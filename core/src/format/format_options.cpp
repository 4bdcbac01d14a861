// The format's inputs written as text: write options as JSON (the npm package's object form) and
// lookup keys as JSON (npm) or as plain text typed by the column (`quire query --find COL=V`).
#include <charconv>
#include <cmath>

#include "format_internal.h"
#include "quire/json.h"

namespace quire::format {

using namespace detail;

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
    if (m.key == "chunkRows" || m.key == "pageBytes" || m.key == "compressionLevel" || m.key == "sortMemoryBytes" ||
        m.key == "inferRows") {
      auto d = m.val.get_double();
      if (!d || *d < 0 || std::floor(*d) != *d || *d > 4294967295.0)
        return bad(std::string(m.key) + " takes a whole number up to 4294967295", at);
      if (m.key == "chunkRows") opts.chunk_rows = static_cast<uint32_t>(*d);
      else if (m.key == "pageBytes") opts.page_bytes = static_cast<uint32_t>(*d);
      else if (m.key == "compressionLevel") opts.compression_level = static_cast<int>(*d);
      else if (m.key == "sortMemoryBytes") opts.sort_memory_bytes = static_cast<size_t>(*d);
      else in.infer_rows = std::max<size_t>(1, static_cast<size_t>(*d));
    } else if (m.key == "sortedBy") {
      auto s = m.val.get_string();
      if (!s) return bad("sortedBy takes a column name", at);
      opts.sorted_by = std::string(*s);
    } else if (m.key == "indexes") {
      auto arr = m.val.get_array();
      if (!arr) return bad("indexes takes an array of {column, kind}", at);
      for (auto e : arr.value()) {
        auto o = e.get_object();
        auto col = o ? o->find("column") : std::nullopt;
        auto kind = o ? o->find("kind") : std::nullopt;
        if (!col || !kind || !col->get_string() || !kind->get_string())
          return bad("indexes takes an array of {column, kind}", e.offset());
        auto k = parse_index_kind(kind->get_string().value());
        if (!k) return bad("an index kind is sorted, hash or text", kind->offset());
        opts.indexes.push_back({std::string(col->get_string().value()), *k});
      }
    } else if (m.key == "schema") {
      auto arr = m.val.get_array();
      if (!arr) return bad("schema takes an array of {name, type}", at);
      format::schema s;
      for (auto e : arr.value()) {
        auto o = e.get_object();
        auto name = o ? o->find("name") : std::nullopt;
        auto type = o ? o->find("type") : std::nullopt;
        if (!name || !type || !name->get_string() || !type->get_string())
          return bad("schema takes an array of {name, type}", e.offset());
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
