// The keys of each type's objects by hash: the walk looks up the key of every member it meets, and
// r4::find_key's binary search costs a string compare per step (five or six for a resource's
// keys). This index, built once from the same tables (KEYS, per type), costs one hash of the key
// and, nearly always, one compare of two words held in the slot (no string compare for keys of up
// to 16 bytes, nearly all of them).
#include <bit>
#include <cstring>
#include <vector>

#include "fhir_internal.h"

namespace quire::fhir::detail {
namespace {

constexpr uint32_t EMPTY = 0xFFFFFFFF;

// A key's first and last eight bytes (four and four, or three single bytes, for shorter keys):
// for a key of at most 16 bytes they are the whole key, so with its length they decide equality;
// a longer key compares its middle too.
struct key_words {
  uint64_t lo = 0, hi = 0;
};

inline key_words words_of(std::string_view s) noexcept {
  const size_t n = s.size();
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  key_words w;
  if (n >= 8) {
    std::memcpy(&w.lo, p, 8);
    std::memcpy(&w.hi, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t a = 0, b = 0;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    w.lo = a;
    w.hi = b;
  } else if (n > 0) {
    w.lo = uint64_t{p[0]} | uint64_t{p[n / 2]} << 8 | uint64_t{p[n - 1]} << 16;
  }
  return w;
}

inline uint32_t key_hash(key_words w, size_t n) noexcept {
  uint64_t h = (w.lo * 0x9E3779B97F4A7C15ull) ^ std::rotl(w.hi * 0xC2B2AE3D27D4EB4Full, 31) ^ n;
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
    slots_.assign(total, slot{key_words{}, EMPTY, 0, 0, 0});
    for (size_t t = 0; t < TYPE_COUNT; ++t) {
      const type_def &def = TYPES[t];
      const table tab = types_[t];
      // In the tables' order, so that of two equal keys (there are none) the first is found.
      for (uint32_t k = def.first_key; k < def.first_key + def.key_count; ++k) {
        const std::string_view key = KEYS[k].key.view();
        const key_words w = words_of(key);
        uint32_t i = key_hash(w, key.size()) & tab.mask;
        while (slots_[tab.base + i].key != EMPTY) i = (i + 1) & tab.mask;
        slots_[tab.base + i] = slot{w, k, static_cast<uint16_t>(key.size()), KEYS[k].element, KEYS[k].type};
      }
    }
  }

  key_row find(uint16_t type, std::string_view key) const noexcept {
    const table tab = types_[type];
    if (tab.mask == 0) return {};  // a type without keys (a table has at least two slots)
    const size_t n = key.size();
    const key_words w = words_of(key);
    for (uint32_t i = key_hash(w, n) & tab.mask;; i = (i + 1) & tab.mask) {
      const slot &s = slots_[tab.base + i];
      if (s.key == EMPTY) return {};
      if (s.length != n || s.words.lo != w.lo || s.words.hi != w.hi) continue;
      if (n <= 16 || std::memcmp(TEXT + KEYS[s.key].key.offset + 8, key.data() + 8, n - 16) == 0)
        return key_row{s.key, s.element, s.type};
    }
  }

 private:
  struct table {
    uint32_t base = 0;
    uint32_t mask = 0;
  };
  // The key's row is copied in (element, type): the walk reads the slot it probed and not the
  // KEYS row too, which was a second cache miss per member.
  struct slot {
    key_words words;  // the key's first and last eight bytes (words_of)
    uint32_t key;     // into KEYS, or EMPTY
    uint16_t length;
    uint16_t element;
    uint16_t type;
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

const key_def *find_key_hashed(uint16_t type, std::string_view key) noexcept {
  const key_row r = keys().find(type, key);
  return r.found() ? &KEYS[r.key] : nullptr;
}

key_row find_key_row(uint16_t type, std::string_view key) noexcept { return keys().find(type, key); }

}  // namespace quire::fhir::detail
