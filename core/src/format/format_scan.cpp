// The scan: a predicate evaluated over one chunk column by column, cursors over decoded pages,
// rows rendered as JSON or CSV, and select() (the rows a query returns, in its order).
#include <algorithm>
#include <charconv>
#include <cstring>

#include "../common/alloc.h"
#include "../common/csv_field.h"
#include "format_engine.h"

namespace quire::format::detail {

result<selection> engine::eval(const pred &p, uint64_t chunk, const selection &sel) {
  const uint32_t rows = f.rows_in_chunk(chunk);
  switch (p.kind) {
    case pk::always: return sel;
    case pk::never: return selection::of_list(rows, {});
    case pk::and_: {
      // Each conjunct narrows the last one's result; the input itself is not copied.
      const selection *in = &sel;
      selection narrowed;
      for (const auto &k : p.kids) {
        if (in->empty()) break;
        auto r = eval(k, chunk, *in);
        if (!r) return r;
        narrowed = std::move(r).value();
        in = &narrowed;
      }
      if (in == &sel) return sel;
      return narrowed;
    }
    case pk::or_: {
      // Whole selections combined: one byte a row, then the form that fits the result.
      std::vector<uint8_t> out(rows, 0), rest = sel.to_mask();
      for (const auto &k : p.kids) {
        if (std::find(rest.begin(), rest.end(), 1) == rest.end()) break;
        auto r = eval(k, chunk, selection::of_mask(rest));
        if (!r) return r;
        r->each([&](uint32_t i) {
          out[i] = 1;
          rest[i] = 0;
          return true;
        });
      }
      return selection::fitted(std::move(out));
    }
    case pk::not_: {
      auto r = eval(p.kids[0], chunk, sel);
      if (!r) return r;
      std::vector<uint8_t> out = sel.to_mask();
      r->each([&](uint32_t i) {
        out[i] = 0;
        return true;
      });
      return selection::fitted(std::move(out));
    }
    default: break;
  }
  selection_builder out(rows);
  auto dir = f.load_page_directory(p.column, chunk);
  if (!dir) return std::move(dir).error();
  const column_type type = f.sch.columns[p.column].type;
  std::vector<uint8_t> dict_match;
  bool dict_done = false;
  std::shared_ptr<column_values> one_value;
  bool dense_used = false;
  for (size_t pi = 0; pi < dir.value()->page_count; ++pi) {
    // A two-level directory's block is read only when rows of it are selected and its zone map may
    // hold a match (a one-level directory is one block, read already, with no zone map of its own).
    if (const auto &blk = dir.value()->blocks[dir.value()->block_of_page(pi)]; pi == blk.first_page) {
      const uint32_t block_from = blk.first_row, block_to = blk.first_row + blk.rows;
      const tri t = sel.count_in(block_from, block_to, 1) == 0 ? tri::none
                    : blk.zoned                                ? leaf_on_stats(p, blk.st)
                                                               : tri::some;
      if (t == tri::all) out.add_from(sel, block_from, block_to);
      if (t != tri::some) {
        pi += blk.page_count - 1;
        continue;
      }
    }
    auto entry = f.page_entry_at(p.column, chunk, pi);
    if (!entry) return std::move(entry).error();
    const auto &pe = *entry.value();
    const uint32_t from = pe.first_row, to = pe.first_row + pe.rows;
    const uint32_t selected = sel.count_in(from, to, 2);
    if (selected == 0) continue;
    tri t = leaf_on_stats(p, pe.st);
    if (t == tri::none) continue;
    if (t == tri::all) {
      out.add_from(sel, from, to);
      continue;
    }
    // One selected row in the page (an index's candidate, a find's key): its value alone.
    const bool one = selected == 1;
    if (one && !one_value) one_value = std::make_shared<column_values>();
    auto page = one ? f.row_view(p.column, chunk, pi, sel.first_in(from, to), one_value) : f.page(p.column, chunk, pi);
    if (!page) return std::move(page).error();
    const auto &v = *page->values;
    const uint32_t base = page->first_row;
    if (p.kind == pk::is_null || p.kind == pk::not_null) {
      bool want_null = p.kind == pk::is_null;
      sel.each(
          [&](uint32_t r) {
            out.add_if(r, v.is_valid(r - base) != want_null);
            return true;
          },
          from, to);
      continue;
    }
    if (v.dictionary && !dict_done) {
      const auto &d = *page->dict;
      dict_match.resize(d.size());
      for (size_t k = 0; k < d.size(); ++k) {
        dict_match[k] = type == column_type::decimal ? test_real(p, parse_double(d.at(static_cast<uint32_t>(k))))
                                                     : test_text(p, d.at(static_cast<uint32_t>(k)));
      }
      dict_done = true;
    }
    // A page without nulls whose rows are all selected, or selected by a mask, is tested in one
    // pass that writes the result's mask: no branch a row, so the compiler vectorizes the test.
    // Integer ranges and dictionary ids, the common scan filters, take it (format.filter-count).
    const bool dense = !one && v.valid.empty() && sel.kind() != selection::form::list;
    auto test_dense = [&](auto test) __attribute__((always_inline)) {
      uint8_t *m = out.dense();
      dense_used = true;
      if (sel.kind() == selection::form::all)
        for (uint32_t r = from; r < to; ++r) m[r] = static_cast<uint8_t>(test(r - base));
      else {
        const uint8_t *in = sel.mask_data();
        for (uint32_t r = from; r < to; ++r) m[r] = static_cast<uint8_t>(in[r] & test(r - base));
      }
    };
    if (dense && v.dictionary) {
      const uint8_t *match = dict_match.data();
      const uint32_t *ids = v.ids.data();
      test_dense([&](uint32_t i) { return match[ids[i]]; });
      continue;
    }
    if (dense && p.dom == domain::ints && p.kind != pk::set) {
      const int64_t lo = p.has_lo ? p.ilo : INT64_MIN, hi = p.has_hi ? p.ihi : INT64_MAX;
      const bool negate = p.negate;
      const int64_t *ints = v.ints.data();
      test_dense([&](uint32_t i) { return static_cast<uint8_t>(((ints[i] >= lo) & (ints[i] <= hi)) != negate); });
      continue;
    }
    // The value's test is chosen once a page, so each loop over the rows is one test inlined.
    auto test_rows = [&](auto test) __attribute__((always_inline)) {
      sel.each(
          [&](uint32_t r) __attribute__((always_inline)) {
            const uint32_t i = r - base;
            if (v.is_valid(i)) out.add_if(r, test(i));
            return true;
          },
          from, to);
    };
    if (v.dictionary) test_rows([&](uint32_t i) { return dict_match[v.ids[i]] != 0; });
    else if (p.dom == domain::ints) test_rows([&](uint32_t i) { return test_int(p, v.ints[i]); });
    else if (type == column_type::float64) test_rows([&](uint32_t i) { return test_real(p, v.reals[i]); });
    else if (type == column_type::decimal)
      test_rows([&](uint32_t i) { return test_real(p, parse_double(page->text(i))); });
    else test_rows([&](uint32_t i) { return test_text(p, page->text(i)); });
  }
  // A mask made whole by a dense page may hold few rows: as a list they cost the next step less.
  return dense_used ? out.finish_fitted() : out.finish();
}

result<void> engine::cursor::seek(uint32_t row) {
  if (!dir) {
    auto d = e.f.load_page_directory(column, chunk);
    if (!d) return std::move(d).error();
    dir = *d;
  }
  if (page_index != SIZE_MAX && row >= view.first_row && row - view.first_row < view.values->rows) return {};
  auto at = e.f.page_of_row(column, chunk, row);
  if (!at) return std::move(at).error();
  page_index = *at;
  auto v = one_row ? e.f.row_view(column, chunk, page_index, row, one_row) : e.f.page(column, chunk, page_index);
  if (!v) return std::move(v).error();
  view = std::move(v).value();
  return {};
}

void engine::append_json(std::string &out, size_t column, const page_view &v, uint32_t i) {
  const auto &vals = *v.values;
  if (!vals.is_valid(i)) {
    out += "null";
    return;
  }
  switch (f.sch.columns[column].type) {
    case column_type::integer: {
      char buf[24];
      out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, vals.ints[i]).ptr - buf));
      break;
    }
    case column_type::float64: append_double(out, vals.reals[i]); break;
    case column_type::decimal:
    case column_type::json: out += v.text(i); break;
    case column_type::string: json::append_quoted(out, v.text(i)); break;
    case column_type::boolean: out += vals.ints[i] ? "true" : "false"; break;
    case column_type::date:
      out.push_back('"');
      append_date(out, vals.ints[i]);
      out.push_back('"');
      break;
    case column_type::timestamp:
      out.push_back('"');
      append_timestamp(out, vals.ints[i]);
      out.push_back('"');
      break;
  }
}

