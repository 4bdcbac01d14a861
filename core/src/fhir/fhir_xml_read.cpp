// Reading FHIR R4 XML. expat parses the document (forced to UTF-8, namespaces on, no DTD: a
// DOCTYPE stops it before anything in it is read); its events build a tree of the elements (one
// node each, strings in one buffer); the tree is written out as the resource's JSON form, which
// read() then reads and validates as any JSON resource. A table of (JSON offset, XML offset) pairs,
// one per value written, moves every issue and error back to the XML element it is about.
#include <expat.h>

#include <algorithm>
#include <cstring>
#include <string>
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

struct span_ref {
  uint32_t offset = 0;
  uint32_t length = 0;
  bool set = false;
};

enum class node_kind : uint8_t { resource, element, wrapper, div };

struct node {
  uint32_t parent = NONE;
  uint32_t first_child = NONE;
  uint32_t last_child = NONE;
  uint32_t next = NONE;
  const key_def *key = nullptr;  // under the parent's type (NONE for a resource)
  uint16_t type = NO_TYPE;       // the element's own type
  node_kind kind = node_kind::element;
  uint64_t offset = 0;  // of its `<` in the XML
  span_ref value, id, url;
};

// The hash salt of every parser: from the system's entropy where there is some (expat would
// otherwise read the clock), never 0 (which asks expat to make its own).
unsigned long hash_salt() noexcept {
  unsigned long salt = 0;
#if defined(__EMSCRIPTEN__) || defined(__unix__) || defined(__APPLE__)
  if (getentropy(&salt, sizeof salt) != 0) salt = 0;
#endif
  return salt ? salt : 0x9E3779B97F4A7C15ull & static_cast<unsigned long>(-1);
}

class tree_builder {
 public:
  tree_builder(std::string_view input, const options &opts)
      : input_(input), max_depth_(std::min<size_t>(opts.max_depth, HARD_MAX_DEPTH)) {}

  result<void> parse() {
    XML_Parser p = XML_ParserCreateNS("UTF-8", NS_SEP);
    if (!p) return quire::error(error_code::OUT_OF_MEMORY, "cannot create the XML parser");
    parser_ = p;
    XML_SetHashSalt(p, hash_salt());
    XML_SetUserData(p, this);
    XML_SetElementHandler(p, &tree_builder::on_start, &tree_builder::on_end);
    XML_SetCharacterDataHandler(p, &tree_builder::on_text);
    XML_SetStartDoctypeDeclHandler(p, &tree_builder::on_doctype);
    XML_SetEntityDeclHandler(p, &tree_builder::on_entity);
    XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_NEVER);
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
    XML_ParserFree(p);
    parser_ = nullptr;
    if (failed_) return std::move(error_);
    return {};
  }

  const std::vector<node> &nodes() const noexcept { return nodes_; }
  std::string_view text(span_ref s) const noexcept { return std::string_view(strings_).substr(s.offset, s.length); }

 private:
  std::string_view input_;
  size_t max_depth_;
  XML_Parser parser_ = nullptr;
  std::vector<node> nodes_;
  std::vector<uint32_t> open_;  // the open elements (outside a div)
  std::string strings_;
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
    span_ref r{static_cast<uint32_t>(strings_.size()), static_cast<uint32_t>(n), true};
    strings_.append(s, n);
    return r;
  }

  static std::string_view excerpt(std::string_view s) { return s.substr(0, 64); }

  static void split(const XML_Char *name, std::string_view &ns, std::string_view &local) {
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
    }
    open_.push_back(index);
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
        if (!attribute_name) k = find_key(pt, local);
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
      d.value = span_ref{static_cast<uint32_t>(strings_.size()), static_cast<uint32_t>(stop - div_start_), true};
      strings_.append(input_.substr(div_start_, stop - div_start_));
    }
    open_.pop_back();
  }
};

// Writes the tree as JSON and records where each value came from.
class json_emitter {
 public:
  json_emitter(const tree_builder &t, std::string &out, std::vector<std::pair<uint32_t, uint64_t>> &marks)
      : t_(t), nodes_(t.nodes()), out_(out), marks_(marks) {}

  void resource(uint32_t r) {
    mark(r);
    out_ += "{\"resourceType\":";
    json::append_quoted(out_, TYPES[nodes_[r].type].name.view());
    members(r, false);
    out_ += '}';
  }

 private:
  const tree_builder &t_;
  const std::vector<node> &nodes_;
  std::string &out_;
  std::vector<std::pair<uint32_t, uint64_t>> &marks_;
  std::vector<const key_def *> done_;  // a stack of the keys written, per object being written

  void mark(uint32_t n) { marks_.emplace_back(static_cast<uint32_t>(out_.size()), nodes_[n].offset); }

  void key(std::string_view k, bool &first, bool underscore = false) {
    if (!first) out_ += ',';
    first = false;
    out_ += '"';
    if (underscore) out_ += '_';
    out_ += k;  // names from the tables: nothing to escape
    out_ += "\":";
  }

  // The members of an element's object (after resourceType, or after `{` and id/url).
  void members(uint32_t parent, bool first) {
    const size_t base = done_.size();
    for (uint32_t c = nodes_[parent].first_child; c != NONE; c = nodes_[c].next) {
      const key_def *k = nodes_[c].key;
      if (std::find(done_.begin() + static_cast<std::ptrdiff_t>(base), done_.end(), k) != done_.end()) continue;
      done_.push_back(k);
      group(c, first);
    }
    done_.resize(base);
  }

