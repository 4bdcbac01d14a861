// Reading FHIR R4 XML. expat parses the document (forced to UTF-8, namespaces on, no DTD: a
// DOCTYPE stops it before anything in it is read); its events build a tree of the elements (one
// node each, strings in one buffer); the tree is written out as the resource's JSON form — as the
// tape the JSON reader would make of its text, without the text — which read() then validates as
// any JSON resource. A table of (tape index or JSON offset, XML offset) pairs, one per value
// written, moves every issue and error back to the XML element it is about.
#include <expat.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../common/alloc.h"
#include "fhir_internal.h"

#if defined(__EMSCRIPTEN__) || defined(__unix__) || defined(__APPLE__)
#include <unistd.h>  // getentropy
#endif

namespace quire::fhir {
namespace {

using namespace detail;

constexpr std::string_view FHIR_NS = "http://hl7.org/fhir";
constexpr std::string_view XHTML_NS = "http://www.w3.org/1999/xhtml";
// expat joins a namespace and a local name with this byte; a space cannot be part of either.
constexpr char NS_SEP = ' ';
constexpr uint32_t NONE = 0xFFFFFFFF;
// As the JSON reader's: max_depth beyond it is clamped.
constexpr size_t HARD_MAX_DEPTH = 1024;

// The values' bytes, in the order expat gives them; read through the tape, the buffer becomes the
// document's strings (json::detail::tape_data::strings), so no value is copied twice.
using strings_buffer = std::vector<char, json::detail::uninitialized_allocator<char>>;

struct span_ref {
  uint32_t offset = NONE;  // NONE: not set
  uint32_t length = 0;
  bool set() const noexcept { return offset != NONE; }
};

enum class node_kind : uint8_t { resource, element, wrapper, div };

// 64 bytes: the tree is walked twice (built, then written), and its nodes are most of its memory.
struct node {
  uint32_t parent = NONE;
  uint32_t first_child = NONE;
  uint32_t last_child = NONE;
  uint32_t next = NONE;
  uint32_t next_same = NONE;  // the next sibling of the same key (the next item of its member)
  uint16_t type = NO_TYPE;    // the element's own type
  node_kind kind = node_kind::element;
  bool repeat = false;           // a sibling of the same key comes before it
  const key_def *key = nullptr;  // under the parent's type (NONE for a resource)
  uint64_t offset = 0;           // of its `<` in the XML
  span_ref value, id, url;
};
static_assert(sizeof(node) == 64);

// How many of the `n` bytes at `p` are `c`, eight at a time. std::count's loop, vectorised by g++
// with 64-bit counters, made its two passes (the elements' `<`, the issues' newlines) cost about a
// twelfth of reading a large Bundle. (No popcount: without -mpopcnt it is a call into libgcc.)
size_t count_byte(const char *p, size_t n, char c) noexcept {
  constexpr uint64_t ONES = 0x0101010101010101ull, LOW7 = 0x7F7F7F7F7F7F7F7Full, EVEN = 0x00FF00FF00FF00FFull;
  const uint64_t pattern = ONES * static_cast<unsigned char>(c);
  size_t count = 0, i = 0;
  while (n - i >= 8) {
    // Eight one-byte counters, summed before any can pass 255.
    uint64_t lanes = 0;
    const size_t stop = i + std::min<size_t>((n - i) / 8, 255) * 8;
    for (; i < stop; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      const uint64_t x = w ^ pattern;  // a byte equal to c is 0 here
      // The high bit of each byte of x that is not 0, exactly (no carry between bytes).
      const uint64_t nonzero = ((x & LOW7) + LOW7) | x;
      lanes += (~nonzero & ~LOW7) >> 7;
    }
    const uint64_t pairs = (lanes & EVEN) + (lanes >> 8 & EVEN);  // four 16-bit sums
    count += static_cast<size_t>((pairs * 0x0001000100010001ull) >> 48);
  }
  for (; i < n; ++i) count += p[i] == c;
  return count;
}

// The hash salt of every parser: from the system's entropy where there is some (expat would
// otherwise read the clock), never 0 (which asks expat to make its own).
unsigned long hash_salt() noexcept {
  unsigned long salt = 0;
#if defined(__EMSCRIPTEN__) || defined(__unix__) || defined(__APPLE__)
  if (getentropy(&salt, sizeof salt) != 0) salt = 0;
#endif
  return salt ? salt : 0x9E3779B97F4A7C15ull & static_cast<unsigned long>(-1);
}

// Each thread's parser, reset for each document rather than made anew: making one (its hash
// tables, pools and buffers) and the salt's getentropy call were about 7% of reading one
// Observation. A parser that read a large document is freed instead (expat keeps its buffer, as
// large as the input). Reset clears the handlers, the user data and the salt: parse() sets them.
class parser_slot {
 public:
  static constexpr size_t KEEP_BELOW = size_t{1} << 20;
  ~parser_slot() {
    if (parser_) XML_ParserFree(parser_);
  }
  // A parser ready for a document, or nullptr when none can be made.
  XML_Parser take() noexcept {
    if (parser_ && XML_ParserReset(parser_, "UTF-8") == XML_TRUE) return std::exchange(parser_, nullptr);
    if (parser_) XML_ParserFree(std::exchange(parser_, nullptr));
    if (salt_ == 0) salt_ = hash_salt();
    return XML_ParserCreateNS("UTF-8", NS_SEP);
  }
  // Takes back a parser done with a document of `bytes` bytes.
  void give_back(XML_Parser p, size_t bytes) noexcept {
    if (bytes < KEEP_BELOW && !parser_) {
      parser_ = p;
    } else {
      XML_ParserFree(p);
    }
  }
  unsigned long salt() const noexcept { return salt_; }

