#pragma once
// Ed25519 (RFC 8032) through OpenSSL 3: key generation from the system's random source,
// signing with a 32-byte seed, verification with a 32-byte public key.
#include <array>
#include <cstdint>
#include <string_view>

#include "../Result.h"

namespace faultline {

using Ed25519Seed = std::array<uint8_t, 32>;
using Ed25519PublicKey = std::array<uint8_t, 32>;
using Ed25519Signature = std::array<uint8_t, 64>;

struct Ed25519KeyPair {
    Ed25519Seed seed{};
    Ed25519PublicKey publicKey{};
};

// A new key pair (OpenSSL's CSPRNG).
Result<Ed25519KeyPair> generateEd25519KeyPair();
// The public key that belongs to a seed.
Result<Ed25519PublicKey> ed25519PublicKeyOf(const Ed25519Seed& seed);
Result<Ed25519Signature> ed25519Sign(const Ed25519Seed& seed, std::string_view message);
// True when `signature` is a valid signature of `message` by `publicKey`.
bool ed25519Verify(const Ed25519PublicKey& publicKey, std::string_view message,
                   const Ed25519Signature& signature);

// Cryptographically random bytes (OpenSSL's CSPRNG).
Status randomBytes(uint8_t* out, size_t size);

}  // namespace faultline
