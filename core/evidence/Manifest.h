#pragma once
// MANIFEST.sha256 of an evidence bundle: one line per file, sorted by path, in the BSD form
// that `sha256sum -c` accepts:
//
//   SHA256 (vendor/nvidia-bug-report.log.gz) = 5f1e…(64 lower-case hex digits)
//
// Paths are relative to the bundle's root, '/'-separated, made of [A-Za-z0-9._+-] components
// (no "." or "..", no leading '/'), so no line needs sha256sum's escaping. The manifest does not
// list itself nor its signature (MANIFEST.sha256.minisig).
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

inline constexpr const char* kManifestName = "MANIFEST.sha256";
inline constexpr const char* kSignatureName = "MANIFEST.sha256.minisig";

struct ManifestEntry {
    std::string path, sha256;
};

// Whether `path` may be named in a manifest (see above).
bool isBundlePath(const std::string& path);
// A name made safe for a bundle path component: other characters become '_'.
std::string bundleSafeName(const std::string& name);

// The manifest's text: entries sorted by path.
std::string formatManifest(std::vector<ManifestEntry> entries);
// Strict: every line in the form above, each path once, sorted, text ending in one '\n' — the
// text must be exactly what formatManifest writes for its entries. `source` names the file in
// errors ("FILE:LINE: problem").
Result<std::vector<ManifestEntry>> parseManifest(const std::string& text, const std::string& source);

}  // namespace faultline