 private:
  XML_Parser parser_ = nullptr;
  unsigned long salt_ = 0;
};

parser_slot &thread_parser() {
  thread_local parser_slot slot;
  return slot;
}

class tree_builder {
 public:
  tree_builder(std::string_view input, const options &opts)
      : input_(input), max_depth_(std::min<size_t>(opts.max_depth, HARD_MAX_DEPTH)) {}

  result<void> parse() {
    parser_slot &slot = thread_parser();
    XML_Parser p = slot.take();
    if (!p) return quire::error(error_code::OUT_OF_MEMORY, "cannot create the XML parser");
    parser_ = p;
    XML_SetHashSalt(p, slot.salt());
    XML_SetUserData(p, this);
    XML_SetElementHandler(p, &tree_builder::on_start, &tree_builder::on_end);
    XML_SetCharacterDataHandler(p, &tree_builder::on_text);
    XML_SetStartDoctypeDeclHandler(p, &tree_builder::on_doctype);
    XML_SetEntityDeclHandler(p, &tree_builder::on_entity);
    XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_NEVER);
    // Sized once: an element starts at a `<` (so their count bounds the nodes), and the values
    // are at most the input's bytes (attribute values do not grow, and no entity is declared).
    const size_t tags = count_byte(input_.data(), input_.size(), '<');
    if (auto room = quire::detail::reserve_or_oom(nodes_, tags, "the XML elements"); !room) {
      slot.give_back(p, input_.size());
      return std::move(room).error();
    }
    if (auto room = quire::detail::reserve_or_oom(strings_, input_.size() + 1024, "the XML values"); !room) {
      slot.give_back(p, input_.size());
      return std::move(room).error();
    }
    // Whole input at once, in pieces below INT_MAX (XML_Parse takes an int length).
    std::string_view rest = input_;
    XML_Status status = XML_STATUS_OK;
    do {
      const size_t piece = std::min<size_t>(rest.size(), size_t{1} << 30);
      status = XML_Parse(p, rest.data(), static_cast<int>(piece), piece == rest.size());
      rest.remove_prefix(piece);
    } while (status == XML_STATUS_OK && !rest.empty());
    if (status != XML_STATUS_OK && !failed_) {
      const XML_Error code = XML_GetErrorCode(p);
      fail(code == XML_ERROR_NO_MEMORY ? error_code::OUT_OF_MEMORY : error_code::INVALID_XML,
           std::string("not well-formed XML: ") + XML_ErrorString(code),
           static_cast<uint64_t>(XML_GetCurrentByteIndex(p)));
    }
    slot.give_back(p, input_.size());
    parser_ = nullptr;
    if (failed_) return std::move(error_);
    return {};
  }

  const std::vector<node> &nodes() const noexcept { return nodes_; }
  std::string_view text(span_ref s) const noexcept { return std::string_view(strings_.data() + s.offset, s.length); }
  strings_buffer &strings() noexcept { return strings_; }

 private:
  std::string_view input_;
  size_t max_depth_;
  XML_Parser parser_ = nullptr;
  std::vector<node> nodes_;
  std::vector<uint32_t> open_;  // the open elements (outside a div)
  // Per open element, from recent_starts_[its depth]: each key of its children and the last child
  // under it, so that a repeated element joins its member's items in one step.
  std::vector<std::pair<const key_def *, uint32_t>> recent_;
  std::vector<uint32_t> recent_starts_;
  strings_buffer strings_;
  size_t div_depth_ = 0;  // inside a div: its depth (the div itself is 1)
  uint64_t div_start_ = 0;
  bool failed_ = false;
  quire::error error_;

  uint64_t here() const noexcept {
    const XML_Index i = XML_GetCurrentByteIndex(parser_);
    return i < 0 ? 0 : static_cast<uint64_t>(i);
  }

  std::string path_to(uint32_t n, std::string_view last = {}) const {
    std::vector<std::string_view> names;
    if (!last.empty()) names.push_back(last);
    for (; n != NONE; n = nodes_[n].parent) {
      const node &x = nodes_[n];
      if (x.kind == node_kind::resource) {
        names.push_back(TYPES[x.type].name.view());
      } else if (x.key) {
        names.push_back(x.key->key.view());
      }
    }
    std::string out;
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      if (!out.empty()) out += '.';
      out += *it;
    }
    return out;
  }

