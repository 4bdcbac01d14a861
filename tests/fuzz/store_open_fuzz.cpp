// Fuzz target for opening and reading a version-2 .quire file (quire/store.h): a first byte that
// picks the key (none, the owner's, one partition's, a key that opens nothing), then the file's
// bytes. Any bytes must give a typed error or a consistent answer, never a crash, a hang or an
// allocation sized by the file's say-so; a sealed page that was changed never decrypts. The saved
// corpus holds small files written by the CLI (plain and sealed, appended to, with deletions)
// whose owner key is 32 bytes of 'O' and whose `north` partition key is 32 bytes of 'P'.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "quire/store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace quire::format;
  if (size < 1) return 0;
  open_options opts;
  opts.max_page_bytes = 1 << 20;
  opts.max_footer_bytes = 1 << 20;
  opts.cache_pages = 4;
  switch (data[0] & 3) {
    case 0: break;
    case 1: opts.key.assign(32, 'O'); break;
    case 2: opts.key.assign(32, 'P'); break;
    default: opts.key.assign(32, 'X'); break;
  }
  auto bytes = quire::borrow_bytes({data + 1, size - 1});
  auto f = file::open(*bytes, opts);
  (void)storage_of_store(*bytes, opts);
  if (!f) return 0;
  query all;
  all.limit = 50;
  auto rows = f->query(all);
  auto n = f->count();
  if (n && *n != f->row_count()) std::abort();
  if (rows && n && rows->count > *n) std::abort();
  const bool sound = f->verify().ok();
  if (sound && (!rows || rows->count != std::min<uint64_t>(50, f->row_count()))) std::abort();
  if (!f->schema().columns.empty()) {
    auto agg = f->aggregate(f->schema().columns[0].name);
    if (agg && agg->rows != f->row_count()) std::abort();
  }
  return 0;
}
