#pragma once
// minisign's signature file (FILE.minisig):
//
//   "untrusted comment: <text>\n"
//   base64(algorithm "ED" | key id (8) | signature (64)) "\n"
//   "trusted comment: <text>\n"
//   base64(global signature (64)) "\n"
//
// "ED" (minisign's default since 0.8) signs BLAKE2b-512 of the file; the legacy "Ed" signs the
// file itself. The global signature signs the signature followed by the trusted comment's text,
// so the trusted comment cannot be changed without the secret key. The untrusted comment is
// covered by nothing.
#include <string>

#include "../Result.h"
#include "MinisignKey.h"

namespace faultline {

struct MinisignSignature {
    std::string untrustedComment, trustedComment;  // without their prefixes
    bool prehashed = true;                         // "ED"; false: legacy "Ed"
    MinisignKeyId keyId{};
    Ed25519Signature signature{}, globalSignature{};
};

// minisign's own default untrusted comment, which `faultline evidence` writes too.
inline constexpr const char* kMinisignDefaultComment = "signature from minisign secret key";

// Signs `message` prehashed ("ED"), as `minisign -S` does.
Result<MinisignSignature> signMinisign(const MinisignSecretKey& key, const std::string& message,
                                       const std::string& trustedComment,
                                       const std::string& untrustedComment = kMinisignDefaultComment);

std::string formatMinisignSignature(const MinisignSignature& sig);
// `source` names the file in errors ("FILE:LINE: problem").
Result<MinisignSignature> parseMinisignSignature(const std::string& text, const std::string& source);

// Why `sig` is not a valid signature of `message` by `key` ("" when it is): a different key id,
// a signature that does not match, a trusted comment that does not match.
std::string minisignVerifyProblem(const MinisignPublicKey& key, const MinisignSignature& sig,
                                  const std::string& message);

}  // namespace faultline
