// The keys of each type's objects by hash: the walk looks up the key of every member it meets, and
// r4::find_key's binary search costs a string compare per step (five or six for a resource's
// keys). This index, built once from the same tables (KEYS, per type), costs one hash of the key
// and, nearly always, one compare.
#include <bit>
#include <cstring>
#include <vector>

#include "fhir_internal.h"

namespace quire::fhir::detail {
namespace {

constexpr uint32_t EMPTY = 0xFFFFFFFF;

// A key's first and last eight bytes (four, or three single bytes, for shorter keys) and its
// length, mixed; keys that share them are told apart by the compare.
inline uint32_t key_hash(std::string_view s) noexcept {
  const size_t n = s.size();
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  uint64_t lo = 0, hi = 0;
  if (n >= 8) {
    std::memcpy(&lo, p, 8);
    std::memcpy(&hi, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t a = 0, b = 0;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    lo = a;
    hi = b;
  } else if (n > 0) {
    lo = uint64_t{p[0]} | uint64_t{p[n / 2]} << 8 | uint64_t{p[n - 1]} << 16;
  }
  uint64_t h = (lo * 0x9E3779B97F4A7C15ull) ^ std::rotl(hi * 0xC2B2AE3D27D4EB4Full, 31) ^ n;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

class key_index {
 public:
  key_index() {
    types_.resize(TYPE_COUNT);
    size_t total = 0;
    for (size_t t = 0; t < TYPE_COUNT; ++t) {
      const uint32_t n = TYPES[t].key_count;
      if (n == 0) continue;
      uint32_t cap = std::bit_ceil(2 * n);  // at most half full: short probes
      types_[t] = table{static_cast<uint32_t>(total), cap - 1};
      total += cap;
    }
    slots_.assign(total, slot{EMPTY, 0});
    for (size_t t = 0; t < TYPE_COUNT; ++t) {
      const type_def &def = TYPES[t];
      const table tab = types_[t];
      // In the tables' order, so that of two equal keys (there are none) the first is found.
      for (uint32_t k = def.first_key; k < def.first_key + def.key_count; ++k) {
        const uint32_t h = key_hash(KEYS[k].key.view());
        uint32_t i = h & tab.mask;
        while (slots_[tab.base + i].key != EMPTY) i = (i + 1) & tab.mask;
        slots_[tab.base + i] = slot{k, h};
      }
    }
  }

  const key_def *find(uint16_t type, std::string_view key) const noexcept {
    const table tab = types_[type];
    if (tab.mask == 0) return nullptr;  // a type without keys (a table has at least two slots)
    const uint32_t h = key_hash(key);
    for (uint32_t i = h & tab.mask;; i = (i + 1) & tab.mask) {
      const slot s = slots_[tab.base + i];
      if (s.key == EMPTY) return nullptr;
      if (s.hash != h) continue;
      const key_def &k = KEYS[s.key];
      if (k.key.length == key.size() && std::memcmp(TEXT + k.key.offset, key.data(), key.size()) == 0) return &k;
    }
  }

 private:
  struct table {
    uint32_t base = 0;
    uint32_t mask = 0;
  };
  struct slot {
    uint32_t key;  // into KEYS, or EMPTY
    uint32_t hash;
  };
  std::vector<table> types_;
  std::vector<slot> slots_;
};

const key_index &keys() {
  // Immutable after its first initialisation (thread-safe): not hidden mutable state.
  static const key_index index;
  return index;
}

}  // namespace

const key_def *find_key_hashed(uint16_t type, std::string_view key) noexcept { return keys().find(type, key); }

}  // namespace quire::fhir::detail
