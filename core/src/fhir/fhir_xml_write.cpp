// Writing a read resource in R4's XML form: each object's members in the definition's order (as
// the JSON writer orders them), a primitive and its `_name` companion merged into one element
// (`value` and `id` attributes, `extension` children), Element.id and Extension.url as attributes,
// resources inside their wrapper element, the narrative's div as its XHTML text.
#include <expat.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "fhir_internal.h"

namespace quire::fhir {
namespace {

using namespace detail;

constexpr std::string_view FHIR_NS = "http://hl7.org/fhir";

struct div_check {
  int depth = 0;
  int roots = 0;
  bool bad = false;
  static void XMLCALL on_start(void *self, const XML_Char *name, const XML_Char **) {
    auto *c = static_cast<div_check *>(self);
    if (c->depth++ == 0) {
      ++c->roots;
      if (std::string_view(name) != "http://www.w3.org/1999/xhtml div") c->bad = true;
    }
  }
  static void XMLCALL on_end(void *self, const XML_Char *) { --static_cast<div_check *>(self)->depth; }
  static void XMLCALL on_doctype(void *self, const XML_Char *, const XML_Char *, const XML_Char *, int) {
    static_cast<div_check *>(self)->bad = true;
  }
};

// Whether `div` is one well-formed XHTML div element (and nothing a DOCTYPE could expand).
bool well_formed_div(std::string_view div) {
  XML_Parser p = XML_ParserCreateNS("UTF-8", ' ');
  if (!p) return false;
  div_check c;
  XML_SetUserData(p, &c);
  XML_SetElementHandler(p, &div_check::on_start, &div_check::on_end);
  XML_SetStartDoctypeDeclHandler(p, &div_check::on_doctype);
  bool ok = div.size() < (size_t{1} << 30) &&
            XML_Parse(p, div.data(), static_cast<int>(div.size()), XML_TRUE) == XML_STATUS_OK;
  XML_ParserFree(p);
  return ok && !c.bad && c.roots == 1;
}

class xml_writer {
 public:
  xml_writer(std::string &out, bool pretty) : out_(out), pretty_(pretty) {}

  result<void> resource(json::value v, uint16_t type, size_t depth, bool root) {
    if (v.type() != json::kind::object) return fail("a resource that is not an object");
    auto obj = v.get_object().value();
    if (type == NO_TYPE || TYPES[type].kind != type_kind::resource) {
      auto rt = obj.find("resourceType");
      type = rt && rt->type() == json::kind::string ? find_resource_type(rt->get_string().value()) : NO_TYPE;
      if (type == NO_TYPE) return fail("a resource without a known resourceType");
    }
    const std::string_view name = TYPES[type].name.view();
    indent(depth);
    out_ += '<';
    out_ += name;
    if (root) {
      out_ += " xmlns=\"";
      out_ += FHIR_NS;
      out_ += '"';
    }
    out_ += '>';
    if (auto r = members(obj, type, depth + 1); !r) return r;
    indent(depth);
    out_ += "</";
    out_ += name;
    out_ += '>';
    return {};
  }

 private:
  struct slot {
    uint32_t element;
    bool underscore;
    uint32_t member;
    const key_def *key;
    json::value val;
  };

  std::string &out_;
  bool pretty_;
  bool first_line_ = true;
  std::vector<slot> slots_;  // a stack shared by the nested objects being written

  static quire::error fail(std::string what, std::string_view where = {}) {
    quire::error e(error_code::INVALID_RESOURCE,
                   "cannot write as XML: " + std::move(what) + (where.empty() ? "" : " (" + std::string(where) + ")"));
    return e;
  }

  void indent(size_t depth) {
    if (!pretty_) return;
    if (!first_line_) out_ += '\n';
    first_line_ = false;
    out_.append(depth * 2, ' ');
  }

