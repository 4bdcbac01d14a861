// A small regular-expression engine for matches(), matchesFull() and replaceMatches(): core is
// built without exceptions, and std::regex reports bad patterns only by throwing.
//
// The pattern is compiled to instructions for a backtracking machine (CHAR, ANY, CLASS, SPLIT,
// JMP, SAVE, BOL, EOL, MATCH) and run with an explicit stack and a step budget, so a hostile
// pattern (`(a*)*b` over a long string) ends with a typed error instead of running for ever or
// overflowing the stack. Supported: literals and escapes (\d \w \s \D \W \S \. \\ \t \n...),
// `.` (any character, newlines included: FHIRPath runs regexes in single-line mode), classes
// with ranges and negation, groups (capturing and `(?:`), `|`, `* + ? {n} {n,} {n,m}` and their
// lazy forms, `^` and `$`.
#include <cstring>

#include "fhirpath_internal.h"

namespace quire::fhirpath {
namespace {

constexpr size_t MAX_PATTERN = 4096;
constexpr size_t MAX_PROGRAM = 20000;
constexpr size_t MAX_DEPTH = 64;
constexpr uint64_t MAX_STEPS = 2'000'000;

enum class rx : uint8_t { chr, any, cls, split, jmp, save, bol, eol, match };
struct inst {
  rx kind;
  char c = 0;
  uint32_t x = 0, y = 0;  // split/jmp targets; save slot; class index
};
struct char_class {
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
};

// AST
enum class ak : uint8_t { empty, chr, any, cls, bol, eol, cat, alt, repeat, group };
struct anode {
  ak kind = ak::empty;
  char c = 0;
  uint32_t cls = 0;
  int min = 0, max = -1;  // repeat
  bool lazy = false;
  int group = -1;  // capture index, -1 for (?:
  std::vector<uint32_t> kids;
};

uint32_t decode_utf8(std::string_view s, size_t &i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    ++i;
    return c;
  }
  int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  uint32_t cp = c & (0x3F >> n);
  ++i;
  for (int k = 0; k < n && i < s.size(); ++k, ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
  return cp;
}

class compiler {
 public:
  explicit compiler(std::string_view p) : p_(p) {}
  std::vector<anode> nodes;
  std::vector<char_class> classes;
  int groups = 0;
  bool ok = true;

  uint32_t parse() {
    uint32_t r = alt(0);
    if (i_ != p_.size()) ok = false;
    return r;
  }

 private:
  std::string_view p_;
  size_t i_ = 0;

  uint32_t add(anode n) {
    nodes.push_back(std::move(n));
    return static_cast<uint32_t>(nodes.size() - 1);
  }

  uint32_t alt(size_t depth) {
    if (depth > MAX_DEPTH) {
      ok = false;
      return 0;
    }
    anode a;
    a.kind = ak::alt;
    a.kids.push_back(cat(depth));
    while (ok && i_ < p_.size() && p_[i_] == '|') {
      ++i_;
      a.kids.push_back(cat(depth));
    }
    if (a.kids.size() == 1) return a.kids[0];
    return add(std::move(a));
  }

  uint32_t cat(size_t depth) {
    anode c;
    c.kind = ak::cat;
    while (ok && i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') c.kids.push_back(repeat(depth));
    return add(std::move(c));
  }

  bool number(int &out) {
    size_t st = i_;
    int v = 0;
    while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
      v = v * 10 + (p_[i_] - '0');
      if (v > 1000) return false;
      ++i_;
    }
    out = v;
    return i_ > st;
  }

