// The file's answers to a query: rows as JSON, a lookup by key, a count, an aggregate of one
// column, and columns as arrays.
#include <algorithm>
#include <cmath>

#include "../common/csv_field.h"
#include "format_decimal.h"
#include "format_engine.h"

namespace quire::format {

using namespace detail;

result<row_set> file::query(const format::query &q, bool as_array) {
  return query(q, as_array ? row_text::json_array : row_text::ndjson);
}

result<row_set> file::query(const format::query &q, row_text form) {
  engine e(*impl_);
  auto where = compile_where(q.where, impl_->sch);
  if (!where) return std::move(where).error();
  auto cols = e.projection(q.columns);
  if (!cols) return std::move(cols).error();
  auto rows = e.select(q, *where);
  if (!rows) return std::move(rows).error();
  row_set out;
  out.count = rows->size();
  if (form == row_text::json_array) out.json.push_back('[');
  if (form == row_text::csv) {
    for (size_t ci = 0; ci < cols->size(); ++ci) {
      if (ci) out.json.push_back(',');
      quire::detail::append_csv_field(out.json, impl_->sch.columns[(*cols)[ci]].name);
    }
    out.json.push_back('\n');
  }
  if (auto r = e.render(out.json, *rows, *cols, form); !r) return std::move(r).error();
  if (form == row_text::json_array) out.json.push_back(']');
  return out;
}

result<std::optional<std::string>> file::find(std::string_view column, const value &key,
                                              const std::vector<std::string> &columns, row_text form) {
  format::query q;
  filter f;
  f.o = filter::op::eq;
  f.column = std::string(column);
  f.values.push_back(key);
  q.where = std::move(f);
  q.columns = columns;
  q.limit = 1;
  if (key.k == value::kind::null_value) return quire::error(error_code::WRONG_KEY, "find needs a key that is not null");
  auto r = query(q, form);
  if (!r) {
    auto e = std::move(r).error();
    if (e.code == error_code::INVALID_QUERY) e.code = error_code::WRONG_KEY;
    return e;
  }
  if (r->count == 0) return std::optional<std::string>();
  std::string row = std::move(r->json);
  if (!row.empty() && row.back() == '\n') row.pop_back();
  return std::optional<std::string>(std::move(row));
}

namespace {

bool plain_selection(const query &q) { return q.order_by.empty() && q.offset == 0 && q.limit == UINT64_MAX; }

/// Calls fn(chunk, selection) for the rows query(q) returns, grouped by chunk in file order: for a
/// query without order, offset or limit, the filter's own pass over the chunks; else the rows
/// select() returns (the order does not matter to the callers: sums and counts).
template <typename Fn>
result<void> for_each_selected(engine &e, const query &q, const std::optional<pred> &where, Fn fn) {
  if (plain_selection(q)) return e.for_each_chunk(where, false, fn);
  auto rows = e.select(q, where);
  if (!rows) return std::move(rows).error();
  std::sort(rows->begin(), rows->end());
  for (size_t k = 0; k < rows->size();) {
    const uint64_t chunk = e.f.chunk_of_row((*rows)[k]), first = e.f.chunk_first_row(chunk);
    const uint32_t n = e.f.rows_in_chunk(chunk);
    std::vector<uint32_t> list;
    for (; k < rows->size() && (*rows)[k] >= first && (*rows)[k] - first < n; ++k)
      list.push_back(static_cast<uint32_t>((*rows)[k] - first));
    if (!fn(chunk, selection::of_list(n, std::move(list)))) return {};
  }
  return {};
}

/// Neumaier's compensated sum: the same digits on every target (plain IEEE operations in a fixed
/// order), and exact for sums of short decimals far longer than a plain sum stays exact.
/// Calls fn(page index, page entry, rows selected in it) for each page of a column's chunk that
/// holds a row `sel` marks: a two-level directory's block none of whose rows is selected is not
/// read. False when a read fails (its error in `failure`) or fn returns false.
template <typename Fn>
bool each_selected_page(file::impl &f, size_t column, uint64_t chunk, const std::vector<uint8_t> &sel,
                        quire::error &failure, Fn fn) {
  auto dir = f.load_page_directory(column, chunk);
  if (!dir) {
    failure = std::move(dir).error();
    return false;
  }
  for (size_t pi = 0; pi < dir.value()->page_count; ++pi) {
    const auto &blk = dir.value()->blocks[dir.value()->block_of_page(pi)];
    const auto block_from = sel.begin() + blk.first_row, block_to = block_from + blk.rows;
    if (pi == blk.first_page && std::find(block_from, block_to, uint8_t{1}) == block_to) {
      pi += blk.page_count - 1;
      continue;
    }
    auto entry = f.page_entry_at(column, chunk, pi);
    if (!entry) {
      failure = std::move(entry).error();
      return false;
    }
    const auto &pe = *entry.value();
    const auto from = sel.begin() + pe.first_row;
    const auto selected = static_cast<uint32_t>(std::count(from, from + pe.rows, uint8_t{1}));
    if (selected && !fn(pi, pe, selected)) return false;
  }
  return true;
}

/// The least or greatest decimal so far: its text, and for comparisons its scaled integer when it
/// has one (parse_plain_decimal's, or a scaled page's) or its parts (made when first needed).
struct decimal_bound {
  std::string text;
  bool has = false, has_scaled = false, has_parts = false;
  int64_t m = 0;
  uint32_t places = 0;
  decimal_parts parts;

