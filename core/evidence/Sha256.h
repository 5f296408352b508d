#pragma once
// SHA-256 through OpenSSL 3 (EVP): of bytes in memory, streamed, and of whole files.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "../Result.h"

namespace faultline {

using Sha256Digest = std::array<uint8_t, 32>;

// Streaming SHA-256. One object per digest; finish() ends it.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(const void* data, size_t size);
    Sha256Digest finish();

    static Sha256Digest of(std::string_view bytes);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// Lower-case hex of any bytes.
std::string toHex(const uint8_t* data, size_t size);
inline std::string toHex(const Sha256Digest& d)
{
    return toHex(d.data(), d.size());
}

// The SHA-256 of a file's bytes, as lower-case hex. Errors name the file.
Result<std::string> sha256FileHex(const std::string& path);

}  // namespace faultline
