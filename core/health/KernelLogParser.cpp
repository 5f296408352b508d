#include "KernelLogParser.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "../Text.h"
#include "BusId.h"
#include "LogLineReader.h"
#include "LogText.h"

namespace faultline {
namespace {

// Malformed driver lines named one by one in the warnings; the rest are counted.
constexpr uint64_t kListedMalformed = 10;
// Beyond the caps, the first event of each (GPU, kind, code) is still kept, up to this many, so a
// code first seen late still reaches the recommendation with its catalogue entry.
constexpr size_t kMaxRepresentativeEvents = 4096;
// Distinct (GPU, kind, code) counted beyond the caps; more are counted without their GPU.
constexpr size_t kMaxTallies = 65536;

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

size_t leadingDigits(std::string_view s)
{
    size_t n = 0;
    while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
    return n;
}

std::string capped(std::string_view s, size_t n)
{
    return validUtf8(s, n);
}

// "pid=1234" / "pid='<unknown>'" / "pid=<unknown>": the number or nothing.
std::optional<int64_t> pidValue(std::string_view v)
{
    if (!allDigits(v) || v.size() > 18) return std::nullopt;
    return std::strtoll(std::string(v).c_str(), nullptr, 10);
}

// The event number after the PCI field: "79, ..." → 79; else why not ("negative Xid number").
std::optional<int> eventNumber(std::string_view rest, const char* kind, std::string& problem)
{
    const std::string k = kind;
    if (rest.size() > 1 && rest.front() == '-' && std::isdigit(static_cast<unsigned char>(rest[1]))) {
        problem = "negative " + k + " number";
        return std::nullopt;
    }
    const size_t digits = leadingDigits(rest);
    if (digits == 0) {
        problem = rest.empty() ? "cut short after the PCI field" : "no " + k + " number";
        return std::nullopt;
    }
    if (digits > 6) {
        problem = k + " number out of range (" + std::to_string(digits) + " digits)";
        return std::nullopt;
    }
    if (digits < rest.size() && rest[digits] != ',' && rest[digits] != ' ') {
        problem = "no " + k + " number";
        return std::nullopt;
    }
    return std::atoi(std::string(rest.substr(0, digits)).c_str());
}

}  // namespace

KernelLogParser::KernelLogParser(std::string source, KernelLogBudget* budget)
    : m_source(std::move(source)),
      m_ownBudget(budget ? nullptr : std::make_unique<KernelLogBudget>()),
      m_budget(budget ? budget : m_ownBudget.get())
{
}

Error KernelLogParser::lineError(uint64_t lineNumber, const std::string& problem) const
{
    return Error{m_source + ":" + std::to_string(lineNumber) + ": " + problem, ErrorCode::Format};
}

void KernelLogParser::malformed(uint64_t lineNumber, const std::string& problem, std::string_view rawLine)
{
    if (m_malformed++ < kListedMalformed)
        m_out.warnings.push_back(m_source + ":" + std::to_string(lineNumber) + ": " + problem +
                                 ", skipped: " + capped(rawLine, 200));
}

void KernelLogParser::noteBoot(const Meta& meta)
{
    if (!meta.bootId.empty()) {
        if (!m_lastBootId.empty() && meta.bootId != m_lastBootId) ++m_boot;
        m_lastBootId = meta.bootId;
    } else if (meta.uptime) {
        // The kernel's stamps start again at 0 after a reboot.
        if (m_sawStamp && *meta.uptime < m_lastUptime && !m_bootMarkerPending) ++m_boot;
        m_sawStamp = true;
        m_lastUptime = *meta.uptime;
    }
    m_bootMarkerPending = false;
    if (!m_out.boots.empty() && m_out.boots.back().index == m_boot) return;
    if (m_out.boots.size() >= kMaxKeptBoots) {
        ++m_bootsNotKept;
        return;
    }
    m_out.boots.push_back(
        {m_boot, meta.bootId, meta.time, meta.uptime, m_source + ":" + std::to_string(m_lineNumber)});
}

Status KernelLogParser::addLine(std::string_view line, uint64_t lineNumber, bool cut)
{
    ++m_out.lines;
    m_lineNumber = lineNumber;
    if (cut) ++m_cutLines;
    const std::string_view t = trimBlanks(line);
    if (t.empty()) return {};
    if (m_mode == Mode::Unknown) {
        m_mode = t.front() == '{' ? Mode::Json : Mode::Text;
        m_out.journalJson = m_mode == Mode::Json;
    }
    if (m_mode == Mode::Json) return addJournalJson(t, lineNumber, cut);
    if (t.size() >= 6 && t.substr(0, 3) == "-- " && t.substr(t.size() - 3) == " --") {
        // journalctl's own lines: "-- Boot <id> --" / "-- Reboot --" separate boots; "-- Journal
        // begins at ... --", "-- No entries --" carry nothing.
        if ((t.substr(0, 8) == "-- Boot " || t == "-- Reboot --") && m_sawContent) {
            ++m_boot;
            m_bootMarkerPending = true;
        }
        return {};
    }
    const KernelLogLine parts = splitKernelLogLine(t);
    Meta meta;
    meta.time = parts.time;
    meta.uptime = parts.uptime;
    m_sawContent = true;
    addMessage(parts.message, parts.fromKernel, line, meta, lineNumber);
    return {};
}

Status KernelLogParser::addJournalJson(std::string_view line, uint64_t lineNumber, bool cut)
{
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        if (cut) {
            ++m_badJsonLines;
            return {};
        }
        return lineError(lineNumber,
                         "not a journal entry (journalctl -o json writes one JSON object per line)");
    }
    auto it = j.find("MESSAGE");
    if (it == j.end() || it->is_null()) {
        ++m_nonMessageLines;
        return {};
    }
    std::string message;
    if (it->is_string()) {
        message = it->get<std::string>();
    } else if (it->is_array()) {
        // journald stores messages that are not valid UTF-8 as an array of byte values.
        for (const auto& b : *it) {
            if (!b.is_number_unsigned() || b.get<uint64_t>() > 255)
                return lineError(lineNumber, "MESSAGE is an array that does not hold byte values");
            message.push_back(static_cast<char>(b.get<uint64_t>()));
            if (message.size() >= kMaxLogLineBytes) break;
        }
    } else {
        return lineError(lineNumber, "MESSAGE is neither a string nor a byte array");
    }
    Meta meta;
    auto field = [&](const char* key) -> std::string {
        auto f = j.find(key);
        return f != j.end() && f->is_string() ? f->get<std::string>() : std::string();
    };
    if (std::string rt = field("__REALTIME_TIMESTAMP"); allDigits(rt) && rt.size() <= 19)
        meta.time = epochMicrosToIso(std::strtoull(rt.c_str(), nullptr, 10));
    if (std::string mono = field("__MONOTONIC_TIMESTAMP"); allDigits(mono) && mono.size() <= 19)
        meta.uptime = double(std::strtoull(mono.c_str(), nullptr, 10)) / 1e6;
    meta.bootId = capped(field("_BOOT_ID"), 64);
    // Only the kernel's entries: journald sets _TRANSPORT itself (a process cannot), whereas
    // SYSLOG_IDENTIFIER=kernel is what `logger -t kernel` writes too.
    const bool fromKernel = field("_TRANSPORT") == "kernel";
    // The kernel's own stamp inside the message, if any, is not needed: the journal's are kept.
    addMessage(stripKernelStamp(message), fromKernel, message, meta, lineNumber);
    return {};
}

