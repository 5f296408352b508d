#pragma once
// PCI bus ids as the kernel log ("PCI:0000:3b:00", "0000:03:00"), nvidia-smi ("00000000:3B:00.0"),
// NVML and the CUDA runtime ("0000:3b:00.0") spell them, normalised to one spelling so the same GPU
// is one GPU across sources.
#include <string>
#include <string_view>

namespace faultline {

// "dddd:bb:dd.f" in lower case (domain at least 4 hex digits, function 0 when absent); "" when
// `text` is not a bus id. Accepts an optional "PCI:" prefix and surrounding spaces.
std::string normalizeBusId(std::string_view text);

}  // namespace faultline