  void fail(error_code code, std::string message, uint64_t offset, std::string path = {}) {
    if (failed_) return;
    failed_ = true;
    error_ = quire::error(code, std::move(message), offset);
    error_.path = std::move(path);
    locate(error_, input_);
    if (parser_) XML_StopParser(parser_, XML_FALSE);
  }

  // Room for `n` more bytes of strings, or OUT_OF_MEMORY (core does not throw: a failed growth
  // would end the process).
  bool room_for_strings(size_t n) {
    if (strings_.size() + n <= strings_.capacity()) return true;
    if (quire::detail::grow_or_oom(strings_, strings_.size() + n, "the XML values")) return true;
    fail(error_code::OUT_OF_MEMORY, "cannot allocate the XML values", here());
    return false;
  }

  span_ref keep(const XML_Char *s) {
    const size_t n = std::strlen(s);
    if (!room_for_strings(n)) return {};
    span_ref r{static_cast<uint32_t>(strings_.size()), static_cast<uint32_t>(n)};
    strings_.insert(strings_.end(), s, s + n);
    return r;
  }

  static std::string_view excerpt(std::string_view s) { return s.substr(0, 64); }

  static void split(const XML_Char *name, std::string_view &ns, std::string_view &local) {
    // Nearly every name is FHIR's: its namespace is compared without looking for the separator
    // (strncmp stops at a shorter name's end).
    constexpr std::string_view FHIR_PREFIX = "http://hl7.org/fhir ";
    if (std::strncmp(name, FHIR_PREFIX.data(), FHIR_PREFIX.size()) == 0) {
      ns = FHIR_NS;
      local = std::string_view(name + FHIR_PREFIX.size());
      return;
    }
    std::string_view all(name);
    const size_t sep = all.find(NS_SEP);
    if (sep == std::string_view::npos) {
      ns = {};
      local = all;
    } else {
      ns = all.substr(0, sep);
      local = all.substr(sep + 1);
    }
  }

  static void XMLCALL on_doctype(void *self, const XML_Char *, const XML_Char *, const XML_Char *, int) {
    auto *b = static_cast<tree_builder *>(self);
    // expat reports it once it has read the name (and the `[` of an internal subset): point at `<!DOCTYPE`.
    const uint64_t at = b->here();
    const size_t start = b->input_.substr(0, static_cast<size_t>(at) + 1).rfind("<!DOCTYPE");
    b->fail(error_code::INVALID_XML, "a DOCTYPE is refused (FHIR XML has none; entities are never expanded)",
            start == std::string_view::npos ? at : start);
  }

  static void XMLCALL on_entity(void *self, const XML_Char *, int, const XML_Char *, int, const XML_Char *,
                                const XML_Char *, const XML_Char *, const XML_Char *) {
    auto *b = static_cast<tree_builder *>(self);
    b->fail(error_code::INVALID_XML, "an entity declaration is refused", b->here());
  }

