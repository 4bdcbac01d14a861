// Lookups in the generated tables: a type's keys by binary search over the lists the generator
// sorted; resource types and codes by a hash index built once from the same tables.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../common/text_words.h"
#include "r4_tables.h"

namespace quire::r4 {

namespace {

// a < b as std::string_view orders them, deciding on the first byte inline when it differs (most
// steps of a search over a type's keys): the walk looks a key up for every member it meets.
inline bool key_less(std::string_view a, std::string_view b) noexcept {
  if (!a.empty() && !b.empty() && a[0] != b[0])
    return static_cast<unsigned char>(a[0]) < static_cast<unsigned char>(b[0]);
  return a < b;
}

}  // namespace

const key_def *find_key(uint16_t type, std::string_view key) noexcept {
  const type_def &t = TYPES[type];
  const key_def *first = KEYS + t.first_key;
  const key_def *last = first + t.key_count;
  const key_def *it = std::lower_bound(first, last, key,
                                       [](const key_def &k, std::string_view s) { return key_less(k.key.view(), s); });
  return it != last && it->key.view() == key ? it : nullptr;
}

namespace {

// Resource types and the value sets' codes by hash: the walk looks up a resource type for every
// resource and relative reference, and a code for every bound code (3,000 and more in a
// 1,000-entry Bundle); a binary search cost a string compare (a call of libc's memcmp when the
// first bytes agree) per step. One table, built once from the same tables, of (group, text):
// group 0 the resource types, group 1 + s the codes of CODE_SETS[s]. A slot holds the text's
// first and last eight bytes and its length, which decide equality for texts of up to 16 bytes
// (the fhir module's key index does the same for keys).
class text_index {
 public:
  static constexpr uint32_t NONE = 0xFFFFFFFF;

  text_index() {
    size_t n = RESOURCE_TYPE_COUNT;
    for (size_t c = 0; c < CODE_SET_COUNT; ++c) n += CODE_SETS[c].count;
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;  // at most half full: short probes
    mask_ = static_cast<uint32_t>(cap - 1);
    slots_.assign(cap, slot{});
    // In the tables' order, so that of two equal texts in one group the first is found.
    for (size_t r = 0; r < RESOURCE_TYPE_COUNT; ++r) add(0, TYPES[RESOURCE_TYPES[r]].name, RESOURCE_TYPES[r]);
    for (size_t c = 0; c < CODE_SET_COUNT; ++c) {
      for (uint32_t k = 0; k < CODE_SETS[c].count; ++k)
        add(static_cast<uint32_t>(1 + c), CODES[CODE_SETS[c].first + k], k);
    }
  }

  /// The value added with (group, text), or NONE.
  uint32_t find(uint32_t group, std::string_view text) const noexcept {
    const size_t n = text.size();
    const words w = quire::detail::words_of(text);
    for (uint32_t i = hash(w, n, group) & mask_;; i = (i + 1) & mask_) {
      const slot &s = slots_[i];
      if (s.value == NONE) return NONE;
      if (s.group != group || s.length != n || s.w.lo != w.lo || s.w.hi != w.hi) continue;
      if (n <= 16 || std::memcmp(TEXT + s.offset + 8, text.data() + 8, n - 16) == 0) return s.value;
    }
  }

 private:
  using words = quire::detail::text_words;  // a text's first and last eight bytes
  struct slot {
    words w;
    uint32_t offset = 0;  // into TEXT
    uint32_t length = 0;
    uint32_t group = 0;
    uint32_t value = NONE;  // NONE: empty
  };
  static uint32_t hash(words w, size_t n, uint32_t group) noexcept {
    return quire::detail::words_hash(w, n ^ (uint64_t{group} << 40));
  }
  void add(uint32_t group, text_ref t, uint32_t value) {
    const std::string_view text = t.view();
    const words w = quire::detail::words_of(text);
    uint32_t i = hash(w, text.size(), group) & mask_;
    while (slots_[i].value != NONE) {
      const slot &s = slots_[i];
      if (s.group == group && s.length == t.length && text == std::string_view(TEXT + s.offset, s.length)) return;
      i = (i + 1) & mask_;
    }
    slots_[i] = slot{w, t.offset, t.length, group, value};
  }

  uint32_t mask_ = 0;
  std::vector<slot> slots_;
};

const text_index &texts() {
  // Immutable after its first initialisation (thread-safe): not hidden mutable state.
  static const text_index index;
  return index;
}

}  // namespace

uint16_t find_resource_type(std::string_view name) noexcept {
  const uint32_t t = texts().find(0, name);
  return t == text_index::NONE ? NO_TYPE : static_cast<uint16_t>(t);
}

bool code_in_set(int32_t set, std::string_view code) noexcept {
  if (set < 0 || static_cast<size_t>(set) >= CODE_SET_COUNT) return true;
  return texts().find(static_cast<uint32_t>(1 + set), code) != text_index::NONE;
}

}  // namespace quire::r4
