// The walk's hash index of keys (fhir_keys.cpp) against r4::find_key, the tables' binary search:
// the same key_def for every key of every type, and nothing for keys a type does not have.
#include <catch2/catch.hpp>

#include <string>

#include "../core/src/fhir/fhir_internal.h"

using namespace quire::fhir::detail;

TEST_CASE("fhir keys: the hash index finds what r4::find_key finds", "[fhir]") {
  size_t found = 0, missing = 0;
  for (size_t t = 0; t < TYPE_COUNT; ++t) {
    const auto type = static_cast<uint16_t>(t);
    const type_def &def = TYPES[t];
    for (uint32_t k = def.first_key; k < def.first_key + def.key_count; ++k) {
      std::string key(KEYS[k].key.view());
      INFO(std::string(def.name.view()) << "." << key);
      const key_def *hashed = find_key_hashed(type, key);
      REQUIRE(hashed == find_key(type, key));
      REQUIRE(hashed == &KEYS[k]);
      const key_row row = find_key_row(type, key);
      REQUIRE(row.key == k);
      REQUIRE(row.element == KEYS[k].element);
      REQUIRE(row.type == KEYS[k].type);
      ++found;
      // Near misses: one byte more, one less, the last byte changed, another case.
      for (std::string miss : {key + "x", key.substr(0, key.size() - 1), key.substr(0, key.size() - 1) + "#",
                               std::string(1, static_cast<char>(key[0] ^ 0x20)) + key.substr(1)}) {
        CHECK(find_key_hashed(type, miss) == find_key(type, miss));
        CHECK(find_key_row(type, miss).found() == (find_key(type, miss) != nullptr));
        ++missing;
      }
    }
    CHECK(find_key_hashed(type, "") == nullptr);
    CHECK(find_key_hashed(type, "notAnElementOfAnyType") == nullptr);
  }
  CHECK(found == KEY_COUNT);
  CHECK(missing > 0);
}