  static void XMLCALL on_text(void *self, const XML_Char *s, int len) {
    auto *b = static_cast<tree_builder *>(self);
    if (b->failed_ || b->div_depth_ > 0) return;
    for (int i = 0; i < len; ++i) {
      const char c = s[i];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        b->fail(error_code::INVALID_RESOURCE,
                "text inside an element: FHIR XML has values in `value` attributes only (found " +
                    std::string(excerpt(std::string_view(s, static_cast<size_t>(len)))) + ")",
                b->here(), b->open_.empty() ? std::string() : b->path_to(b->open_.back()));
        return;
      }
    }
  }

  static void XMLCALL on_start(void *self, const XML_Char *name, const XML_Char **atts) {
    static_cast<tree_builder *>(self)->start(name, atts);
  }
  static void XMLCALL on_end(void *self, const XML_Char *) { static_cast<tree_builder *>(self)->end(); }

  // Appends `n` under its parent and opens it; NONE (and failed_) when memory runs out.
  uint32_t add_node(node n) {
    if (nodes_.size() == nodes_.capacity() &&
        !quire::detail::grow_or_oom(nodes_, nodes_.size() + 1, "the XML elements")) {
      fail(error_code::OUT_OF_MEMORY, "cannot allocate the XML elements", here());
      return NONE;
    }
    const auto index = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(n);
    if (n.parent != NONE) {
      node &p = nodes_[n.parent];
      if (p.last_child == NONE) {
        p.first_child = index;
      } else {
        nodes_[p.last_child].next = index;
      }
      p.last_child = index;
      if (n.key) {
        // Among the keys of the parent's children so far (a type's keys: a short list).
        auto it = recent_.begin() + recent_starts_.back();
        while (it != recent_.end() && it->first != n.key) ++it;
        if (it == recent_.end()) {
          recent_.emplace_back(n.key, index);
        } else {
          nodes_[it->second].next_same = index;
          nodes_[index].repeat = true;
          it->second = index;
        }
      }
    }
    open_.push_back(index);
    recent_starts_.push_back(static_cast<uint32_t>(recent_.size()));
    return index;
  }

  void start(const XML_Char *name, const XML_Char **atts) {
    if (failed_) return;
    const uint64_t at = here();
    if (open_.size() + div_depth_ >= max_depth_) {
      fail(error_code::MAX_DEPTH_EXCEEDED, "elements nested deeper than max_depth (" + std::to_string(max_depth_) + ")",
           at);
      return;
    }
    std::string_view ns, local;
    split(name, ns, local);
    if (div_depth_ > 0) {
      if (ns != XHTML_NS) {
        fail(error_code::INVALID_RESOURCE,
             "an element inside the narrative's div that is not XHTML: " + std::string(excerpt(local)) +
                 " in namespace \"" + std::string(excerpt(ns)) + "\"",
             at, path_to(open_.back()));
        return;
      }
      ++div_depth_;
      return;
    }
    node n;
    n.offset = at;
    if (open_.empty()) {
      if (ns != FHIR_NS) {
        fail(error_code::INVALID_RESOURCE,
             "the root element must be in the FHIR namespace http://hl7.org/fhir, found " +
                 (ns.empty() ? std::string("no namespace") : "\"" + std::string(excerpt(ns)) + "\""),
             at);
        return;
      }
      n.kind = node_kind::resource;
      n.type = find_resource_type(local);
      if (n.type == NO_TYPE) {
        fail(error_code::INVALID_RESOURCE, "unknown resource type " + std::string(excerpt(local)), at);
        return;
      }
    } else {
      const uint32_t parent = open_.back();
      const node &p = nodes_[parent];
      n.parent = parent;
      if (p.kind == node_kind::wrapper) {
        if (p.first_child != NONE) {
          fail(error_code::INVALID_RESOURCE, "a second resource inside one resource element", at, path_to(parent));
          return;
        }
        if (ns != FHIR_NS) {
          fail(error_code::INVALID_RESOURCE, "a resource must be in the FHIR namespace http://hl7.org/fhir", at,
               path_to(parent));
          return;
        }
        n.kind = node_kind::resource;
        n.type = find_resource_type(local);
        if (n.type == NO_TYPE) {
          fail(error_code::INVALID_RESOURCE, "unknown resource type " + std::string(excerpt(local)), at,
               path_to(parent));
          return;
        }
      } else {
        const uint16_t pt = p.type;
        const type_kind pk = TYPES[pt].kind;
        const key_def *k = nullptr;
        // `id` of an element, `url` of an extension and a primitive's `value` are attributes.
        const bool attribute_name = (local == "id" && pk != type_kind::resource) ||
                                    (local == "url" && TYPES[pt].name.view() == "Extension") ||
                                    (pk == type_kind::primitive && local == "value");
        if (!attribute_name) k = find_key_hashed(pt, local);
        if (k && TYPES[k->type].prim == primitive::xhtml) {
          if (ns != XHTML_NS) {
            fail(error_code::INVALID_RESOURCE,
                 "the narrative's div must be in the XHTML namespace http://www.w3.org/1999/xhtml", at,
                 path_to(parent, local));
            return;
          }
          n.kind = node_kind::div;
          n.key = k;
          n.type = k->type;
          if (atts) check_div_attributes(atts, at, parent, local);
          if (failed_) return;
          if (add_node(n) == NONE) return;
          div_depth_ = 1;
          div_start_ = at;
          return;
        }
        if (ns != FHIR_NS) {
          fail(error_code::INVALID_RESOURCE,
               "element " + std::string(excerpt(local)) + " is not in the FHIR namespace http://hl7.org/fhir", at,
               path_to(parent, local));
          return;
        }
        if (!k) {
          fail(error_code::UNKNOWN_ELEMENT,
               "unknown element " + std::string(excerpt(local)) + " in " + std::string(TYPES[pt].name.view()), at,
               path_to(parent, local));
          return;
        }
        n.key = k;
        n.type = k->type;
        n.kind = TYPES[k->type].kind == type_kind::any_resource ? node_kind::wrapper : node_kind::element;
      }
    }
    const uint32_t index = add_node(n);
    if (index == NONE) return;
    for (size_t i = 0; atts && atts[i]; i += 2) {
      attribute(index, atts[i], atts[i + 1], at);
      if (failed_) return;
    }
  }

  void check_div_attributes(const XML_Char **atts, uint64_t at, uint32_t parent, std::string_view local) {
    for (size_t i = 0; atts[i]; i += 2) {
      std::string_view ns, name;
      split(atts[i], ns, name);
      (void)name;
      if (!ns.empty() && ns != XHTML_NS && ns != "http://www.w3.org/XML/1998/namespace") {
        fail(error_code::INVALID_RESOURCE, "an attribute of the narrative's div outside XHTML", at,
             path_to(parent, local));
        return;
      }
    }
  }

  void attribute(uint32_t index, const XML_Char *name, const XML_Char *value, uint64_t at) {
    std::string_view ns, local;
    split(name, ns, local);
    if (!ns.empty()) return;  // xsi:schemaLocation and other namespaces' attributes say nothing here
    node &n = nodes_[index];
    const type_kind k = TYPES[n.type].kind;
    if (local == "value" && k == type_kind::primitive) {
      n.value = keep(value);
    } else if (local == "id" && n.kind == node_kind::element) {
      n.id = keep(value);
    } else if (local == "url" && n.kind == node_kind::element && TYPES[n.type].name.view() == "Extension") {
      n.url = keep(value);
    } else {
      fail(error_code::UNKNOWN_ELEMENT, "unknown attribute " + std::string(excerpt(local)), at,
           path_to(index, std::string("@") + std::string(excerpt(local))));
    }
  }

  void end() {
    if (failed_) return;
    if (div_depth_ > 0) {
      if (--div_depth_ > 0) return;
      // The div as written: from its `<` to the end of its end tag (of the empty-element tag).
      const uint64_t stop = here() + static_cast<uint64_t>(XML_GetCurrentByteCount(parser_));
      if (!room_for_strings(static_cast<size_t>(stop - div_start_))) return;
      node &d = nodes_[open_.back()];
      d.value = span_ref{static_cast<uint32_t>(strings_.size()), static_cast<uint32_t>(stop - div_start_)};
      const char *div = input_.data() + div_start_;
      strings_.insert(strings_.end(), div, div + (stop - div_start_));
    }
    open_.pop_back();
    recent_.resize(recent_starts_.back());
    recent_starts_.pop_back();
  }
};