std::string_view engine::display_text(std::string &field, size_t column, const page_view &v, uint32_t i) {
  const column_type t = f.sch.columns[column].type;
  if (t == column_type::string) return v.text(i);
  field.clear();
  append_json(field, column, v, i);
  std::string_view text = field;
  // Dates and timestamps are JSON strings of ISO text, which needs no escape: the text itself.
  if (t == column_type::date || t == column_type::timestamp) text = text.substr(1, text.size() - 2);
  return text;
}

namespace {
// Bytes of room render() makes sure of before each row (rows are rarely larger; a larger one grows
// the buffer as std::string does). Below detail::PROBE_THRESHOLD, so a small result is never
// probed: with the heap all but full it still has the headroom the wrapper keeps.
constexpr size_t ROW_HEADROOM = size_t{16} << 10;
}  // namespace

result<void> engine::render(std::string &out, const std::vector<uint64_t> &rows, const std::vector<size_t> &cols,
                            row_text form) {
  const bool csv = form == row_text::csv, cells = form == row_text::cells;
  std::vector<std::string> keys(cols.size());
  for (size_t ci = 0; ci < cols.size(); ++ci) {
    if (ci) keys[ci].push_back(',');
    if (csv || cells) continue;
    json::append_quoted(keys[ci], f.sch.columns[cols[ci]].name);
    keys[ci].push_back(':');
  }
  std::string field;  // a CSV field's or cell's text before quoting
  std::vector<std::optional<cursor>> cursors(cols.size());
  // One row (a find, a limit of 1): its values alone, each column's in turn into one scratch.
  std::shared_ptr<column_values> one_row;
  if (rows.size() == 1) one_row = std::make_shared<column_values>();
  for (size_t k = 0; k < rows.size(); ++k) {
    const uint64_t row = rows[k];
    const uint64_t chunk = f.chunk_of_row(row);
    const uint32_t in_chunk = static_cast<uint32_t>(row - f.chunk_first_row(chunk));
    // The rows' text is the one buffer here as large as the result: its growth is checked (a full
    // wasm heap is OUT_OF_MEMORY, not an abort), with room for a row of ROW_HEADROOM bytes.
    if (out.capacity() - out.size() < ROW_HEADROOM) {
      if (auto room = quire::detail::grow_or_oom(out, uint64_t{out.size()} + ROW_HEADROOM, "the rows' text"); !room)
        return room;
    }
    if (form == row_text::json_array && k) out.push_back(',');
    if (!csv) out.push_back(cells ? '[' : '{');
    for (size_t ci = 0; ci < cols.size(); ++ci) {
      auto &cur = cursors[ci];
      if (!cur || cur->chunk != chunk) cur.emplace(cursor{*this, cols[ci], chunk, nullptr, SIZE_MAX, {}, one_row});
      if (auto s = cur->seek(in_chunk); !s) return std::move(s).error();
      out += keys[ci];
      const uint32_t at = cur->local(in_chunk);
      if (!csv && !cells) append_json(out, cols[ci], cur->view, at);
      // A null is no CSV field at all (unlike "", quoted) and a JSON null among the cells.
      else if (!cur->view.values->is_valid(at)) out += csv ? "" : "null";
      else if (csv) quire::detail::append_csv_field(out, display_text(field, cols[ci], cur->view, at));
      else json::append_quoted(out, display_text(field, cols[ci], cur->view, at));
    }
    if (!csv) out.push_back(cells ? ']' : '}');
    if (form != row_text::json_array) out.push_back('\n');
  }
  return {};
}

