#include "BundleVerifier.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "../Text.h"
#include "../io/SafeFiles.h"
#include "Manifest.h"
#include "MessageDigest.h"
#include "MinisignKey.h"
#include "MinisignSignature.h"
#include "TarReader.h"

namespace faultline {
namespace {

constexpr size_t kMaxManifestBytes = 64 << 20;
constexpr size_t kMaxSmallFileBytes = 64 << 10;

// What the bundle holds, however it was stored.
struct BundleContents {
    std::map<std::string, std::string> files;  // path -> SHA-256 hex
    std::set<std::string> directories;         // paths without trailing '/'
    std::map<std::string, std::string> text;   // manifest, signature, signing key: their bytes
    std::vector<BundleProblem> problems;       // found while reading (odd entries, damage)
};

constexpr const char* kCaseName = "case.json";

// Files whose bytes are kept: the manifest, the signature, the signing key, and case.json (which
// names the signing key of a signed bundle). A kept file over its limit is a problem, except
// case.json, which is then only not read.
bool keepsText(const std::string& path)
{
    return path == kManifestName || path == kSignatureName || path == kSigningKeyName || path == kCaseName;
}

size_t keptLimit(const std::string& path)
{
    return path == kManifestName || path == kCaseName ? kMaxManifestBytes : kMaxSmallFileBytes;
}

Result<BundleContents> readDirectory(const std::string& dir)
{
    namespace fs = std::filesystem;
    fs::path root = fs::path(dir).lexically_normal();
    if (!root.has_filename()) root = root.parent_path();
    BundleContents c;
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
    if (ec) return fileError(dir, ec.message());
    for (; it != end; it.increment(ec)) {
        if (ec) return fileError(dir, ec.message());
        const fs::path& p = it->path();
        const std::string rel = p.lexically_relative(root).generic_string();
        const fs::file_status st = it->symlink_status(ec);
        if (fs::is_symlink(st)) {
            c.problems.push_back({rel, "added: a symbolic link (a bundle holds regular files only)"});
        } else if (fs::is_directory(st)) {
            c.directories.insert(rel);
        } else if (fs::is_regular_file(st)) {
            auto h = sha256FileHex(p.string());
            if (!h) return h.error();
            c.files[rel] = *h;
            if (keepsText(rel)) {
                auto t = readSmallFile(p.string(), keptLimit(rel));
                if (t)
                    c.text[rel] = *t;
                else if (rel != kCaseName)
                    c.problems.push_back({rel, t.message()});
            }
        } else {
            c.problems.push_back({rel, "added: not a regular file"});
        }
    }
    return c;
}

// Whether the file starts with a ustar header (magic in place), however damaged the rest is.
bool looksLikeUstar(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    char h[512] = {};
    const bool full = std::fread(h, 1, sizeof h, f) == sizeof h;
    std::fclose(f);
    return full && std::memcmp(h + 257, "ustar", 5) == 0;
}

Result<BundleContents> readArchive(const std::string& path)
{
    auto reader = TarReader::open(path);
    if (!reader) return reader.error();
    BundleContents c;
    std::string root;
    size_t entries = 0;
    while (true) {
        auto e = reader->next();
        if (!e) {
            if (entries == 0 && !looksLikeUstar(path))
                return fileError(path, "not a bundle archive: " + e.message());
            c.problems.push_back({path, "damaged archive: " + e.message()});
            break;
        }
        if (!*e) break;
        ++entries;
        std::string name = (*e)->name;
        const bool isDir = (*e)->type == '5';
        if (isDir && !name.empty() && name.back() == '/') name.pop_back();
        if (root.empty()) root = name.substr(0, name.find('/'));
        if (name == root && isDir) continue;
        if (name.rfind(root + "/", 0) != 0) {
            c.problems.push_back({name, "added: outside the bundle's folder '" + root + "'"});
            continue;
        }
        const std::string rel = name.substr(root.size() + 1);
        if (isDir) {
            c.directories.insert(rel);
        } else if ((*e)->type == '0') {
            if (c.files.count(rel)) {
                c.problems.push_back({rel, "added: appears twice in the archive"});
                continue;
            }
            Sha256 h;
            std::string kept;
            const bool keep = keepsText(rel);
            const size_t limit = keptLimit(rel);
            Status st = reader->readData([&](const char* d, size_t n) {
                h.update(d, n);
                if (keep && kept.size() <= limit) kept.append(d, n);
            });
            if (!st) {
                c.problems.push_back({path, "damaged archive: " + st.message()});
                break;
            }
            c.files[rel] = toHex(h.finish());
            if (keep) {
                if (kept.size() <= limit)
                    c.text[rel] = kept;
                else if (rel != kCaseName)
                    c.problems.push_back({rel, "too big"});
            }
        } else {
            c.problems.push_back(
                {rel, std::string("added: not a regular file (tar type '") + (*e)->type + "')"});
        }
    }
    return c;
}

bool isParentOfListed(const std::string& dir, const std::vector<ManifestEntry>& entries)
{
    for (const ManifestEntry& e : entries)
        if (e.path.rfind(dir + "/", 0) == 0) return true;
    return false;
}

// How the bundle says it was signed ("" when it does not): a signing key listed in its manifest
// or present, or case.json's case.signed_by. A bundle that says so and has no signature had it
// stripped.
std::string namedSigningKey(const BundleContents& c, const std::vector<ManifestEntry>* entries)
{
    std::string named;
    bool listed = c.files.count(kSigningKeyName) > 0;
    if (entries)
        for (const ManifestEntry& e : *entries) listed = listed || e.path == kSigningKeyName;
    if (listed) named = std::string(kSigningKeyName) + " is in the bundle";
    if (auto t = c.text.find(kCaseName); t != c.text.end()) {
        const nlohmann::json j = nlohmann::json::parse(t->second, nullptr, false);
        if (j.is_object() && j.contains("case") && j["case"].is_object()) {
            const nlohmann::json& by = j["case"].value("signed_by", nlohmann::json());
            if (by.is_string() && !by.get<std::string>().empty())
                named += (named.empty() ? "" : "; ") + std::string(kCaseName) +
                         " says it was signed with key " + printableText(by.get<std::string>());
        }
    }
    return named;
}

void checkSignature(BundleCheck& check, const BundleContents& c, const std::string& pubkeyPath,
                    const MinisignPublicKey* givenKey, const std::vector<ManifestEntry>* entries)
{
    auto sigText = c.text.find(kSignatureName);
    auto manifest = c.text.find(kManifestName);
    if (sigText == c.text.end()) {
        const std::string named = namedSigningKey(c, entries);
        if (givenKey) {
            check.problems.push_back({kSignatureName, "missing: the bundle is not signed"});
        } else if (!named.empty()) {
            check.signature = BundleCheck::Signature::Invalid;
            check.problems.push_back(
                {kSignatureName, "missing: the bundle was signed (" + named + ") but its signature is gone"});
        } else {
            check.notes.push_back("unsigned: the bundle has no " + std::string(kSignatureName) +
                                  " and names no signing key; only --pubkey proves a bundle was signed");
        }
        return;
    }
    auto sig = parseMinisignSignature(sigText->second, kSignatureName);
    if (!sig) {
        check.signature = BundleCheck::Signature::Invalid;
        check.problems.push_back({kSignatureName, "changed: " + sig.message()});
        return;
    }
    check.keyId = MinisignPublicKey{sig->keyId, {}}.keyIdText();
    check.trustedComment = sig->trustedComment;
    if (formatMinisignSignature(*sig) != sigText->second)
        check.problems.push_back({kSignatureName, "changed: not in the form it was written in"});
    if (sig->untrustedComment != kMinisignDefaultComment)
        check.problems.push_back({kSignatureName, "changed: the untrusted comment is not \"" +
                                                      std::string(kMinisignDefaultComment) + "\""});
    MinisignPublicKey key;
    if (givenKey) {
        key = *givenKey;
        check.keySource = pubkeyPath;
    } else {
        auto bundled = c.text.find(kSigningKeyName);
        if (bundled == c.text.end()) {
            check.signature = BundleCheck::Signature::Invalid;
            check.problems.push_back({kSigningKeyName, "missing: no public key to check the signature with"});
            return;
        }
        auto k = parseMinisignPublicKey(bundled->second, kSigningKeyName);
        if (!k) {
            check.signature = BundleCheck::Signature::Invalid;
            check.problems.push_back({kSigningKeyName, "changed: " + k.message()});
            return;
        }
        key = *k;
        check.keySource = std::string(kSigningKeyName) + " in the bundle";
        check.notes.push_back(
            "the signature was checked with the bundle's own public key: it proves the files "
            "are as signed, not who signed them; pass --pubkey KEY.pub for that");
    }
    if (manifest == c.text.end()) {
        check.signature = BundleCheck::Signature::Invalid;
        return;  // the missing manifest is reported already
    }
    const std::string why = minisignVerifyProblem(key, *sig, manifest->second);
    if (why.empty()) {
        check.signature = BundleCheck::Signature::Valid;
    } else {
        check.signature = BundleCheck::Signature::Invalid;
        check.problems.push_back(
            {kSignatureName, "invalid: " + why + " (" + kManifestName + " or its signature was changed)"});
    }
}

}  // namespace

Result<BundleCheck> verifyBundle(const std::string& dirOrTar, const std::string& pubkeyPath)
{
    std::optional<MinisignPublicKey> givenKey;
    if (!pubkeyPath.empty()) {
        auto k = readMinisignPublicKey(pubkeyPath);
        if (!k) return k.error();
        givenKey = *k;
    }
    std::error_code ec;
    if (!std::filesystem::exists(dirOrTar, ec))
        return fileError(dirOrTar, "no such file or directory", ErrorCode::Usage);
    const bool isDir = std::filesystem::is_directory(dirOrTar, ec);
    if (!isDir)
        if (Status st = checkRegularInput(dirOrTar); !st) return st.error();  // a FIFO would block
    auto contents = isDir ? readDirectory(dirOrTar) : readArchive(dirOrTar);
    if (!contents) return contents.error();
    BundleContents& c = *contents;
    BundleCheck check;
    check.source = dirOrTar;
    check.problems = c.problems;
    auto manifestText = c.text.find(kManifestName);
    if (manifestText == c.text.end()) {
        check.problems.push_back({kManifestName, "missing"});
        checkSignature(check, c, pubkeyPath, givenKey ? &*givenKey : nullptr, nullptr);
        return check;
    }
    auto entries = parseManifest(manifestText->second, kManifestName);
    if (!entries) {
        check.problems.push_back({kManifestName, "changed: " + entries.message()});
        checkSignature(check, c, pubkeyPath, givenKey ? &*givenKey : nullptr, nullptr);
        return check;
    }
    std::set<std::string> listed;
    for (const ManifestEntry& e : *entries) {
        listed.insert(e.path);
        auto f = c.files.find(e.path);
        if (f == c.files.end()) {
            check.problems.push_back({e.path, "removed: listed in MANIFEST.sha256 but not in the bundle"});
        } else {
            ++check.filesChecked;
            if (f->second != e.sha256)
                check.problems.push_back({e.path, "changed: its SHA-256 differs from MANIFEST.sha256"});
        }
    }
    for (const auto& [path, digest] : c.files)
        if (!listed.count(path) && path != kManifestName && path != kSignatureName)
            check.problems.push_back({path, "added: not listed in MANIFEST.sha256"});
    for (const std::string& dir : c.directories)
        if (!isParentOfListed(dir, *entries))
            check.problems.push_back({dir + "/", "added: a folder with no listed file"});
    checkSignature(check, c, pubkeyPath, givenKey ? &*givenKey : nullptr, &*entries);
    return check;
}

std::string bundleCheckText(const BundleCheck& check)
{
    std::string out;
    if (check.intact()) {
        out +=
            check.source + ": intact, " + std::to_string(check.filesChecked) + " files match MANIFEST.sha256";
        if (check.signature == BundleCheck::Signature::Valid)
            out += "; signature valid (key " + check.keyId + ", checked with " + check.keySource + ")";
        out += "\n";
        if (!check.trustedComment.empty()) out += "  trusted comment: " + check.trustedComment + "\n";
    } else {
        out += check.source + ": NOT intact, " + std::to_string(check.problems.size()) + " problem(s)\n";
        for (const BundleProblem& p : check.problems) out += "  " + p.path + ": " + p.what + "\n";
    }
    for (const std::string& n : check.notes) out += "  note: " + n + "\n";
    return out;
}

}  // namespace faultline