// (JSON position or tape index, XML offset) pairs, one per value written, in the order written.
using mark_table = std::vector<std::pair<uint32_t, uint64_t>>;

// The JSON form as text (the reference: what read() parses, and the way taken when the tape's
// bounds below do not hold). Commas are the sink's: one goes before a key or value that follows a
// value.
class text_sink {
 public:
  text_sink(const tree_builder &t, std::string &out, mark_table &marks) : t_(t), out_(out), marks_(marks) {}

  void mark(uint64_t xml_offset) { marks_.emplace_back(static_cast<uint32_t>(out_.size()), xml_offset); }
  bool begin_object() {
    comma();
    out_ += '{';
    return true;
  }
  bool begin_array() {
    comma();
    out_ += '[';
    return true;
  }
  void end_object() {
    out_ += '}';
    after_value_ = true;
  }
  void end_array() {
    out_ += ']';
    after_value_ = true;
  }
  void key(std::string_view k, bool underscore) {
    comma();
    out_ += '"';
    if (underscore) out_ += '_';
    out_ += k;  // names from the tables: nothing to escape
    out_ += "\":";
  }
  void string(std::string_view s) {
    comma();
    json::append_quoted(out_, s);
    after_value_ = true;
  }
  void string(span_ref s) { string(t_.text(s)); }
  void literal(span_ref s, bool /*is_number*/) {
    comma();
    out_ += t_.text(s);
    after_value_ = true;
  }
  void null() {
    comma();
    out_ += "null";
    after_value_ = true;
  }

 private:
  const tree_builder &t_;
  std::string &out_;
  mark_table &marks_;
  bool after_value_ = false;

  void comma() {
    if (after_value_) out_ += ',';
    after_value_ = false;
  }
};

// The JSON form as a tape (json::detail::node, as the JSON layer's parser writes it), without the
// text: what the text would read to. A value's offset is its index in the tape (unique and in
// document order, as the text's byte offsets are: FHIRPath's repeat() tells items apart by it);
// the mark table maps indexes to XML offsets as it maps the text's positions. Strings and numbers
// point into the tree's buffer of values, which becomes the document's strings; keys are added to
// it. A document deeper than the JSON reader allows is declined (begin_* returns false): the text
// way then gives the JSON reader's own error.
class tape_sink {
 public:
  tape_sink(json::detail::tape_data &d, strings_buffer &strings, mark_table &marks, size_t max_depth)
      : d_(d), strings_(strings), marks_(marks), max_depth_(max_depth) {}

  // At most the length the JSON text would have (a string's bytes counted as six, the longest
  // escape), so that the text's own bounds (max_bytes, 4 GiB) can be checked without writing it.
  uint64_t text_bound = 0;
  bool out_of_memory = false;