size_t KernelLogParser::estimatedBytes(std::string_view rawLine, std::string_view message,
                                       uint64_t lineNumber) const
{
    return std::min(rawLine.size(), kMaxStoredLineBytes) + std::min(message.size(), kMaxStoredLineBytes) +
           m_source.size() + 1 + std::to_string(lineNumber).size();
}

XidEvent KernelLogParser::makeEvent(std::string_view rawLine, const Meta& meta, uint64_t lineNumber) const
{
    XidEvent e;
    e.time = meta.time;
    e.uptimeSeconds = meta.uptime;
    e.boot = m_boot;
    e.bootId = meta.bootId;
    e.rawLine = capped(rawLine, kMaxStoredLineBytes);
    e.source = m_source + ":" + std::to_string(lineNumber);
    return e;
}

bool KernelLogParser::admit(const std::string& bus, XidEvent::Kind kind, int code, size_t bytes)
{
    KernelLogBudget& b = *m_budget;
    auto key = std::make_tuple(bus, int(kind), code);
    const bool room = b.keptEvents < kMaxKeptEvents && b.keptBytes + bytes <= kMaxKeptEventBytes;
    const bool representative =
        !room && b.representatives < kMaxRepresentativeEvents && b.keptKinds.count(key) == 0;
    if (room || representative) {
        ++(room ? b.keptEvents : b.representatives);
        b.keptBytes += bytes;
        b.keptKinds.insert(std::move(key));
        return true;
    }
    ++m_out.eventsNotKept;
    if (m_tallies.size() >= kMaxTallies && m_tallies.count(key) == 0) std::get<0>(key).clear();
    ++m_tallies[key];
    return false;
}