  uint32_t repeat(size_t depth) {
    uint32_t a = atom(depth);
    while (ok && i_ < p_.size()) {
      char c = p_[i_];
      int mn, mx;
      if (c == '*') mn = 0, mx = -1, ++i_;
      else if (c == '+') mn = 1, mx = -1, ++i_;
      else if (c == '?') mn = 0, mx = 1, ++i_;
      else if (c == '{') {
        size_t save = i_;
        ++i_;
        if (!number(mn)) {
          i_ = save;
          break;
        }
        mx = mn;
        if (i_ < p_.size() && p_[i_] == ',') {
          ++i_;
          if (!number(mx)) mx = -1;
        }
        if (i_ >= p_.size() || p_[i_] != '}' || (mx >= 0 && mx < mn)) {
          ok = false;
          return a;
        }
        ++i_;
      } else {
        break;
      }
      anode r;
      r.kind = ak::repeat;
      r.min = mn;
      r.max = mx;
      if (i_ < p_.size() && p_[i_] == '?') {
        r.lazy = true;
        ++i_;
      }
      r.kids.push_back(a);
      a = add(std::move(r));
    }
    return a;
  }

  void escape_class(char e, char_class &cc) {
    auto add_range = [&](uint32_t a, uint32_t b) { cc.ranges.emplace_back(a, b); };
    switch (e) {
      case 'd': add_range('0', '9'); break;
      case 'w':
        add_range('a', 'z');
        add_range('A', 'Z');
        add_range('0', '9');
        add_range('_', '_');
        break;
      case 's':
        add_range(' ', ' ');
        add_range('\t', '\r');
        break;
      default: break;
    }
  }

  static bool escape_char(char e, uint32_t &cp) {
    switch (e) {
      case 't': cp = '\t'; return true;
      case 'n': cp = '\n'; return true;
      case 'r': cp = '\r'; return true;
      case 'f': cp = '\f'; return true;
      case 'v': cp = '\v'; return true;
      default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9')) return false;
        cp = static_cast<unsigned char>(e);
        return true;
    }
  }

  uint32_t class_node(char_class cc) {
    classes.push_back(std::move(cc));
    anode n;
    n.kind = ak::cls;
    n.cls = static_cast<uint32_t>(classes.size() - 1);
    return add(std::move(n));
  }

  uint32_t atom(size_t depth) {
    char c = p_[i_];
    anode n;
    switch (c) {
      case '(': {
        ++i_;
        int g = -1;
        if (i_ + 1 < p_.size() && p_[i_] == '?' && p_[i_ + 1] == ':') i_ += 2;
        else g = groups++;
        uint32_t inner = alt(depth + 1);
        if (i_ >= p_.size() || p_[i_] != ')') {
          ok = false;
          return inner;
        }
        ++i_;
        n.kind = ak::group;
        n.group = g;
        n.kids.push_back(inner);
        return add(std::move(n));
      }
      case '[': {
        ++i_;
        char_class cc;
        if (i_ < p_.size() && p_[i_] == '^') {
          cc.negated = true;
          ++i_;
        }
        bool first = true;
        while (i_ < p_.size() && (p_[i_] != ']' || first)) {
          first = false;
          uint32_t lo;
          if (p_[i_] == '\\' && i_ + 1 < p_.size()) {
            char e = p_[i_ + 1];
            i_ += 2;
            if (e == 'd' || e == 'w' || e == 's') {
              escape_class(e, cc);
              continue;
            }
            if (!escape_char(e, lo)) {
              ok = false;
              return 0;
            }
          } else {
            lo = decode_utf8(p_, i_);
          }
          uint32_t hi = lo;
          if (i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
            ++i_;
            if (p_[i_] == '\\' && i_ + 1 < p_.size()) {
              if (!escape_char(p_[i_ + 1], hi)) {
                ok = false;
                return 0;
              }
              i_ += 2;
            } else {
              hi = decode_utf8(p_, i_);
            }
            if (hi < lo) {
              ok = false;
              return 0;
            }
          }
          cc.ranges.emplace_back(lo, hi);
        }
        if (i_ >= p_.size()) {
          ok = false;
          return 0;
        }
        ++i_;
        return class_node(std::move(cc));
      }
      case '.':
        ++i_;
        n.kind = ak::any;
        return add(std::move(n));
      case '^':
        ++i_;
        n.kind = ak::bol;
        return add(std::move(n));
      case '$':
        ++i_;
        n.kind = ak::eol;
        return add(std::move(n));
      case '*':
      case '+':
      case '?':
      case '{':
      case ')':
        ok = false;
        ++i_;
        return add(std::move(n));
      case '\\': {
        if (i_ + 1 >= p_.size()) {
          ok = false;
          ++i_;
          return 0;
        }
        char e = p_[i_ + 1];
        i_ += 2;
        if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') {
          char_class cc;
          cc.negated = e == 'D' || e == 'W' || e == 'S';
          escape_class(static_cast<char>(e | 0x20), cc);
          return class_node(std::move(cc));
        }
        uint32_t cp;
        if (!escape_char(e, cp)) {
          ok = false;
          return 0;
        }
        n.kind = ak::chr;
        n.c = static_cast<char>(cp);
        return add(std::move(n));
      }
      default:
        ++i_;
        n.kind = ak::chr;
        n.c = c;
        return add(std::move(n));
    }
  }
};

class emitter {
 public:
  emitter(const std::vector<anode> &n) : n_(n) {}
  std::vector<inst> code;
  bool ok = true;

