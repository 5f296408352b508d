#pragma once
// Text from untrusted logs and XML made safe to keep: bounded and valid UTF-8.
#include <cstddef>
#include <string>
#include <string_view>

namespace faultline {

// At most `maxBytes` bytes of `s` (cut at a byte boundary first), with every byte that is not part
// of a valid UTF-8 sequence replaced by U+FFFD, so the text can go into JSON as it is.
std::string validUtf8(std::string_view s, size_t maxBytes);

}  // namespace faultline
