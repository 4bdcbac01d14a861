// Embind bindings of the core foundations: version, memory, error names. The TypeScript wrapper
// (js/src) maps these to camelCase and turns error records into QuireError.
#include <emscripten/bind.h>

#include "bind_support.h"
#include "quire/detect.h"
#include "quire/platform.h"
#include "quire/version.h"

namespace {

quire::wasm::version_record version_record() {
  auto v = quire::version();
  return {std::string(v.version), std::string(v.target),     std::string(v.compiler),
          std::string(v.flags),   std::string(v.build_type), std::string(v.simd)};
}

quire::wasm::memory_record memory_record() {
  auto m = quire::default_memory_probe().read();
  return {static_cast<double>(m.heap_bytes), static_cast<double>(m.heap_capacity_bytes)};
}

struct detect_record {
  std::string kind, reason;
};

/// quire::detect_input over bytes the wrapper placed in the heap (it frees them).
detect_record detect(uintptr_t pointer, size_t length, bool whole, const std::string &name) {
  auto d = quire::detect_input(std::string_view(reinterpret_cast<const char *>(pointer), length), whole, name);
  return {std::string(quire::input_kind_name(d.kind)), std::move(d.reason)};
}

}  // namespace

EMSCRIPTEN_BINDINGS(quire_core) {
  using namespace emscripten;
  value_object<quire::wasm::version_record>("VersionRecord")
      .field("version", &quire::wasm::version_record::version)
      .field("target", &quire::wasm::version_record::target)
      .field("compiler", &quire::wasm::version_record::compiler)
      .field("flags", &quire::wasm::version_record::flags)
      .field("buildType", &quire::wasm::version_record::build_type)
      .field("simd", &quire::wasm::version_record::simd);
  value_object<quire::wasm::memory_record>("MemoryRecord")
      .field("heapBytes", &quire::wasm::memory_record::heap_bytes)
      .field("heapCapacityBytes", &quire::wasm::memory_record::heap_capacity_bytes);
  value_object<quire::wasm::error_record>("ErrorRecord")
      .field("code", &quire::wasm::error_record::code)
      .field("message", &quire::wasm::error_record::message)
      .field("offset", &quire::wasm::error_record::offset)
      .field("line", &quire::wasm::error_record::line)
      .field("column", &quire::wasm::error_record::column)
      .field("path", &quire::wasm::error_record::path)
      .field("text", &quire::wasm::error_record::text);
  value_object<detect_record>("DetectRecord")
      .field("kind", &detect_record::kind)
      .field("reason", &detect_record::reason);
  function("version", &version_record);
  function("detect", &detect);
  function("memory", &memory_record);
}
