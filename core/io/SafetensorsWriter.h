#pragma once
// Writing safetensors files from named tensors (tests, fixtures, the demo generator, exports).
// The layout is the upstream writer's: u64 little-endian header size N, N bytes of JSON padded
// with spaces so the data starts on an 8-byte boundary, then the tensors' bytes back to back in
// the order given.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../DType.h"
#include "../Result.h"

namespace faultline {

struct SafetensorsEntry {
    std::string name;  // any UTF-8 string except "__metadata__"
    DType dtype = DType::Float32;
    std::vector<uint64_t> shape;  // row-major; empty = scalar; a 0 dimension = no data
    const void* data = nullptr;   // elementCount * dtypeSize bytes, little-endian; may be null
                                  // when that is 0. Must stay valid during the call.
};

// The 8-byte size prefix followed by the padded JSON header for `entries` (data offsets in the
// order given) and `metadata` (written as "__metadata__" when not empty). `label` names the
// output in error messages. Fails on duplicate or reserved names, invalid UTF-8, a null data
// pointer for a non-empty tensor, or a byte count that overflows 64 bits.
Result<std::string> encodeSafetensorsHeader(const std::vector<SafetensorsEntry>& entries,
                                            const std::map<std::string, std::string>& metadata,
                                            const std::string& label = "safetensors");

// The whole file in memory: header then data (for small files: tests, fuzz seeds).
Result<std::string> encodeSafetensors(const std::vector<SafetensorsEntry>& entries,
                                      const std::map<std::string, std::string>& metadata,
                                      const std::string& label = "safetensors");

// Writes the file to PATH.tmp, flushes it, then renames it to PATH, so that a failure never
// leaves a partial file at PATH (PATH.tmp is removed on failure). Errors name PATH.
Status writeSafetensors(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace faultline
