#include "MessageDigest.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace faultline {
namespace {

const EVP_MD* algorithm(DigestAlgorithm a)
{
    return a == DigestAlgorithm::Sha256 ? EVP_sha256() : EVP_blake2b512();
}

const char* algorithmName(DigestAlgorithm a)
{
    return a == DigestAlgorithm::Sha256 ? "SHA-256" : "BLAKE2b-512";
}

}  // namespace

template <DigestAlgorithm A, size_t N>
struct MessageDigest<A, N>::Impl {
    EVP_MD_CTX* ctx = nullptr;
};

template <DigestAlgorithm A, size_t N>
MessageDigest<A, N>::MessageDigest() : m_impl(std::make_unique<Impl>())
{
    m_impl->ctx = EVP_MD_CTX_new();
    if (!m_impl->ctx || EVP_DigestInit_ex(m_impl->ctx, algorithm(A), nullptr) != 1)
        throw std::runtime_error(std::string("OpenSSL: ") + algorithmName(A) + " is not available");
}

template <DigestAlgorithm A, size_t N>
MessageDigest<A, N>::~MessageDigest()
{
    EVP_MD_CTX_free(m_impl->ctx);
}

template <DigestAlgorithm A, size_t N>
void MessageDigest<A, N>::update(const void* data, size_t size)
{
    if (size) EVP_DigestUpdate(m_impl->ctx, data, size);
}

template <DigestAlgorithm A, size_t N>
typename MessageDigest<A, N>::Digest MessageDigest<A, N>::finish()
{
    Digest d{};
    unsigned int n = 0;
    EVP_DigestFinal_ex(m_impl->ctx, d.data(), &n);
    return d;
}

template <DigestAlgorithm A, size_t N>
typename MessageDigest<A, N>::Digest MessageDigest<A, N>::of(std::string_view bytes)
{
    MessageDigest h;
    h.update(bytes.data(), bytes.size());
    return h.finish();
}

template <DigestAlgorithm A, size_t N>
Result<typename MessageDigest<A, N>::Digest> MessageDigest<A, N>::ofFile(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fileError(path, std::strerror(errno), ErrorCode::Io);
    MessageDigest h;
    std::string buf(1 << 16, '\0');
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.update(buf.data(), n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) return fileError(path, "read error", ErrorCode::Io);
    return h.finish();
}

template class MessageDigest<DigestAlgorithm::Sha256, 32>;
template class MessageDigest<DigestAlgorithm::Blake2b512, 64>;

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
    auto d = Sha256::ofFile(path);
    if (!d) return d.error();
    return toHex(*d);
}

}  // namespace faultline
