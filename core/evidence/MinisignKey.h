#pragma once
// minisign's key files (https://jedisct1.github.io/minisign/), Ed25519:
//
//   public key  KEY.pub   "untrusted comment: minisign public key <KEYID>\n" then
//                         base64("Ed" | key id (8) | public key (32)) "\n"
//   secret key  KEY       "untrusted comment: <text>\n" then base64(
//                         "Ed" | kdf "Sc" or "\0\0" | checksum "B2" | kdf salt (32) |
//                         kdf opslimit (8, LE) | kdf memlimit (8, LE) |
//                         key id (8) | secret key (64: seed | public key) | checksum (32)) "\n"
//
// The key id is 8 random bytes; minisign prints it as the upper-case hex of those bytes read as
// a little-endian 64-bit number. With kdf "Sc" the 104 bytes from the key id on are XORed with
// scrypt output of a password and the checksum is BLAKE2b-256 of "Ed" | key id | secret key;
// with "\0\0" (`minisign -G -W`, `faultline keygen`) they are stored as they are and salt,
// limits and checksum are zero. Faultline writes unencrypted keys and reads both: an encrypted
// key is decrypted with scrypt (OpenSSL's, N/r/p derived from opslimit/memlimit as libsodium's
// crypto_pwhash_scryptsalsa208sha256 does), and a wrong password is found because the decrypted
// secret half no longer belongs to the public half.
#include <array>
#include <cstdint>
#include <string>

#include "../Result.h"
#include "Ed25519.h"

namespace faultline {

using MinisignKeyId = std::array<uint8_t, 8>;

struct MinisignPublicKey {
    MinisignKeyId keyId{};
    Ed25519PublicKey key{};
    // "89B02BEC0EDA9049": how minisign prints the key id.
    std::string keyIdText() const;
};

struct MinisignSecretKey {
    MinisignKeyId keyId{};
    Ed25519Seed seed{};
    Ed25519PublicKey publicKey{};
    MinisignPublicKey publicPart() const { return {keyId, publicKey}; }
};

// A new key pair with a random key id.
Result<MinisignSecretKey> generateMinisignKey();

// The files' text, exactly as minisign writes them.
std::string formatMinisignPublicKey(const MinisignPublicKey& key);
std::string formatMinisignSecretKey(const MinisignSecretKey& key);

// Parse the files' text; `source` (the path) names the file in errors. An encrypted secret key
// needs `password` (nullptr: an error saying so); the secret half must belong to the public half.
Result<MinisignPublicKey> parseMinisignPublicKey(const std::string& text, const std::string& source);
Result<MinisignSecretKey> parseMinisignSecretKey(const std::string& text, const std::string& source,
                                                 const std::string* password = nullptr);
Result<MinisignPublicKey> readMinisignPublicKey(const std::string& path);
Result<MinisignSecretKey> readMinisignSecretKey(const std::string& path,
                                                const std::string* password = nullptr);
// Whether the secret key file is password-encrypted (false also when it cannot be read).
bool isEncryptedMinisignSecretKey(const std::string& path);

// Writes KEY (mode 0600) and KEY.pub; refuses when either exists.
Status writeMinisignKeyPair(const MinisignSecretKey& key, const std::string& secretKeyPath);

// `faultline keygen KEY` and the export dialog's key generation: a new key pair written as KEY
// (unencrypted, mode 0600) and KEY.pub; refuses when either exists. Returns the public half.
Result<MinisignPublicKey> createMinisignKeyPair(const std::string& secretKeyPath);

// A small text file (at most `limit` bytes) read whole; errors name the file.
Result<std::string> readSmallFile(const std::string& path, size_t limit);

}  // namespace faultline