void engine::append_order_key(std::string &out, size_t column, const page_view &v, uint32_t i) {
  const auto &vals = *v.values;
  if (!vals.is_valid(i)) {
    out.push_back(1);
    return;
  }
  out.push_back(0);
  const column_type t = f.sch.columns[column].type;
  switch (domain_of(t)) {
    case domain::ints: append_int_key(out, vals.ints[i]); break;
    case domain::reals:
      append_real_key(out, t == column_type::decimal ? parse_double(v.text(i)) : vals.reals[i]);
      break;
    case domain::text: append_text_key(out, v.text(i)); break;
  }
}

result<std::vector<size_t>> engine::projection(const std::vector<std::string> &names) {
  std::vector<size_t> cols;
  if (names.empty()) {
    for (size_t i = 0; i < f.sch.columns.size(); ++i) cols.push_back(i);
    return cols;
  }
  for (const auto &n : names) {
    auto c = f.sch.find(n);
    if (!c) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + n + "'");
    cols.push_back(*c);
  }
  return cols;
}

result<std::optional<size_t>> engine::order_column(const query &q) const {
  if (q.order_by.empty()) return std::optional<size_t>{};
  auto c = f.sch.find(q.order_by);
  if (!c) {
    std::string msg = "no column named '";
    msg += q.order_by;
    msg += '\'';
    return quire::error(error_code::NO_SUCH_COLUMN, std::move(msg));
  }
  return std::optional<size_t>{*c};
}

