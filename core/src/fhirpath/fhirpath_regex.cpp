// A regular-expression engine of our own: core is built without exceptions (std::regex reports
// bad patterns only by throwing, and backtracks), and RE2 would add more to quire.wasm than this
// file does (docs/fhirpath.md, "Regular expressions", has the measurement).
//
// The pattern is parsed to a tree, emitted as instructions (CHR, ANY, CLASS, SPLIT, JMP, SAVE,
// BOL, EOL, MATCH) and run as a Pike VM: every thread advances one code point at a time in
// priority order, and a thread that reaches an instruction another thread of higher priority
// already holds at this position is dropped. The match and its captures are then the ones a
// backtracking engine would find first, for at most (text length) × (program size) steps, and
// `(a*)*b` over a long text ends like any other pattern.
#include "fhirpath_regex.h"

#include <algorithm>

#include "fhirpath_internal.h"

namespace quire::fhirpath {
namespace {

constexpr size_t MAX_PATTERN = 4096;
constexpr size_t MAX_PROGRAM = 20000;
// A thread carries 2 slots per group and 2 for the whole match: instructions × slots bounds the
// VM's memory (two thread lists).
constexpr size_t MAX_PROGRAM_SLOTS = 2'000'000;
constexpr size_t MAX_DEPTH = 64;
constexpr int MAX_COUNT = 1000;
static_assert(regex_match::UNSET == NONE);

using rop = regex::op;
using inst = regex::inst;
using char_class = regex::char_class;

enum class ak : uint8_t { empty, chr, any, cls, bol, eol, cat, alt, repeat, group };
struct anode {
  ak kind = ak::empty;
  uint32_t c = 0;         // chr: code point; cls: class index
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

class parser {
 public:
  explicit parser(std::string_view p) : p_(p) {}
  std::vector<anode> nodes;
  std::vector<char_class> classes;
  int groups = 0;
  std::string why;  // empty: fine
  bool too_large = false;

  uint32_t parse() {
    uint32_t r = alt(0);
    if (why.empty() && i_ != p_.size()) bad("an unmatched ')'");
    return r;
  }

 private:
  std::string_view p_;
  size_t i_ = 0;

  bool ok() const { return why.empty(); }
  uint32_t bad(std::string reason) {
    if (why.empty()) why = std::move(reason);
    return 0;
  }
  uint32_t large(std::string reason) {
    if (why.empty()) too_large = true;
    return bad(std::move(reason));
  }

  uint32_t add(anode n) {
    nodes.push_back(std::move(n));
    return static_cast<uint32_t>(nodes.size() - 1);
  }

  uint32_t alt(size_t depth) {
    if (depth > MAX_DEPTH) return large("groups nested deeper than " + std::to_string(MAX_DEPTH));
    anode a;
    a.kind = ak::alt;
    a.kids.push_back(cat(depth));
    while (ok() && i_ < p_.size() && p_[i_] == '|') {
      ++i_;
      a.kids.push_back(cat(depth));
    }
    if (a.kids.size() == 1) return a.kids[0];
    return add(std::move(a));
  }

  uint32_t cat(size_t depth) {
    anode c;
    c.kind = ak::cat;
    while (ok() && i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') c.kids.push_back(repeat(depth));
    return add(std::move(c));
  }

  // -1: no digits; -2: past MAX_COUNT.
  int number() {
    size_t st = i_;
    int v = 0;
    while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
      if (v <= MAX_COUNT) v = v * 10 + (p_[i_] - '0');
      ++i_;
    }
    if (i_ == st) return -1;
    return v > MAX_COUNT ? -2 : v;
  }

