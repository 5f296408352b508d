#include "LedgerFiles.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../evidence/BundleVerifier.h"
#include "../evidence/MessageDigest.h"
#include "../evidence/TarReader.h"
#include "../health/KernelLogLine.h"
#include "../replay/CampaignResultsFile.h"
#include "LedgerJson.h"
#include "LedgerTime.h"

namespace faultline {
namespace {

constexpr uint64_t kMaxJsonBytes = uint64_t(1) << 30;  // a campaign's or health document
constexpr uint64_t kMaxBundleFileBytes = 16 << 20;     // case.json, MANIFEST.sha256
constexpr size_t kSniffBytes = 64 * 1024;              // read to tell a text log

const char* kKinds =
    "a health JSON, kernel log, campaign or fleet results file (or JSON), or evidence bundle";

std::optional<std::string> modifiedAt(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return isoUtc(std::chrono::system_clock::from_time_t(st.st_mtime));
}

Result<std::string> readSmallFile(const std::string& path, uint64_t limit)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return fileError(path, "not a regular file", ErrorCode::Io);
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return fileError(path, "cannot read: " + ec.message(), ErrorCode::Io);
    if (size > limit) return fileError(path, "larger than " + std::to_string(limit >> 20) + " MiB");
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, "cannot open", ErrorCode::Io);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// case.json and MANIFEST.sha256 of a bundle directory or archive.
Result<std::pair<std::string, std::string>> bundleFiles(const std::string& path, bool isDirectory)
{
    std::string caseJson, manifest;
    if (isDirectory) {
        auto c = readSmallFile(path + "/case.json", kMaxBundleFileBytes);
        if (!c) return c.error();
        auto m = readSmallFile(path + "/MANIFEST.sha256", kMaxBundleFileBytes);
        if (!m) return m.error();
        return std::make_pair(std::move(*c), std::move(*m));
    }
    auto tar = TarReader::open(path);
    if (!tar) return tar.error();
    bool haveCase = false, haveManifest = false;
    for (;;) {
        auto entry = tar->next();
        if (!entry) return entry.error();
        if (!*entry) break;
        const std::string& name = (*entry)->name;
        const size_t slash = name.find('/');
        if (slash == std::string::npos || name.find('/', slash + 1) != std::string::npos) continue;
        const std::string base = name.substr(slash + 1);
        std::string* into = base == "case.json" ? &caseJson : base == "MANIFEST.sha256" ? &manifest : nullptr;
        if (!into || (*entry)->type != '0') continue;
        if ((*entry)->size > kMaxBundleFileBytes) return fileError(path, name + " is larger than 16 MiB");
        if (Status s = tar->readData([&](const char* d, size_t n) { into->append(d, n); }); !s)
            return s.error();
        (into == &caseJson ? haveCase : haveManifest) = true;
    }
    if (!haveCase || !haveManifest)
        return fileError(path, "not an evidence bundle: no case.json or MANIFEST.sha256 in the archive");
    return std::make_pair(std::move(caseJson), std::move(manifest));
}

Result<LedgerFileAdded> addBundleAt(Ledger& ledger, const std::string& path, bool isDirectory,
                                    const std::string& host)
{
    auto files = bundleFiles(path, isDirectory);
    if (!files) return files.error();
    auto check = verifyBundle(path);
    if (!check) return check.error();
    LedgerBundleInput in;
    in.caseJson = nlohmann::json::parse(files->first, nullptr, false);
    if (in.caseJson.is_discarded()) return fileError(path, "case.json is not valid JSON");
    in.manifestDigest = toHex(Sha256::of(files->second));
    in.intact = check->intact();
    in.path = path;
    auto added = ledger.addBundle(in, {host, path});
    if (!added) return added.error();
    return LedgerFileAdded{path, "bundle", *added};
}

Result<LedgerFileAdded> addCampaignDocument(Ledger& ledger, nlohmann::json report, const std::string& path,
                                            const std::string& host)
{
    const bool fleet = jsonField(report, "fleet").is_object();
    auto added = ledger.addCampaign({std::move(report), path, modifiedAt(path)}, {host, path});
    if (!added) return added.error();
    return LedgerFileAdded{path, fleet ? "fleet" : "campaign", *added};
}

Result<LedgerFileAdded> addLog(Ledger& ledger, const std::string& path, const std::string& host)
{
    HealthInputs inputs;
    inputs.logFiles = {path};
    auto report = collectHealth(inputs);
    if (!report) return report.error();
    auto added = addHealthReport(ledger, *report, {host, path});
    if (!added) return added.error();
    return LedgerFileAdded{path, "log", *added};
}

Result<LedgerFileAdded> addNvidiaSmi(Ledger& ledger, const std::string& path, const std::string& host)
{
    HealthInputs inputs;
    inputs.nvidiaSmiFiles = {path};
    auto report = collectHealth(inputs);
    if (!report) return report.error();
    auto added = addHealthReport(ledger, *report, {host, path});
    if (!added) return added.error();
    return LedgerFileAdded{path, "nvidia-smi", *added};
}

bool looksLikeJournalJson(const std::string& firstLine)
{
    const nlohmann::json j = nlohmann::json::parse(firstLine, nullptr, false);
    return j.is_object() &&
           (j.contains("MESSAGE") || j.contains("__REALTIME_TIMESTAMP") || j.contains("_BOOT_ID"));
}

// Whether text looks like a kernel log: some line carries a kernel or syslog time stamp or is
// journalctl's own separator line.
bool looksLikeTextLog(const std::string& head)
{
    std::istringstream lines(head);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("-- ", 0) == 0) return true;
        const KernelLogLine l = splitKernelLogLine(line);
        if (l.uptime || !l.time.empty()) return true;
    }
    return false;
}

}  // namespace

