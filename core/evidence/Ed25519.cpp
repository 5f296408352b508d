#include "Ed25519.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

namespace faultline {
namespace {

struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

Error opensslError(const char* what)
{
    return Error{std::string("OpenSSL: ") + what + " failed", ErrorCode::Failed};
}

}  // namespace

Status randomBytes(uint8_t* out, size_t size)
{
    if (size > size_t(1) << 30 || RAND_bytes(out, int(size)) != 1) return opensslError("RAND_bytes");
    return {};
}

Result<Ed25519PublicKey> ed25519PublicKeyOf(const Ed25519Seed& seed)
{
    Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
    if (!key) return opensslError("Ed25519 private key");
    Ed25519PublicKey pk{};
    size_t n = pk.size();
    if (EVP_PKEY_get_raw_public_key(key.get(), pk.data(), &n) != 1 || n != pk.size())
        return opensslError("Ed25519 public key");
    return pk;
}

Result<Ed25519KeyPair> generateEd25519KeyPair()
{
    Ed25519KeyPair kp;
    if (Status st = randomBytes(kp.seed.data(), kp.seed.size()); !st) return st.error();
    auto pk = ed25519PublicKeyOf(kp.seed);
    if (!pk) return pk.error();
    kp.publicKey = *pk;
    return kp;
}

Result<Ed25519Signature> ed25519Sign(const Ed25519Seed& seed, std::string_view message)
{
    Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
    MdCtx ctx(EVP_MD_CTX_new());
    if (!key || !ctx) return opensslError("Ed25519 signing setup");
    Ed25519Signature sig{};
    size_t n = sig.size();
    if (EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), sig.data(), &n, reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) != 1 ||
        n != sig.size())
        return opensslError("Ed25519 signing");
    return sig;
}

bool ed25519Verify(const Ed25519PublicKey& publicKey, std::string_view message,
                   const Ed25519Signature& signature)
{
    Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, publicKey.data(), publicKey.size()));
    MdCtx ctx(EVP_MD_CTX_new());
    if (!key || !ctx) return false;
    if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1) return false;
    return EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                            reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

}  // namespace faultline