  result<void> escaped(std::string_view s) {
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      switch (c) {
        case '&': out_ += "&amp;"; break;
        case '<': out_ += "&lt;"; break;
        case '>': out_ += "&gt;"; break;
        case '"': out_ += "&quot;"; break;
        case '\t': out_ += "&#9;"; break;
        case '\n': out_ += "&#10;"; break;
        case '\r': out_ += "&#13;"; break;
        default:
          if (c < 0x20) return fail("a control character XML 1.0 cannot hold");
          out_ += ch;
      }
    }
    return {};
  }

  result<void> attribute(std::string_view name, json::value v) {
    out_ += ' ';
    out_ += name;
    out_ += "=\"";
    switch (v.type()) {
      case json::kind::string:
        if (auto r = escaped(v.get_string().value()); !r) return r;
        break;
      case json::kind::number: out_ += v.get_number_text().value(); break;
      case json::kind::boolean: out_ += v.get_bool().value() ? "true" : "false"; break;
      default: return fail("an attribute value that is not a string, number or boolean", name);
    }
    out_ += '"';
    return {};
  }

  // The members of an object of `type`, as child elements (attributes were written already).
  result<void> members(json::object obj, uint16_t type, size_t depth) {
    const bool is_resource = TYPES[type].kind == type_kind::resource;
    const bool is_extension = TYPES[type].name.view() == "Extension";
    const size_t base = slots_.size();
    uint32_t member = 0;
    for (auto m : obj) {
      ++member;
      if (is_resource && m.key == "resourceType") continue;
      if (!is_resource && m.key == "id") continue;
      if (is_extension && m.key == "url") continue;
      const bool underscore = m.key.size() > 1 && m.key[0] == '_';
      const key_def *k = find_key(type, underscore ? m.key.substr(1) : m.key);
      if (!k || (underscore && TYPES[k->type].kind != type_kind::primitive)) {
        slots_.resize(base);
        return fail("an element the definitions do not have", m.key);
      }
      slots_.push_back(slot{k->element, underscore, member, k, m.val});
    }
    std::stable_sort(slots_.begin() + static_cast<std::ptrdiff_t>(base), slots_.end(),
                     [](const slot &a, const slot &b) {
                       if (a.element != b.element) return a.element < b.element;
                       if (a.key != b.key) return a.key < b.key;
                       return a.underscore < b.underscore;
                     });
    result<void> r;
    const size_t end = slots_.size();
    for (size_t i = base; i < end && r; ++i) {
      const slot s = slots_[i];  // a copy: writing below may grow slots_
      if (TYPES[s.key->type].kind == type_kind::primitive) {
        json::value value, extra;
        bool has_value = false, has_extra = false;
        if (s.underscore) {
          extra = s.val;
          has_extra = true;
        } else {
          value = s.val;
          has_value = true;
          if (i + 1 < end && slots_[i + 1].key == s.key && slots_[i + 1].underscore) {
            extra = slots_[i + 1].val;
            has_extra = true;
            ++i;
          }
        }
        r = primitive_elements(s.key, has_value ? &value : nullptr, has_extra ? &extra : nullptr, depth);
      } else if (s.val.type() == json::kind::array) {
        for (auto item : s.val.get_array().value()) {
          r = element(s.key, item, depth);
          if (!r) break;
        }
      } else {
        r = element(s.key, s.val, depth);
      }
    }
    slots_.resize(base);
    return r;
  }

  static size_t items(const json::value *v) {
    if (!v) return 0;
    return v->type() == json::kind::array ? v->get_array().value().size() : 1;
  }

