// The FHIR R4 definition tables, generated at build time from the base StructureDefinitions by
// gen/r4_gen_definitions.mjs (see module.cmake), and the lookups in them (r4_lookup.cpp). The r4
// module's one shared header: fhir (validate, invariants, write) and fhirpath (types, member
// names) include it as "../r4/r4_tables.h"; it depends on neither.
//
// Every type (primitive, complex data type, resource, and each backbone element of them, named by
// its path like `Patient.contact`) lists its direct child elements in snapshot order: that order
// is the canonical order of keys when writing. Each type also lists its JSON keys sorted by name,
// with choice elements expanded (`value[x]` gives `valueQuantity`, `valueString`...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace quire::r4 {

/// The primitive types of R4, in the order the generator emits them first in TYPES.
enum class primitive : uint8_t {
  none = 0,
  base64Binary,
  boolean,
  canonical,
  code,
  date,
  dateTime,
  decimal,
  id,
  instant,
  integer,
  markdown,
  oid,
  positiveInt,
  string,
  time,
  unsignedInt,
  uri,
  url,
  uuid,
  xhtml,
};
constexpr size_t PRIMITIVE_COUNT = 20;

enum class type_kind : uint8_t {
  primitive,     ///< a JSON scalar (string, number or boolean) with an optional `_x` companion
  complex,       ///< a data type (HumanName, Quantity...)
  resource,      ///< a concrete resource type (Patient...)
  backbone,      ///< an element defined inline in a type or resource (Patient.contact)
  any_resource,  ///< the abstract Resource: any resource, chosen by its resourceType
};

constexpr uint16_t NO_TYPE = 0xFFFF;

/// All names and codes, one after another; tables refer to them by offset and length. (Tables of
/// std::string_view took GCC 12 minutes to compile at -O3; plain integers take seconds.)
extern const char TEXT[];
/// Kept at two full words: a key's text is read at every step of find_key's binary search, and
/// packing it into one (a 20-bit offset, a 12-bit length) made fhir.read and fhir.validate 4-6%
/// slower natively for 0.2% of quire.wasm gzipped (docs/performance.md, "What quire.wasm is made of").
struct text_ref {
  uint32_t offset;
  uint32_t length;
  std::string_view view() const noexcept { return {TEXT + offset, length}; }
};
/// `max` of an element whose base definition says `*` (every other max is 1).
constexpr uint8_t UNBOUNDED = 0xFF;

struct type_def {
  text_ref name;
  type_kind kind;
  primitive prim;          ///< for primitive types; none otherwise
  uint32_t first_element;  ///< into ELEMENTS
  uint32_t element_count;
  uint32_t first_key;  ///< into KEYS
  uint32_t key_count;
};

// The tables' rows are kept small: they are most of the module's data (docs/performance.md,
// "What quire.wasm is made of"). The generator checks every value fits its field.
struct element_def {
  text_ref name;  ///< without [x]
  uint8_t min;
  uint8_t max;       ///< UNBOUNDED for *
  bool is_array;     ///< the JSON form is an array (the base definition allows more than one)
  bool is_choice;    ///< name[x]: the key is the name plus a type name
  uint16_t type;     ///< the single type; NO_TYPE for choice elements (see KEYS)
  int16_t code_set;  ///< into CODE_SETS for a code bound to a small closed value set; -1 otherwise
};

struct key_def {
  text_ref key;      ///< the JSON key (`valueQuantity`); sorted within a type
  uint16_t element;  ///< index into ELEMENTS
  uint16_t type;     ///< the value's type
};

struct code_set_def {
  text_ref value_set;  ///< canonical URL of the value set
  uint32_t first;      ///< into CODES
  uint32_t count;      ///< codes sorted
};

/// An invariant of the R4 definitions (ElementDefinition.constraint): `dom-2`, `ele-1`, `pat-1`...
struct constraint_def {
  text_ref key;         ///< `dom-2`
  text_ref human;       ///< the requirement in words
  text_ref expression;  ///< FHIRPath; empty when the definition gives none
  bool warning;         ///< severity: warning (else error)
};

/// A run of CONSTRAINT_LISTS: the invariants that apply to one type or one key.
struct constraint_range {
  uint16_t first;
  uint16_t count;
};

static_assert(sizeof(text_ref) == 8 && sizeof(element_def) == 16 && sizeof(key_def) == 12 &&
                  sizeof(constraint_range) == 4,
              "the R4 tables' rows grew");

extern const type_def TYPES[];
extern const size_t TYPE_COUNT;
extern const element_def ELEMENTS[];
extern const size_t ELEMENT_COUNT;
extern const key_def KEYS[];
extern const size_t KEY_COUNT;
extern const text_ref CODES[];
extern const code_set_def CODE_SETS[];
extern const size_t CODE_SET_COUNT;
extern const constraint_def CONSTRAINTS[];
extern const size_t CONSTRAINT_COUNT;
/// Indices into CONSTRAINTS.
extern const uint16_t CONSTRAINT_LISTS[];
/// Per type (parallel to TYPES): its own invariants (a resource's dom-2..., Period's per-1).
extern const constraint_range TYPE_CONSTRAINTS[];
/// Per key (parallel to KEYS): those of a value under that key, the element's and its type's
/// (resource-valued keys: the element's only; the resource's own come with its resourceType).
extern const constraint_range KEY_CONSTRAINTS[];
/// Indices into TYPES of the resource types, sorted by name.
extern const uint16_t RESOURCE_TYPES[];
extern const size_t RESOURCE_TYPE_COUNT;
/// The abstract Resource (contained, Bundle.entry.resource, Parameters.parameter.resource).
extern const uint16_t ANY_RESOURCE_TYPE;
/// The FHIR version the tables were generated from ("4.0.1").
extern const text_ref DEFINITIONS_VERSION;

/// TYPES index of a primitive type: the generator emits them first, in enum order.
constexpr uint16_t primitive_type(primitive p) { return static_cast<uint16_t>(static_cast<uint16_t>(p) - 1); }

/// The key of a type's object; nullptr when the type has no such element.
const key_def *find_key(uint16_t type, std::string_view key) noexcept;
/// TYPES index of a concrete resource type; NO_TYPE when unknown.
uint16_t find_resource_type(std::string_view name) noexcept;
/// Whether `code` is in code set `set`.
bool code_in_set(int32_t set, std::string_view code) noexcept;

}  // namespace quire::r4
