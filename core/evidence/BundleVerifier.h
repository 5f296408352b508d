#pragma once
// Checks an evidence bundle, as a directory or as its .tar: every file against MANIFEST.sha256
// (changed, removed, added), the manifest's and the signature's own form (the text must be
// exactly as written, so that no byte of them can change unnoticed), and the minisign signature
// of the manifest against a public key (--pubkey, else the bundle's own signing-key.pub, which
// proves integrity but not who signed it). A bundle that says it was signed (signing-key.pub in it
// or in its manifest, case.json's case.signed_by) and has no signature had it stripped: a
// problem, with or without a public key. Only directories and regular files are opened.
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

inline constexpr const char* kSigningKeyName = "signing-key.pub";

struct BundleProblem {
    std::string path;  // in the bundle ("vendor/nvidia-bug-report.log.gz"), or the archive itself
    std::string what;  // "changed: SHA-256 differs from MANIFEST.sha256", "removed", "added", ...
};

struct BundleCheck {
    std::string source;                   // the directory or archive checked
    std::vector<BundleProblem> problems;  // empty: intact
    size_t filesChecked = 0;
    enum class Signature { None, Valid, Invalid } signature = Signature::None;
    std::string keyId;      // the signature's key id ("" unsigned)
    std::string keySource;  // the public key used: a path, or "signing-key.pub in the bundle"
    std::string trustedComment;
    std::vector<std::string> notes;

    bool intact() const { return problems.empty(); }
};

// `pubkeyPath` "" = use the bundle's signing-key.pub. An unreadable bundle or public key file is
// an error (exit 2), naming the file; a bundle that is not intact is a BundleCheck with problems.
Result<BundleCheck> verifyBundle(const std::string& dirOrTar, const std::string& pubkeyPath = {});

// What `faultline verify` prints.
std::string bundleCheckText(const BundleCheck& check);

}  // namespace faultline
