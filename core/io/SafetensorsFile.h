#pragma once
// safetensors reading, with the reference reader's checks.
#include <memory>
#include <string>

#include "../TensorFile.h"

namespace faultline {

// True when the first bytes look like a safetensors header (8-byte little-endian size, then '{').
bool looksLikeSafetensors(const std::string& path);

Result<std::unique_ptr<TensorFile>> openSafetensors(const std::string& path, const OpenOptions& options = {});

}  // namespace faultline