Result<LedgerAdded> addHealthReport(Ledger& ledger, const HealthReport& report, const LedgerSource& source)
{
    return ledger.addHealth(healthReportJson(report), source, report.boots,
                            ledgerResetEvents(report, source.host));
}

std::vector<LedgerEventRow> ledgerResetEvents(const HealthReport& report, const std::string& host)
{
    std::vector<LedgerEventRow> rows;
    rows.reserve(report.resets.size());
    for (const KernelLogReset& x : report.resets) {
        LedgerEventRow r;
        for (const GpuHealthRecord& g : report.gpus)
            if (g.identity.busId == x.busId) {
                r.serial = g.identity.serial;
                r.uuid = ledgerUuid(g.identity.uuid);
            }
        r.host = host;
        r.busId = x.busId;
        r.kind = "reset";
        r.code = 0;
        r.timeText = x.time;
        r.at = ledgerTime(x.time);
        r.uptimeSeconds = x.uptime;
        r.bootId = x.bootId;
        r.name = "GPU reset";
        r.message = x.message;
        r.source = x.source;
        rows.push_back(std::move(r));
    }
    return rows;
}

Result<LedgerFileAdded> addLedgerFile(Ledger& ledger, const std::string& path, const std::string& host)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) return fileError(path, "no such file", ErrorCode::Io);
    if (std::filesystem::is_directory(status)) {
        if (!std::filesystem::exists(path + "/MANIFEST.sha256", ec))
            return fileError(path, "a directory that is not an evidence bundle (no MANIFEST.sha256)");
        return addBundleAt(ledger, path, true, host);
    }
    if (!std::filesystem::is_regular_file(status))
        return fileError(path, "not a regular file (a FIFO or device is not read)", ErrorCode::Io);
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, "cannot open", ErrorCode::Io);
    std::string head(kSniffBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    in.close();

    if (head.rfind("\x89HDF\r\n\x1a\n", 0) == 0) {
        auto report = readCampaignResults(path);
        if (!report) return report.error();
        return addCampaignDocument(ledger, std::move(*report), path, host);
    }
    if (head.size() > 262 && head.compare(257, 5, "ustar") == 0)
        return addBundleAt(ledger, path, false, host);
    if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
        static_cast<unsigned char>(head[1]) == 0x8b)
        return addLog(ledger, path, host);
    const size_t first = head.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && head[first] == '{') {
        const std::string firstLine = head.substr(first, head.find('\n', first) - first);
        if (looksLikeJournalJson(firstLine)) return addLog(ledger, path, host);
        auto text = readSmallFile(path, kMaxJsonBytes);
        if (!text) return text.error();
        nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
        if (doc.is_discarded() || !doc.is_object())
            return fileError(path, "not valid JSON (expected " + std::string(kKinds) + ")");
        if (jsonText(doc, "format") == "faultline-health") {
            auto added = ledger.addHealth(doc, {host, path});
            if (!added) return added.error();
            return LedgerFileAdded{path, "health", *added};
        }
        if (jsonField(doc, "targets").is_array() && jsonField(doc, "ops").is_array())
            return addCampaignDocument(ledger, std::move(doc), path, host);
        return fileError(path,
                         "a JSON document the ledger does not read (expected " + std::string(kKinds) + ")");
    }
    if (first != std::string::npos && head.compare(first, 5, "<?xml") == 0 &&
        head.find("<nvidia_smi_log") != std::string::npos)
        return addNvidiaSmi(ledger, path, host);
    if (looksLikeTextLog(head)) return addLog(ledger, path, host);
    return fileError(path, "not a file the ledger reads (expected " + std::string(kKinds) + ")");
}

}  // namespace faultline