  void mark(uint64_t xml_offset) { marks_.emplace_back(static_cast<uint32_t>(d_.tape.size()), xml_offset); }
  bool begin_object() { return open(json::kind::object); }
  bool begin_array() { return open(json::kind::array); }
  void end_object() { close(); }
  void end_array() { close(); }
  void key(std::string_view k, bool underscore) {
    ++open_.back().count;
    text_bound += k.size() + 5;
    push(json::kind::string, 1, name(k, underscore), static_cast<uint32_t>(k.size() + (underscore ? 1 : 0)));
  }
  void string(std::string_view s) {
    const auto start = static_cast<uint32_t>(strings_.size());
    if (room(s.size())) strings_.insert(strings_.end(), s.begin(), s.end());
    text_bound += 6 * uint64_t{s.size()} + 3;
    value(json::kind::string, 0, start, static_cast<uint32_t>(s.size()));
  }
  void string(span_ref s) {
    text_bound += 6 * uint64_t{s.length} + 3;
    value(json::kind::string, 0, s.offset, s.length);
  }
  // A number or boolean the emitter has checked (a JSON number, `true` or `false`).
  void literal(span_ref s, bool is_number) {
    text_bound += s.length + 1;
    if (is_number) {
      const std::string_view text(strings_.data() + s.offset, s.length);
      const bool integer = text.find_first_of(".eE") == std::string_view::npos;
      value(json::kind::number, integer ? 1 : 0, s.offset, s.length);
    } else {
      value(json::kind::boolean, strings_[s.offset] == 't' ? 1 : 0, 0, 0);
    }
  }
  void null() {
    text_bound += 5;
    value(json::kind::null_value, 0, 0, 0);
  }

 private:
  struct frame {
    uint32_t index;
    uint32_t count;
    bool array;
  };
  json::detail::tape_data &d_;
  strings_buffer &strings_;
  mark_table &marks_;
  size_t max_depth_;
  std::vector<frame> open_;
  // Where each key name already sits in the strings (a small cache by the name's address: the
  // names come from the tables, so one address is one name).
  struct cached_name {
    const char *name = nullptr;
    bool underscore = false;
    uint32_t start = 0;
  };
  cached_name names_[64];

  uint32_t name(std::string_view k, bool underscore) {
    cached_name &c = names_[(reinterpret_cast<uintptr_t>(k.data()) >> 3 ^ (underscore ? 1 : 0)) & 63];
    if (c.name == k.data() && c.underscore == underscore) return c.start;
    const auto start = static_cast<uint32_t>(strings_.size());
    if (!room(k.size() + 1)) return start;
    if (underscore) strings_.push_back('_');
    strings_.insert(strings_.end(), k.begin(), k.end());
    c = cached_name{k.data(), underscore, start};
    return start;
  }

  void push(json::kind k, uint8_t flag, uint32_t start, uint32_t length) {
    if (d_.tape.size() == d_.tape.capacity() &&
        !quire::detail::grow_or_oom(d_.tape, d_.tape.size() + 1, "the XML's JSON form")) {
      out_of_memory = true;
      return;
    }
    const auto index = static_cast<uint32_t>(d_.tape.size());
    d_.tape.push_back(json::detail::node{index, start, length, index + 1, static_cast<uint8_t>(k), flag});
  }
  // Room for `n` more bytes of strings; false (and out_of_memory) when there is none.
  bool room(size_t n) {
    if (strings_.size() + n <= strings_.capacity()) return true;
    if (quire::detail::grow_or_oom(strings_, strings_.size() + n, "the XML's JSON form")) return true;
    out_of_memory = true;
    return false;
  }
  void value(json::kind k, uint8_t flag, uint32_t start, uint32_t length) {
    if (!open_.empty() && open_.back().array) ++open_.back().count;
    ++d_.value_count;
    push(k, flag, start, length);
  }
  bool open(json::kind k) {
    if (open_.size() + 1 > max_depth_) return false;
    text_bound += 3;
    const auto index = static_cast<uint32_t>(d_.tape.size());
    value(k, 0, 0, 0);
    open_.push_back(frame{index, 0, k == json::kind::array});
    d_.max_depth = std::max(d_.max_depth, open_.size());
    return true;
  }
  void close() {
    const frame f = open_.back();
    open_.pop_back();
    d_.tape[f.index].length = f.count;
    d_.tape[f.index].next = static_cast<uint32_t>(d_.tape.size());
  }
};

// Writes the tree as the JSON form into a sink, and marks where each value came from. Returns
// false when the sink declines (the tape's depth bound).
template <typename Sink>
class json_emitter {
 public:
  json_emitter(const tree_builder &t, Sink &sink) : t_(t), nodes_(t.nodes()), sink_(sink) {}

  bool resource(uint32_t r) {
    mark(r);
    if (!sink_.begin_object()) return false;
    sink_.key("resourceType", false);
    sink_.string(TYPES[nodes_[r].type].name.view());
    if (!members(r)) return false;
    sink_.end_object();
    return true;
  }

 private:
  const tree_builder &t_;
  const std::vector<node> &nodes_;
  Sink &sink_;

  void mark(uint32_t n) { sink_.mark(nodes_[n].offset); }

  // The members of an element's object (after resourceType, or after `{` and id/url).
  bool members(uint32_t parent) {
    for (uint32_t c = nodes_[parent].first_child; c != NONE; c = nodes_[c].next) {
      if (!nodes_[c].repeat && !group(c)) return false;
    }
    return true;
  }

  void primitive_value(uint32_t n) {
    const node &x = nodes_[n];
    mark(n);
    std::string_view v = t_.text(x.value);
    const primitive p = TYPES[x.type].prim;
    if (p == primitive::boolean) {
      if (v == "true" || v == "false") {
        sink_.literal(x.value, false);
        return;
      }
    } else if (!is_string_primitive(p) && is_json_number(v)) {
      sink_.literal(x.value, true);
      return;
    }
    sink_.string(x.value);  // a string, or a number or boolean that is not one: validation says so
  }

