#include "XidPayloadDecoder.h"

#include <cctype>
#include <cstdint>
#include <cstdio>

#include "LogText.h"
#include "XidCatalog.h"

namespace faultline {
namespace {

using Fields = std::vector<XidDecodedField>;

bool containsNoCase(std::string_view hay, std::string_view needle)
{
    if (needle.size() > hay.size()) return false;
    for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
        size_t k = 0;
        while (k < needle.size() && std::tolower(static_cast<unsigned char>(hay[i + k])) ==
                                        std::tolower(static_cast<unsigned char>(needle[k])))
            ++k;
        if (k == needle.size()) return true;
    }
    return false;
}

// The decimal number right after the first occurrence of `key` that is followed by one (spaces
// skipped), or -1.
long long numberAfter(std::string_view s, std::string_view key)
{
    for (size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1)) {
        size_t i = at + key.size();
        while (i < s.size() && s[i] == ' ') ++i;
        long long v = 0;
        size_t digits = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && digits < 12) {
            v = v * 10 + (s[i] - '0');
            ++i;
            ++digits;
        }
        if (digits) return v;
    }
    return -1;
}

// A "0x..." token at `pos` (hex digits and '_' separators), or "".
std::string hexAt(std::string_view s, size_t pos)
{
    if (pos + 2 > s.size() || s[pos] != '0' || (s[pos + 1] != 'x' && s[pos + 1] != 'X')) return {};
    size_t i = pos + 2;
    while (i < s.size() && (std::isxdigit(static_cast<unsigned char>(s[i])) || s[i] == '_') && i - pos < 40)
        ++i;
    return i > pos + 2 ? std::string(s.substr(pos, i - pos)) : std::string();
}

std::string firstHex(std::string_view s)
{
    for (size_t i = 0; i + 2 < s.size(); ++i)
        if (std::string h = hexAt(s, i); !h.empty()) return h;
    return {};
}

