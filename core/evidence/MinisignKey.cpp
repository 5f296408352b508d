#include "MinisignKey.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "../Base64.h"
#include "../io/SafeFiles.h"

#include <openssl/evp.h>

namespace faultline {
namespace {

constexpr size_t kPublicKeyBytes = 2 + 8 + 32;
constexpr size_t kSecretKeyBytes = 2 + 2 + 2 + 32 + 8 + 8 + 8 + 64 + 32;
constexpr const char* kCommentPrefix = "untrusted comment: ";

// The two lines of a key file: comment (after the prefix) and the base64 line.
Result<std::pair<std::string, std::string>> keyLines(const std::string& text, const std::string& source)
{
    const size_t nl = text.find('\n');
    if (text.rfind(kCommentPrefix, 0) != 0 || nl == std::string::npos)
        return fileError(source, "line 1: not a minisign key file (no \"untrusted comment:\" line)");
    std::string second = text.substr(nl + 1);
    if (const size_t nl2 = second.find('\n'); nl2 != std::string::npos) {
        if (second.find_first_not_of("\r\n \t", nl2) != std::string::npos)
            return fileError(source, "line 3: unexpected text after the key");
        second.resize(nl2);
    }
    while (!second.empty() && (second.back() == '\r' || second.back() == ' ' || second.back() == '\t'))
        second.pop_back();
    if (second.empty()) return fileError(source, "line 2: no key");
    return std::make_pair(text.substr(std::strlen(kCommentPrefix), nl - std::strlen(kCommentPrefix)), second);
}

}  // namespace

std::string MinisignPublicKey::keyIdText() const
{
    char buf[17];
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) v |= uint64_t(keyId[i]) << (8 * i);
    std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(v));
    return buf;
}

Result<MinisignSecretKey> generateMinisignKey()
{
    auto kp = generateEd25519KeyPair();
    if (!kp) return kp.error();
    MinisignSecretKey k;
    k.seed = kp->seed;
    k.publicKey = kp->publicKey;
    if (Status st = randomBytes(k.keyId.data(), k.keyId.size()); !st) return st.error();
    return k;
}

std::string formatMinisignPublicKey(const MinisignPublicKey& key)
{
    std::vector<uint8_t> b = {'E', 'd'};
    b.insert(b.end(), key.keyId.begin(), key.keyId.end());
    b.insert(b.end(), key.key.begin(), key.key.end());
    return std::string(kCommentPrefix) + "minisign public key " + key.keyIdText() + "\n" +
           base64Encode(b.data(), b.size()) + "\n";
}

std::string formatMinisignSecretKey(const MinisignSecretKey& key)
{
    std::vector<uint8_t> b = {'E', 'd', 0, 0, 'B', '2'};
    b.resize(b.size() + 32 + 8 + 8, 0);  // salt, opslimit, memlimit: unused without a kdf
    b.insert(b.end(), key.keyId.begin(), key.keyId.end());
    b.insert(b.end(), key.seed.begin(), key.seed.end());
    b.insert(b.end(), key.publicKey.begin(), key.publicKey.end());
    b.resize(b.size() + 32, 0);  // checksum: zero without a kdf, as minisign -W writes it
    return std::string(kCommentPrefix) + "minisign unencrypted secret key " + key.publicPart().keyIdText() +
           "\n" + base64Encode(b.data(), b.size()) + "\n";
}

Result<MinisignPublicKey> parseMinisignPublicKey(const std::string& text, const std::string& source)
{
    auto lines = keyLines(text, source);
    if (!lines) return lines.error();
    auto b = base64Decode(lines->second);
    if (!b || b->size() != kPublicKeyBytes)
        return fileError(source, "line 2: not a minisign public key (expected base64 of " +
                                     std::to_string(kPublicKeyBytes) + " bytes)");
    if ((*b)[0] != 'E' || (*b)[1] != 'd') return fileError(source, "line 2: unsupported signature algorithm");
    MinisignPublicKey k;
    std::memcpy(k.keyId.data(), b->data() + 2, 8);
    std::memcpy(k.key.data(), b->data() + 10, 32);
    return k;
}

namespace {

// libsodium's pickparams for crypto_pwhash_scryptsalsa208sha256: scrypt's N (as log2), r, p.
void scryptParameters(uint64_t opslimit, uint64_t memlimit, unsigned& nLog2, uint64_t& r, uint64_t& p)
{
    if (opslimit < 32768) opslimit = 32768;
    r = 8;
    uint64_t maxN = 0;
    if (opslimit < memlimit / 32) {
        p = 1;
        maxN = opslimit / (r * 4);
    } else {
        maxN = memlimit / (r * 128);
    }
    for (nLog2 = 1; nLog2 < 63; ++nLog2)
        if ((uint64_t(1) << nLog2) > maxN / 2) break;
    if (!(opslimit < memlimit / 32)) {
        uint64_t maxrp = (opslimit / 4) / (uint64_t(1) << nLog2);
        if (maxrp > 0x3fffffff) maxrp = 0x3fffffff;
        p = maxrp / r;
    }
}

Status decryptSecretKey(std::vector<uint8_t>& b, const std::string& password, const std::string& source)
{
    uint64_t ops = 0, mem = 0;
    for (size_t i = 0; i < 8; ++i) ops |= uint64_t(b[38 + i]) << (8 * i);
    for (size_t i = 0; i < 8; ++i) mem |= uint64_t(b[46 + i]) << (8 * i);
    unsigned nLog2 = 0;
    uint64_t r = 0, p = 0;
    scryptParameters(ops, mem, nLog2, r, p);
    if (nLog2 > 30 || p == 0 || r * p >= (uint64_t(1) << 30))
        return fileError(source, "unsupported key derivation parameters");
    const uint64_t need = 128 * r * (uint64_t(1) << nLog2) + 256 * r * p + (uint64_t(64) << 20);
    std::vector<uint8_t> stream(104);
    if (EVP_PBE_scrypt(password.data(), password.size(), b.data() + 6, 32, uint64_t(1) << nLog2, r, p, need,
                       stream.data(), stream.size()) != 1)
        return fileError(source, "scrypt key derivation failed (not enough memory?)");
    for (size_t i = 0; i < stream.size(); ++i) b[54 + i] ^= stream[i];
    return {};
}

}  // namespace

