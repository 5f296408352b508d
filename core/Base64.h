#pragma once
// Standard base64 (RFC 4648, with padding, no line breaks), as minisign writes keys and
// signatures.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

std::string base64Encode(const uint8_t* data, size_t size);
// The bytes, or nullopt when `text` is not canonical base64 (wrong alphabet, length or padding,
// or unused bits that are not zero): a text decodes only if it is exactly what base64Encode
// writes for its bytes.
std::optional<std::vector<uint8_t>> base64Decode(std::string_view text);

}  // namespace faultline