  result<void> primitive_elements(const key_def *k, const json::value *value, const json::value *extra, size_t depth) {
    const std::string_view name = k->key.view();
    const size_t n = std::max(items(value), items(extra));
    const bool value_array = value && value->type() == json::kind::array;
    const bool extra_array = extra && extra->type() == json::kind::array;
    // Arrays are walked by index; a primitive array is short, and the tape has no random access.
    std::vector<json::value> vs, es;
    if (value_array) {
      for (auto x : value->get_array().value()) vs.push_back(x);
    }
    if (extra_array) {
      for (auto x : extra->get_array().value()) es.push_back(x);
    }
    for (size_t i = 0; i < n; ++i) {
      json::value v, e;
      bool hv = false, he = false, null_value = false;
      if (value) {
        if (value_array) {
          if (i < vs.size()) v = vs[i], hv = v.type() != json::kind::null_value, null_value = !hv;
        } else if (i == 0) {
          v = *value, hv = v.type() != json::kind::null_value, null_value = !hv;
        }
      }
      if (extra) {
        if (extra_array) {
          if (i < es.size()) e = es[i], he = e.type() != json::kind::null_value, null_value |= !he;
        } else if (i == 0) {
          e = *extra, he = e.type() != json::kind::null_value;
        }
      }
      if (!hv && !he) {
        // A null with nothing beside it (a value, or an item of either array) is what read_xml
        // makes of an empty element (`<unit/>`, `<given/>`; invalid, and reported by validation):
        // it is written back as one, so it reads back the same.
        if (null_value) {
          indent(depth);
          out_ += '<';
          out_ += name;
          out_ += "/>";
        }
        continue;
      }
      if (TYPES[k->type].prim == primitive::xhtml && hv && !he) {
        if (v.type() != json::kind::string || !well_formed_div(v.get_string().value())) {
          return fail("a narrative div that is not one well-formed XHTML div element", name);
        }
        indent(depth);
        out_ += v.get_string().value();
        continue;
      }
      indent(depth);
      out_ += '<';
      out_ += name;
      std::optional<json::object> eo;
      if (he) {
        if (e.type() != json::kind::object) return fail("a primitive's companion that is not an object", name);
        eo = e.get_object().value();
        if (auto id = eo->find("id")) {
          if (auto r = attribute("id", *id); !r) return r;
        }
      }
      if (hv) {
        if (v.type() == json::kind::object || v.type() == json::kind::array) {
          return fail("a primitive whose value is an object or an array", name);
        }
        if (auto r = attribute("value", v); !r) return r;
      }
      bool children = false;
      if (he) {
        for (auto m : *eo) {
          if (m.key != "id") children = true;
        }
      }
      if (!children) {
        out_ += "/>";
        continue;
      }
      out_ += '>';
      if (auto r = members(*eo, k->type, depth + 1); !r) return r;
      indent(depth);
      out_ += "</";
      out_ += name;
      out_ += '>';
    }
    return {};
  }

  result<void> element(const key_def *k, json::value v, size_t depth) {
    const std::string_view name = k->key.view();
    if (v.type() != json::kind::object) return fail("an element that is not an object", name);
    const type_kind kind = TYPES[k->type].kind;
    indent(depth);
    out_ += '<';
    out_ += name;
    if (kind == type_kind::any_resource) {
      out_ += '>';
      if (auto r = resource(v, NO_TYPE, depth + 1, false); !r) return r;
    } else {
      auto obj = v.get_object().value();
      if (auto id = obj.find("id")) {
        if (auto r = attribute("id", *id); !r) return r;
      }
      const bool is_extension = TYPES[k->type].name.view() == "Extension";
      if (is_extension) {
        if (auto url = obj.find("url")) {
          if (auto r = attribute("url", *url); !r) return r;
        }
      }
      bool children = false;
      for (auto m : obj) {
        if (m.key != "id" && !(is_extension && m.key == "url")) children = true;
      }
      if (!children) {
        out_ += "/>";
        return {};
      }
      out_ += '>';
      if (auto r = members(obj, k->type, depth + 1); !r) return r;
    }
    indent(depth);
    out_ += "</";
    out_ += name;
    out_ += '>';
    return {};
  }
};

}  // namespace

result<std::string> write_xml(const resource &r, const write_options &w) {
  std::string out;
  if (r.document().value_count() == 0) return out;
  out.reserve(r.document().input().size() * 2);
  xml_writer x(out, w.pretty);
  if (auto done = x.resource(r.root(), resource_access::type(r), 0, true); !done) return std::move(done).error();
  if (w.pretty) out += '\n';
  return out;
}

}  // namespace quire::fhir