  uint32_t repeat(size_t depth) {
    uint32_t a = atom(depth);
    while (ok() && i_ < p_.size()) {
      char c = p_[i_];
      int mn, mx;
      if (c == '*') mn = 0, mx = -1, ++i_;
      else if (c == '+') mn = 1, mx = -1, ++i_;
      else if (c == '?') mn = 0, mx = 1, ++i_;
      else if (c == '{') {
        ++i_;
        mn = number();
        if (mn == -1) return bad("'{' that does not start a count {n}, {n,} or {n,m}");
        mx = mn;
        if (i_ < p_.size() && p_[i_] == ',') {
          ++i_;
          mx = number();
        }
        if (mn == -2 || mx == -2) return large("a repeat count above " + std::to_string(MAX_COUNT));
        if (i_ >= p_.size() || p_[i_] != '}') return bad("an unclosed count {n,m}");
        if (mx >= 0 && mx < mn) return bad("a count {n,m} with m below n");
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

  static void escape_class(char e, char_class &cc) {
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

  // The character an escape stands for; false (and a reason) for an escape the dialect lacks.
  bool escape_char(char e, uint32_t &cp) {
    switch (e) {
      case 't': cp = '\t'; return true;
      case 'n': cp = '\n'; return true;
      case 'r': cp = '\r'; return true;
      case 'f': cp = '\f'; return true;
      case 'v': cp = '\v'; return true;
      default:
        if (e >= '1' && e <= '9') {
          bad(std::string("a backreference \\") + e + " (not supported: a linear-time engine cannot run one)");
          return false;
        }
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || e == '0') {
          bad(std::string("an unsupported escape \\") + e);
          return false;
        }
        cp = static_cast<unsigned char>(e);
        return true;
    }
  }

  uint32_t class_node(char_class cc) {
    classes.push_back(std::move(cc));
    anode n;
    n.kind = ak::cls;
    n.c = static_cast<uint32_t>(classes.size() - 1);
    return add(std::move(n));
  }

  uint32_t bracket() {
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
        if (!escape_char(e, lo)) return 0;
      } else {
        lo = decode_utf8(p_, i_);
      }
      uint32_t hi = lo;
      if (i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
        ++i_;
        if (p_[i_] == '\\' && i_ + 1 < p_.size()) {
          if (!escape_char(p_[i_ + 1], hi)) return 0;
          i_ += 2;
        } else {
          hi = decode_utf8(p_, i_);
        }
        if (hi < lo) return bad("a range [b-a] that runs backwards");
      }
      cc.ranges.emplace_back(lo, hi);
    }
    if (i_ >= p_.size()) return bad("an unclosed '['");
    ++i_;
    return class_node(std::move(cc));
  }

  uint32_t atom(size_t depth) {
    char c = p_[i_];
    anode n;
    switch (c) {
      case '(': {
        ++i_;
        int g = -1;
        if (i_ + 1 < p_.size() && p_[i_] == '?' && p_[i_ + 1] == ':') i_ += 2;
        else if (i_ < p_.size() && p_[i_] == '?') return bad("a group (? other than (?:");
        else g = groups++;
        uint32_t inner = alt(depth + 1);
        if (!ok()) return inner;
        if (i_ >= p_.size() || p_[i_] != ')') return bad("an unclosed '('");
        ++i_;
        n.kind = ak::group;
        n.group = g;
        n.kids.push_back(inner);
        return add(std::move(n));
      }
      case '[': return bracket();
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
      case '{': return bad(std::string("a quantifier '") + c + "' with nothing to repeat");
      case '\\': {
        if (i_ + 1 >= p_.size()) return bad("a '\\' at the end");
        char e = p_[i_ + 1];
        i_ += 2;
        if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') {
          char_class cc;
          cc.negated = e == 'D' || e == 'W' || e == 'S';
          escape_class(static_cast<char>(e | 0x20), cc);
          return class_node(std::move(cc));
        }
        uint32_t cp;
        if (!escape_char(e, cp)) return 0;
        n.kind = ak::chr;
        n.c = cp;
        return add(std::move(n));
      }
      default:
        n.kind = ak::chr;
        n.c = decode_utf8(p_, i_);
        return add(std::move(n));
    }
  }
};

class emitter {
 public:
  explicit emitter(const std::vector<anode> &n) : n_(n) {}
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
      case ak::chr: code.push_back({rop::chr, a.c}); break;
      case ak::any: code.push_back({rop::any}); break;
      case ak::cls: code.push_back({rop::cls, a.c}); break;
      case ak::bol: code.push_back({rop::bol}); break;
      case ak::eol: code.push_back({rop::eol}); break;
      case ak::cat:
        for (uint32_t k : a.kids) emit(k, depth + 1);
        break;
      case ak::group:
        if (a.group >= 0) code.push_back({rop::save, static_cast<uint32_t>(2 * a.group + 2)});
        emit(a.kids[0], depth + 1);
        if (a.group >= 0) code.push_back({rop::save, static_cast<uint32_t>(2 * a.group + 3)});
        break;
      case ak::alt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k < a.kids.size(); ++k) {
          if (k + 1 < a.kids.size()) {
            size_t sp = code.size();
            code.push_back({rop::split});
            code[sp].x = here();
            emit(a.kids[k], depth + 1);
            jumps.push_back(code.size());
            code.push_back({rop::jmp});
            code[sp].y = here();
          } else {
            emit(a.kids[k], depth + 1);
          }
        }
        for (size_t j : jumps) code[j].x = here();
        break;
      }
      case ak::repeat: {
        uint32_t body = a.kids[0];
        for (int k = 0; k < a.min; ++k) emit(body, depth + 1);
        if (a.max < 0) {
          size_t loop = code.size();
          code.push_back({rop::split});
          uint32_t start = here();
          emit(body, depth + 1);
          code.push_back({rop::jmp, static_cast<uint32_t>(loop)});
          branch(loop, start, here(), a.lazy);
        } else {
          std::vector<size_t> splits;
          for (int k = a.min; k < a.max; ++k) {
            splits.push_back(code.size());
            code.push_back({rop::split});
            emit(body, depth + 1);
          }
          for (size_t sp : splits) branch(sp, static_cast<uint32_t>(sp + 1), here(), a.lazy);
        }
        break;
      }
    }
  }

 private:
  const std::vector<anode> &n_;
  uint32_t here() const { return static_cast<uint32_t>(code.size()); }
  void branch(size_t at, uint32_t body, uint32_t after, bool lazy) {
    code[at].x = lazy ? after : body;
    code[at].y = lazy ? body : after;
  }
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

