// Writing canonical FHIR JSON from a read resource: the tape is re-emitted with each object's
// members in the definition's order (the generated tables list elements in snapshot order), so
// nothing is converted — numbers keep their exact text, strings are re-escaped minimally.
#include <algorithm>
#include <vector>

#include "fhir_internal.h"

namespace quire::fhir {
namespace {

using namespace detail;

class writer {
 public:
  writer(std::string &out, bool pretty) : out_(out), pretty_(pretty) {}

  void write_value(json::value v, uint16_t type, size_t depth) {
    switch (v.type()) {
      case json::kind::object: write_object(v, type, depth); break;
      case json::kind::array: write_array(v, type, depth); break;
      case json::kind::null_value: out_ += "null"; break;
      case json::kind::boolean: out_ += v.get_bool().value() ? "true" : "false"; break;
      case json::kind::number: out_ += v.get_number_text().value(); break;
      case json::kind::string: json::append_quoted(out_, v.get_string().value()); break;
    }
  }

 private:
  struct member_slot {
    uint32_t rank;     // 0 resourceType, 1 known element, 2 unknown
    uint32_t element;  // ELEMENTS index: the definition's order
    bool underscore;
    uint32_t member;  // input order, which breaks ties
    uint16_t type;    // the value's type; NO_TYPE for unknown members (written as they are)
    std::string_view key;
    json::value val;
  };

  std::string &out_;
  bool pretty_;
  std::vector<member_slot> slots_;  // a stack shared by the nested objects being written

  void newline(size_t depth) {
    if (!pretty_) return;
    out_ += '\n';
    out_.append(depth * 2, ' ');
  }

  void write_array(json::value v, uint16_t type, size_t depth) {
    auto arr = v.get_array().value();
    if (arr.size() == 0) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    bool first = true;
    for (auto item : arr) {
      if (!first) out_ += ',';
      first = false;
      newline(depth + 1);
      write_value(item, type, depth + 1);
    }
    newline(depth);
    out_ += ']';
  }

  void write_object(json::value v, uint16_t type, size_t depth) {
    auto obj = v.get_object().value();
    if (obj.size() == 0) {
      out_ += "{}";
      return;
    }
    if (type != NO_TYPE && TYPES[type].kind == type_kind::any_resource) {
      auto rt = obj.find("resourceType");
      type = rt && rt->type() == json::kind::string ? find_resource_type(rt->get_string().value()) : NO_TYPE;
    }
    const bool is_resource = type != NO_TYPE && TYPES[type].kind == type_kind::resource;
    const size_t base = slots_.size();
    uint32_t member = 0;
    for (auto m : obj) {
      member_slot s{2, 0, false, member++, NO_TYPE, m.key, m.val};
      if (type != NO_TYPE) {
        if (is_resource && m.key == "resourceType") {
          s.rank = 0;
        } else {
          bool underscore = m.key.size() > 1 && m.key[0] == '_';
          const key_def *k = find_key_hashed(type, underscore ? m.key.substr(1) : m.key);
          if (k && (!underscore || TYPES[k->type].kind == type_kind::primitive)) {
            s.rank = 1;
            s.element = k->element;
            s.underscore = underscore;
            s.type = k->type;
          }
        }
      }
      slots_.push_back(s);
    }
    std::stable_sort(slots_.begin() + static_cast<std::ptrdiff_t>(base), slots_.end(),
                     [](const member_slot &a, const member_slot &b) {
                       if (a.rank != b.rank) return a.rank < b.rank;
                       if (a.element != b.element) return a.element < b.element;
                       return a.underscore < b.underscore;
                     });
    out_ += '{';
    const size_t end = slots_.size();
    for (size_t i = base; i < end; ++i) {
      member_slot s = slots_[i];  // a copy: writing the value below may grow slots_
      if (i != base) out_ += ',';
      newline(depth + 1);
      json::append_quoted(out_, s.key);
      out_ += pretty_ ? ": " : ":";
      write_value(s.val, s.type, depth + 1);
    }
    slots_.resize(base);
    newline(depth);
    out_ += '}';
  }
};

}  // namespace

std::string write(const resource &r, const write_options &w) {
  std::string out;
  if (r.document().value_count() == 0) return out;
  out.reserve(r.document().input().size() + (w.pretty ? r.document().input().size() / 2 : 0));
  writer wr(out, w.pretty);
  wr.write_value(r.root(), resource_access::type(r), 0);
  return out;
}

result<std::string> format(std::string_view input, const write_options &w, const options &opts) {
  auto r = read(input, opts);
  if (!r) return std::move(r).error();
  return write(r.value(), w);
}

result<void> for_each_entry(const resource &bundle, const std::function<bool(const entry &)> &visit) {
  if (bundle.document().value_count() == 0 || bundle.resource_type() != "Bundle") {
    return quire::error(
        error_code::WRONG_TYPE,
        "expected a Bundle, found " + std::string(bundle.document().value_count() ? bundle.resource_type() : "nothing"),
        0);
  }
  auto entries = bundle.root().get_object().value().find("entry");
  if (!entries || entries->type() != json::kind::array) return {};
  size_t index = 0;
  for (auto item : entries->get_array().value()) {
    entry e;
    e.index = index++;
    e.value = item;
    if (item.type() == json::kind::object) {
      auto obj = item.get_object().value();
      if (auto url = obj.find("fullUrl"); url && url->type() == json::kind::string)
        e.full_url = url->get_string().value();
      if (auto res = obj.find("resource"); res && res->type() == json::kind::object) {
        e.resource = *res;
        if (auto rt = res->get_object().value().find("resourceType"); rt && rt->type() == json::kind::string) {
          e.resource_type = rt->get_string().value();
        }
      }
    }
    if (!visit(e)) break;
  }
  return {};
}

}  // namespace quire::fhir