void KernelLogParser::store(XidEvent&& e, size_t admitted)
{
    // Text replaced as invalid UTF-8 may have grown: account for what is kept.
    const size_t bytes = e.rawLine.size() + e.message.size() + e.source.size() + e.process.size();
    m_budget->keptBytes += bytes - std::min(bytes, admitted);
    m_out.events.push_back(std::move(e));
}

void KernelLogParser::noteBootBanner(std::string_view m, const Meta& meta)
{
    const bool banner = startsWith(m, "Linux version ");
    // "Command line:" follows the banner; alone (a log that starts after it) it marks the boot.
    const bool startsBoot = banner || (startsWith(m, "Command line: ") && !m_lastWasBanner);
    m_lastWasBanner = banner;
    // The journal's boot id tells its boots apart already, and a separator line ("-- Boot ... --")
    // may have just counted this one.
    if (startsBoot && meta.bootId.empty() && m_sawMessage && !m_bootMarkerPending) {
        ++m_boot;
        m_bootMarkerPending = true;
    }
    if (startsBoot || meta.uptime || !meta.bootId.empty()) noteBoot(meta);
}

bool KernelLogParser::noteReset(std::string_view m, const Meta& meta)
{
    std::string lower(m.substr(0, 512));
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Said of a reset done, not one asked for ("GPU reset required", "recovery action ... Reset").
    static constexpr std::string_view kPhrases[] = {
        "has been reset",     "was reset",      "was successfully reset", "resetting gpu",
        "gpu reset complete", "gpu reset done", "gpu reset succeeded"};
    if (std::none_of(std::begin(kPhrases), std::end(kPhrases),
                     [&](std::string_view p) { return lower.find(p) != std::string::npos; }))
        return false;
    // The GPU: the first word that is a bus id ("PCI:0000:3b:00:", "0000:3b:00.0:", "(PCI:...)").
    std::string bus;
    size_t at = 0;
    while (bus.empty() && at < m.size()) {
        const size_t end = std::min(m.find(' ', at), m.size());
        std::string_view word = m.substr(at, end - at);
        while (!word.empty() && (word.front() == '(' || word.front() == '[')) word.remove_prefix(1);
        while (!word.empty() &&
               (word.back() == ':' || word.back() == ',' || word.back() == ')' || word.back() == ']'))
            word.remove_suffix(1);
        if (word.find(':') != std::string_view::npos) bus = normalizeBusId(word);
        at = end + 1;
    }
    if (bus.empty()) return false;
    noteBoot(meta);
    if (m_out.resets.size() >= kMaxKeptResets) {
        ++m_resetsNotKept;
        return true;
    }
    m_out.resets.push_back({m_boot, meta.bootId, bus, meta.time, meta.uptime, capped(m, kMaxStoredLineBytes),
                            m_source + ":" + std::to_string(m_lineNumber)});
    return true;
}

