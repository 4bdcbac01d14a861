// The regular expressions of matches(), matchesFull() and replaceMatches(): compiled once to a
// program and run as a Pike VM (a Thompson NFA simulation with capture slots), so a search costs
// at most the text's length times the program's size, whatever the pattern. docs/fhirpath.md
// ("Regular expressions") has the dialect and the limits.
// Shared by design with core/src/fhir/fhir_invariant_checks.cpp (matches() in a direct check).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/result.h"

namespace quire::fhirpath {

struct regex_match {
  static constexpr size_t UNSET = 0xFFFFFFFF;  // fhirpath_internal.h's NONE
  size_t begin = 0, end = 0;
  std::vector<std::pair<size_t, size_t>> groups;  // (begin, end) of group 1, 2...; UNSET when unset
};

class regex {
 public:
  /// Compiles `pattern`. Errors: INVALID_ARGUMENT (syntax, or a construct the dialect lacks such
  /// as a backreference), REGEX_TOO_LARGE (beyond the limits in docs/fhirpath.md).
  static result<std::shared_ptr<const regex>> compile(std::string_view pattern);

  /// The leftmost match in `s` that starts at or after byte `from` (a code point boundary), with
  /// the captures a backtracking engine would report; `full`: only a match from `from` to the
  /// end. `m` may be null when only whether there is a match matters (cheaper: no captures).
  bool search(std::string_view s, size_t from, bool full, regex_match *m) const;

  size_t group_count() const noexcept { return groups_; }

  enum class op : uint8_t { chr, any, cls, split, jmp, save, bol, eol, match };
  struct inst {
    op kind;
    uint32_t x = 0, y = 0;  // chr: the code point; split/jmp: targets; save: the slot; cls: the class
  };
  struct char_class {
    bool negated = false;
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
  };
  regex(std::vector<inst> code, std::vector<char_class> classes, size_t groups);

 private:
  std::vector<inst> code_;
  std::vector<char_class> classes_;
  size_t groups_ = 0;
  bool anchored_ = false;  // every match starts at byte 0
};

struct node;
/// Compiles the constant pattern of each call to a regex function in `nodes` (a string literal
/// as its first argument) into the call's node. A pattern that does not compile is left for the
/// evaluation to report, as a computed one would be, so an expression that never runs the call
/// does not fail.
void compile_constant_patterns(std::vector<node> &nodes, const std::vector<uint32_t> &args);

/// `constant` when the expression compiled the pattern already, else the pattern this thread
/// compiled last when its text is `pattern`, else `pattern` compiled now (and kept). Errors as
/// regex::compile. The pointer is valid until the next call on this thread.
result<const regex *> regex_for(std::string_view pattern, const regex *constant);

}  // namespace quire::fhirpath