  void emit(uint32_t id, size_t depth) {
    if (!ok || code.size() > MAX_PROGRAM || depth > MAX_DEPTH * 4) {
      ok = false;
      return;
    }
    const anode &a = n_[id];
    switch (a.kind) {
      case ak::empty: break;
      case ak::chr: code.push_back({rx::chr, a.c}); break;
      case ak::any: code.push_back({rx::any}); break;
      case ak::cls: code.push_back({rx::cls, 0, a.cls}); break;
      case ak::bol: code.push_back({rx::bol}); break;
      case ak::eol: code.push_back({rx::eol}); break;
      case ak::cat:
        for (uint32_t k : a.kids) emit(k, depth + 1);
        break;
      case ak::group:
        if (a.group >= 0) code.push_back({rx::save, 0, static_cast<uint32_t>(2 * a.group)});
        emit(a.kids[0], depth + 1);
        if (a.group >= 0) code.push_back({rx::save, 0, static_cast<uint32_t>(2 * a.group + 1)});
        break;
      case ak::alt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k < a.kids.size(); ++k) {
          if (k + 1 < a.kids.size()) {
            size_t sp = code.size();
            code.push_back({rx::split});
            code[sp].x = static_cast<uint32_t>(code.size());
            emit(a.kids[k], depth + 1);
            jumps.push_back(code.size());
            code.push_back({rx::jmp});
            code[sp].y = static_cast<uint32_t>(code.size());
          } else {
            emit(a.kids[k], depth + 1);
          }
        }
        for (size_t j : jumps) code[j].x = static_cast<uint32_t>(code.size());
        break;
      }
      case ak::repeat: {
        uint32_t body = a.kids[0];
        for (int k = 0; k < a.min; ++k) emit(body, depth + 1);
        if (a.max < 0) {
          size_t loop = code.size();
          code.push_back({rx::split});
          size_t start = code.size();
          emit(body, depth + 1);
          code.push_back({rx::jmp, 0, static_cast<uint32_t>(loop)});
          size_t after = code.size();
          code[loop].x = static_cast<uint32_t>(a.lazy ? after : start);
          code[loop].y = static_cast<uint32_t>(a.lazy ? start : after);
        } else {
          std::vector<size_t> splits;
          for (int k = a.min; k < a.max; ++k) {
            splits.push_back(code.size());
            code.push_back({rx::split});
            code.back().x = static_cast<uint32_t>(code.size());
            emit(body, depth + 1);
          }
          for (size_t sp : splits) {
            uint32_t start = code[sp].x;
            uint32_t after = static_cast<uint32_t>(code.size());
            code[sp].x = a.lazy ? after : start;
            code[sp].y = a.lazy ? start : after;
          }
        }
        break;
      }
    }
  }

 private:
  const std::vector<anode> &n_;
};

