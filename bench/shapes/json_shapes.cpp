#include "json_shapes.h"

#include "quire/bench.h"

namespace quire::bench::shapes {

// Every draw from the generator is its own statement: the order in which operands of `+` are
// evaluated is unspecified (g++ and clang differ), and the input must be the same bytes everywhere.

std::string json_records(size_t count, uint64_t seed) {
  static const char *cities[] = {"Lagos", "Oslo", "Lima", "Hanoi", "Quito", "Perth", "Accra", "Riga"};
  rng r(seed);
  std::string out = "[";
  for (size_t i = 0; i < count; ++i) {
    if (i) out += ",\n";
    uint64_t w = 40000 + r.below(80000);
    uint64_t patient = r.below(1000000);
    bool active = r.below(2) != 0;
    const char *city = cities[r.below(8)];
    out += "{\"id\":" + std::to_string(i) + ",\"name\":\"Patient " + std::to_string(patient) +
           "\",\"active\":" + (active ? "true" : "false") + ",\"weight\":" + std::to_string(w / 1000) + "." +
           std::to_string(w % 1000 + 1000).substr(1) + ",\"tags\":[\"a\",\"b\"],\"address\":{\"city\":\"" + city +
           "\",\"postalCode\":null}}";
  }
  out += "]";
  return out;
}

std::string json_numbers(size_t count, uint64_t seed) {
  rng r(seed);
  std::string out = "[";
  for (size_t i = 0; i < count; ++i) {
    if (i) out += ',';
    switch (r.below(3)) {
      case 0: out += std::to_string(static_cast<int64_t>(r.next() >> 12) - (int64_t{1} << 50)); break;
      case 1: {
        uint64_t whole = r.below(100000);
        uint64_t fraction = r.below(1000);
        out += std::to_string(whole) + "." + std::to_string(fraction) + "00";
        break;
      }
      default: {
        uint64_t digit = r.below(10);
        uint64_t fraction = r.below(100000);
        uint64_t exponent = r.below(300);
        out += std::to_string(digit) + "." + std::to_string(fraction) + "e-" + std::to_string(exponent);
        break;
      }
    }
  }
  out += "]";
  return out;
}

std::string json_strings(size_t count, uint64_t seed) {
  rng r(seed);
  std::string out = "[";
  for (size_t i = 0; i < count; ++i) {
    if (i) out += ',';
    out += "\"Line ";
    out += std::to_string(r.below(100000));
    out += r.below(2) ? " \\\"quoted\\\" \\n next \\u00e9t\\u00e9 " : " caf\xc3\xa9 \xe2\x82\xac 12 ";
    out += std::string(static_cast<size_t>(r.below(64)), 'x');
    out += '"';
  }
  out += "]";
  return out;
}

std::string json_nested(size_t depth, size_t width) {
  std::string out;
  for (size_t d = 0; d < depth; ++d) {
    out += "{";
    for (size_t w = 0; w + 1 < width; ++w)
      out += "\"k" + std::to_string(w) + "\":" + std::to_string(d * width + w) + ",";
    out += "\"child\":";
  }
  out += "null";
  for (size_t d = 0; d < depth; ++d) out += "}";
  return out;
}

}  // namespace quire::bench::shapes
