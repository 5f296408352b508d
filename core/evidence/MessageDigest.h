#pragma once
// Message digests through OpenSSL 3 (EVP): SHA-256 (the bundle's manifest) and BLAKE2b-512,
// unkeyed (what minisign's prehashed "ED" signatures sign instead of the message itself). One
// streaming implementation for both: of bytes in memory, streamed, and of whole files.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "../Result.h"

namespace faultline {

enum class DigestAlgorithm { Sha256, Blake2b512 };

template <DigestAlgorithm A, size_t N>
class MessageDigest {
public:
    using Digest = std::array<uint8_t, N>;

    MessageDigest();
    ~MessageDigest();
    MessageDigest(const MessageDigest&) = delete;
    MessageDigest& operator=(const MessageDigest&) = delete;

    void update(const void* data, size_t size);
    Digest finish();  // ends this digest

    static Digest of(std::string_view bytes);
    // Of a file's bytes; errors name the file.
    static Result<Digest> ofFile(const std::string& path);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

using Sha256 = MessageDigest<DigestAlgorithm::Sha256, 32>;
using Blake2b512 = MessageDigest<DigestAlgorithm::Blake2b512, 64>;
using Sha256Digest = Sha256::Digest;
using Blake2b512Digest = Blake2b512::Digest;

// Lower-case hex of any bytes.
std::string toHex(const uint8_t* data, size_t size);
template <size_t N>
std::string toHex(const std::array<uint8_t, N>& d)
{
    return toHex(d.data(), d.size());
}

// The SHA-256 of a file's bytes, as lower-case hex. Errors name the file.
Result<std::string> sha256FileHex(const std::string& path);

}  // namespace faultline
