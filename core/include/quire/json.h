// quire/json.h — the JSON layer: parse, check and walk JSON documents with simdjson underneath.
//
// parse() reads a whole document into a compact tape (one pass of simdjson's On-Demand parser,
// every value visited, so the whole document is validated). The tape keeps, for every value, its
// byte offset in the input, and for numbers their exact text: FHIR decimals keep `0.700`, large
// integers are never rounded. Strings are unescaped once into the document's own buffer.
//
//   auto doc = quire::json::parse(bytes);
//   if (!doc) return doc.error();
//   for (auto [key, v] : doc->root().get_object().value()) { ... }
//
// IMPORTANT: lifetime. parse(std::string_view) copies the input (simdjson reads 64 bytes past the
// end, so it needs a padded buffer anyway): the document is self-contained. parse(byte_source)
// borrows the source's bytes when it can (mapped or handed-over memory with padding): the source
// must then outlive the document. value, object and array are small views into their document:
// valid while the document lives; moving a document keeps them valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/platform.h"
#include "quire/result.h"

namespace quire::json {

/// Bounds that make hostile input cost a bounded amount. Exceeding one is a typed error.
struct limits {
  static constexpr size_t DEFAULT_MAX_DEPTH = 1024;
  static constexpr uint64_t DEFAULT_MAX_DOCUMENT_BYTES = uint64_t{1} << 30;  // 1 GiB

  size_t max_depth = DEFAULT_MAX_DEPTH;                      ///< MAX_DEPTH_EXCEEDED beyond
  uint64_t max_document_bytes = DEFAULT_MAX_DOCUMENT_BYTES;  ///< DOCUMENT_TOO_LARGE beyond (hard cap 4 GiB - 1)
};

/// The kind of a JSON value.
enum class kind : uint8_t { null_value, boolean, number, string, array, object };

/// "null", "boolean", "number", "string", "array", "object".
std::string_view kind_name(kind k) noexcept;

class document;
class object;
class array;

namespace detail {
/// One entry of the tape. Containers store the index one past their last descendant in `next`
/// and their child count in `length`; strings (and keys) store their place in the string buffer;
/// numbers their place in the input. An object's entries alternate key, value.
struct node {
  uint32_t offset;  ///< byte offset in the input
  uint32_t start;   ///< strings: start in the string buffer; numbers: start in the input
  uint32_t length;  ///< strings/numbers: byte length; containers: child count (members for objects)
  uint32_t next;    ///< index of the next sibling (containers: one past the last descendant)
  uint8_t type;     ///< a json::kind
  uint8_t flag;     ///< booleans: the value; numbers: 1 when the text is an integer
};
/// std::allocator, except that an element made without arguments is left uninitialized (as
/// `new T` does). The parser sizes the tape and the string buffer to an upper bound before it
/// writes them once, front to back; resize() would first zero them, a pass over as many bytes as
/// the input for nothing.
template <typename T>
struct uninitialized_allocator : std::allocator<T> {
  using value_type = T;
  uninitialized_allocator() noexcept = default;
  template <typename U>
  uninitialized_allocator(const uninitialized_allocator<U> &) noexcept {}
  template <typename U>
  struct rebind {
    using other = uninitialized_allocator<U>;
  };
  template <typename U>
  void construct(U *p) noexcept {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(static_cast<Args &&>(args)...);
  }
};
/// What a document owns, on the heap so that views survive moving the document.
struct tape_data {
  std::string_view input;
  std::unique_ptr<char[]> owned_input;  // the padded copy, when the document made one
  size_t owned_capacity = 0;            // bytes of owned_input (parse_into() reuses it)
  std::vector<node, uninitialized_allocator<node>> tape;
  std::vector<char, uninitialized_allocator<char>> strings;  // keys' and strings' unescaped bytes
  size_t max_depth = 0;
  size_t value_count = 0;
};
/// A document and the index of one of its nodes: the state of value, object and array. In wasm32
/// both fit in one 64-bit integer, and there a class whose only member is a scalar is passed to a
/// function and returned from one as that scalar, in a register; a class of two members is passed
/// as a pointer to a copy in the stack in linear memory, written as two 32-bit words and read back
/// as one 64-bit word (a store the processor cannot forward to the load) at every call. A walk
/// that passes a value to a function per value (a recursive one does) paid that per value: the
/// walk alone ran four times slower in wasm than natively. Natively the two members are passed in
/// two registers already.
#if UINTPTR_MAX <= UINT32_MAX
class node_ref {
 public:
  node_ref() = default;
  node_ref(const tape_data *doc, uint32_t index) noexcept
      : bits_(uint64_t{index} << 32 | reinterpret_cast<uintptr_t>(doc)) {}
  const tape_data *doc() const noexcept {
    return reinterpret_cast<const tape_data *>(static_cast<uintptr_t>(static_cast<uint32_t>(bits_)));
  }
  uint32_t index() const noexcept { return static_cast<uint32_t>(bits_ >> 32); }