Result<MinisignSecretKey> parseMinisignSecretKey(const std::string& text, const std::string& source,
                                                 const std::string* password)
{
    auto lines = keyLines(text, source);
    if (!lines) return lines.error();
    auto b = base64Decode(lines->second);
    if (!b || b->size() != kSecretKeyBytes)
        return fileError(source, "line 2: not a minisign secret key (expected base64 of " +
                                     std::to_string(kSecretKeyBytes) + " bytes)");
    const uint8_t* p = b->data();
    if (p[0] != 'E' || p[1] != 'd') return fileError(source, "line 2: unsupported signature algorithm");
    const bool encrypted = p[2] == 'S' && p[3] == 'c';
    if (!encrypted && (p[2] != 0 || p[3] != 0))
        return fileError(source, "line 2: unsupported key derivation function");
    if (p[4] != 'B' || p[5] != '2') return fileError(source, "line 2: unsupported checksum function");
    if (encrypted) {
        if (!password)
            return fileError(source,
                             "the secret key is encrypted with a password: give it in FAULTLINE_KEY_PASSWORD "
                             "or on the terminal (or remove it: minisign -C -W)");
        if (Status st = decryptSecretKey(*b, *password, source); !st) return st.error();
        p = b->data();
    }
    MinisignSecretKey k;
    std::memcpy(k.keyId.data(), p + 54, 8);
    std::memcpy(k.seed.data(), p + 62, 32);
    std::memcpy(k.publicKey.data(), p + 94, 32);
    auto derived = ed25519PublicKeyOf(k.seed);
    if (!derived) return derived.error();
    if (*derived != k.publicKey)
        return fileError(source, encrypted ? "wrong password for this secret key"
                                           : "line 2: damaged secret key (its two halves do not match)");
    return k;
}

Result<std::string> readSmallFile(const std::string& path, size_t limit)
{
    if (Status st = checkRegularInput(path); !st) return st.error();  // a FIFO would block
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fileError(path, std::strerror(errno));
    std::string text;
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        text.append(buf, n);
        if (text.size() > limit) {
            std::fclose(f);
            return fileError(path, "too big (more than " + std::to_string(limit) + " bytes)");
        }
    }
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) return fileError(path, "read error");
    return text;
}

Result<MinisignPublicKey> readMinisignPublicKey(const std::string& path)
{
    auto text = readSmallFile(path, 4096);
    if (!text) return text.error();
    return parseMinisignPublicKey(*text, path);
}

Result<MinisignSecretKey> readMinisignSecretKey(const std::string& path, const std::string* password)
{
    auto text = readSmallFile(path, 4096);
    if (!text) return text.error();
    return parseMinisignSecretKey(*text, path, password);
}

bool isEncryptedMinisignSecretKey(const std::string& path)
{
    auto text = readSmallFile(path, 4096);
    if (!text) return false;
    const size_t nl = text->find('\n');
    if (nl == std::string::npos) return false;
    std::string line = text->substr(nl + 1, 8);
    auto b = base64Decode(line.substr(0, 8));
    return b && b->size() >= 4 && (*b)[2] == 'S' && (*b)[3] == 'c';
}

namespace {

Status writeNewFile(const std::string& path, const std::string& text, mode_t mode)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return fileError(
            path, errno == EEXIST ? "already exists (refusing to overwrite it)" : std::strerror(errno));
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(path.c_str());
            return fileError(path, why);
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) return fileError(path, std::strerror(errno));
    return {};
}

}  // namespace

Status writeMinisignKeyPair(const MinisignSecretKey& key, const std::string& secretKeyPath)
{
    const std::string pubPath = secretKeyPath + ".pub";
    std::error_code ec;
    if (std::filesystem::exists(secretKeyPath, ec))
        return fileError(secretKeyPath, "already exists (refusing to overwrite it)");
    if (std::filesystem::exists(pubPath, ec))
        return fileError(pubPath, "already exists (refusing to overwrite it)");
    if (Status st = writeNewFile(secretKeyPath, formatMinisignSecretKey(key), 0600); !st) return st;
    if (Status st = writeNewFile(pubPath, formatMinisignPublicKey(key.publicPart()), 0644); !st) {
        ::unlink(secretKeyPath.c_str());
        return st;
    }
    return {};
}

Result<MinisignPublicKey> createMinisignKeyPair(const std::string& secretKeyPath)
{
    auto key = generateMinisignKey();
    if (!key) return key.error();
    if (Status st = writeMinisignKeyPair(*key, secretKeyPath); !st) return st.error();
    return key->publicPart();
}

}  // namespace faultline
