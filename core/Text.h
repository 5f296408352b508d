#pragma once
// Small text helpers shared across core: trimming, and the rule for untrusted text (labels, host
// names, log excerpts) that reaches a terminal, a script or a file name: printable UTF-8, no
// control characters (docs/threat-model.md).
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// `s` without leading and trailing whitespace (spaces, tabs, newlines, ...).
inline std::string trimmed(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
}

// `s` without leading and trailing blanks (spaces and tabs only; log fields keep other bytes).
inline std::string_view trimBlanks(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Whether `s` is one or more ASCII digits.
inline bool allDigits(std::string_view s)
{
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// `s` with ASCII letters in lower case.
inline std::string lowerAscii(std::string s)
{
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The length of the valid UTF-8 sequence at `s[i]` that is not a control character (C0, DEL,
// C1), or 0 when the byte there starts no such sequence.
inline size_t printableCharAt(std::string_view s, size_t i)
{
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x20 || b == 0x7f) return 0;
    if (b < 0x80) return 1;
    size_t n;
    uint32_t cp;
    if ((b & 0xe0) == 0xc0) {
        n = 2;
        cp = b & 0x1f;
    } else if ((b & 0xf0) == 0xe0) {
        n = 3;
        cp = b & 0x0f;
    } else if ((b & 0xf8) == 0xf0) {
        n = 4;
        cp = b & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        const auto c = static_cast<unsigned char>(s[i + k]);
        if ((c & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (c & 0x3f);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;  // overlong, surrogate
    if (cp >= 0x80 && cp <= 0x9f) return 0;                                          // C1 controls
    return n;
}

// Whether `s` is valid UTF-8 with no control characters (no newline, tab, escape, NUL).
inline bool isPrintableText(std::string_view s)
{
    for (size_t i = 0; i < s.size();) {
        const size_t n = printableCharAt(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

// `s` with every control character and invalid byte written as \xHH (a backslash as \\), safe
// to print on a terminal or to put in a one-line message: escape sequences cannot reach it.
inline std::string printableText(std::string_view s)
{
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const size_t n = printableCharAt(s, i);
        if (n == 1 && s[i] == '\\') {
            out += "\\\\";
        } else if (n > 0) {
            out.append(s.substr(i, n));
        } else {
            const auto b = static_cast<unsigned char>(s[i]);
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 15];
            i += 1;
            continue;
        }
        i += n;
    }
    return out;
}

// `items` joined by `separator` ("a, b, c").
inline std::string joinText(const std::vector<std::string>& items, std::string_view separator = ", ")
{
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) s += separator;
        s += items[i];
    }
    return s;
}

// Op indices for a person: "3, 5, 8", at most `shown` of them, then ", …".
template <class Int>
std::string opListText(const std::vector<Int>& ops, size_t shown = 12)
{
    std::string s;
    for (size_t i = 0; i < ops.size() && i < shown; ++i) s += (i ? ", " : "") + std::to_string(ops[i]);
    if (ops.size() > shown) s += ", …";
    return s;
}

// Op indices as an --ops argument: "3,5,8".
template <class Int>
std::string opListArgument(const std::vector<Int>& ops)
{
    std::string s;
    for (size_t i = 0; i < ops.size(); ++i) s += (i ? "," : "") + std::to_string(ops[i]);
    return s;
}

// Single-quoted for sh: any bytes, newlines included, stay one word.
inline std::string shellQuote(const std::string& s)
{
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// `s` for the rest of a `#` comment line of a script: printable (control characters, a newline or
// carriage return among them, written as \xHH), so it cannot end the comment.
inline std::string shellCommentText(std::string_view s)
{
    return printableText(s);
}

}  // namespace faultline