 private:
  uint64_t bits_ = 0;
};
#else
class node_ref {
 public:
  node_ref() = default;
  node_ref(const tape_data *doc, uint32_t index) noexcept : doc_(doc), index_(index) {}
  const tape_data *doc() const noexcept { return doc_; }
  uint32_t index() const noexcept { return index_; }

 private:
  const tape_data *doc_ = nullptr;
  uint32_t index_ = 0;
};
#endif

/// WRONG_TYPE for the value at `index` when `wanted` was asked (json_value.cpp): the accessors'
/// error path, out of line so that the inline accessors stay small.
quire::error wrong_type(const tape_data *doc, uint32_t index, std::string_view wanted);
}  // namespace detail

/// One value of a document. Cheap to copy; valid while its document lives.
class value {
 public:
  value() = default;
  kind type() const noexcept;
  bool is_null() const noexcept { return type() == kind::null_value; }
  /// Byte offset of the value's first byte in the input.
  uint64_t offset() const noexcept;

  /// WRONG_TYPE (with the offset) when the value is not of the asked kind.
  result<bool> get_bool() const;
  /// The string, unescaped, as UTF-8.
  result<std::string_view> get_string() const;
  /// The exact text of a number as written in the input (`0.700`, `1e400`, 30 digits...).
  result<std::string_view> get_number_text() const;
  /// The number as a double (nearest; may be inf for huge exponents).
  result<double> get_double() const;
  /// The number as an int64; WRONG_TYPE when it has a fraction or exponent, OUT_OF_RANGE when it
  /// does not fit.
  result<int64_t> get_int64() const;
  result<object> get_object() const;
  result<array> get_array() const;

  /// The value at a JSON Pointer (RFC 6901) below this one; nullopt when absent.
  result<std::optional<value>> at_pointer(std::string_view pointer) const;

 private:
  friend class object;
  friend class array;
  friend class document;
  value(const detail::tape_data *d, uint32_t i) : ref_(d, i) {}
  const detail::tape_data *doc() const noexcept { return ref_.doc(); }
  uint32_t index() const noexcept { return ref_.index(); }
  detail::node_ref ref_;
};

/// A member of an object: its key (unescaped) and its value.
struct member {
  std::string_view key;
  value val;
};

/// The members of an object, in input order (duplicates kept).
class object {
 public:
  class iterator {
   public:
    using difference_type = std::ptrdiff_t;
    using value_type = member;
    member operator*() const;
    iterator &operator++();
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const iterator &o) const noexcept { return index_ == o.index_; }

