// A sealed store taken through its three writers: made from a table (create_store), re-sealed
// (reseal_store) and compacted (compact_store). Format tests of a new layout check that each stage
// verifies and answers as the table does.
#pragma once
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "quire/format.h"
#include "quire/store.h"

namespace quire_test {

/// Each stage's bytes, in the order made: created, re-sealed, compacted. Every stage is opened with
/// the owner's key and verified here; `o.owner_key` must be set.
inline std::vector<quire::format::memory_target> sealed_store_stages(quire::format::file &table,
                                                                     const quire::format::store_options &o) {
  std::vector<quire::format::memory_target> stages(3);
  REQUIRE(create_store(table, o, stages[0]));
  auto resealed = reseal_store(stages[0], stages[1], o);
  INFO((resealed ? std::string() : resealed.error().message));
  REQUIRE(resealed);
  REQUIRE(compact_store(stages[1], stages[2], o));
  quire::format::open_options oo;
  oo.key = o.owner_key;
  for (const auto &stage : stages) {
    auto f = quire::format::file::open(quire::borrow_bytes(stage.bytes), oo);
    REQUIRE(f);
    CHECK(f->verify());
  }
  return stages;
}

}  // namespace quire_test
