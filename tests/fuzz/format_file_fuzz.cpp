// Fuzz target for opening and querying a .quire file: any bytes must give a typed error or a
// consistent answer, never a crash, a hang or an allocation sized by the file's say-so: counts
// agree with the footer's row count, and a file that verify() accepts answers every read. The
// saved corpus holds small valid files written by quire (and damaged copies).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "quire/format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace quire::format;
  open_options opts;
  opts.max_page_bytes = 1 << 20;
  opts.max_footer_bytes = 1 << 20;
  opts.cache_pages = 4;
  // About half the inputs skip the checksums, so damaged pages reach the decoders too.
  opts.verify_checksums = !(size > 64 && (data[size / 2] & 1));
  auto f = file::open(quire::borrow_bytes({data, size}), opts);
  if (!f) return 0;
  query all;
  all.limit = 50;
  auto rows = f->query(all);
  (void)f->storage();
  const bool sound = f->verify().ok();
  auto n = f->count();
  // count() without a filter reads nothing: it is the footer's row count, whatever the pages hold.
  if (n && *n != f->row_count()) std::abort();
  if (rows && n && rows->count > *n) std::abort();  // never more rows than the file holds
  // A file that verifies reads whole: its first rows come back, as many as it holds.
  if (sound && (!rows || rows->count != std::min<uint64_t>(50, f->row_count()))) std::abort();
  const auto &cols = f->schema().columns;
  if (!cols.empty()) {
    const std::string &c = cols[0].name;
    (void)f->find(c, value::of(int64_t{7}));
    (void)f->find(c, value::text("a"));
    auto agg = f->aggregate(c);
    if (agg && agg->rows != f->row_count()) std::abort();  // no filter: every row
    if (sound && !agg && agg.code() != quire::error_code::NUMERIC_OVERFLOW) std::abort();
    query just_c;
    just_c.columns = {c};
    auto arrays = f->columns(just_c);
    if (arrays && (arrays->size() != 1 || (*arrays)[0].valid.size() != f->row_count())) std::abort();
    if (sound && !arrays) std::abort();
    filter eq;
    eq.o = filter::op::eq;
    eq.column = c;
    eq.values.push_back(value::of(int64_t{1}));
    query q;
    q.where = eq;
    q.order_by = cols.back().name;
    q.descending = true;
    q.limit = 3;
    (void)f->query(q);
    (void)f->explain(q, true);
    filter contains;
    contains.o = filter::op::contains;
    contains.column = c;
    contains.values.push_back(value::text("abc"));
    auto some = f->count(rows_where(contains));
    if (some && *some > f->row_count()) std::abort();
  }
  return 0;
}