  static bool is_json_number(std::string_view v) {
    size_t i = 0;
    const size_t n = v.size();
    auto digit = [&](size_t j) { return j < n && v[j] >= '0' && v[j] <= '9'; };
    if (i < n && v[i] == '-') ++i;
    if (!digit(i)) return false;
    if (v[i] == '0') {
      ++i;
    } else {
      while (digit(i)) ++i;
    }
    if (i < n && v[i] == '.') {
      ++i;
      if (!digit(i)) return false;
      while (digit(i)) ++i;
    }
    if (i < n && (v[i] == 'e' || v[i] == 'E')) {
      ++i;
      if (i < n && (v[i] == '+' || v[i] == '-')) ++i;
      if (!digit(i)) return false;
      while (digit(i)) ++i;
    }
    return i == n;
  }

  bool has_companion(uint32_t n) const { return nodes_[n].id.set() || nodes_[n].first_child != NONE; }

  bool companion(uint32_t n) {
    mark(n);
    if (!sink_.begin_object()) return false;
    if (nodes_[n].id.set()) {
      sink_.key("id", false);
      sink_.string(nodes_[n].id);
    }
    if (!members(n)) return false;
    sink_.end_object();
    return true;
  }

  bool object(uint32_t n) {
    const node &x = nodes_[n];
    if (x.kind == node_kind::wrapper) {
      if (x.first_child != NONE) return resource(x.first_child);
      mark(n);
      if (!sink_.begin_object()) return false;
      sink_.end_object();
      return true;
    }
    mark(n);
    if (!sink_.begin_object()) return false;
    if (x.id.set()) {
      sink_.key("id", false);
      sink_.string(x.id);
    }
    if (x.url.set()) {
      sink_.key("url", false);
      sink_.string(x.url);
    }
    if (!members(n)) return false;
    sink_.end_object();
    return true;
  }

  // The next sibling after `n` under the same key; NONE after the last.
  uint32_t next_item(uint32_t n) const { return nodes_[n].next_same; }

  // Every child of `first_node`'s parent under its key, as one member (and its `_` companion).
  bool group(uint32_t first_node) {
    const key_def *k = nodes_[first_node].key;
    const bool array = ELEMENTS[k->element].is_array || next_item(first_node) != NONE;
    const std::string_view name = k->key.view();
    if (TYPES[k->type].kind == type_kind::primitive) {
      bool any_value = false, any_companion = false;
      for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
        any_value |= nodes_[c].value.set();
        any_companion |= has_companion(c);
      }
      if (any_value || !any_companion) {
        sink_.key(name, false);
        mark(first_node);
        if (array && !sink_.begin_array()) return false;
        for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
          if (nodes_[c].value.set()) {
            primitive_value(c);
          } else {
            mark(c);
            sink_.null();
          }
        }
        if (array) sink_.end_array();
      }
      if (any_companion) {
        sink_.key(name, true);
        mark(first_node);
        if (array && !sink_.begin_array()) return false;
        for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
          if (has_companion(c)) {
            if (!companion(c)) return false;
          } else {
            mark(c);
            sink_.null();
          }
        }
        if (array) sink_.end_array();
      }
      return true;
    }
    sink_.key(name, false);
    mark(first_node);
    if (array && !sink_.begin_array()) return false;
    for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
      if (!object(c)) return false;
    }
    if (array) sink_.end_array();
    return true;
  }
};

// Lines and columns of byte offsets, placed in increasing order in one pass over the text (its
// newlines counted, not listed: a table of line starts cost as much as the rest of the issues'
// work on a large Bundle).
class line_cursor {
 public:
  explicit line_cursor(std::string_view text) : text_(text) {}
  // `offset` at or after the previous one.
  void place(uint64_t offset, uint32_t &line, uint32_t &column) {
    const size_t stop = offset < text_.size() ? static_cast<size_t>(offset) : text_.size();
    if (stop > at_) {
      const char *from = text_.data() + at_, *to = text_.data() + stop;
      const auto newlines = static_cast<uint32_t>(count_byte(from, static_cast<size_t>(to - from), '\n'));
      if (newlines > 0) {
        line_ += newlines;
        const char *p = to;
        while (p[-1] != '\n') --p;
        line_start_ = static_cast<size_t>(p - text_.data());
      }
      at_ = stop;
    }
    line = line_;
    column = static_cast<uint32_t>(offset - line_start_ + 1);
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
};

uint64_t xml_offset(const std::vector<std::pair<uint32_t, uint64_t>> &marks, uint64_t json_offset) {
  auto it = std::upper_bound(marks.begin(), marks.end(), json_offset,
                             [](uint64_t o, const std::pair<uint32_t, uint64_t> &m) { return o < m.first; });
  return it == marks.begin() ? 0 : std::prev(it)->second;
}

}  // namespace

