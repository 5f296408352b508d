#include "MinisignSignature.h"

#include <cstring>
#include <vector>

#include "../Base64.h"
#include "MessageDigest.h"

namespace faultline {
namespace {

constexpr const char* kUntrusted = "untrusted comment: ";
constexpr const char* kTrusted = "trusted comment: ";

std::string signedPart(const MinisignSignature& sig, const std::string& message)
{
    if (!sig.prehashed) return message;
    const Blake2b512Digest h = Blake2b512::of(message);
    return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}

std::string globalPart(const MinisignSignature& sig)
{
    return std::string(reinterpret_cast<const char*>(sig.signature.data()), sig.signature.size()) +
           sig.trustedComment;
}

bool hasLineBreak(const std::string& s)
{
    return s.find_first_of("\r\n") != std::string::npos;
}

}  // namespace

Result<MinisignSignature> signMinisign(const MinisignSecretKey& key, const std::string& message,
                                       const std::string& trustedComment, const std::string& untrustedComment)
{
    if (hasLineBreak(trustedComment) || hasLineBreak(untrustedComment))
        return Error{"minisign: a comment must be one line", ErrorCode::Usage};
    MinisignSignature sig;
    sig.untrustedComment = untrustedComment;
    sig.trustedComment = trustedComment;
    sig.prehashed = true;
    sig.keyId = key.keyId;
    auto s = ed25519Sign(key.seed, signedPart(sig, message));
    if (!s) return s.error();
    sig.signature = *s;
    auto g = ed25519Sign(key.seed, globalPart(sig));
    if (!g) return g.error();
    sig.globalSignature = *g;
    return sig;
}

std::string formatMinisignSignature(const MinisignSignature& sig)
{
    std::vector<uint8_t> b = {'E', uint8_t(sig.prehashed ? 'D' : 'd')};
    b.insert(b.end(), sig.keyId.begin(), sig.keyId.end());
    b.insert(b.end(), sig.signature.begin(), sig.signature.end());
    return std::string(kUntrusted) + sig.untrustedComment + "\n" + base64Encode(b.data(), b.size()) + "\n" +
           kTrusted + sig.trustedComment + "\n" +
           base64Encode(sig.globalSignature.data(), sig.globalSignature.size()) + "\n";
}

Result<MinisignSignature> parseMinisignSignature(const std::string& text, const std::string& source)
{
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos < text.size() && lines.size() < 5) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(pos, nl - pos);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.pop_back();
        lines.push_back(std::move(line));
        pos = nl + 1;
    }
    while (lines.size() > 4 && lines.back().empty()) lines.pop_back();
    if (lines.size() != 4) return fileError(source, "not a minisign signature (expected 4 lines)");
    if (lines[0].rfind(kUntrusted, 0) != 0)
        return fileError(source + ":1", "expected \"untrusted comment: \"");
    if (lines[2].rfind(kTrusted, 0) != 0) return fileError(source + ":3", "expected \"trusted comment: \"");
    MinisignSignature sig;
    sig.untrustedComment = lines[0].substr(std::strlen(kUntrusted));
    sig.trustedComment = lines[2].substr(std::strlen(kTrusted));
    auto s = base64Decode(lines[1]);
    if (!s || s->size() != 74)
        return fileError(source + ":2", "not a minisign signature line (base64 of 74 bytes)");
    if ((*s)[0] != 'E' || ((*s)[1] != 'D' && (*s)[1] != 'd'))
        return fileError(source + ":2", "unsupported signature algorithm");
    sig.prehashed = (*s)[1] == 'D';
    std::memcpy(sig.keyId.data(), s->data() + 2, 8);
    std::memcpy(sig.signature.data(), s->data() + 10, 64);
    auto g = base64Decode(lines[3]);
    if (!g || g->size() != 64)
        return fileError(source + ":4", "not a global signature line (base64 of 64 bytes)");
    std::memcpy(sig.globalSignature.data(), g->data(), 64);
    return sig;
}

std::string minisignVerifyProblem(const MinisignPublicKey& key, const MinisignSignature& sig,
                                  const std::string& message)
{
    if (sig.keyId != key.keyId)
        return "signed by key " + MinisignPublicKey{sig.keyId, {}}.keyIdText() + ", not by key " +
               key.keyIdText();
    if (!ed25519Verify(key.key, signedPart(sig, message), sig.signature))
        return "the signature does not match";
    if (!ed25519Verify(key.key, globalPart(sig), sig.globalSignature))
        return "the trusted comment's signature does not match";
    return {};
}

}  // namespace faultline
