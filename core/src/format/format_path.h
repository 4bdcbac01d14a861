// The path an error names (`columns.email.chunks[3].pages[12]`), made only when an error is
// returned: a cold lookup fetches a dozen directories and pages and names none of them unless one
// fails, and building each name cost it an allocation or two per fetch.
#pragma once

#include <string>
#include <type_traits>

namespace quire::format::detail {

/// Refers to a name made already (a std::string) or to a callable that makes it; either must
/// outlive the lazy_path (a temporary argument does, for the call it is passed to).
class lazy_path {
 public:
  lazy_path(const std::string &made)  // NOLINT: implicit, so callers with a name at hand pass it
      : target_(&made), make_([](const void *t) { return *static_cast<const std::string *>(t); }) {}
  template <typename Make>
  requires(std::is_invocable_r_v<std::string, const Make &> && !std::is_same_v<std::decay_t<Make>, std::string> &&
           !std::is_same_v<std::decay_t<Make>, lazy_path>) lazy_path(const Make &make)  // NOLINT: implicit, as above
      : target_(&make), make_([](const void *t) { return std::string((*static_cast<const Make *>(t))()); }) {}

  std::string str() const { return make_(target_); }

 private:
  const void *target_;
  std::string (*make_)(const void *);
};

}  // namespace quire::format::detail