bool looks_like_xml(std::string_view input) noexcept {
  if (input.size() >= 3 && static_cast<unsigned char>(input[0]) == 0xEF &&
      static_cast<unsigned char>(input[1]) == 0xBB && static_cast<unsigned char>(input[2]) == 0xBF) {
    input.remove_prefix(3);
  }
  for (char c : input) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '<';
  }
  return false;
}

namespace detail {

result<resource> read_xml_with(std::string_view input, const options &opts, xml_form form) {
  auto located = [&](error_code code, std::string message) {
    quire::error e(code, std::move(message), 0);
    locate(e, input);
    return e;
  };
  if (input.size() > opts.max_bytes) {
    return located(error_code::DOCUMENT_TOO_LARGE, "the input has " + std::to_string(input.size()) +
                                                       " bytes, more than max_bytes (" +
                                                       std::to_string(opts.max_bytes) + ")");
  }
  if (input.find_first_not_of(" \t\n\r") == std::string_view::npos) {
    return located(error_code::EMPTY_INPUT, "no XML: the input is empty or white space only");
  }
  options json_opts = opts;
  json_opts.input_syntax = syntax::json;
  // The JSON form nests two levels per XML element at most (an array and its object).
  json_opts.max_depth = opts.max_depth * 2 + 2;
  mark_table marks;
  result<resource> r = quire::error(error_code::OUT_OF_MEMORY, "the XML was not read", 0);
  {
    // The tree lives only while the JSON form is written.
    tree_builder tree(input, opts);
    if (auto parsed = tree.parse(); !parsed) return std::move(parsed).error();
    if (tree.nodes().empty()) return located(error_code::INVALID_XML, "no root element");
    // Each element writes at most four marks (its member and its companion member, its value and
    // its companion).
    if (auto room =
            quire::detail::reserve_or_oom(marks, 4 * uint64_t{tree.nodes().size()} + 2, "the XML's offset table");
        !room) {
      return std::move(room).error();
    }
    bool built = false;
    if (form == xml_form::automatic) {
      // The tape: what the JSON text would read to, when the JSON reader's bounds certainly hold
      // (its depth, max_bytes and 4 GiB for the text); else the text below gives its own error.
      auto data = std::make_unique<json::detail::tape_data>();
      if (auto room =
              quire::detail::reserve_or_oom(data->tape, 3 * uint64_t{tree.nodes().size()} + 8, "the XML's JSON form");
          !room) {
        return std::move(room).error();
      }
      tape_sink sink(*data, tree.strings(), marks, std::min<size_t>(json_opts.max_depth, HARD_MAX_DEPTH));
      if (json_emitter<tape_sink>(tree, sink).resource(0)) {
        if (sink.out_of_memory)
          return quire::error(error_code::OUT_OF_MEMORY, "cannot allocate the XML's JSON form", 0);
        if (sink.text_bound <= opts.max_bytes && sink.text_bound < (uint64_t{1} << 32) - 1) {
          data->strings = std::move(tree.strings());
          // Numbers are read from the input: theirs is the buffer of values.
          data->input = std::string_view(data->strings.data(), data->strings.size());
          r = read_built_document(json::document(std::move(data)), json_opts);
          built = true;
        }
      }
      if (!built) marks.clear();
    }
    if (!built) {
      std::string json_text;
      // The JSON form is shorter than the XML but for a few companions.
      if (auto room =
              quire::detail::reserve_or_oom(json_text, input.size() + input.size() / 2 + 4096, "the XML's JSON form");
          !room) {
        return std::move(room).error();
      }
      text_sink sink(tree, json_text, marks);
      json_emitter<text_sink>(tree, sink).resource(0);
      r = read(json_text, json_opts);
    }
  }
  if (!r) {
    quire::error e = std::move(r).error();
    if (e.offset != quire::error::NO_OFFSET) {
      e.offset = xml_offset(marks, e.offset);
      line_cursor(input).place(e.offset, e.line, e.column);
    }
    return e;
  }
  std::vector<issue> &issues = resource_access::outcome(r.value()).issues;
  if (!issues.empty()) {
    // Placed in the order of their XML offsets (the walk reports a resource's own issues after
    // those inside it).
    std::vector<std::pair<uint64_t, uint32_t>> order;
    if (auto room = quire::detail::reserve_or_oom(order, issues.size(), "the issues' places"); !room) {
      return std::move(room).error();
    }
    for (size_t i = 0; i < issues.size(); ++i) {
      issues[i].offset = xml_offset(marks, issues[i].offset);
      order.emplace_back(issues[i].offset, static_cast<uint32_t>(i));
    }
    std::sort(order.begin(), order.end());
    line_cursor lines(input);
    for (const auto &[offset, i] : order) lines.place(offset, issues[i].line, issues[i].column);
  }
  return r;
}

}  // namespace detail

result<resource> read_xml(std::string_view input, const options &opts) {
  return detail::read_xml_with(input, opts, detail::xml_form::automatic);
}

}  // namespace quire::fhir