// The VM's buffers, kept per thread so a search allocates nothing once warm.
struct vm_state {
  struct threads {
    std::vector<uint32_t> pc;
    std::vector<size_t> slots;  // nslots per thread
    void clear() {
      pc.clear();
      slots.clear();
    }
  };
  threads now, next;
  std::vector<uint32_t> mark;  // mark[pc] == gen: a thread of this position reached pc
  uint32_t gen = 0;
  std::vector<size_t> work;  // the slots of the thread being followed
  struct frame {
    uint32_t pc;
    uint32_t slot;  // NONE: follow pc; else restore `slot` to `value`
    size_t value;
  };
  std::vector<frame> stack;

  void next_gen(size_t program_size) {
    if (mark.size() < program_size) mark.resize(program_size, 0);
    if (++gen == 0) {
      std::fill(mark.begin(), mark.end(), 0);
      gen = 1;
    }
  }
};

// Follows pc's empty transitions (SPLIT, JMP, SAVE, BOL, EOL) at `sp` with the slots in
// st.work, adding a thread to `list` at each instruction that consumes a character or matches,
// in priority order.
void follow(const std::vector<inst> &code, vm_state &st, vm_state::threads &list, uint32_t pc0, size_t sp, size_t n,
            size_t nslots) {
  auto &stack = st.stack;
  stack.push_back({pc0, NONE, 0});
  while (!stack.empty()) {
    vm_state::frame f = stack.back();
    stack.pop_back();
    if (f.slot != NONE) {
      st.work[f.slot] = f.value;
      continue;
    }
    uint32_t pc = f.pc;
    while (st.mark[pc] != st.gen) {
      st.mark[pc] = st.gen;
      const inst &in = code[pc];
      if (in.kind == rop::jmp) {
        pc = in.x;
      } else if (in.kind == rop::split) {
        stack.push_back({in.y, NONE, 0});
        pc = in.x;
      } else if (in.kind == rop::save) {
        if (in.x < nslots) {
          stack.push_back({0, in.x, st.work[in.x]});
          st.work[in.x] = sp;
        }
        ++pc;
      } else if (in.kind == rop::bol) {
        if (sp != 0) break;
        ++pc;
      } else if (in.kind == rop::eol) {
        if (sp != n) break;
        ++pc;
      } else {
        list.pc.push_back(pc);
        list.slots.insert(list.slots.end(), st.work.begin(), st.work.begin() + static_cast<ptrdiff_t>(nslots));
        break;
      }
    }
  }
}

}  // namespace

regex::regex(std::vector<inst> code, std::vector<char_class> classes, size_t groups)
    : code_(std::move(code)), classes_(std::move(classes)), groups_(groups) {
  anchored_ = code_.size() > 1 && code_[1].kind == op::bol;
}