  void primitive_value(uint32_t n) {
    const node &x = nodes_[n];
    mark(n);
    std::string_view v = t_.text(x.value);
    const primitive p = TYPES[x.type].prim;
    if (p == primitive::boolean) {
      if (v == "true" || v == "false") {
        out_ += v;
        return;
      }
    } else if (!is_string_primitive(p) && is_json_number(v)) {
      out_ += v;
      return;
    }
    json::append_quoted(out_, v);  // a string, or a number or boolean that is not one: validation says so
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

  bool has_companion(uint32_t n) const { return nodes_[n].id.set || nodes_[n].first_child != NONE; }

  void companion(uint32_t n) {
    mark(n);
    out_ += '{';
    bool first = true;
    if (nodes_[n].id.set) {
      key("id", first);
      json::append_quoted(out_, t_.text(nodes_[n].id));
    }
    members(n, first);
    out_ += '}';
  }

  void object(uint32_t n) {
    const node &x = nodes_[n];
    if (x.kind == node_kind::wrapper) {
      if (x.first_child == NONE) {
        mark(n);
        out_ += "{}";
      } else {
        resource(x.first_child);
      }
      return;
    }
    mark(n);
    out_ += '{';
    bool first = true;
    if (x.id.set) {
      key("id", first);
      json::append_quoted(out_, t_.text(x.id));
    }
    if (x.url.set) {
      key("url", first);
      json::append_quoted(out_, t_.text(x.url));
    }
    members(n, first);
    out_ += '}';
  }

  // The next sibling after `n` under the same key; NONE after the last.
  uint32_t next_item(uint32_t n) const {
    const key_def *k = nodes_[n].key;
    for (uint32_t c = nodes_[n].next; c != NONE; c = nodes_[c].next) {
      if (nodes_[c].key == k) return c;
    }
    return NONE;
  }

  // Every child of `first_node`'s parent under its key, as one member (and its `_` companion).
  // The siblings are walked in place (no list of them is made): a group is short, or alone.
  void group(uint32_t first_node, bool &first) {
    const key_def *k = nodes_[first_node].key;
    const bool array = ELEMENTS[k->element].is_array || next_item(first_node) != NONE;
    const std::string_view name = k->key.view();
    if (TYPES[k->type].kind == type_kind::primitive) {
      bool any_value = false, any_companion = false;
      for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
        any_value |= nodes_[c].value.set;
        any_companion |= has_companion(c);
      }
      if (any_value || !any_companion) {
        key(name, first);
        mark(first_node);
        if (array) out_ += '[';
        for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
          if (c != first_node) out_ += ',';
          if (nodes_[c].value.set) {
            primitive_value(c);
          } else {
            mark(c);
            out_ += "null";
          }
        }
        if (array) out_ += ']';
      }
      if (any_companion) {
        key(name, first, true);
        mark(first_node);
        if (array) out_ += '[';
        for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
          if (c != first_node) out_ += ',';
          if (has_companion(c)) {
            companion(c);
          } else {
            mark(c);
            out_ += "null";
          }
        }
        if (array) out_ += ']';
      }
      return;
    }
    key(name, first);
    mark(first_node);
    if (array) out_ += '[';
    for (uint32_t c = first_node; c != NONE; c = next_item(c)) {
      if (c != first_node) out_ += ',';
      object(c);
    }
    if (array) out_ += ']';
  }
};

// Byte offsets to lines and columns, by a table of line starts made once.
class line_table {
 public:
  explicit line_table(std::string_view text) {
    starts_.push_back(0);
    for (size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1)) {
      starts_.push_back(at + 1);
    }
  }
  void place(uint64_t offset, uint32_t &line, uint32_t &column) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    const size_t l = static_cast<size_t>(it - starts_.begin());
    line = static_cast<uint32_t>(l);
    column = static_cast<uint32_t>(offset - starts_[l - 1] + 1);
  }

 private:
  std::vector<uint64_t> starts_;
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

result<resource> read_xml(std::string_view input, const options &opts) {
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
  std::string json_text;
  std::vector<std::pair<uint32_t, uint64_t>> marks;
  {
    // The tree lives only while the JSON form is written.
    tree_builder tree(input, opts);
    if (auto parsed = tree.parse(); !parsed) return std::move(parsed).error();
    if (tree.nodes().empty()) return located(error_code::INVALID_XML, "no root element");
    // The JSON form is shorter than the XML but for a few companions; each element writes at
    // most four marks (its member and its companion member, its value and its companion).
    if (auto room =
            quire::detail::reserve_or_oom(json_text, input.size() + input.size() / 2 + 4096, "the XML's JSON form");
        !room) {
      return std::move(room).error();
    }
    if (auto room =
            quire::detail::reserve_or_oom(marks, 4 * uint64_t{tree.nodes().size()} + 2, "the XML's offset table");
        !room) {
      return std::move(room).error();
    }
    json_emitter(tree, json_text, marks).resource(0);
  }

  options json_opts = opts;
  json_opts.input_syntax = syntax::json;
  // The JSON form nests two levels per XML element at most (an array and its object).
  json_opts.max_depth = opts.max_depth * 2 + 2;
  auto r = read(json_text, json_opts);
  line_table lines(input);
  if (!r) {
    quire::error e = std::move(r).error();
    if (e.offset != quire::error::NO_OFFSET) {
      e.offset = xml_offset(marks, e.offset);
      lines.place(e.offset, e.line, e.column);
    }
    return e;
  }
  for (issue &i : resource_access::outcome(r.value()).issues) {
    i.offset = xml_offset(marks, i.offset);
    lines.place(i.offset, i.line, i.column);
  }
  return r;
}

}  // namespace quire::fhir
