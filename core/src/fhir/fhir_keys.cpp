// The keys of each type's objects by hash: the walk looks up the key of every member it meets, and
// r4::find_key's binary search costs a string compare per step (five or six for a resource's
// keys). This index, built once from the same tables (KEYS, per type), costs one hash of the key
// and, nearly always, one compare of two words held in the slot (no string compare for keys of up
// to 16 bytes, nearly all of them). The lookup itself is inline (fhir_internal.h): the walk makes
// one per member, and the call, its guard of the static and the index's address cost about as
// much as the probe.
#include <bit>
#include <cstring>
#include <vector>

#include "fhir_internal.h"

namespace quire::fhir::detail {

key_index::key_index() {
  types_.resize(TYPE_COUNT);
  size_t total = 0;
  for (size_t t = 0; t < TYPE_COUNT; ++t) {
    const uint32_t n = TYPES[t].key_count;
    if (n == 0) continue;
    uint32_t cap = std::bit_ceil(2 * n);  // at most half full: short probes
    types_[t] = table{static_cast<uint32_t>(total), cap - 1};
    total += cap;
  }
  slots_.assign(total, slot{key_words{}, EMPTY, 0, 0, 0});
  for (size_t t = 0; t < TYPE_COUNT; ++t) {
    const type_def &def = TYPES[t];
    const table tab = types_[t];
    // In the tables' order, so that of two equal keys (there are none) the first is found.
    for (uint32_t k = def.first_key; k < def.first_key + def.key_count; ++k) {
      const std::string_view key = KEYS[k].key.view();
      const key_words w = quire::detail::words_of(key);
      uint32_t i = hash(w, key.size()) & tab.mask;
      while (slots_[tab.base + i].key != EMPTY) i = (i + 1) & tab.mask;
      slots_[tab.base + i] = slot{w, k, static_cast<uint16_t>(key.size()), KEYS[k].element, KEYS[k].type};
    }
  }
}

bool key_index::long_key_matches(uint32_t key, std::string_view text) noexcept {
  return std::memcmp(TEXT + KEYS[key].key.offset + 8, text.data() + 8, text.size() - 16) == 0;
}

const key_index &key_index::get() {
  // Immutable after its first initialisation (thread-safe): not hidden mutable state.
  static const key_index index;
  return index;
}

const key_def *find_key_hashed(uint16_t type, std::string_view key) noexcept {
  const key_row r = key_index::get().find(type, key);
  return r.found() ? &KEYS[r.key] : nullptr;
}

key_row find_key_row(uint16_t type, std::string_view key) noexcept { return key_index::get().find(type, key); }

}  // namespace quire::fhir::detail