   private:
    friend class object;
    iterator(const detail::tape_data *doc, uint32_t index) : doc_(doc), index_(index) {}
    const detail::tape_data *doc_ = nullptr;
    uint32_t index_ = 0;
  };
  iterator begin() const noexcept;
  iterator end() const noexcept;
  /// Number of members.
  size_t size() const noexcept;
  /// The first member with this key; nullopt when there is none. Linear in the member count.
  std::optional<value> find(std::string_view key) const noexcept;
  uint64_t offset() const noexcept;

 private:
  friend class value;
  object(const detail::tape_data *d, uint32_t i) : ref_(d, i) {}
  const detail::tape_data *doc() const noexcept { return ref_.doc(); }
  uint32_t index() const noexcept { return ref_.index(); }
  detail::node_ref ref_;
};

/// The elements of an array, in order.
class array {
 public:
  class iterator {
   public:
    using difference_type = std::ptrdiff_t;
    using value_type = value;
    value operator*() const { return value(doc_, index_); }
    iterator &operator++();
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const iterator &o) const noexcept { return index_ == o.index_; }

   private:
    friend class array;
    iterator(const detail::tape_data *doc, uint32_t index) : doc_(doc), index_(index) {}
    const detail::tape_data *doc_ = nullptr;
    uint32_t index_ = 0;
  };
  iterator begin() const noexcept;
  iterator end() const noexcept;
  size_t size() const noexcept;
  /// The element at i; nullopt past the end. Linear in i.
  std::optional<value> at(size_t i) const noexcept;
  uint64_t offset() const noexcept;

 private:
  friend class value;
  array(const detail::tape_data *d, uint32_t i) : ref_(d, i) {}
  const detail::tape_data *doc() const noexcept { return ref_.doc(); }
  uint32_t index() const noexcept { return ref_.index(); }
  detail::node_ref ref_;
};

// The accessors on the hot path, inline: the FHIRPath engine and the view runner walk objects
// key by key and test types at every step, and a call into another translation unit for each was
// a good part of that walk. Inline, the compiler also sees the result<T> made and taken apart in
// one place and keeps it in registers; returned from another translation unit it is written to
// memory and destroyed in the caller through std::variant's table of destructors: in wasm an
// indirect call for every number and boolean a walk reads (get_string was inline already).
inline kind value::type() const noexcept { return static_cast<kind>(doc()->tape[index()].type); }
inline uint64_t value::offset() const noexcept { return doc()->tape[index()].offset; }
inline result<bool> value::get_bool() const {
  const detail::node &n = doc()->tape[index()];
  if (n.type != static_cast<uint8_t>(kind::boolean)) return detail::wrong_type(doc(), index(), "boolean");
  return n.flag != 0;
}
inline result<std::string_view> value::get_number_text() const {
  const detail::node &n = doc()->tape[index()];
  if (n.type != static_cast<uint8_t>(kind::number)) return detail::wrong_type(doc(), index(), "number");
  return std::string_view(doc()->input.data() + n.start, n.length);
}
inline member object::iterator::operator*() const {
  const detail::node &key = doc_->tape[index_];
  return member{std::string_view(doc_->strings.data() + key.start, key.length), value(doc_, index_ + 1)};
}
inline object::iterator &object::iterator::operator++() {
  index_ = doc_->tape[index_ + 1].next;
  return *this;
}
inline array::iterator &array::iterator::operator++() {
  index_ = doc_->tape[index_].next;
  return *this;
}
inline result<std::string_view> value::get_string() const {
  const detail::node &n = doc()->tape[index()];
  if (n.type != static_cast<uint8_t>(kind::string)) return detail::wrong_type(doc(), index(), "string");
  return std::string_view(doc()->strings.data() + n.start, n.length);
}
inline result<object> value::get_object() const {
  if (type() != kind::object) return detail::wrong_type(doc(), index(), "object");
  return object(doc(), index());
}
inline result<array> value::get_array() const {
  if (type() != kind::array) return detail::wrong_type(doc(), index(), "array");
  return array(doc(), index());
}
inline size_t object::size() const noexcept { return doc()->tape[index()].length; }
inline size_t array::size() const noexcept { return doc()->tape[index()].length; }
inline object::iterator object::begin() const noexcept { return iterator(doc(), index() + 1); }
inline object::iterator object::end() const noexcept { return iterator(doc(), doc()->tape[index()].next); }
inline array::iterator array::begin() const noexcept { return iterator(doc(), index() + 1); }
inline array::iterator array::end() const noexcept { return iterator(doc(), doc()->tape[index()].next); }