bool parseHexValue(std::string_view h, uint64_t& out)
{
    if (h.size() < 3) return false;
    uint64_t v = 0;
    int digits = 0;
    for (char c : h.substr(2)) {
        if (c == '_') continue;
        if (++digits > 16) return false;
        v = v * 16 +
            uint64_t(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
    }
    out = v;
    return digits > 0;
}

std::string yesNoAfter(std::string_view s, std::string_view key)
{
    const size_t at = s.find(key);
    if (at == std::string_view::npos) return {};
    std::string_view rest = s.substr(at + key.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.substr(0, 3) == "Yes") return "yes";
    if (rest.substr(0, 2) == "No") return "no";
    return {};
}

void decodeDbe(std::string_view m, Fields& f)
{
    if (containsNoCase(m, "framebuffer") || containsNoCase(m, "dram"))
        f.push_back({"memory", "DRAM (framebuffer)"});
    else if (containsNoCase(m, "sram"))
        f.push_back({"memory", "SRAM"});
    if (long long p = numberAfter(m, " partition"); p >= 0) f.push_back({"partition", std::to_string(p)});
    if (long long p = numberAfter(m, "subpartition"); p >= 0)
        f.push_back({"subpartition", std::to_string(p)});
    if (std::string h = firstHex(m); !h.empty()) f.push_back({"address", h});
}

void decodeRetirement(std::string_view m, Fields& f)
{
    if (containsNoCase(m, "row remap"))
        f.push_back({"mechanism", "row remapping"});
    else if (containsNoCase(m, "page retirement") || containsNoCase(m, "retire"))
        f.push_back({"mechanism", "page retirement"});
    if (containsNoCase(m, "fail"))
        f.push_back({"outcome", "failed"});
    else if (containsNoCase(m, "marked for remapping") || containsNoCase(m, "new page retired") ||
             containsNoCase(m, "new row"))
        f.push_back({"outcome", "pending"});
    if (containsNoCase(m, "reset gpu to activate") || containsNoCase(m, "reset the gpu"))
        f.push_back({"activation", "GPU reset"});
    else if (containsNoCase(m, "reboot to activate"))
        f.push_back({"activation", "reboot"});
    if (std::string h = firstHex(m); !h.empty()) f.push_back({"address", h});
}

// "Contained: SM (0x1). RST: No, D-RST: No" / "Uncontained: LTC TAG (0x2,0x1). RST: Yes, D-RST: No"
void decodeContainment(std::string_view m, Fields& f)
{
    size_t at = m.find("Uncontained:");
    bool contained = false;
    size_t skip = 12;
    if (at == std::string_view::npos) {
        at = m.find("Contained:");
        contained = at != std::string_view::npos;
        skip = 10;
    }
    if (at != std::string_view::npos) {
        f.push_back({"contained", contained ? "yes" : "no"});
        std::string_view rest = m.substr(at + skip);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        size_t end = rest.find_first_of("(.");
        std::string_view unit =
            rest.substr(0, end == std::string_view::npos ? std::min<size_t>(rest.size(), 80) : end);
        while (!unit.empty() && unit.back() == ' ') unit.remove_suffix(1);
        if (!unit.empty()) f.push_back({"unit", std::string(unit)});
        if (end != std::string_view::npos && rest[end] == '(') {
            const size_t close = rest.find(')', end);
            if (close != std::string_view::npos && close - end < 80)
                f.push_back({"location", std::string(rest.substr(end + 1, close - end - 1))});
        }
    }
    if (std::string v = yesNoAfter(m, "D-RST:"); !v.empty()) f.push_back({"drain_and_reset_recommended", v});
    // "RST:" also occurs inside "D-RST:": take the first that is not preceded by '-'.
    for (size_t i = m.find("RST:"); i != std::string_view::npos; i = m.find("RST:", i + 1)) {
        if (i > 0 && m[i - 1] == '-') continue;
        if (std::string v = yesNoAfter(m.substr(i), "RST:"); !v.empty()) f.push_back({"reset_required", v});
        break;
    }
}

// "NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"
void decodeNvlinkRegisters(const XidCatalog& catalog, std::string_view m, Fields& f)
{
    if (containsNoCase(m, "fatal error"))
        f.push_back({"severity", containsNoCase(m, "non-fatal") || containsNoCase(m, "nonfatal") ? "non-fatal"
                                                                                                 : "fatal"});
    const long long link = numberAfter(m, "link ");
    if (link >= 0) f.push_back({"link", std::to_string(link)});
    size_t open = m.find('(', m.find("link "));
    if (link < 0 || open == std::string_view::npos) return;
    const size_t close = m.find(')', open);
    if (close == std::string_view::npos || close - open > 400) return;
    std::vector<uint64_t> regs;
    std::string_view inner = m.substr(open + 1, close - open - 1);
    size_t i = 0;
    while (i < inner.size() && regs.size() < 16) {
        while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
        std::string h = hexAt(inner, i);
        uint64_t v = 0;
        if (h.empty() || !parseHexValue(h, v)) return;
        regs.push_back(v);
        i += h.size();
    }
    std::string all;
    for (size_t r = 0; r < regs.size(); ++r) {
        char buf[24];
        std::snprintf(buf, sizeof buf, "%s0x%llx", r ? " " : "", static_cast<unsigned long long>(regs[r]));
        all += buf;
    }
    f.push_back({"registers", all});
    // Which set bits NVIDIA's workflow names, and which it does not (those it asks to report).
    for (size_t r = 0; r < regs.size(); ++r) {
        uint64_t unexplained = regs[r];
        for (const NvlinkRegisterRule& rule : catalog.nvlinkRules()) {
            if (size_t(rule.reg) != r) continue;
            std::string set;
            for (int b : rule.bits)
                if (b >= 0 && b < 64 && (regs[r] >> b) & 1u) {
                    set += (set.empty() ? "" : ",") + std::to_string(b);
                    unexplained &= ~(uint64_t(1) << b);
                }
            if (!set.empty())
                f.push_back({"register" + std::to_string(r) + " bits " + set, rule.cls + ": " + rule.text});
        }
        const bool evaluated = r == 0 || r == 2 || r == 3 || r == 4;
        if (evaluated && unexplained) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(unexplained));
            f.push_back({"register" + std::to_string(r) + " unlisted bits",
                         std::string(buf) + ": not in NVIDIA's workflow; report a bug"});
        }
    }
}