  /// Keeps the value when it is less (least) or greater than the bound, the first of equals kept.
  /// `parts` is the value's when not `scaled`. False (the error in `failure`) only when a text that
  /// parsed before does not parse as parts.
  bool offer(std::string_view t, bool scaled, int64_t vm, uint32_t vplaces, const decimal_parts &vparts, bool least,
             quire::error &failure) {
    int c = 0;
    if (has) {
      if (scaled && has_scaled) {
        c = compare_scaled(vm, vplaces, m, places);
      } else {
        // Rare: values of both kinds in one column.
        decimal_parts mine;
        if (scaled) {
          if (auto p = parse_decimal(t, MAX_EXACT_DECIMAL_DIGITS, mine); !p) {
            failure = std::move(p).error();
            return false;
          }
        }
        if (!has_parts) {
          if (auto p = parse_decimal(text, MAX_EXACT_DECIMAL_DIGITS, parts); !p) {
            failure = std::move(p).error();
            return false;
          }
          has_parts = true;
        }
        c = compare_decimals(scaled ? mine : vparts, parts);
      }
      if (least ? c >= 0 : c <= 0) return true;
    }
    has = true;
    text.assign(t);
    has_scaled = scaled;
    m = vm;
    places = vplaces;
    has_parts = !scaled;
    if (!scaled) parts = vparts;
    return true;
  }
};

struct compensated_sum {
  double sum = 0, compensation = 0;
  void add(double v) {
    const double t = sum + v;
    // Either term, chosen without a branch (the same value as an if).
    compensation += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  double value() const { return std::isfinite(sum) ? sum + compensation : sum; }
};

}  // namespace

result<uint64_t> file::count(const format::query &q) {
  engine e(*impl_);
  auto p = compile_where(q.where, impl_->sch);
  if (!p) return std::move(p).error();
  if (auto c = e.projection(q.columns); !c) return std::move(c).error();
  if (auto o = e.order_column(q); !o) return std::move(o).error();
  uint64_t matched = impl_->rows - impl_->deleted_rows;
  if (*p) {
    auto r = e.for_each_chunk(*p, false, [](uint64_t, const selection &) { return true; });
    if (!r) return std::move(r).error();
    matched = e.info.rows_matched;
  }
  // The order changes which rows, never how many.
  const uint64_t after_offset = matched > q.offset ? matched - q.offset : 0;
  return std::min(after_offset, q.limit);
}

result<aggregate_result> file::aggregate(std::string_view column, const format::query &q) {
  auto &f = *impl_;
  auto col = f.sch.find(column);
  if (!col) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + std::string(column) + "'");
  engine e(f);
  auto p = compile_where(q.where, f.sch);
  if (!p) return std::move(p).error();
  if (auto c = e.projection(q.columns); !c) return std::move(c).error();
  const column_type type = f.sch.columns[*col].type;
  const domain dom = domain_of(type);
  aggregate_result out;
  out.column = std::string(column);
  out.type = type;
  int128 isum = 0;
  int64_t imin = 0, imax = 0;
  compensated_sum rsum;
  double rmin = 0, rmax = 0;
  bool nan_seen = false;
  std::string tmin, tmax;  // text columns, and decimals' own text
  decimal_sum dsum(MAX_EXACT_DECIMAL_DIGITS);
  decimal_parts dv;
  decimal_bound dmin, dmax;
  quire::error failure;
  // Page by page over the selected rows: numbers are summed and compared as numbers, decimals
  // exactly, text is copied only when it becomes the new least or greatest.
  auto r = for_each_selected(e, q, *p, [&](uint64_t chunk, const selection &chosen) {
    // A sum reads every selected row's page whole: one byte a row costs little beside it.
    const std::vector<uint8_t> sel = chosen.to_mask();
    return each_selected_page(f, *col, chunk, sel, failure, [&](size_t pi, const page_entry &pe, uint32_t selected) {
      const uint32_t from = pe.first_row, to = pe.first_row + pe.rows;
      out.rows += selected;
      auto view = f.page(*col, chunk, pi);
      if (!view) {
        failure = std::move(view).error();
        return false;
      }
      const auto &vals = *view->values;
      if (selected == pe.rows && vals.valid.empty() && (dom == domain::ints || type == column_type::float64)) {
        // A page of numbers wholly selected, without nulls: the same additions and comparisons in
        // the same order (so the same sums), without a selection or validity test a value.
        const uint32_t n = pe.rows;
        if (out.count == 0) {
          if (dom == domain::ints) imin = imax = vals.ints[0];
          else rmin = rmax = vals.reals[0];
        }
        out.count += n;
        if (dom == domain::ints) {
          const int64_t *v = vals.ints.data();
          int64_t lo = imin, hi = imax;
          int128 total = 0;
          for (uint32_t i = 0; i < n; ++i) {
            total += v[i];
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
          }
          isum += total;
          imin = lo;
          imax = hi;
        } else {
          // Locals, so the sum's chain stays in registers (not stored and reloaded a value).
          const double *v = vals.reals.data();
          compensated_sum acc = rsum;
          double lo = rmin, hi = rmax;
          bool nan = false;
          for (uint32_t i = 0; i < n; ++i) {
            nan |= std::isnan(v[i]);
            acc.add(v[i]);
            if (v[i] < lo) lo = v[i];
            if (v[i] > hi) hi = v[i];
          }
          rsum = acc;
          rmin = lo;
          rmax = hi;
          nan_seen |= nan;
        }
        return true;
      }
      if (selected == pe.rows && vals.valid.empty() && vals.scaled) {
        // A scaled decimal page wholly selected, without nulls: its integers (all at the page's
        // places) summed in one loop, and the first least and greatest offered as the row-by-row
        // walk would leave them. A mixed page's places are those of one of its values at least, so
        // the sum's scale is the one the texts give.
        const uint32_t n = pe.rows;
        const int64_t *v = vals.ints.data();
        uint32_t lo = 0, hi = 0;
        for (uint32_t i = 1; i < n; ++i) {
          lo = v[i] < v[lo] ? i : lo;
          hi = v[i] > v[hi] ? i : hi;
        }
        out.count += n;
        if (!dsum.add_scaled_run({v, n}, vals.places)) {
          failure = dsum.overflow();
          return false;
        }
        // Their texts only: the page's are not made.
        std::string lo_text, hi_text;
        vals.append_scaled_text(lo_text, lo);
        vals.append_scaled_text(hi_text, hi);
        return dmin.offer(lo_text, true, v[lo], vals.places, dv, true, failure) &&
               dmax.offer(hi_text, true, v[hi], vals.places, dv, false, failure);
      }
      for (uint32_t r = from; r < to; ++r) {
        if (!sel[r]) continue;
        const uint32_t i = r - from;
        if (!vals.is_valid(i)) continue;
        const bool first = out.count++ == 0;
        if (dom == domain::ints) {
          int64_t v = vals.ints[i];
          isum += v;
          if (first || v < imin) imin = v;
          if (first || v > imax) imax = v;
        } else if (type == column_type::float64) {
          double v = vals.reals[i];
          if (std::isnan(v)) nan_seen = true;
          rsum.add(v);
          if (first || v < rmin) rmin = v;
          if (first || v > rmax) rmax = v;
        } else {
          std::string_view t = view->text(i);
          if (type == column_type::decimal) {
            // A scaled page's integer, or plain text of up to 18 digits, is added and compared as
            // an integer; any other text as parts (the same sums and bounds either way).
            int64_t m = 0;
            uint32_t places = 0;
            bool scaled = vals.scaled;
            if (scaled) {
              m = vals.ints[i];
              places = vals.places;
              // A mixed page's value at its own places where the page's would raise the sum's
              // scale past what the selected texts give it.
              if (!vals.value_places.empty() && places > dsum.scale() && vals.value_places[i] < places) {
                m /= SCALED_POWERS_OF_TEN[places - vals.value_places[i]];
                places = vals.value_places[i];
              }
            } else {
              scaled = parse_plain_decimal(t, m, places);
            }
            if (!scaled) {
              if (auto parsed = parse_decimal(t, MAX_EXACT_DECIMAL_DIGITS, dv); !parsed) {
                failure = std::move(parsed).error();
                return false;
              }
            }
            if (scaled) {
              if (!dsum.add_scaled(m, places)) {
                failure = dsum.overflow();
                return false;
              }
            } else if (auto added = dsum.add(dv); !added) {
              failure = std::move(added).error();
              return false;
            }
            if (!dmin.offer(t, scaled, m, places, dv, true, failure) ||
                !dmax.offer(t, scaled, m, places, dv, false, failure))
              return false;
          } else {
            if (first || t < tmin) tmin.assign(t);
            if (first || t > tmax) tmax.assign(t);
          }
        }
      }
      return true;
    });
  });
  if (!r) return std::move(r).error();
  if (failure.code != error_code::OK) {
    if (failure.path.empty()) failure.path = std::string(column);
    return failure;
  }
  if (!out.count) return out;
  const double n = static_cast<double>(out.count);
  switch (type) {
    case column_type::integer:
    case column_type::boolean:
      out.exact_sum = int128_text(isum);
      out.sum = static_cast<double>(isum);
      out.avg = out.sum / n;
      break;
    case column_type::float64:
      out.sum = rsum.value();
      out.avg = out.sum / n;
      break;
    case column_type::decimal:
      out.exact_sum = dsum.text();
      out.exact_avg = dsum.average(out.count, std::max<uint32_t>(dsum.scale(), DECIMAL_AVG_MIN_SCALE));
      out.sum = parse_double(out.exact_sum);
      out.avg = parse_double(out.exact_avg);
      break;
    default: break;
  }
  switch (dom) {
    case domain::ints:
      out.min = type == column_type::boolean ? value::of(imin != 0) : value::of(imin);
      out.max = type == column_type::boolean ? value::of(imax != 0) : value::of(imax);
      break;
    case domain::reals:
      if (type == column_type::float64) {
        if (nan_seen) rmin = rmax = std::nan("");
        out.min = value::of(rmin);
        out.max = value::of(rmax);
        out.finite = std::isfinite(out.sum) && std::isfinite(out.avg) && std::isfinite(rmin) && std::isfinite(rmax);
        break;
      }
      [[fallthrough]];
    case domain::text:
      if (type == column_type::decimal) {
        tmin = std::move(dmin.text);
        tmax = std::move(dmax.text);
      }
      out.min = value::text(std::move(tmin));
      out.max = value::text(std::move(tmax));
      break;
  }
  return out;
}

namespace {

/// Appends value k of a page (or a one-row view) to a column array.
void append_value(column_array &a, const page_view &v, uint32_t k) {
  const auto &vals = *v.values;
  const bool valid = vals.is_valid(k);
  a.valid.push_back(valid ? 1 : 0);
  switch (a.type) {
    case column_type::float64: a.reals.push_back(valid ? vals.reals[k] : 0); break;
    case column_type::decimal:
    case column_type::string:
    case column_type::json: {
      std::string_view t = valid ? v.text(k) : std::string_view();
      if (a.type == column_type::decimal) a.reals.push_back(valid ? parse_double(t) : 0);
      a.text.append(t);
      a.text_offsets.push_back(static_cast<uint32_t>(a.text.size()));
      break;
    }
    default: a.ints.push_back(valid ? vals.ints[k] : 0); break;
  }
}

/// Appends every value of a decoded page: its arrays whole, which hold 0 (or no text) at nulls as
/// column_array does, so only dictionary pages and decimals go value by value.
void append_page(column_array &a, const page_view &v) {
  const auto &vals = *v.values;
  const uint32_t rows = vals.rows;
  if (vals.valid.empty()) a.valid.insert(a.valid.end(), rows, 1);
  else a.valid.insert(a.valid.end(), vals.valid.begin(), vals.valid.begin() + rows);
  switch (a.type) {
    case column_type::float64: a.reals.insert(a.reals.end(), vals.reals.begin(), vals.reals.begin() + rows); break;
    case column_type::decimal:
    case column_type::string:
    case column_type::json:
      if (a.type == column_type::decimal || vals.dictionary) {
        for (uint32_t k = 0; k < rows; ++k) {
          const bool valid = vals.is_valid(k);
          std::string_view t = valid ? v.text(k) : std::string_view();
          if (a.type == column_type::decimal) a.reals.push_back(valid ? parse_double(t) : 0);
          a.text.append(t);
          a.text_offsets.push_back(static_cast<uint32_t>(a.text.size()));
        }
      } else {
        const auto base = static_cast<uint32_t>(a.text.size());
        a.text.append(vals.text, 0, vals.offsets[rows]);
        for (uint32_t k = 1; k <= rows; ++k) a.text_offsets.push_back(base + vals.offsets[k]);
      }
      break;
    default: a.ints.insert(a.ints.end(), vals.ints.begin(), vals.ints.begin() + rows); break;
  }
}

}  // namespace

result<std::vector<column_array>> file::columns(const format::query &q) {
  auto &f = *impl_;
  engine e(f);
  auto cols = e.projection(q.columns);
  if (!cols) return std::move(cols).error();
  auto p = compile_where(q.where, f.sch);
  if (!p) return std::move(p).error();
  std::vector<column_array> out(cols->size());
  for (size_t c = 0; c < cols->size(); ++c) {
    out[c].name = f.sch.columns[(*cols)[c]].name;
    out[c].type = f.sch.columns[(*cols)[c]].type;
    if (stored_as_text(out[c].type)) out[c].text_offsets.push_back(0);
  }
  quire::error failure;
  if (!plain_selection(q)) {
    // In the query's order: one cursor per column, as rows are rendered.
    auto rows = e.select(q, *p);
    if (!rows) return std::move(rows).error();
    std::vector<std::optional<engine::cursor>> cursors(cols->size());
    for (uint64_t row : *rows) {
      const uint64_t chunk = f.chunk_of_row(row);
      const uint32_t in_chunk = static_cast<uint32_t>(row - f.chunk_first_row(chunk));
      for (size_t c = 0; c < cols->size(); ++c) {
        auto &cur = cursors[c];
        if (!cur || cur->chunk != chunk)
          cur.emplace(engine::cursor{e, (*cols)[c], chunk, nullptr, SIZE_MAX, {}, nullptr});
        if (auto s = cur->seek(in_chunk); !s) return std::move(s).error();
        append_value(out[c], cur->view, cur->local(in_chunk));
      }
    }
    return out;
  }
  if (!*p && !f.deleted_rows) {
    // Every row: the arrays' final sizes are known.
    const auto rows = static_cast<size_t>(f.rows);
    for (auto &a : out) {
      a.valid.reserve(rows);
      if (stored_as_text(a.type)) a.text_offsets.reserve(rows + 1);
      if (a.type == column_type::float64 || a.type == column_type::decimal) a.reals.reserve(rows);
      else if (!stored_as_text(a.type)) a.ints.reserve(rows);
    }
  }
  // Page by page: a page whose rows are all selected is appended whole.
  auto r = e.for_each_chunk(*p, false, [&](uint64_t chunk, const selection &chosen) {
    // Columns read every selected row's page whole: one byte a row costs little beside them.
    const std::vector<uint8_t> sel = chosen.to_mask();
    if (std::find(sel.begin(), sel.end(), uint8_t{1}) == sel.end()) return true;  // no directory read for nothing
    for (size_t c = 0; c < cols->size(); ++c) {
      const size_t column = (*cols)[c];
      const bool read =
          each_selected_page(f, column, chunk, sel, failure, [&](size_t pi, const page_entry &pe, uint32_t selected) {
            auto view = f.page(column, chunk, pi);
            if (!view) {
              failure = std::move(view).error();
              return false;
            }
            if (selected == pe.rows) {
              append_page(out[c], *view);
              return true;
            }
            for (uint32_t k = 0; k < pe.rows; ++k) {
              if (sel[pe.first_row + k]) append_value(out[c], *view, k);
            }
            return true;
          });
      if (!read) return false;
    }
    return true;
  });
  if (!r) return std::move(r).error();
  if (failure.code != error_code::OK) return failure;
  return out;
}

}  // namespace quire::format
