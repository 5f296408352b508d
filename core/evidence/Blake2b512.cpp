#include "Blake2b512.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace faultline {

struct Blake2b512::Impl {
    EVP_MD_CTX* ctx = nullptr;
};

Blake2b512::Blake2b512() : m_impl(std::make_unique<Impl>())
{
    m_impl->ctx = EVP_MD_CTX_new();
    if (!m_impl->ctx || EVP_DigestInit_ex(m_impl->ctx, EVP_blake2b512(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: BLAKE2b-512 is not available");
}

Blake2b512::~Blake2b512()
{
    EVP_MD_CTX_free(m_impl->ctx);
}

void Blake2b512::update(const void* data, size_t size)
{
    if (size) EVP_DigestUpdate(m_impl->ctx, data, size);
}

Blake2b512Digest Blake2b512::finish()
{
    Blake2b512Digest d{};
    unsigned int n = 0;
    EVP_DigestFinal_ex(m_impl->ctx, d.data(), &n);
    return d;
}

Blake2b512Digest Blake2b512::of(std::string_view bytes)
{
    Blake2b512 h;
    h.update(bytes.data(), bytes.size());
    return h.finish();
}

Result<Blake2b512Digest> Blake2b512::ofFile(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fileError(path, std::strerror(errno));
    Blake2b512 h;
    std::string buf(1 << 16, '\0');
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.update(buf.data(), n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) return fileError(path, "read error");
    return h.finish();
}

}  // namespace faultline