result<std::vector<uint64_t>> engine::select(const query &q, const std::optional<pred> &where) {
  std::vector<uint64_t> out;
  const uint64_t want = q.limit == UINT64_MAX || q.offset > UINT64_MAX - q.limit ? UINT64_MAX : q.offset + q.limit;
  auto ordered = order_column(q);
  if (!ordered) return std::move(ordered).error();
  const std::optional<size_t> order_col = *ordered;
  const bool natural = !order_col || static_cast<int>(*order_col) == f.sorted_column;
  if (natural) {
    const bool reverse = order_col && q.descending;
    uint64_t skipped = 0;
    auto r = for_each_chunk(where, reverse, [&](uint64_t chunk, const selection &sel) {
      const uint64_t first = f.chunk_first_row(chunk);
      // Whole chunks within the offset are skipped by their count.
      const uint64_t selected = sel.count();
      if (selected == 0) return true;
      if (skipped + selected <= q.offset) {
        skipped += selected;
        return true;
      }
      auto take = [&](uint32_t i) {
        if (skipped < q.offset) {
          ++skipped;
          return true;
        }
        if (out.size() >= q.limit) return false;
        out.push_back(first + i);
        return true;
      };
      if (!(reverse ? sel.each_reverse(take) : sel.each(take))) return false;
      return out.size() < q.limit;
    });
    if (!r) return std::move(r).error();
    return out;
  }
  // Ordered by another column: keep the best offset+limit (key, row) pairs.
  std::vector<std::pair<std::string, uint64_t>> best;
  auto cmp = [&](const std::pair<std::string, uint64_t> &a, const std::pair<std::string, uint64_t> &b) {
    if (a.first != b.first) return q.descending ? a.first > b.first : a.first < b.first;
    return q.descending ? a.second > b.second : a.second < b.second;
  };
  quire::error failure;
  // With a limit, chunks are visited from the end that sorts first (descending: the last chunk
  // first), and a chunk whose statistics cannot beat the k-th key kept so far is skipped without
  // reading its pages: the newest 50 of a table in time order read one chunk. Rows of a chunk
  // visited later lose ties (they are further from that end), so "not better" suffices to skip.
  const domain order_domain = domain_of(f.sch.columns[*order_col].type);
  std::shared_ptr<const std::vector<chunk_entry>> order_stats;
  if (want != UINT64_MAX && want > 0 && order_domain != domain::text) {
    auto d = f.column_directory(*order_col);
    if (!d) return std::move(d).error();
    order_stats = *d;
  }
  auto cannot_beat = [&](uint64_t chunk) {
    if (!order_stats || best.size() < want) return false;
    std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(want - 1), best.end(), cmp);
    best.resize(static_cast<size_t>(want));
    const stats &st = (*order_stats)[static_cast<size_t>(chunk)].st;
    std::string chunk_best;
    const bool null_first = q.descending;  // the null key (0x01) sorts after every value
    if ((null_first && st.nulls > 0) || !(q.descending ? st.has_max : st.has_min)) {
      chunk_best.push_back(1);
    } else {
      chunk_best.push_back(0);
      if (order_domain == domain::ints) append_int_key(chunk_best, q.descending ? st.imax : st.imin);
      else append_real_key(chunk_best, q.descending ? st.rmax : st.rmin);
    }
    const std::string &kth = best[static_cast<size_t>(want - 1)].first;
    return q.descending ? chunk_best <= kth : chunk_best >= kth;
  };
  auto r = for_each_chunk(where, q.descending, [&](uint64_t chunk, const selection &sel) {
    if (cannot_beat(chunk)) return true;
    const uint64_t first = f.chunk_first_row(chunk);
    cursor cur{*this, *order_col, chunk, nullptr, SIZE_MAX, {}, nullptr};
    return cur.each_selected(sel, failure, [&](uint32_t i) {
      std::string key;
      append_order_key(key, *order_col, cur.view, cur.local(i));
      best.emplace_back(std::move(key), first + i);
      if (want != UINT64_MAX && best.size() >= 2 * want + 1024) {
        std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(want), best.end(), cmp);
        best.resize(static_cast<size_t>(want));
      }
    });
  });
  if (!r) return std::move(r).error();
  if (failure.code != error_code::OK) return failure;
  std::sort(best.begin(), best.end(), cmp);
  for (uint64_t k = q.offset; k < best.size() && out.size() < q.limit; ++k)
    out.push_back(best[static_cast<size_t>(k)].second);
  return out;
}

}  // namespace quire::format::detail