void KernelLogParser::addMessage(std::string_view message, bool fromKernel, std::string_view rawLine,
                                 const Meta& meta, uint64_t lineNumber)
{
    const std::string_view m = trimBlanks(message);
    if (fromKernel && (startsWith(m, "Linux version ") || startsWith(m, "Command line: "))) {
        noteBootBanner(m, meta);
        m_sawMessage = true;
        return;
    }
    m_sawMessage = true;
    if (fromKernel) {
        m_lastWasBanner = false;
        if (startsWith(m, "NVRM: Xid (")) return parseXid(m.substr(11), rawLine, meta, lineNumber);
        // "NVRM: GPU at PCI:0000:3b:00: GPU has been reset", "NVRM: GPU 0000:3b:00.0: GPU reset complete"
        if (startsWith(m, "NVRM: ") && noteReset(m.substr(6), meta)) return;
        // "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, ..."
        if (const size_t at = m.find(": SXid ("); at != std::string_view::npos && at > 0 && at <= 64 &&
                                                  m.substr(0, at).find(' ') == std::string_view::npos)
            return parseSxid(m.substr(0, at), m.substr(at + 8), rawLine, meta, lineNumber);
        if (startsWith(m, "NVRM: GPU at ") || startsWith(m, "NVRM: GPU Board Serial Number: "))
            return noteIdentity(m, meta);
    }
    // Text that is not the kernel's driver line but mentions one: counted, never an event.
    auto mention = [&](Mentions& x) {
        if (x.count++ == 0) x.firstLine = lineNumber;
    };
    if (rawLine.find("Xid") != std::string_view::npos) {
        if (rawLine.find("NVRM: Xid") != std::string_view::npos)
            mention(m_foreignXid);
        else if (rawLine.find("SXid (") != std::string_view::npos)
            mention(m_foreignOther);
    } else if (rawLine.find("NVRM: GPU at ") != std::string_view::npos ||
               rawLine.find("NVRM: GPU Board Serial Number") != std::string_view::npos) {
        mention(m_foreignOther);
    }
    if (meta.uptime || !meta.bootId.empty()) noteBoot(meta);
}

void KernelLogParser::noteIdentity(std::string_view m, const Meta& meta)
{
    noteBoot(meta);
    if (startsWith(m, "NVRM: GPU at ")) {
        // "NVRM: GPU at PCI:0000:3b:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7"
        m_lastGpuAtBus.clear();
        const std::string_view rest = m.substr(13);
        const size_t sep = rest.find(": GPU-");
        if (sep == std::string_view::npos) return;
        const std::string bus = normalizeBusId(rest.substr(0, sep));
        std::string_view uuid = trimBlanks(rest.substr(sep + 2));
        uuid = uuid.substr(0, uuid.find(' '));
        if (bus.empty() || uuid.size() > 64) return;
        if (m_budget->identityGpus.count(bus) == 0) {
            if (m_budget->identityGpus.size() >= kMaxGpus) {
                ++m_identitiesNotKept;
                return;
            }
            m_budget->identityGpus.insert(bus);
        }
        GpuIdentity& id = m_out.identities[bus];
        id.busId = bus;
        id.uuid = capped(uuid, 64);
        m_lastGpuAtBus = bus;
        return;
    }
    const std::string_view serial = trimBlanks(m.substr(31)).substr(0, 64);
    if (!m_lastGpuAtBus.empty() && !serial.empty())
        m_out.identities[m_lastGpuAtBus].serial = capped(serial, 64);
}

