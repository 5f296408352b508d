#pragma once
// safetensors reading, with the reference reader's checks.
//
// Layout: a little-endian u64 N, then N bytes of UTF-8 JSON (an object), then the byte buffer.
// Each JSON entry is {"dtype":"BF16","shape":[..],"data_offsets":[begin,end]} with offsets
// relative to the buffer start, end exclusive; "__metadata__" is an optional string->string map.
// Every size read from the file is bounded before anything is allocated from it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../TensorFile.h"

namespace faultline {

// The reference reader's limit on the JSON header.
inline constexpr uint64_t kSafetensorsMaxHeaderSize = 100'000'000;

// True when the first bytes look like a safetensors header: an 8-byte little-endian size N with
// N <= kSafetensorsMaxHeaderSize and N <= file size - 8, and the first non-whitespace byte of the
// header is '{'. Never fails loudly: an unreadable file is simply not safetensors.
bool looksLikeSafetensors(const std::string& path);

// Opens a safetensors file: tensors() in data-offset order, storage "safetensors", attributes()
// = __metadata__. Reads are bounds-checked pread()s, safe from several threads.
Result<std::unique_ptr<TensorFile>> openSafetensors(const std::string& path, const OpenOptions& options = {});

// What a checked header says. Offsets are relative to the buffer start.
struct SafetensorsLayout {
    std::vector<TensorInfo> tensors;              // data-offset order
    std::vector<uint64_t> dataBegin;              // per tensor, byte offset of its data in the buffer
    std::map<std::string, std::string> metadata;  // __metadata__
    std::vector<std::string> warnings;            // problems that did not stop the file from opening
    uint64_t headerSize = 0;                      // N
    uint64_t bufferSize = 0;                      // file size - 8 - N

    uint64_t dataStart() const { return 8 + headerSize; }  // absolute offset of the buffer
};

// Checks the 8-byte little-endian header size against the limit and the file size (file too
// small, N > kSafetensorsMaxHeaderSize, N > fileSize - 8). `prefix` holds min(8, fileSize) bytes.
// `path` only labels the messages.
Result<uint64_t> checkSafetensorsHeaderSize(const std::string& path, const unsigned char* prefix,
                                            uint64_t fileSize);

// Parses and checks the JSON header (`json` = the N header bytes) against a buffer of
// `bufferSize` bytes. `path` only labels the messages.
Result<SafetensorsLayout> parseSafetensorsHeader(const std::string& path, std::string_view json,
                                                 uint64_t bufferSize);

// Parses and checks a whole safetensors file held in memory (size prefix, header and buffer).
Result<SafetensorsLayout> parseSafetensorsBytes(const std::string& path, const void* data, size_t size);

// The upstream dtype strings: BOOL U8 I8 F8_E5M2 F8_E4M3 I16 U16 F16 BF16 I32 U32 F32 F64 I64 U64
// (F8_E4M3 is Float8E4M3FN). Exact, case-sensitive spelling.
std::optional<DType> dtypeFromSafetensorsName(std::string_view name);
std::string_view safetensorsDTypeName(DType t);

}  // namespace faultline
