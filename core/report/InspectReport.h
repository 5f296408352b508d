#pragma once
// What `faultline inspect` reports about one file, as JSON (public interface) and as text.
#include <nlohmann/json.hpp>
#include <string>

#include "../TensorFile.h"
#include "../trace/Trace.h"

namespace faultline {

// {"file","format","attributes","tensors":[{"name","dtype","shape","bytes","kind","storage"}],
//  "devices":[…],"ops":[…],"warnings":[…]}; devices/ops are empty unless `trace` is given.
nlohmann::json inspectJson(const TensorFile& file, const Trace* trace);

// A human-readable listing of the same.
std::string inspectText(const TensorFile& file, const Trace* trace);

// "1.5 KiB", "4.0 GiB"
std::string formatBytes(uint64_t bytes);

}  // namespace faultline