// After "NVRM: Xid (": "PCI:0000:3b:00[ GPU-I:n[ GPU-CI:n]]): N[, pid=…][, name=…], message"
void KernelLogParser::parseXid(std::string_view s, std::string_view rawLine, const Meta& meta,
                               uint64_t lineNumber)
{
    m_lastSxid.valid = false;
    const size_t close = s.find("): ");
    const size_t closeEnd = s.find(')');
    if (closeEnd == std::string_view::npos || closeEnd > 96)
        return malformed(lineNumber, "malformed Xid line (no \"(PCI:...)\" field)", rawLine);
    std::string_view where = s.substr(0, closeEnd);
    std::string_view rest = close == closeEnd ? s.substr(close + 3) : s.substr(closeEnd + 1);
    if (close != closeEnd) {
        // "(PCI:0000:3b:00):79" without the space: tolerated; anything else is not an Xid line.
        if (rest.empty() || rest.front() != ':')
            return malformed(lineNumber, "malformed Xid line (expected \"): \" after the PCI field)",
                             rawLine);
        rest = trimBlanks(rest.substr(1));
    }
    std::string problem;
    const std::optional<int> code = eventNumber(rest, "Xid", problem);
    if (!code) return malformed(lineNumber, "malformed Xid line (" + problem + ")", rawLine);
    rest = rest.substr(leadingDigits(rest));
    noteBoot(meta);
    // The PCI field: "PCI:0000:3b:00", then optional " GPU-I:05" and " GPU-CI:01".
    std::string_view bus = where;
    const size_t sp = where.find(' ');
    if (sp != std::string_view::npos) bus = where.substr(0, sp);
    std::string busId = normalizeBusId(bus);
    const size_t estimate = estimatedBytes(rawLine, rest, lineNumber);
    if (!admit(busId, XidEvent::Kind::Xid, *code, estimate)) return;
    XidEvent e = makeEvent(rawLine, meta, lineNumber);
    e.kind = XidEvent::Kind::Xid;
    e.code = *code;
    e.busId = std::move(busId);
    if (sp != std::string_view::npos) {
        std::string_view mig = where.substr(sp + 1);
        while (!mig.empty()) {
            mig = trimBlanks(mig);
            const size_t end = mig.find(' ');
            const std::string_view tok = mig.substr(0, end);
            if (tok.substr(0, 6) == "GPU-I:")
                e.gpuInstance = capped(tok.substr(6), 16);
            else if (tok.substr(0, 7) == "GPU-CI:")
                e.computeInstance = capped(tok.substr(7), 16);
            if (end == std::string_view::npos) break;
            mig = mig.substr(end);
        }
    }
    if (!e.busId.empty()) {
        if (auto it = m_out.identities.find(e.busId); it != m_out.identities.end()) {
            e.uuid = it->second.uuid;
            e.serial = it->second.serial;
        }
    }
    if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
    rest = trimBlanks(rest);
    // Optional "pid=…" and "name=…", each followed by ", ".
    auto takeField = [&](std::string_view key, std::string& value) {
        if (rest.substr(0, key.size()) != key) return false;
        std::string_view v = rest.substr(key.size());
        const size_t end = v.find(", ");
        value = capped(v.substr(0, end), 256);
        rest = end == std::string_view::npos ? std::string_view() : v.substr(end + 2);
        return true;
    };
    std::string pidText;
    if (takeField("pid=", pidText)) {
        std::string_view p = pidText;
        if (p.size() >= 2 && p.front() == '\'' && p.back() == '\'') p = p.substr(1, p.size() - 2);
        e.pid = pidValue(p);
    }
    std::string name;
    if (takeField("name=", name) && name != "<unknown>" && name != "'<unknown>'") e.process = name;
    e.message = capped(trimBlanks(rest), kMaxStoredLineBytes);
    store(std::move(e), estimate);
}

// "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error";
// `s` is what follows "SXid (".
void KernelLogParser::parseSxid(std::string_view device, std::string_view s, std::string_view rawLine,
                                const Meta& meta, uint64_t lineNumber)
{
    const bool continues = m_lastSxid.valid;
    m_lastSxid.valid = false;
    const size_t close = s.find("): ");
    if (close == std::string_view::npos || close > 96)
        return malformed(lineNumber, "malformed SXid line (no \"(PCI:...): \" field)", rawLine);
    std::string_view rest = s.substr(close + 3);
    std::string problem;
    const std::optional<int> code = eventNumber(rest, "SXid", problem);
    if (!code) return malformed(lineNumber, "malformed SXid line (" + problem + ")", rawLine);
    rest = trimBlanks(rest.substr(leadingDigits(rest)));
    if (!rest.empty() && rest.front() == ',') rest = trimBlanks(rest.substr(1));
    const std::string bus = normalizeBusId(s.substr(0, close));
    // "Data {0x...}" lines continue the SXid before them (dropped with it when it was not kept).
    if (rest.substr(0, 6) == "Data {" && continues && m_lastSxid.code == *code && m_lastSxid.bus == bus) {
        m_lastSxid.valid = true;
        if (!m_lastSxid.kept) return;
        XidEvent& prev = m_out.events.back();
        if (prev.message.size() < kMaxStoredLineBytes) {
            const size_t before = prev.message.size();
            prev.message = capped(prev.message + "; " + std::string(rest), kMaxStoredLineBytes);
            m_budget->keptBytes += prev.message.size() - before;
        }
        return;
    }
    noteBoot(meta);
    m_lastSxid.valid = true;
    m_lastSxid.code = *code;
    m_lastSxid.bus = bus;
    const size_t estimate = estimatedBytes(rawLine, rest, lineNumber);
    m_lastSxid.kept = admit(bus, XidEvent::Kind::SXid, *code, estimate);
    if (!m_lastSxid.kept) return;
    XidEvent e = makeEvent(rawLine, meta, lineNumber);
    e.kind = XidEvent::Kind::SXid;
    e.code = *code;
    e.busId = bus;
    e.device = capped(device, 64);
    e.message = capped(rest, kMaxStoredLineBytes);
    store(std::move(e), estimate);
}