bool in_class(const char_class &cc, uint32_t cp) {
  bool in = false;
  for (auto &r : cc.ranges)
    if (cp >= r.first && cp <= r.second) {
      in = true;
      break;
    }
  return in != cc.negated;
}

// Runs the program at `start`: 1 matched, 0 not, -2 out of steps.
int run(const std::vector<inst> &code, const std::vector<char_class> &classes, std::string_view s, size_t start,
        bool full, std::vector<size_t> &slots, size_t &end, uint64_t &steps) {
  struct entry {
    uint32_t pc;
    size_t sp;
    uint32_t slot;  // NONE: a branch; else a slot to restore to `sp`
  };
  std::vector<entry> stack;
  stack.push_back({0, start, NONE});
  while (!stack.empty()) {
    entry e = stack.back();
    stack.pop_back();
    if (e.slot != NONE) {
      slots[e.slot] = e.sp;
      continue;
    }
    uint32_t pc = e.pc;
    size_t sp = e.sp;
    while (true) {
      if (++steps > MAX_STEPS) return -2;
      const inst &in = code[pc];
      bool fail = false;
      switch (in.kind) {
        case rx::chr:
          if (sp < s.size() && s[sp] == in.c) ++sp, ++pc;
          else fail = true;
          break;
        case rx::any:
          if (sp < s.size()) {
            decode_utf8(s, sp);
            ++pc;
          } else {
            fail = true;
          }
          break;
        case rx::cls:
          if (sp < s.size()) {
            uint32_t cp = decode_utf8(s, sp);
            if (in_class(classes[in.x], cp)) ++pc;
            else fail = true;
          } else {
            fail = true;
          }
          break;
        case rx::bol:
          if (sp == 0) ++pc;
          else fail = true;
          break;
        case rx::eol:
          if (sp == s.size()) ++pc;
          else fail = true;
          break;
        case rx::split:
          stack.push_back({in.y, sp, NONE});
          if (stack.size() > 1'000'000) return -2;
          pc = in.x;
          break;
        case rx::jmp: pc = in.x; break;
        case rx::save:
          stack.push_back({0, slots[in.x], in.x});
          slots[in.x] = sp;
          ++pc;
          break;
        case rx::match:
          if (full && sp != s.size()) {
            fail = true;
            break;
          }
          end = sp;
          return 1;
      }
      if (fail) break;
    }
  }
  return 0;
}

}  // namespace

int regex_search(std::string_view pattern, std::string_view s, size_t from, bool anchored_full, regex_match &m) {
  if (pattern.size() > MAX_PATTERN) return -1;
  compiler c(pattern);
  uint32_t root = c.parse();
  if (!c.ok) return -1;
  emitter e(c.nodes);
  e.emit(root, 0);
  if (!e.ok) return -1;
  e.code.push_back({rx::match});
  uint64_t steps = 0;
  std::vector<size_t> slots(static_cast<size_t>(c.groups) * 2, NONE);
  for (size_t start = from; start <= s.size(); ++start) {
    std::fill(slots.begin(), slots.end(), static_cast<size_t>(NONE));
    size_t end = 0;
    int r = run(e.code, c.classes, s, start, anchored_full, slots, end, steps);
    if (r == -2) return -2;
    if (r == 1) {
      m.begin = start;
      m.end = end;
      m.groups.clear();
      for (int g = 0; g < c.groups; ++g) m.groups.emplace_back(slots[2 * g], slots[2 * g + 1]);
      return 1;
    }
    if (anchored_full) break;
    while (start + 1 < s.size() && (static_cast<unsigned char>(s[start + 1]) & 0xC0) == 0x80) ++start;
  }
  return 0;
}

}  // namespace quire::fhirpath