/// A parsed document. Move-only. See the lifetime note at the top of this header.
class document {
 public:
  document() = default;
  /// Used by the parser; not for callers.
  explicit document(std::unique_ptr<detail::tape_data> data) noexcept : data_(std::move(data)) {}
  document(document &&) noexcept = default;
  document &operator=(document &&) noexcept = default;
  document(const document &) = delete;
  document &operator=(const document &) = delete;

  /// The root value. Calling it on a default-constructed document is a programmer error.
  value root() const noexcept { return value(data_.get(), 0); }
  /// The input the document was parsed from.
  std::string_view input() const noexcept { return data_ ? data_->input : std::string_view(); }
  /// Number of values (object keys are not values).
  size_t value_count() const noexcept { return data_ ? data_->value_count : 0; }
  /// Maximum nesting depth (a scalar document has depth 0, `[]` has depth 1).
  size_t max_depth() const noexcept { return data_ ? data_->max_depth : 0; }
  /// Bytes the document holds beyond a borrowed input (tape, strings, and its copy of the input).
  size_t memory_bytes() const noexcept;

 private:
  friend result<void> parse_into(document &doc, std::string_view input, const limits &lim);
  std::unique_ptr<detail::tape_data> data_;
};

/// Parses and validates a whole document, copying the input into the document.
/// Errors: EMPTY_INPUT, INVALID_JSON, INVALID_UTF8, INVALID_STRING, INVALID_NUMBER,
/// TRAILING_CONTENT, MAX_DEPTH_EXCEEDED, DOCUMENT_TOO_LARGE — each with the byte offset, line and
/// column where the problem was found.
result<document> parse(std::string_view input, const limits &lim = {});
/// As parse(), into `doc`, reusing the buffers it holds from an earlier parse (its copy of the
/// input, its tape and its strings) when they are large enough: for many small documents in turn,
/// such as the lines of NDJSON, where allocating them anew for each line was a good part of the
/// cost. Every value of `doc`'s earlier content becomes invalid; on failure `doc` is empty (a
/// default-constructed document). Same errors as parse().
result<void> parse_into(document &doc, std::string_view input, const limits &lim = {});
/// As parse(), reading from a byte source; borrows its bytes (no copy) when they are contiguous
/// and padded, in which case the source must outlive the document.
result<document> parse(const byte_source &source, const limits &lim = {});

/// Counts of a document's values by kind, and its deepest nesting.
struct stats {
  uint64_t nulls = 0, booleans = 0, numbers = 0, strings = 0, arrays = 0, objects = 0;
  uint64_t keys = 0;       ///< object members
  uint64_t max_depth = 0;  ///< a scalar document has depth 0
  uint64_t bytes = 0;      ///< input size
  uint64_t values() const noexcept { return nulls + booleans + numbers + strings + arrays + objects; }
};

/// Validates a document without building a tape and counts its values. Same errors as parse().
result<stats> check(std::string_view input, const limits &lim = {});

/// check() over a byte source. Contiguous sources are parsed in place (copied only when they
/// cannot provide simdjson's read-ahead padding); other sources are read whole first.
result<stats> check(const byte_source &source, const limits &lim = {});

/// Writes a value back as compact JSON text (numbers in their exact input text, strings
/// re-escaped minimally).
std::string to_json(const value &v);

/// Appends `s` as a JSON string literal (with quotes) to out.
void append_quoted(std::string &out, std::string_view s);

}  // namespace quire::json