KernelLogContents KernelLogParser::finish()
{
    // Identity lines may follow an early Xid of the same GPU in the same file: fill in afterwards.
    for (XidEvent& e : m_out.events) {
        if (e.kind != XidEvent::Kind::Xid || e.busId.empty()) continue;
        auto it = m_out.identities.find(e.busId);
        if (it == m_out.identities.end()) continue;
        if (e.uuid.empty()) e.uuid = it->second.uuid;
        if (e.serial.empty()) e.serial = it->second.serial;
    }
    for (const auto& [key, n] : m_tallies)
        m_out.notKept.push_back({std::get<0>(key), XidEvent::Kind(std::get<1>(key)), std::get<2>(key), n});
    const std::string& f = m_source;
    auto at = [&](uint64_t line) { return f + ":" + std::to_string(line); };
    if (m_malformed > kListedMalformed)
        m_out.warnings.push_back(f + ": " + std::to_string(m_malformed - kListedMalformed) +
                                 " more malformed Xid/SXid line(s) skipped");
    if (m_foreignXid.count)
        m_out.warnings.push_back(f + ": " + std::to_string(m_foreignXid.count) +
                                 " line(s) not from the kernel mention \"NVRM: Xid\": ignored (first at " +
                                 at(m_foreignXid.firstLine) + ")");
    if (m_foreignOther.count)
        m_out.warnings.push_back(
            f + ": " + std::to_string(m_foreignOther.count) +
            " line(s) not from the kernel mention an SXid or a GPU identity line: ignored "
            "(first at " +
            at(m_foreignOther.firstLine) + ")");
    if (m_identitiesNotKept)
        m_out.warnings.push_back(f + ": " + std::to_string(m_identitiesNotKept) +
                                 " identity line(s) for more than " + std::to_string(kMaxGpus) +
                                 " GPUs ignored");
    if (m_bootsNotKept)
        m_out.warnings.push_back(f + ": " + std::to_string(m_bootsNotKept) + " boot(s) beyond the first " +
                                 std::to_string(kMaxKeptBoots) + " not listed");
    if (m_resetsNotKept)
        m_out.warnings.push_back(f + ": " + std::to_string(m_resetsNotKept) +
                                 " GPU reset(s) beyond the first " + std::to_string(kMaxKeptResets) +
                                 " not listed");
    if (m_cutLines)
        m_out.warnings.push_back(f + ": " + std::to_string(m_cutLines) + " line(s) longer than " +
                                 std::to_string(kMaxLogLineBytes) + " bytes were cut");
    if (m_badJsonLines)
        m_out.warnings.push_back(f + ": " + std::to_string(m_badJsonLines) +
                                 " cut journal entr(y/ies) could not be read and were skipped");
    return std::move(m_out);
}

namespace {

Result<KernelLogContents> readAll(LogLineReader& reader, const std::string& name, KernelLogBudget* budget)
{
    KernelLogParser parser(name, budget);
    if (budget)
        reader.limitBytes(kMaxTotalLogBytes - std::min(budget->logBytes, kMaxTotalLogBytes),
                          std::to_string(kMaxTotalLogBytes >> 30) + " GiB of log text across all inputs");
    std::string line;
    while (reader.next(line))
        if (Status s = parser.addLine(line, reader.lineNumber(), reader.lastLineCut()); !s) return s.error();
    if (!reader.status()) return reader.status().error();
    if (budget) budget->logBytes += reader.decodedBytes();
    KernelLogContents out = parser.finish();
    if (reader.nulBytesSkipped())
        out.warnings.push_back(name + ": " + std::to_string(reader.nulBytesSkipped()) +
                               " NUL byte(s) skipped (the zero-filled blocks an unclean shutdown leaves)");
    return out;
}

}  // namespace

Result<KernelLogContents> readKernelLog(const std::string& path, KernelLogBudget* budget)
{
    auto reader = LogLineReader::open(path);
    if (!reader) return reader.error();
    return readAll(**reader, path, budget);
}

Result<KernelLogContents> parseKernelLog(std::string bytes, const std::string& name, KernelLogBudget* budget)
{
    auto reader = LogLineReader::fromMemory(std::move(bytes), name);
    return readAll(*reader, name, budget);
}

}  // namespace faultline
