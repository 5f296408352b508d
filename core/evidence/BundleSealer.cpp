#include "BundleSealer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <vector>

#include "BundleVerifier.h"
#include "Manifest.h"
#include "MessageDigest.h"
#include "MinisignSignature.h"
#include "TarWriter.h"

namespace faultline {

Status writeNewTextFile(const std::string& path, const std::string& text)
{
    std::error_code ec;
    if (std::filesystem::exists(path, ec))
        return fileError(path, "already exists (refusing to overwrite it)");
    std::FILE* f = std::fopen(path.c_str(), "wbx");
    if (!f) return fileError(path, std::strerror(errno));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) return fileError(path, "write failed");
    return {};
}

Result<SealResult> sealBundle(const std::string& dir, const SealOptions& options)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return fileError(dir, "not a directory");
    fs::path root = fs::path(dir).lexically_normal();
    if (!root.has_filename()) root = root.parent_path();
    const std::string rootName = root.filename().string();
    if (!isBundlePath(rootName))
        return fileError(dir, "the bundle folder's name must be made of [A-Za-z0-9._+-]");
    const std::string tarPath = root.string() + ".tar";
    if (options.writeTar && fs::exists(tarPath, ec))
        return fileError(tarPath, "already exists (refusing to overwrite it)");
    for (const char* name : {kManifestName, kSignatureName})
        if (fs::exists(root / name, ec)) return fileError((root / name).string(), "already exists");

    SealResult result;
    if (options.key) {
        if (Status st = writeNewTextFile((root / kSigningKeyName).string(),
                                         formatMinisignPublicKey(options.key->publicPart()));
            !st)
            return st.error();
        result.keyId = options.key->publicPart().keyIdText();
    }
    std::vector<ManifestEntry> entries;
    std::vector<std::string> dirs;
    for (fs::recursive_directory_iterator it(root, ec), end; it != end; it.increment(ec)) {
        if (ec) return fileError(dir, ec.message());
        const std::string rel = it->path().lexically_relative(root).generic_string();
        const fs::file_status st = it->symlink_status(ec);
        if (fs::is_directory(st)) {
            dirs.push_back(rel);
            continue;
        }
        if (!fs::is_regular_file(st)) return fileError(it->path().string(), "not a regular file");
        if (!isBundlePath(rel))
            return fileError(it->path().string(), "not a bundle path ([A-Za-z0-9._+-] only)");
        auto h = sha256FileHex(it->path().string());
        if (!h) return h.error();
        entries.push_back({rel, *h});
    }
    if (entries.empty()) return fileError(dir, "holds no file to seal");
    result.files = entries.size();
    const std::string manifest = formatManifest(entries);
    result.manifestSha256 = toHex(Sha256::of(manifest));
    if (Status st = writeNewTextFile((root / kManifestName).string(), manifest); !st) return st.error();

    const int64_t now = options.mtime ? options.mtime : int64_t(std::time(nullptr));
    if (options.key) {
        std::string trusted = options.trustedComment;
        if (trusted.empty())
            trusted =
                "timestamp:" + std::to_string(now) + "\tfile:" + std::string(kManifestName) + "\thashed";
        auto sig = signMinisign(*options.key, manifest, trusted);
        if (!sig) return sig.error();
        if (Status st = writeNewTextFile((root / kSignatureName).string(), formatMinisignSignature(*sig));
            !st)
            return st.error();
    }
    if (!options.writeTar) return result;

    auto tar = TarWriter::create(tarPath);
    if (!tar) return tar.error();
    std::sort(dirs.begin(), dirs.end());
    if (Status st = tar->addDirectory(rootName, now); !st) return st.error();
    for (const std::string& d : dirs)
        if (Status st = tar->addDirectory(rootName + "/" + d, now); !st) return st.error();
    std::vector<std::string> files;
    for (const ManifestEntry& e : entries) files.push_back(e.path);
    files.push_back(kManifestName);
    if (options.key) files.push_back(kSignatureName);
    std::sort(files.begin(), files.end());
    for (const std::string& f : files)
        if (Status st = tar->addFile(rootName + "/" + f, (root / f).string(), now); !st) return st.error();
    if (Status st = tar->close(); !st) return st.error();
    result.tarPath = tarPath;
    return result;
}

}  // namespace faultline
