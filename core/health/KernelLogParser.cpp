#include "KernelLogParser.h"

#include <cctype>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "BusId.h"
#include "LogLineReader.h"
#include "LogText.h"

namespace faultline {
namespace {

constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int monthIndex(std::string_view m)
{
    for (int i = 0; i < 12; ++i)
        if (m == kMonths[i]) return i;
    return -1;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool allDigits(std::string_view s)
{
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

std::string capped(std::string_view s, size_t n)
{
    return validUtf8(s, n);
}

// Skips one space-separated token and the spaces after it.
std::string_view skipToken(std::string_view s)
{
    size_t i = s.find(' ');
    if (i == std::string_view::npos) return {};
    while (i < s.size() && s[i] == ' ') ++i;
    return s.substr(i);
}

// After a syslog/journal time: "host ident: message" → "message" (ident is "kernel:",
// "kernel[12]:" or similar; lines without one are returned after the host).
std::string_view skipHostAndIdent(std::string_view s)
{
    s = skipToken(s);  // host
    const size_t sp = s.find(' ');
    const std::string_view ident = s.substr(0, sp);
    if (!ident.empty() && ident.back() == ':') return skipToken(s);
    return s;
}

// "[ 1234.567890]" → seconds; "[Tue Dec  1 10:00:00 2026]" → ISO time. Returns the rest.
std::string_view bracketStamp(std::string_view s, std::optional<double>& uptime, std::string& time)
{
    if (s.empty() || s.front() != '[') return s;
    const size_t close = s.find(']');
    if (close == std::string_view::npos || close > 48) return s;
    std::string_view inner = trim(s.substr(1, close - 1));
    const size_t dot = inner.find('.');
    if (dot != std::string_view::npos && allDigits(inner.substr(0, dot)) &&
        allDigits(inner.substr(dot + 1)) && inner.size() < 24) {
        uptime = std::strtod(std::string(inner).c_str(), nullptr);
    } else if (std::string iso = ctimeToIso(inner); !iso.empty()) {
        time = iso;
    } else {
        return s;
    }
    s.remove_prefix(close + 1);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    return s;
}

// The time prefix of a log line, if any, and the text after it.
std::string_view stripPrefix(std::string_view s, std::optional<double>& uptime, std::string& time)
{
    s = bracketStamp(s, uptime, time);
    if (s.size() >= 19 && std::isdigit(static_cast<unsigned char>(s[0])) && s[4] == '-' && s[7] == '-' &&
        (s[10] == 'T' || s[10] == ' ') && s[13] == ':' && s[16] == ':') {
        // journalctl -o short-iso / short-iso-precise, rsyslog's RFC 3339 stamps.
        const size_t end = s.find(' ', 11);
        if (end == std::string_view::npos) return s;
        time = capped(s.substr(0, end), 64);
        if (time[10] == ' ') return s;  // "2026-12-01 10:00:00": not a syslog stamp we know
        s = skipHostAndIdent(s.substr(end + 1));
    } else if (s.size() >= 16 && monthIndex(s.substr(0, 3)) >= 0 && s[3] == ' ' && s[9] == ':' &&
               s[12] == ':') {
        // "Dec  1 10:00:00 host kernel: ..." (syslog, journalctl's short format)
        time = capped(s.substr(0, 15), 64);
        size_t i = 15;
        while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
            ++i;  // short-precise
        if (i > 15) time = capped(s.substr(0, i), 64);
        s = skipHostAndIdent(s.substr(i < s.size() ? i + 1 : i));
    } else {
        return s;
    }
    return bracketStamp(s, uptime, time);
}

// "pid=1234" / "pid='<unknown>'" / "pid=<unknown>": the number or nothing.
std::optional<int64_t> pidValue(std::string_view v)
{
    if (!allDigits(v) || v.size() > 18) return std::nullopt;
    return std::strtoll(std::string(v).c_str(), nullptr, 10);
}

}  // namespace

std::string ctimeToIso(std::string_view text)
{
    // "Tue Dec  1 10:00:00 2026"
    text = trim(text);
    if (text.size() < 20 || text[3] != ' ') return {};
    std::string_view rest = trim(text.substr(4));
    const int month = monthIndex(rest.substr(0, 3));
    if (month < 0) return {};
    rest = trim(rest.substr(3));
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos || !allDigits(rest.substr(0, sp))) return {};
    const int day = std::atoi(std::string(rest.substr(0, sp)).c_str());
    rest = trim(rest.substr(sp));
    if (rest.size() < 13 || rest[2] != ':' || rest[5] != ':' || rest[8] != ' ') return {};
    const std::string_view hms = rest.substr(0, 8);
    const std::string_view year = trim(rest.substr(9));
    if (!allDigits(year) || year.size() != 4 || day < 1 || day > 31) return {};
    for (size_t i : {0, 1, 3, 4, 6, 7})
        if (!std::isdigit(static_cast<unsigned char>(hms[i]))) return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*s-%02d-%02dT%.*s", 4, year.data(), month + 1, day, 8, hms.data());
    return buf;
}

std::string epochMicrosToIso(uint64_t micros)
{
    const std::time_t secs = static_cast<std::time_t>(micros / 1000000);
    std::tm tm{};
    if (!gmtime_r(&secs, &tm)) return {};
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lluZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<unsigned long long>(micros % 1000000));
    return buf;
}

KernelLogParser::KernelLogParser(std::string source) : m_source(std::move(source)) {}

Error KernelLogParser::lineError(uint64_t lineNumber, const std::string& problem) const
{
    return Error{m_source + ":" + std::to_string(lineNumber) + ": " + problem, ErrorCode::Format};
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
}

Status KernelLogParser::addLine(std::string_view line, uint64_t lineNumber, bool cut)
{
    ++m_out.lines;
    if (cut) ++m_cutLines;
    const std::string_view t = trim(line);
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
    Meta meta;
    const std::string_view text = stripPrefix(line, meta.uptime, meta.time);
    m_sawContent = true;
    return addMessage(text, line, meta, lineNumber);
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
    // The kernel's own stamp inside the message, if any, is not needed: the journal's are kept.
    std::optional<double> ignoredUptime;
    std::string ignoredTime;
    const std::string_view text = stripPrefix(message, ignoredUptime, ignoredTime);
    return addMessage(text, message, meta, lineNumber);
}

Status KernelLogParser::checkBudget(uint64_t lineNumber) const
{
    if (m_out.events.size() >= kMaxEventsPerFile || m_storedBytes > kMaxStoredEventBytesPerFile)
        return lineError(lineNumber, "more than " + std::to_string(kMaxEventsPerFile) + " Xid events or " +
                                         std::to_string(kMaxStoredEventBytesPerFile >> 20) +
                                         " MiB of Xid lines; refused");
    return {};
}

XidEvent& KernelLogParser::newEvent(std::string_view rawLine, const Meta& meta, uint64_t lineNumber)
{
    noteBoot(meta);
    XidEvent e;
    e.time = meta.time;
    e.uptimeSeconds = meta.uptime;
    e.boot = m_boot;
    e.bootId = meta.bootId;
    e.rawLine = capped(rawLine, kMaxStoredLineBytes);
    e.source = m_source + ":" + std::to_string(lineNumber);
    m_storedBytes += e.rawLine.size() + e.source.size();
    m_out.events.push_back(std::move(e));
    return m_out.events.back();
}

Status KernelLogParser::addMessage(std::string_view text, std::string_view rawLine, const Meta& meta,
                                   uint64_t lineNumber)
{
    if (const size_t at = text.find("NVRM: Xid ("); at != std::string_view::npos)
        return parseXid(text.substr(at + 11), rawLine, meta, lineNumber);
    if (const size_t at = text.find("SXid ("); at != std::string_view::npos)
        return parseSxid(text, at, rawLine, meta, lineNumber);
    if (const size_t at = text.find("NVRM: GPU at "); at != std::string_view::npos) {
        // "NVRM: GPU at PCI:0000:3b:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7"
        std::string_view rest = text.substr(at + 13);
        const size_t sep = rest.find(": GPU-");
        if (sep != std::string_view::npos) {
            const std::string bus = normalizeBusId(rest.substr(0, sep));
            std::string_view uuid = trim(rest.substr(sep + 2));
            uuid = uuid.substr(0, uuid.find(' '));
            if (!bus.empty() && uuid.size() <= 64) {
                GpuIdentity& id = m_out.identities[bus];
                id.busId = bus;
                id.uuid = capped(uuid, 64);
                m_lastGpuAtBus = bus;
            }
        }
        noteBoot(meta);
        return {};
    }
    if (const size_t at = text.find("NVRM: GPU Board Serial Number: "); at != std::string_view::npos) {
        const std::string_view serial = trim(text.substr(at + 31)).substr(0, 64);
        if (!m_lastGpuAtBus.empty() && !serial.empty())
            m_out.identities[m_lastGpuAtBus].serial = capped(serial, 64);
        noteBoot(meta);
        return {};
    }
    if (meta.uptime || !meta.bootId.empty()) noteBoot(meta);
    return {};
}

// After "NVRM: Xid (": "PCI:0000:3b:00[ GPU-I:n[ GPU-CI:n]]): N[, pid=…][, name=…], message"
Status KernelLogParser::parseXid(std::string_view s, std::string_view rawLine, const Meta& meta,
                                 uint64_t lineNumber)
{
    const size_t close = s.find("): ");
    const size_t closeEnd = s.find(')');
    if (closeEnd == std::string_view::npos || closeEnd > 96)
        return lineError(lineNumber, "malformed Xid line (no \"(PCI:...)\" field): " + capped(rawLine, 200));
    std::string_view where = s.substr(0, closeEnd);
    std::string_view rest = close == closeEnd ? s.substr(close + 3) : s.substr(closeEnd + 1);
    if (close != closeEnd) {
        // "(PCI:0000:3b:00):79" without the space: tolerated; anything else is not an Xid line.
        if (rest.empty() || rest.front() != ':')
            return lineError(lineNumber, "malformed Xid line (expected \"): \" after the PCI field): " +
                                             capped(rawLine, 200));
        rest = trim(rest.substr(1));
    }
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits == 0 || digits > 6)
        return lineError(lineNumber, "malformed Xid line (no Xid number): " + capped(rawLine, 200));
    if (Status budget = checkBudget(lineNumber); !budget) return budget;
    const int code = std::atoi(std::string(rest.substr(0, digits)).c_str());
    rest = rest.substr(digits);
    XidEvent& e = newEvent(rawLine, meta, lineNumber);
    e.kind = XidEvent::Kind::Xid;
    e.code = code;
    // The PCI field: "PCI:0000:3b:00", then optional " GPU-I:05" and " GPU-CI:01".
    std::string_view bus = where;
    if (const size_t sp = where.find(' '); sp != std::string_view::npos) {
        bus = where.substr(0, sp);
        std::string_view mig = where.substr(sp + 1);
        while (!mig.empty()) {
            mig = trim(mig);
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
    e.busId = normalizeBusId(bus);
    if (!e.busId.empty()) {
        if (auto it = m_out.identities.find(e.busId); it != m_out.identities.end()) {
            e.uuid = it->second.uuid;
            e.serial = it->second.serial;
        }
    }
    if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
    rest = trim(rest);
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
    e.message = capped(trim(rest), kMaxStoredLineBytes);
    m_storedBytes += e.message.size();
    return {};
}

// "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error"
Status KernelLogParser::parseSxid(std::string_view line, size_t at, std::string_view rawLine,
                                  const Meta& meta, uint64_t lineNumber)
{
    std::string_view s = line.substr(at + 6);
    const size_t close = s.find("): ");
    if (close == std::string_view::npos || close > 96)
        return lineError(lineNumber,
                         "malformed SXid line (no \"(PCI:...): \" field): " + capped(rawLine, 200));
    std::string_view rest = s.substr(close + 3);
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits == 0 || digits > 6)
        return lineError(lineNumber, "malformed SXid line (no SXid number): " + capped(rawLine, 200));
    const int code = std::atoi(std::string(rest.substr(0, digits)).c_str());
    rest = trim(rest.substr(digits));
    if (!rest.empty() && rest.front() == ',') rest = trim(rest.substr(1));
    std::string device;
    if (at >= 2 && line.substr(at - 2, 2) == ": ") {
        const std::string_view before = line.substr(0, at - 2);
        const size_t sp = before.rfind(' ');
        device = capped(sp == std::string_view::npos ? before : before.substr(sp + 1), 64);
    }
    const std::string bus = normalizeBusId(s.substr(0, close));
    // "Data {0x...}" lines continue the SXid before them.
    if (rest.substr(0, 6) == "Data {" && !m_out.events.empty()) {
        XidEvent& prev = m_out.events.back();
        if (prev.kind == XidEvent::Kind::SXid && prev.code == code && prev.busId == bus) {
            if (prev.message.size() < kMaxStoredLineBytes)
                prev.message = capped(prev.message + "; " + std::string(rest), kMaxStoredLineBytes);
            return {};
        }
    }
    if (Status budget = checkBudget(lineNumber); !budget) return budget;
    XidEvent& e = newEvent(rawLine, meta, lineNumber);
    e.kind = XidEvent::Kind::SXid;
    e.code = code;
    e.busId = bus;
    e.device = device;
    e.message = capped(rest, kMaxStoredLineBytes);
    m_storedBytes += e.message.size();
    return {};
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
    if (m_cutLines)
        m_out.warnings.push_back(m_source + ": " + std::to_string(m_cutLines) + " line(s) longer than " +
                                 std::to_string(kMaxLogLineBytes) + " bytes were cut");
    if (m_badJsonLines)
        m_out.warnings.push_back(m_source + ": " + std::to_string(m_badJsonLines) +
                                 " cut journal entr(y/ies) could not be read and were skipped");
    return std::move(m_out);
}

namespace {

Result<KernelLogContents> readAll(LogLineReader& reader, const std::string& name)
{
    KernelLogParser parser(name);
    std::string line;
    while (reader.next(line))
        if (Status s = parser.addLine(line, reader.lineNumber(), reader.lastLineCut()); !s) return s.error();
    if (!reader.status()) return reader.status().error();
    return parser.finish();
}

}  // namespace

Result<KernelLogContents> readKernelLog(const std::string& path)
{
    auto reader = LogLineReader::open(path);
    if (!reader) return reader.error();
    return readAll(**reader, path);
}

Result<KernelLogContents> parseKernelLog(std::string bytes, const std::string& name)
{
    auto reader = LogLineReader::fromMemory(std::move(bytes), name);
    return readAll(*reader, name);
}

}  // namespace faultline
