#include "Base64.h"

#include <openssl/evp.h>

#include <cctype>

namespace faultline {

std::string base64Encode(const uint8_t* data, size_t size)
{
    std::string out(4 * ((size + 2) / 3) + 1, '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, int(size));
    out.resize(size_t(n < 0 ? 0 : n));
    return out;
}

std::optional<std::vector<uint8_t>> base64Decode(std::string_view text)
{
    if (text.empty() || text.size() % 4 != 0 || text.size() > (size_t(1) << 24)) return std::nullopt;
    for (char c : text)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '='))
            return std::nullopt;
    size_t pad = 0;
    while (pad < 2 && text[text.size() - 1 - pad] == '=') ++pad;
    std::vector<uint8_t> out(text.size() / 4 * 3);
    const int n =
        EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()), int(text.size()));
    if (n < 0 || size_t(n) < pad) return std::nullopt;
    out.resize(size_t(n) - pad);
    // Canonical only: '=' nowhere but at the end, zero unused bits.
    if (base64Encode(out.data(), out.size()) != text) return std::nullopt;
    return out;
}

}  // namespace faultline
