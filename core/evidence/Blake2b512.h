#pragma once
// BLAKE2b with a 64-byte output, unkeyed, through OpenSSL 3: what minisign's prehashed ("ED")
// signatures sign instead of the message itself.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "../Result.h"

namespace faultline {

using Blake2b512Digest = std::array<uint8_t, 64>;

class Blake2b512 {
public:
    Blake2b512();
    ~Blake2b512();
    Blake2b512(const Blake2b512&) = delete;
    Blake2b512& operator=(const Blake2b512&) = delete;

    void update(const void* data, size_t size);
    Blake2b512Digest finish();

    static Blake2b512Digest of(std::string_view bytes);
    // Of a file's bytes; errors name the file.
    static Result<Blake2b512Digest> ofFile(const std::string& path);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace faultline
