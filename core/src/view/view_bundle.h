// The one Bundle walk of every entry point of a view (runner::run, run_text, run_ndjson,
// ndjson_feeder, table_writer, and through them the CLI and the npm package), so that the same
// bytes give the same rows whichever reads them (docs/views.md, "Bundles").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quire/json.h"
#include "quire/result.h"

namespace quire::detail {

/// Calls fn(resource, entry) -> result<void> for every Bundle.entry[entry].resource, in entry
/// order (entries without a resource are skipped). Errors: WRONG_TYPE (Bundle.entry is not an
/// array), fn's (the first; the walk stops there).
template <typename Fn>
result<void> for_each_bundle_entry(const json::object &bundle, Fn &&fn) {
  auto entries = bundle.find("entry");
  if (!entries) return {};
  auto arr = entries->get_array();
  if (!arr) return error(error_code::WRONG_TYPE, "Bundle.entry must be an array", entries->offset());
  int64_t i = 0;
  for (json::value e : *arr) {
    if (auto eo = e.get_object()) {
      if (auto res = eo->find("resource")) {
        if (auto r = fn(*res, i); !r) return r;
      }
    }
    ++i;
  }
  return {};
}

/// The resources a value gives a view over `view_resource`: a resource whose resourceType is
/// Bundle, when the view is not over Bundle, gives its entries' resources (for_each_bundle_entry, one
/// level: a Bundle inside an entry is run as it is); anything else, a view over Bundle included,
/// gives itself (entry -1).
template <typename Fn>
result<void> for_each_view_resource(std::string_view view_resource, const json::value &value, Fn &&fn) {
  if (view_resource != "Bundle") {
    if (auto obj = value.get_object()) {
      auto rt = obj->find("resourceType");
      if (rt) {
        auto name = rt->get_string();
        if (name && *name == "Bundle") return for_each_bundle_entry(*obj, fn);
      }
    }
  }
  return fn(value, int64_t{-1});
}

/// `Bundle.entry[3].resource`: the place of an entry's resource in errors.
inline std::string bundle_entry_path(int64_t entry) {
  std::string p = "Bundle.entry[";
  p += std::to_string(entry);
  p += "].resource";
  return p;
}

}  // namespace quire::detail
