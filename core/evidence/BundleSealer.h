#pragma once
// Seals a bundle directory: writes MANIFEST.sha256 over every file in it, signs the manifest in
// minisign's format (when a secret key is given, also putting its public key in the bundle as
// signing-key.pub, listed in the manifest), then writes DIR.tar holding DIR/ and everything in it.
#include <cstdint>
#include <string>

#include "../Result.h"
#include "MinisignKey.h"

namespace faultline {

struct SealOptions {
    const MinisignSecretKey* key = nullptr;  // nullptr: unsigned
    std::string trustedComment;              // "" = "timestamp:<t>\tfile:MANIFEST.sha256\thashed"
    int64_t mtime = 0;                       // for the archive's entries; 0 = now
    bool writeTar = true;
};

struct SealResult {
    size_t files = 0;  // listed in the manifest
    std::string manifestSha256;
    std::string tarPath;  // "" without writeTar
    std::string keyId;    // "" unsigned
};

// The directory must hold regular files and folders only, with bundle paths (Manifest.h), and no
// manifest or signature yet; DIR.tar must not exist.
Result<SealResult> sealBundle(const std::string& dir, const SealOptions& options = {});

// Writes `text` as a new file (refuses an existing one); errors name the file.
Status writeNewTextFile(const std::string& path, const std::string& text);

}  // namespace faultline