// "145, RLW_REMAP Nonfatal XC0 i0 Link 00 (0x004505c6 0x00000000 ...)"
void decodeNvlink5(std::string_view m, Fields& f)
{
    const size_t linkAt = m.find("Link ");
    if (linkAt == std::string_view::npos) return;
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < linkAt && words.size() < 8) {
        while (i < linkAt && m[i] == ' ') ++i;
        size_t j = i;
        while (j < linkAt && m[j] != ' ') ++j;
        if (j > i) words.push_back(m.substr(i, j - i));
        i = j;
    }
    if (!words.empty()) f.push_back({"unit", std::string(words[0])});
    if (words.size() > 1) f.push_back({"severity", std::string(words[1])});
    if (long long l = numberAfter(m, "Link "); l >= 0) f.push_back({"link", std::to_string(l)});
    const size_t open = m.find('(', linkAt);
    if (open == std::string_view::npos) return;
    std::string intr = hexAt(m, open + 1);
    if (intr.empty()) return;
    f.push_back({"intr_info", intr});
    size_t next = open + 1 + intr.size();
    while (next < m.size() && (m[next] == ' ' || m[next] == ',')) ++next;
    if (std::string status = hexAt(m, next); !status.empty()) f.push_back({"error_status", status});
}

// "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"
void decodeRecoveryAction(const XidCatalog& catalog, std::string_view m, Fields& f)
{
    auto side = [&](std::string_view key, const char* field) {
        const size_t at = m.find(key);
        if (at == std::string_view::npos) return;
        size_t i = at + key.size();
        std::string h = hexAt(m, i);
        uint64_t v = 0;
        if (h.empty() || !parseHexValue(h, v)) return;
        std::string name;
        i += h.size();
        while (i < m.size() && m[i] == ' ') ++i;
        if (i < m.size() && m[i] == '(') {
            const size_t close = m.find(')', i);
            if (close != std::string_view::npos && close - i < 80)
                name = std::string(m.substr(i + 1, close - i - 1));
        }
        if (name.empty()) name = catalog.recoveryActionName(int(v & 0xff));
        f.push_back({field, name.empty() ? h : name});
        f.push_back({std::string(field) + "_code", std::to_string(v)});
    };
    side("from ", "from");
    side(" to ", "recovery_action");
}

void decodeGrLocation(std::string_view m, Fields& f)
{
    if (long long v = numberAfter(m, "GPC "); v >= 0) f.push_back({"gpc", std::to_string(v)});
    if (long long v = numberAfter(m, "TPC "); v >= 0) f.push_back({"tpc", std::to_string(v)});
    if (long long v = numberAfter(m, "SM "); v >= 0) f.push_back({"sm", std::to_string(v)});
}

void decodeMmuFault(std::string_view m, Fields& f)
{
    if (const size_t at = m.find("faulted @ "); at != std::string_view::npos)
        if (std::string h = hexAt(m, at + 10); !h.empty()) f.push_back({"address", h});
    if (const size_t at = m.find("Fault is of type "); at != std::string_view::npos) {
        std::string_view rest = m.substr(at + 17);
        const size_t end = rest.find_first_of(" ,;");
        f.push_back({"fault_type", std::string(rest.substr(0, std::min<size_t>(end, 80)))});
    }
    if (const size_t at = m.find("ENGINE "); at != std::string_view::npos) {
        std::string_view rest = m.substr(at + 7);
        const size_t end = rest.find(' ');
        f.push_back({"engine", std::string(rest.substr(0, std::min<size_t>(end, 80)))});
    }
}

}  // namespace

std::vector<XidDecodedField> decodeXidPayload(const XidCatalog& catalog, const std::string& decoder,
                                              std::string_view message)
{
    Fields f;
    if (decoder == "dbe")
        decodeDbe(message, f);
    else if (decoder == "retirement")
        decodeRetirement(message, f);
    else if (decoder == "containment")
        decodeContainment(message, f);
    else if (decoder == "nvlink_registers")
        decodeNvlinkRegisters(catalog, message, f);
    else if (decoder == "nvlink5")
        decodeNvlink5(message, f);
    else if (decoder == "recovery_action")
        decodeRecoveryAction(catalog, message, f);
    else if (decoder == "gr_location")
        decodeGrLocation(message, f);
    else if (decoder == "mmu_fault")
        decodeMmuFault(message, f);
    return f;
}

std::string decodedValue(const std::vector<XidDecodedField>& fields, std::string_view name)
{
    for (const XidDecodedField& d : fields)
        if (d.name == name) return d.value;
    return {};
}

}  // namespace faultline