result<std::shared_ptr<const regex>> regex::compile(std::string_view pattern) {
  auto too_large = [&](const std::string &why) {
    return quire::error(error_code::REGEX_TOO_LARGE, "the regular expression " + std::string(pattern.substr(0, 64)) +
                                                         (pattern.size() > 64 ? "..." : "") + " is too large: " + why);
  };
  if (pattern.size() > MAX_PATTERN) return too_large("longer than " + std::to_string(MAX_PATTERN) + " bytes");
  parser p(pattern);
  uint32_t root = p.parse();
  if (p.too_large) return too_large(p.why);
  if (!p.why.empty())
    return quire::error(error_code::INVALID_ARGUMENT, "bad regular expression " + std::string(pattern) + ": " + p.why);
  emitter e(p.nodes);
  e.code.push_back({op::save, 0});
  e.emit(root, 0);
  if (!e.ok) return too_large("more than " + std::to_string(MAX_PROGRAM) + " instructions");
  e.code.push_back({op::save, 1});
  e.code.push_back({op::match});
  size_t slots = 2 * static_cast<size_t>(p.groups) + 2;
  if (e.code.size() * slots > MAX_PROGRAM_SLOTS)
    return too_large("its instructions times its capture slots exceed " + std::to_string(MAX_PROGRAM_SLOTS));
  return std::make_shared<const regex>(std::move(e.code), std::move(p.classes), static_cast<size_t>(p.groups));
}

bool regex::search(std::string_view s, size_t from, bool full, regex_match *m) const {
  thread_local vm_state st;
  const size_t n = s.size();
  const size_t nslots = m ? 2 * groups_ + 2 : 0;
  st.now.clear();
  st.next.clear();
  st.work.assign(nslots, NONE);
  st.next_gen(code_.size());
  follow(code_, st, st.now, 0, from, n, nslots);
  bool matched = false;
  size_t sp = from;
  while (true) {
    size_t after = sp;
    uint32_t cp = sp < n ? decode_utf8(s, after) : 0;
    st.next_gen(code_.size());
    for (size_t t = 0; t < st.now.pc.size(); ++t) {
      const inst &in = code_[st.now.pc[t]];
      const size_t *slots = st.now.slots.data() + t * nslots;
      bool step = false;
      if (in.kind == op::chr) step = sp < n && cp == in.x;
      else if (in.kind == op::any) step = sp < n;
      else if (in.kind == op::cls) step = sp < n && in_class(classes_[in.x], cp);
      else if (in.kind == op::match && (!full || sp == n)) {
        if (!m) return true;
        matched = true;
        m->begin = slots[0];
        m->end = slots[1];
        m->groups.clear();
        for (size_t g = 0; g < groups_; ++g) m->groups.emplace_back(slots[2 * g + 2], slots[2 * g + 3]);
        break;  // a match ends every thread of lower priority
      }
      if (step) {
        std::copy(slots, slots + nslots, st.work.begin());
        follow(code_, st, st.next, st.now.pc[t] + 1, after, n, nslots);
      }
    }
    if (sp >= n) break;
    sp = after;
    if (!matched && !full && !anchored_) {
      std::fill(st.work.begin(), st.work.end(), static_cast<size_t>(NONE));
      follow(code_, st, st.next, 0, sp, n, nslots);
    }
    std::swap(st.now, st.next);
    st.next.clear();
    if (st.now.pc.empty() && (matched || full || anchored_)) break;
  }
  return matched;
}

void compile_constant_patterns(std::vector<node> &nodes, const std::vector<uint32_t> &args) {
  for (node &nd : nodes) {
    if (nd.kind != op::call || nd.arg_count == 0) continue;
    if (nd.function != fn::matches && nd.function != fn::matchesFull && nd.function != fn::replaceMatches) continue;
    const node &arg = nodes[args[nd.first_arg]];
    if (arg.kind != op::literal || arg.lit.kind != value_kind::string) continue;
    auto r = regex::compile(arg.lit.text);
    if (r) nd.pattern = std::move(r).value();
  }
}

result<const regex *> regex_for(std::string_view pattern, const regex *constant) {
  if (constant) return constant;
  thread_local std::string last_text;
  thread_local std::shared_ptr<const regex> last;
  if (!last || pattern != last_text) {
    auto r = regex::compile(pattern);
    if (!r) return std::move(r).error();
    last = std::move(r).value();
    last_text.assign(pattern);
  }
  return last.get();
}

}  // namespace quire::fhirpath
