#include "Sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace faultline {

struct Sha256::Impl {
    EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>())
{
    m_impl->ctx = EVP_MD_CTX_new();
    if (!m_impl->ctx || EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: SHA-256 is not available");
}

Sha256::~Sha256()
{
    EVP_MD_CTX_free(m_impl->ctx);
}

void Sha256::update(const void* data, size_t size)
{
    if (size) EVP_DigestUpdate(m_impl->ctx, data, size);
}

Sha256Digest Sha256::finish()
{
    Sha256Digest d{};
    unsigned int n = 0;
    EVP_DigestFinal_ex(m_impl->ctx, d.data(), &n);
    return d;
}

Sha256Digest Sha256::of(std::string_view bytes)
{
    Sha256 h;
    h.update(bytes.data(), bytes.size());
    return h.finish();
}

std::string toHex(const uint8_t* data, size_t size)
{
    static const char* digits = "0123456789abcdef";
    std::string s(size * 2, '0');
    for (size_t i = 0; i < size; ++i) {
        s[2 * i] = digits[data[i] >> 4];
        s[2 * i + 1] = digits[data[i] & 15];
    }
    return s;
}

Result<std::string> sha256FileHex(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fileError(path, std::strerror(errno));
    Sha256 h;
    std::string buf(1 << 16, '\0');
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.update(buf.data(), n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) return fileError(path, "read error");
    return toHex(h.finish());
}

}  // namespace faultline
